// The event recorder against a real apiserver: Event fields, client-go's series
// aggregation (timers on a fake clock), its own QPS budget, and a caller that
// is never blocked.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../client/client';
import { FakeClock } from '../client/clock';
import { EventBroadcaster, FakeRecorder, sprintf, truncateNote, type EventObject } from './recorder';

const MIN = 60_000;
const MICRO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z$/;

describe('shared/events: event recorder', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;
  let target: any;
  const events = (ns: string) => client.resource<EventObject>('events.events.k8s.io').namespace(ns);

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1 });
    await client.resource('namespaces').create({ metadata: { name: 'ev' } });
    target = await client
      .resource('configmaps')
      .namespace('ev')
      .create({ metadata: { name: 'target' } });
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  it('creates events.k8s.io/v1 Events with the reporting fields', async () => {
    const b = new EventBroadcaster(client, { qps: -1 });
    try {
      const rec = b.newRecorder('test-controller');
      rec.eventf(target, null, 'Normal', 'Synced', 'Sync', 'synced %s in %d ms: %q', 'target', 12, 'ok');
      await b.flush();
      const [e] = (await events('ev').list()).items.filter((x) => x.reason === 'Synced');
      assert.ok(e, 'created');
      assert.equal(e.reportingController, 'test-controller');
      assert.match(e.reportingInstance, /^test-controller-.+/);
      assert.equal(e.action, 'Sync');
      assert.equal(e.type, 'Normal');
      assert.equal(e.note, 'synced target in 12 ms: "ok"');
      assert.match(e.eventTime, MICRO);
      assert.equal(e.series, undefined);
      assert.deepEqual(
        [e.regarding.kind, e.regarding.apiVersion, e.regarding.namespace, e.regarding.name, e.regarding.uid],
        ['ConfigMap', 'v1', 'ev', 'target', target.metadata.uid],
      );
      assert.match(e.metadata.name!, /^target\.[0-9a-f]+$/);
      assert.equal(e.metadata.namespace, 'ev');
    } finally {
      await b.shutdown();
    }
  });

  it("writes core/v1 Events as kubelet's record package does, repeats counted", async () => {
    const b = new EventBroadcaster(client, { qps: -1, api: 'v1' });
    try {
      const rec = b.newRecorder('kubelet', 'node-1');
      rec.eventf(target, null, 'Warning', 'Unhealthy', 'Probe', 'Liveness probe failed: %s', 'exit 1');
      await b.flush();
      rec.eventf(target, null, 'Warning', 'Unhealthy', 'Probe', 'Liveness probe failed: %s', 'exit 1');
      await b.flush();
      const core = (await client.resource('events').namespace('ev').list()).items.filter(
        (x: any) => x.reason === 'Unhealthy',
      );
      assert.equal(core.length, 1, 'one Event for the repeat');
      const e: any = core[0];
      assert.equal(e.message, 'Liveness probe failed: exit 1');
      assert.deepEqual(e.source, { component: 'kubelet', host: 'node-1' });
      assert.equal(e.count, 2);
      assert.equal(e.type, 'Warning');
      assert.equal(e.involvedObject.uid, target.metadata.uid);
      assert.match(e.firstTimestamp, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      assert.ok(e.lastTimestamp >= e.firstTimestamp);
    } finally {
      await b.shutdown();
    }
  });

  it('aggregates repeats into a series: count 2 at once, the rest when the series ends', async () => {
    const clock = new FakeClock(Date.now());
    const b = new EventBroadcaster(client, { qps: -1, clock });
    try {
      const rec = b.newRecorder('series-controller');
      const emit = () =>
        rec.eventf(target, null, 'Warning', 'FailedMount', 'Mount', 'volume %q not found', 'data');
      const mine = async () =>
        (await events('ev').list()).items.filter((x) => x.reportingController === 'series-controller');
      emit();
      await b.flush();
      assert.equal((await mine()).length, 1);
      clock.step(1000);
      emit();
      await b.flush();
      let list = await mine();
      assert.equal(list.length, 1, 'no new object for a repeat');
      assert.equal(list[0].series?.count, 2);
      assert.match(list[0].series!.lastObservedTime, MICRO);
      for (let i = 0; i < 3; i++) {
        clock.step(1000);
        emit();
      }
      await b.flush();
      assert.equal((await mine())[0].series?.count, 2, 'later repeats are only counted');
      const lastSeen = clock.now();
      await clock.advance(12 * MIN);
      await b.flush();
      list = await mine();
      assert.equal(list.length, 1);
      assert.equal(list[0].series?.count, 5, 'the final count is written when the series ends');
      assert.equal(Date.parse(list[0].series!.lastObservedTime), lastSeen);
      // The series is over: the same event again is a new object.
      emit();
      await b.flush();
      assert.equal((await mine()).length, 2);
      // A different reason is not the same event.
      rec.eventf(target, null, 'Warning', 'FailedAttach', 'Mount', 'x');
      await b.flush();
      assert.equal((await mine()).length, 3);
    } finally {
      await b.shutdown();
    }
  });

  it('writes a running series on the 30-minute heartbeat', async () => {
    const clock = new FakeClock(Date.now());
    const b = new EventBroadcaster(client, { qps: -1, clock });
    try {
      const rec = b.newRecorder('heartbeat-controller');
      const emit = () => rec.eventf(target, null, 'Normal', 'Tick', 'Tick', 'tick');
      emit();
      for (let i = 1; i <= 5; i++) {
        await b.flush();
        await clock.advance(5 * MIN);
        emit();
      }
      await b.flush();
      const before = (await events('ev').list()).items.find(
        (x) => x.reportingController === 'heartbeat-controller',
      )!;
      assert.equal(before.series?.count, 2);
      await clock.advance(5 * MIN); // t = 30 min: heartbeat
      await b.flush();
      const after = (await events('ev').list()).items.filter(
        (x) => x.reportingController === 'heartbeat-controller',
      );
      assert.equal(after.length, 1);
      assert.equal(after[0].series?.count, 6);
    } finally {
      await b.shutdown();
    }
  });

  it('keeps notes within 1 kB, drops bad types, and never blocks the caller', async () => {
    const b = new EventBroadcaster(client, { qps: 4, burst: 1, maxQueued: 5 });
    try {
      const rec = b.newRecorder('busy-controller');
      rec.eventf(target, null, 'Bogus' as any, 'Bad', 'Bad', 'dropped');
      const t0 = Date.now();
      for (let i = 0; i < 20; i++)
        rec.eventf(
          { kind: 'Pod', apiVersion: 'v1', namespace: 'ev', name: `p${i}` },
          null,
          'Normal',
          'Many',
          'Many',
          'é'.repeat(700),
        );
      assert.ok(Date.now() - t0 < 100, 'eventf returns at once');
      assert.equal(b.stats.dropped, 14, 'one is being written, 5 wait');
      await new Promise((r) => setTimeout(r, 500));
      assert.ok(b.stats.created <= 3, `its own 4 qps budget (${b.stats.created} written)`);
      await b.flush();
      const mine = (await events('ev').list()).items.filter(
        (x) => x.reportingController === 'busy-controller',
      );
      assert.equal(mine.length, 6);
      for (const e of mine) {
        assert.ok(Buffer.byteLength(e.note) <= 1024);
        assert.ok(e.note.endsWith('...'));
        assert.equal(e.regarding.name?.startsWith('p'), true);
      }
    } finally {
      await b.shutdown(100);
    }
  });

  it('formats and truncates like client-go, and fakes for controller tests', () => {
    assert.equal(sprintf('%s=%d%% %v', ['a', 5, { x: 1 }]), 'a=5% {"x":1}');
    assert.equal(sprintf('no args %s', []), 'no args %s');
    assert.equal(truncateNote('x'.repeat(1024)), 'x'.repeat(1024));
    const cut = truncateNote('€'.repeat(500));
    assert.ok(Buffer.byteLength(cut) <= 1024 && cut.endsWith('€...'));
    const f = new FakeRecorder();
    f.eventf(target, null, 'Warning', 'Failed', 'Create', 'pod %s', 'p1');
    assert.deepEqual(f.events, ['Warning Failed pod p1']);
  });
});
