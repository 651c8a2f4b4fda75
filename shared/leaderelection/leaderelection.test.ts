// Leader election between candidates on one real apiserver, with short timings:
// one leads, a second takes over within the lease duration after the first
// stops renewing, a released lease is taken at once, a stolen lease ends the
// leader's term through its AbortSignal.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../client/client';
import { isConflict } from '../client/errors';
import { LeaderElector, LeaderHealthzAdaptor, defaultIdentity } from './leaderelection';
import { formatMicroTime, newResourceLock, parseMicroTime } from './resourcelock';
import { newLeaderElector } from './options';
import { EventBroadcaster } from '../events/recorder';

const LEASE = 2000;
const RENEW = 1500;
const RETRY = 400;

interface Candidate {
  id: string;
  elector: LeaderElector;
  ac: AbortController;
  done: Promise<void>;
  leading: boolean;
  startedAt?: number;
  leadSignal?: AbortSignal;
  stopped: number;
  newLeaders: string[];
}

async function until(what: string, cond: () => boolean, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('shared/leaderelection: Lease-based leader election', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;
  const leases = () => client.resource('leases.coordination.k8s.io').namespace('kube-system');

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1 });
  });
  const all: Candidate[] = [];
  afterEach(async () => {
    // Whatever a test left running is stopped, even when it failed.
    for (const c of all.splice(0)) c.ac.abort();
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  function candidate(name: string, lockType = 'leases', releaseOnCancel = false): Candidate {
    const id = defaultIdentity();
    const c: Candidate = { id, ac: new AbortController(), leading: false, stopped: 0, newLeaders: [] } as any;
    c.elector = new LeaderElector({
      lock: newResourceLock(lockType, client, { namespace: 'kube-system', name, identity: id }),
      leaseDurationMs: LEASE,
      renewDeadlineMs: RENEW,
      retryPeriodMs: RETRY,
      releaseOnCancel,
      callbacks: {
        onStartedLeading: (signal) => {
          c.leading = true;
          c.startedAt = Date.now();
          c.leadSignal = signal;
          signal.addEventListener('abort', () => (c.leading = false));
        },
        onStoppedLeading: () => c.stopped++,
        onNewLeader: (who) => c.newLeaders.push(who),
      },
    });
    c.done = c.elector.run(c.ac.signal);
    all.push(c);
    return c;
  }

  it('elects one leader; the other takes over within the lease duration after the leader stops renewing', async () => {
    const a = candidate('ctrl');
    await until('a leads', () => a.leading);
    assert.match(a.id, /^.+_[0-9a-f-]{36}$/);
    const b = candidate('ctrl');
    await new Promise((r) => setTimeout(r, LEASE + 500));
    assert.equal(b.leading, false, 'b waits while a renews');
    assert.equal(b.elector.getLeader(), a.id);
    await until('b has seen a as leader', () => b.newLeaders.includes(a.id));

    const l1 = await leases().get('ctrl');
    assert.equal(l1.spec.holderIdentity, a.id);
    assert.equal(l1.spec.leaseDurationSeconds, 2);
    assert.equal(l1.spec.leaseTransitions, 0);
    assert.match(l1.spec.acquireTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.match(l1.spec.renewTime, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/);
    assert.ok(
      parseMicroTime(l1.spec.renewTime) > parseMicroTime(l1.spec.acquireTime),
      'renewed since acquired',
    );
    await new Promise((r) => setTimeout(r, RETRY * 2));
    const l2 = await leases().get('ctrl');
    assert.equal(l2.spec.acquireTime, l1.spec.acquireTime, 'acquireTime is kept on renewal');
    assert.ok(parseMicroTime(l2.spec.renewTime) > parseMicroTime(l1.spec.renewTime), 'renewTime moves');

    // a "crashes": it stops renewing without releasing.
    const stoppedAt = Date.now();
    a.ac.abort();
    await a.done;
    assert.equal(a.leadSignal?.aborted, true, "the leader's signal fired");
    assert.equal(a.stopped, 1);
    await until('b leads', () => b.leading, LEASE + 4 * RETRY + 2000);
    const took = b.startedAt! - stoppedAt;
    assert.ok(took <= LEASE + 2 * JITTERED_RETRY + 500, `b took over after ${took} ms`);
    assert.ok(took >= RETRY, `b waited for the lease to expire (${took} ms)`);
    const l3 = await leases().get('ctrl');
    assert.equal(l3.spec.holderIdentity, b.id);
    assert.equal(l3.spec.leaseTransitions, 1);
    assert.ok(parseMicroTime(l3.spec.acquireTime) >= stoppedAt - 5);
    await until('b observed itself as the new leader', () => b.newLeaders.at(-1) === b.id);

    // b leaves gracefully (ReleaseOnCancel is off for b): the lease keeps b until it expires.
    b.ac.abort();
    await b.done;
    assert.equal(b.stopped, 1);
  });

  it('releases on a graceful stop so the next candidate leads at once', async () => {
    const a = candidate('released', 'leases', true);
    await until('a leads', () => a.leading);
    const b = candidate('released', 'endpointsleases');
    await new Promise((r) => setTimeout(r, RETRY));
    assert.equal(b.leading, false);
    const t0 = Date.now();
    a.ac.abort();
    await a.done;
    const released = await leases().get('released');
    // b may have taken it already; otherwise it is the released record.
    if (released.spec.holderIdentity === '') assert.equal(released.spec.leaseDurationSeconds, 1);
    else assert.equal(released.spec.holderIdentity, b.id);
    await until('b leads', () => b.leading, 4 * RETRY + 1000);
    assert.ok(Date.now() - t0 < LEASE, 'no need to wait for the lease to expire');
    const l = await leases().get('released');
    assert.equal(l.spec.holderIdentity, b.id);
    assert.equal(l.spec.leaseTransitions, 1);
    b.ac.abort();
    await b.done;
  });

  it('ends the term through the AbortSignal when the lease is taken away', async () => {
    const a = candidate('stolen');
    await until('a leads', () => a.leading);
    const health = new LeaderHealthzAdaptor(1000);
    health.setLeaderElection(a.elector);
    health.check();
    // Steal it (the leader keeps renewing, so retry on conflicts).
    for (;;) {
      const lease = await leases().get('stolen');
      const now = Date.now();
      const stolen = await leases()
        .update({
          ...lease,
          spec: {
            ...lease.spec,
            holderIdentity: 'intruder',
            renewTime: formatMicroTime(now),
            acquireTime: formatMicroTime(now),
            leaseDurationSeconds: 60,
          },
        })
        .catch((e) => {
          if (isConflict(e)) return undefined;
          throw e;
        });
      if (stolen) break;
    }
    await until("a's term ends", () => a.leadSignal!.aborted, RENEW + 2 * RETRY + 2000);
    await a.done;
    assert.equal(a.stopped, 1);
    assert.equal(a.elector.isLeader(), false);
    assert.equal(a.elector.getLeader(), 'intruder');
    health.check();
  });

  it('builds from the --leader-elect-* flags and records "became leader" on the Lease', async () => {
    const events = new EventBroadcaster(client, { qps: -1 });
    let leading: AbortSignal | undefined;
    const e = newLeaderElector(client, {
      resourceLock: 'configmapsleases',
      resourceName: 'kube-controller-manager',
      leaseDurationMs: LEASE,
      renewDeadlineMs: RENEW,
      retryPeriodMs: RETRY,
      releaseOnCancel: true,
      eventRecorder: events.newRecorder('kube-controller-manager'),
      callbacks: { onStartedLeading: (s) => void (leading = s) },
    });
    const ac = new AbortController();
    const done = e.run(ac.signal);
    try {
      await until('leading', () => !!leading);
      await events.flush();
      const evs = await client.resource('events.events.k8s.io').namespace('kube-system').list();
      const ev = evs.items.find(
        (x) => x.reason === 'LeaderElection' && x.regarding?.name === 'kube-controller-manager',
      );
      assert.ok(ev, 'a LeaderElection event');
      assert.equal(ev.regarding.kind, 'Lease');
      assert.match(ev.note, /_[0-9a-f-]{36} became leader$/);
    } finally {
      ac.abort();
      await done;
      await events.shutdown();
    }
    assert.equal((await leases().get('kube-controller-manager')).spec.holderIdentity, '', 'released');
  });

  it('validates its timings and the lock type', () => {
    const lock = newResourceLock('leases', client, { namespace: 'kube-system', name: 'x', identity: 'me' });
    const cb = { onStartedLeading: () => {} };
    assert.throws(
      () => new LeaderElector({ lock, leaseDurationMs: 10_000, renewDeadlineMs: 10_000, callbacks: cb }),
      /greater than renewDeadline/,
    );
    assert.throws(
      () => new LeaderElector({ lock, renewDeadlineMs: 2000, retryPeriodMs: 2000, callbacks: cb }),
      /JitterFactor/,
    );
    assert.throws(
      () => newResourceLock('configmaps', client, { namespace: 'n', name: 'x', identity: 'me' }),
      /invalid --leader-elect-resource-lock/,
    );
    for (const t of ['leases', 'endpointsleases', 'configmapsleases'])
      newResourceLock(t, client, { namespace: 'n', name: 'x', identity: 'me' });
    assert.equal(formatMicroTime(Date.UTC(2025, 0, 2, 3, 4, 5, 678)), '2025-01-02T03:04:05.678000Z');
  });
});

const JITTERED_RETRY = RETRY * 2.2;
