// etcd-only behaviour with one etcd and several clients: lease reuse, a watch
// on one client seeing another's writes, and coordinated compaction.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { collect } from '../conformance';
import { isStorageError } from '../errors';
import { type EtcdServer, etcdAvailable, startEtcd } from './etcd-server';
import { type EtcdStorage, openEtcdStorage } from './index';
import { COMPACT_REV_KEY } from './compaction';
import { METHOD, leaseRevokeFields } from './proto';
import { type EtcdKeyValue, decodeHeaderOnly } from './responses';
import { encode } from '../../../shared/etcd/wire';

const b = (s: string) => Buffer.from(s);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const leaseOf = (kv: unknown) => (kv as EtcdKeyValue).leaseId;

describe('etcd3 storage with several clients', function () {
  this.timeout(30_000);
  let etcd: EtcdServer | undefined;
  const open: EtcdStorage[] = [];
  let p: string;

  const client = async (opts: { compactionIntervalMs?: number; leaseReuseDurationSeconds?: number } = {}) => {
    const s = await openEtcdStorage({ servers: [etcd!.endpoint], compactionIntervalMs: 0, ...opts });
    open.push(s);
    return s;
  };

  before(async function () {
    if (!etcdAvailable()) {
      console.warn('    etcd is not installed (apt-get install etcd-server): skipping etcd3 client tests');
      this.skip();
    }
    etcd = await startEtcd();
  });
  beforeEach(() => {
    p = `/clients/${randomUUID()}/`;
  });
  afterEach(async () => {
    await Promise.all(open.splice(0).map((s) => s.close()));
  });
  after(async () => {
    await etcd?.stop();
  });

  describe('leases', () => {
    it('reuses one lease for writes with the same TTL while it still covers that TTL', async () => {
      const s = await client({ leaseReuseDurationSeconds: 1 });
      // TTL 100 gets a lease of 101 s (5% extra, capped at the 1 s reuse duration).
      const a = await s.create(p + 'a', b('a'), { ttlSeconds: 100 });
      const more = await Promise.all(
        Array.from({ length: 20 }, (_, i) => s.create(`${p}m${i}`, b('m'), { ttlSeconds: 100 })),
      );
      assert.notEqual(leaseOf(a), 0n);
      assert.ok(a.lease !== 0);
      for (const kv of more) assert.equal(leaseOf(kv), leaseOf(a));
      assert.equal(s.leases.granted, 1);
      assert.equal(leaseOf((await s.get(p + 'a')).kv), leaseOf(a), 'etcd attached the lease');

      const other = await s.create(p + 'other-ttl', b('x'), { ttlSeconds: 200 });
      assert.notEqual(leaseOf(other), leaseOf(a));

      await sleep(1_100);
      const late = await s.create(p + 'late', b('x'), { ttlSeconds: 100 });
      assert.notEqual(leaseOf(late), leaseOf(a), 'the lease no longer covers 100 s');

      // Small TTLs get no extra time, so every write needs its own lease.
      const t1 = await s.create(p + 't1', b('x'), { ttlSeconds: 2 });
      const t2 = await s.create(p + 't2', b('x'), { ttlSeconds: 2 });
      assert.notEqual(leaseOf(t1), leaseOf(t2));

      // An update without a TTL detaches the key from its lease.
      const upd = await s.update(p + 'a', b('a2'), a.modRevision);
      assert.equal(upd.lease, 0);
      assert.equal((await s.get(p + 'a')).kv?.lease, 0);
    });

    it('replaces a lease etcd no longer knows, and expiry deletes every key on a lease', async () => {
      const s = await client({ leaseReuseDurationSeconds: 60 });
      const a = await s.create(p + 'a', b('a'), { ttlSeconds: 100 });
      await s.conn.call(METHOD.leaseRevoke, encode(leaseRevokeFields(leaseOf(a))), decodeHeaderOnly, {
        idempotent: true,
      });
      assert.equal((await s.get(p + 'a')).kv, null, 'revoking deleted the key');
      const c = await s.create(p + 'c', b('c'), { ttlSeconds: 100 });
      assert.notEqual(leaseOf(c), leaseOf(a));
      assert.equal(s.leases.granted, 2);
    });
  });

  describe('two clients', () => {
    it('a watch on one client sees the writes of the other, and their CAS conflict', async () => {
      const A = await client();
      const B = await client();
      const from = await A.currentRevision();
      const w = A.watch(p, from);
      const k = await B.create(p + 'k', b('1'));
      const k2 = await A.update(p + 'k', b('2'), k.modRevision);
      const err = await B.update(p + 'k', b('3'), k.modRevision).catch((e) => e);
      assert.ok(isStorageError(err, 'Conflict'));
      assert.equal(err.current?.modRevision, k2.modRevision);
      await B.delete(p + 'k', k2.modRevision);
      const evs = await collect(w, 3);
      w.stop();
      assert.deepEqual(
        evs.map((e) => [e.type, e.kv?.value.toString() ?? null, e.prevKv?.value.toString() ?? null]),
        [
          ['create', '1', null],
          ['update', '2', '1'],
          ['delete', null, '2'],
        ],
      );
      assert.equal(A.watches.streamsOpened, 1);
    });

    it('multiplexes many watchers over one stream and stops them independently', async () => {
      const A = await client();
      const B = await client();
      const from = await A.currentRevision();
      const ws = Array.from({ length: 200 }, (_, i) => A.watch(i % 2 ? p + 'odd/' : p + 'even/', from));
      for (let i = 0; i < 10; i++) await B.create(`${p}${i % 2 ? 'odd' : 'even'}/${i}`, b(String(i)));
      const got = await Promise.all(ws.map((w) => collect(w, 5)));
      for (const [i, evs] of got.entries()) {
        assert.equal(evs.length, 5);
        assert.ok(evs.every((e) => e.key.startsWith(i % 2 ? p + 'odd/' : p + 'even/')));
      }
      assert.equal(
        A.watches.etcdWatchCount,
        2,
        'watchers of one prefix from one revision share an etcd watch',
      );
      ws.forEach((w) => w.stop());
      assert.equal(A.watches.watcherCount, 0);
      assert.equal(A.watches.etcdWatchCount, 0);
      assert.equal(A.watches.streamsOpened, 1);
    });
  });

  describe('watch sharing', () => {
    it('shares an etcd watch only when it delivers exactly what each watcher asked for', async () => {
      const s = await client();
      const vals = (evs: { kv: { value: Buffer } | null }[]) => evs.map((e) => e.kv?.value.toString());
      const now1 = s.watch(p, 0);
      await sleep(100);
      const e1 = await s.create(p + '1', b('1'));
      assert.deepEqual(vals(await collect(now1, 1)), ['1']);

      const exact = s.watch(p, e1.modRevision); // starts where the shared watch is
      const now2 = s.watch(p, 0); // from now: joins the watch that started from now
      const older = s.watch(p, e1.modRevision - 1); // needs e1 again: its own etcd watch
      assert.equal(s.watches.etcdWatchCount, 2);
      const e2 = await s.create(p + '2', b('2'));
      assert.deepEqual(vals(await collect(now1, 1)), ['2']);
      assert.deepEqual(vals(await collect(exact, 1)), ['2']);
      assert.deepEqual(vals(await collect(now2, 1)), ['2']);
      assert.deepEqual(vals(await collect(older, 2)), ['1', '2']);
      assert.equal((await collect(older, 1, 300)).length, 0, 'nothing twice');
      for (const w of [now1, exact, now2, older]) w.stop();
      assert.equal(s.watches.etcdWatchCount, 0);
      assert.ok(e2.modRevision > e1.modRevision);
    });

    it('serves hundreds of unshared etcd watches on one stream', async () => {
      const A = await client();
      const base = await A.currentRevision();
      for (let i = 0; i < 300; i++) await A.create(`${p}filler/${i}`, b('f'));
      const ws = Array.from({ length: 300 }, (_, i) => A.watch(p + 'w/', base + i));
      assert.equal(A.watches.etcdWatchCount, 300);
      const revs: number[] = [];
      for (let i = 0; i < 5; i++) revs.push((await A.create(`${p}w/${i}`, b(String(i)))).modRevision);
      const got = await Promise.all(ws.map((w) => collect(w, 5, 20_000)));
      ws.forEach((w) => w.stop());
      for (const evs of got)
        assert.deepEqual(
          evs.map((e) => e.revision),
          revs,
        );
    });
  });

  describe('compaction', () => {
    it('lets only one of several clients compact per interval (compare-and-swap on compact_rev_key)', async () => {
      const A = await client();
      const B = await client();
      const version = async () => ((await A.get(COMPACT_REV_KEY)).kv as EtcdKeyValue | null)?.version ?? 0;
      const v0 = await version();

      // First interval: A claims it; nothing to compact yet. B sees the claim and stands down.
      const a1 = await A.compactor.step();
      const b1 = await B.compactor.step();
      assert.deepEqual([a1.claimed, b1.claimed], [true, false]);
      assert.equal(a1.compacted, undefined);

      const old = await A.create(p + 'k', b('1'));
      await A.update(p + 'k', b('2'), old.modRevision);

      // Second interval: A compacts to what it saw at its previous step; B again stands down.
      const a2 = await A.compactor.step();
      const b2 = await B.compactor.step();
      assert.equal(a2.claimed, true);
      assert.equal(b2.claimed, false);
      assert.ok(a2.compacted! > 0 && a2.compacted! < old.modRevision);
      assert.equal(await version(), v0 + 2, 'one claim per interval');

      // If A stops, B takes over at its next step and compacts past the old write.
      const b3 = await B.compactor.step();
      assert.equal(b3.claimed, true);
      assert.ok(b3.compacted! > old.modRevision);
      const err = await A.get(p + 'k', old.modRevision).catch((e) => e);
      assert.ok(isStorageError(err, 'Compacted'), `expected Compacted, got ${String(err)}`);
      assert.equal(err.revision, b3.compacted);
    });

    it('runs on a timer in every client without doubling the compactions', async () => {
      const probe = await client();
      const version = async () =>
        ((await probe.get(COMPACT_REV_KEY)).kv as EtcdKeyValue | null)?.version ?? 0;
      const v0 = await version();
      const first = await probe.create(p + 'k', b('1'));
      const interval = 300;
      const started = Date.now();
      await Promise.all([
        client({ compactionIntervalMs: interval }),
        client({ compactionIntervalMs: interval }),
      ]);
      await sleep(6 * interval + 150);
      await Promise.all(open.slice(1).map((s) => s.close()));
      const intervals = Math.floor((Date.now() - started) / interval);
      const claims = (await version()) - v0;
      assert.ok(claims >= 2, `expected the clients to claim intervals, got ${claims}`);
      assert.ok(
        claims <= intervals + 1,
        `${claims} claims in ${intervals} intervals: clients did not coordinate`,
      );
      const err = await probe.get(p + 'k', first.modRevision).catch((e) => e);
      assert.ok(isStorageError(err, 'Compacted'), `expected Compacted, got ${String(err)}`);
    });
  });
});
