// etcd going away and coming back: error mapping while it is down, watches
// resuming after a restart, fail-over between endpoints, and TLS.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { collect } from '../conformance';
import { isStorageError } from '../errors';
import type { StorageEvent } from '../interface';
import { type EtcdServer, etcdAvailable, freePort, startEtcd } from './etcd-server';
import { type EtcdStorage, openEtcdStorage } from './index';
import { setSilent } from '../../../shared/log';

const b = (s: string) => Buffer.from(s);

/** Retries fn until it succeeds (etcd just restarted and the channel is reconnecting). */
async function eventually<T>(fn: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** True when /proc says the process is stopped (state T). */
function isStopped(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('T') ?? false;
  } catch {
    return false;
  }
}

async function rejectsWithin(p: Promise<unknown>, codes: string[], ms: number): Promise<void> {
  const started = Date.now();
  const err = await p.then(
    () => assert.fail('expected a failure'),
    (e) => e,
  );
  const took = Date.now() - started;
  assert.ok(
    codes.some((c) => isStorageError(err, c as never)),
    `expected one of ${codes.join(', ')}, got ${String(err)}`,
  );
  assert.ok(took < ms, `took ${took} ms`);
}

describe('etcd3 storage when etcd fails', function () {
  this.timeout(40_000);
  const servers: EtcdServer[] = [];
  const clients: EtcdStorage[] = [];
  let p: string;

  before(function () {
    if (!etcdAvailable()) {
      console.warn(
        '    etcd is not installed (apt-get install etcd-server): skipping etcd3 resilience tests',
      );
      this.skip();
    }
    // Outages are the point here; their warnings are expected.
    setSilent(true);
  });
  after(() => setSilent(false));
  beforeEach(() => {
    p = `/resilience/${randomUUID()}/`;
  });
  afterEach(async () => {
    await Promise.all(clients.splice(0).map((s) => s.close()));
    await Promise.all(servers.splice(0).map((e) => e.stop()));
  });

  const etcd = async (opts?: Parameters<typeof startEtcd>[0]) => {
    const e = await startEtcd(opts);
    servers.push(e);
    return e;
  };
  const client = async (opts: Parameters<typeof openEtcdStorage>[0]) => {
    const s = await openEtcdStorage({ compactionIntervalMs: 0, ...opts });
    clients.push(s);
    return s;
  };

  it('maps errors while etcd is down and resumes watches without gaps after a restart', async () => {
    const e1 = await etcd();
    const s = await client({ servers: [e1.endpoint] });
    const from = await s.currentRevision();
    const w = s.watch(p, from);
    const before: number[] = [];
    for (let i = 0; i < 3; i++) before.push((await s.create(`${p}a${i}`, b(String(i)))).modRevision);
    assert.deepEqual(
      (await collect(w, 3)).map((e) => e.revision),
      before,
    );

    await e1.stop({ keepDataDir: true });
    servers.splice(servers.indexOf(e1), 1);
    await rejectsWithin(s.checkHealth(500), ['Unavailable', 'Timeout'], 1_500);
    await rejectsWithin(s.get(p + 'a0'), ['Unavailable', 'Timeout'], 3_000);
    await rejectsWithin(s.create(p + 'x', b('x')), ['Unavailable', 'Timeout'], 3_000);
    await rejectsWithin(
      openEtcdStorage({ servers: [e1.endpoint], healthcheckTimeoutMs: 500 }),
      ['Unavailable'],
      1_500,
    );

    await etcd({ dataDir: e1.dataDir, clientPort: e1.clientPort, peerPort: e1.peerPort });
    const after: number[] = [];
    after.push((await eventually(() => s.create(`${p}b0`, b('0')))).modRevision);
    for (let i = 1; i < 3; i++) after.push((await s.create(`${p}b${i}`, b(String(i)))).modRevision);
    const evs = await collect(w, 3);
    w.stop();
    assert.deepEqual(
      evs.map((e) => [e.key.slice(p.length), e.revision]),
      after.map((r, i) => [`b${i}`, r]),
    );
    assert.ok(s.watches.streamsOpened >= 2, 'the stream was re-established');
    await s.checkHealth(2_000);
  });

  it('times out health checks against a hung etcd, and carries on when it resumes', async () => {
    const e1 = await etcd();
    const s = await client({ servers: [e1.endpoint] });
    const w = s.watch(p, await s.currentRevision());
    process.kill(e1.pid, 'SIGSTOP');
    // The signal stops every thread asynchronously: wait until the kernel says it is stopped.
    for (let i = 0; i < 200 && !isStopped(e1.pid); i++) await sleep(10);
    try {
      await rejectsWithin(s.checkHealth(300), ['Timeout'], 1_000);
    } finally {
      process.kill(e1.pid, 'SIGCONT');
    }
    await s.checkHealth(2_000);
    const kv = await s.create(p + 'k', b('v'));
    assert.equal((await collect(w, 1))[0]?.revision, kv.modRevision);
    w.stop();
  });

  it('fails a resumed watcher whose revision was compacted meanwhile, naming the compaction', async () => {
    const e1 = await etcd();
    const s = await client({ servers: [e1.endpoint] });
    const from = await s.currentRevision();
    const idle = s.watch(p + 'idle/', from);
    const busy = s.watch(p + 'busy/', from);
    for (let i = 0; i < 3; i++) await s.create(`${p}busy/${i}`, b('x'));
    assert.equal((await collect(busy, 3)).length, 3);
    const cur = await s.currentRevision();
    await s.compact(cur);
    // Both are caught up, so compaction leaves them alone, until they must be re-created.
    s.watches.reconnect();
    let err: unknown;
    try {
      for await (const _ of idle) {
        /* nothing may arrive */
      }
    } catch (e) {
      err = e;
    }
    assert.ok(isStorageError(err, 'Compacted'), `expected Compacted, got ${String(err)}`);
    assert.equal((err as { revision?: number }).revision, cur);
    // The busy watcher resumed after its last event, which the compaction kept.
    const next = await s.create(`${p}busy/after`, b('y'));
    const evs: StorageEvent[] = await collect(busy, 1);
    busy.stop();
    assert.equal(evs[0]?.revision, next.modRevision);
  });

  it('uses the first healthy endpoint and fails over when it goes away', async () => {
    const dead = `http://127.0.0.1:${await freePort()}`;
    const e1 = await etcd();
    const e2 = await etcd();
    const s = await client({ servers: [dead, e1.endpoint, e2.endpoint], healthcheckTimeoutMs: 1_000 });
    assert.equal(s.conn.endpoint, e1.endpoint);
    await s.create(p + 'on-e1', b('1'));
    await e1.stop();
    servers.splice(servers.indexOf(e1), 1);
    // Reads are retried on the next endpoint (a separate etcd here, so the key is absent).
    const got = await eventually(() => s.get(p + 'on-e1'), 5_000);
    assert.equal(got.kv, null);
    assert.equal(s.conn.endpoint, e2.endpoint);
    await s.create(p + 'on-e2', b('2'));
  });

  it('talks to etcd over TLS with a client certificate', async function () {
    let dir: string | undefined;
    try {
      dir = mkdtempSync(path.join(tmpdir(), 'tkube-etcd-tls-'));
      makeCerts(dir);
    } catch (err) {
      if (dir) rmSync(dir, { recursive: true, force: true });
      console.warn(`    cannot make certificates with openssl (${String(err)}): skipping`);
      this.skip();
    }
    try {
      const f = (n: string) => path.join(dir!, n);
      const e = await etcd({
        tls: {
          certFile: f('server.crt'),
          keyFile: f('server.key'),
          caFile: f('ca.crt'),
          clientCertAuth: true,
          clientCertFile: f('client.crt'),
          clientKeyFile: f('client.key'),
        },
      });
      assert.ok(e.endpoint.startsWith('https://'));
      const tls = { caFile: f('ca.crt'), certFile: f('client.crt'), keyFile: f('client.key') };
      const s = await client({ servers: [e.endpoint], tls });
      const w = s.watch(p, await s.currentRevision());
      const kv = await s.create(p + 'k', b('secret'));
      assert.equal((await s.get(p + 'k')).kv?.value.toString(), 'secret');
      assert.equal((await collect(w, 1))[0]?.revision, kv.modRevision);
      w.stop();
      // Without a client certificate etcd refuses the connection.
      await rejectsWithin(
        openEtcdStorage({ servers: [e.endpoint], tls: { caFile: f('ca.crt') }, healthcheckTimeoutMs: 1_000 }),
        ['Unavailable'],
        3_000,
      );
    } finally {
      rmSync(dir!, { recursive: true, force: true });
    }
  });
});

/** A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl. */
function makeCerts(dir: string): void {
  const run = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'pipe' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  run(
    'req',
    '-x509',
    ...ec,
    '-keyout',
    'ca.key',
    '-out',
    'ca.crt',
    '-days',
    '1',
    '-subj',
    '/CN=tkube-test-ca',
  );
  const exts = {
    server: 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth\n',
    client: 'extendedKeyUsage=clientAuth\n',
  };
  for (const [name, ext] of Object.entries(exts)) {
    writeFileSync(path.join(dir, `${name}.ext`), ext);
    run('req', ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=tkube-${name}`);
    run(
      ...['x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.crt', '-CAkey', 'ca.key', '-CAcreateserial'],
      ...['-out', `${name}.crt`, '-days', '1', '-extfile', `${name}.ext`],
    );
  }
}
