// The group-commit path and the watch replay-to-live handover under load.
import assert from 'node:assert/strict';
import type { KeyValue, StorageEvent } from '../interface';
import { isStorageError } from '../errors';
import { collect } from '../conformance';
import { guaranteedUpdate } from '../guaranteed-update';
import type { EmbeddedStorage } from './index';
import { openAt, tempDir } from './test-util';

describe('embedded: group commit', function () {
  this.timeout(60_000);
  let tmp: ReturnType<typeof tempDir>;
  let s: EmbeddedStorage;
  beforeEach(async () => {
    tmp = tempDir();
    s = await openAt(tmp.dir);
  });
  afterEach(async () => {
    await s.close();
    tmp.remove();
  });

  it('orders 64 concurrent conflicting writers into consecutive revisions, each landing once', async () => {
    const counters = ['/gc/c0', '/gc/c1', '/gc/c2', '/gc/c3'];
    for (const c of counters) await s.create(c, Buffer.from('0'));
    const start = await s.currentRevision();
    const watch = s.watch('/gc/', start);
    const acked: KeyValue[] = [];
    let conflicts = 0;
    const perWriter = 25;
    await Promise.all(
      Array.from({ length: 64 }, async (_, w) => {
        for (let i = 0; i < perWriter; i++) {
          if (i % 5 === 4) {
            acked.push(await s.create(`/gc/own/${w}/${i}`, Buffer.from(`${w}.${i}`)));
            continue;
          }
          const key = counters[(w + i) % counters.length];
          // A blind CAS first, to see conflicts surface with the current value.
          const cur = (await s.get(key)).kv!;
          try {
            acked.push(await s.update(key, Buffer.from(String(Number(cur.value) + 1)), cur.modRevision));
            continue;
          } catch (err) {
            assert.ok(isStorageError(err, 'Conflict'), String(err));
            assert.ok(err.current && err.current.modRevision > cur.modRevision);
            conflicts++;
          }
          const r = await guaranteedUpdate<number>(s, key, {
            decode: (kv) => Number(kv.value),
            encode: (n) => Buffer.from(String(n)),
            tryUpdate: (n) => n! + 1,
          });
          acked.push(r.kv);
        }
      }),
    );
    const end = await s.currentRevision();
    assert.ok(conflicts > 0, 'the test produced conflicts');
    const increments = 64 * perWriter * (4 / 5);
    let total = 0;
    for (const c of counters) total += Number((await s.get(c)).kv!.value);
    assert.equal(total, increments);
    // Every acknowledged write has its own revision, and they fill (start, end].
    const revs = acked.map((kv) => kv.modRevision).sort((a, b) => a - b);
    assert.deepEqual(
      revs,
      Array.from({ length: end - start }, (_, i) => start + 1 + i),
    );
    // The watcher saw exactly those, in order, with the acknowledged values.
    const events = await collect(watch, end - start);
    watch.stop();
    const byRev = new Map(acked.map((kv) => [kv.modRevision, kv]));
    assert.deepEqual(
      events.map((e) => e.revision),
      revs,
    );
    for (const e of events) assert.equal(e.kv!.value.toString(), byRev.get(e.revision)!.value.toString());
  });

  it('hands a replaying watch over to live delivery with no gap and no duplicate while writes go on', async () => {
    const from = await s.currentRevision();
    // More history than one replay step returns (1,000 events) and scans (20,000 entries).
    const mine: Promise<KeyValue>[] = [];
    for (let i = 0; i < 3000; i++) {
      mine.push(s.create(`/ho/mine/${i}`, Buffer.from(String(i))));
      if (i % 3 === 0) for (let j = 0; j < 24; j++) void s.create(`/ho/noise/${i}/${j}`, Buffer.from('n'));
    }
    await Promise.all(mine);
    const w = s.watch('/ho/mine/', from, { bufferSize: 200 });
    const got: StorageEvent[] = [];
    let writing = true;
    const writer = (async () => {
      for (let i = 3000; writing; i++) await s.create(`/ho/mine/${i}`, Buffer.from(String(i)));
    })();
    for await (const batch of w) {
      got.push(...batch);
      if (got.length >= 3500) break;
    }
    writing = false;
    await writer;
    for (let i = 0; i < got.length; i++) {
      assert.equal(got[i].key, `/ho/mine/${i}`, `event ${i} in order, once`);
      if (i > 0) assert.ok(got[i].revision > got[i - 1].revision);
    }
  });

  it('refuses bad keys without touching the batch they would have joined', async () => {
    const results = await Promise.allSettled([
      s.create('/ok/1', Buffer.from('a')),
      s.create('', Buffer.from('b')),
      s.create('/bad/\x00nul', Buffer.from('c')),
      s.create('/bad/' + 'x'.repeat(2000), Buffer.from('d')),
      s.create('/ok/2', Buffer.from('e')),
    ]);
    assert.deepEqual(
      results.map((r) => (r.status === 'fulfilled' ? 'ok' : (r.reason as { code: string }).code)),
      ['ok', 'InvalidObject', 'InvalidObject', 'InvalidObject', 'ok'],
    );
    assert.equal(await s.count('/ok/'), 2);
  });

  it('commits what was queued before close, then refuses and ends watches', async () => {
    await s.create('/cl/before', Buffer.from('x'));
    const replaying = s.watch('/cl/', 1);
    const w = s.watch('/cl/', 0);
    const pending = Array.from({ length: 200 }, (_, i) => s.create(`/cl/${i}`, Buffer.from('x')));
    const closing = s.close();
    const done = await Promise.allSettled(pending);
    assert.ok(done.every((r) => r.status === 'fulfilled'));
    await closing;
    await assert.rejects(s.create('/cl/late', Buffer.from('x')), (e) => isStorageError(e, 'Closed'));
    await assert.rejects(s.get('/cl/0'), (e) => isStorageError(e, 'Closed'));
    // The watch ends once it has handed out what it was given.
    const seen = await collect(w, 1000, 5000);
    assert.ok(seen.length <= 200);
    assert.equal((await replaying[Symbol.asyncIterator]().next()).done, true);
    await assert.rejects(s.watch('/cl/', 0)[Symbol.asyncIterator]().next(), (e) =>
      isStorageError(e, 'Closed'),
    );
    s = await openAt(tmp.dir);
    assert.equal(await s.count('/cl/'), 201);
  });

  it('rolls back a whole batch whose transaction fails, and carries on', async () => {
    const w = s.watch('/rb/', 0);
    const before = await s.create('/rb/before', Buffer.from('x'));
    // Make the history index write fail for one key, half way through its batch.
    type Put = (k: [string, number], v: Buffer) => unknown;
    const hist = (s as unknown as { writer: { dbs: { hist: { put: Put } } } }).writer.dbs.hist;
    const put = hist.put.bind(hist);
    hist.put = (k, v) => {
      if (k[0] === '/rb/boom') throw new Error('injected');
      return put(k, v);
    };
    const batch = await Promise.allSettled([
      s.create('/rb/a', Buffer.from('a')),
      s.create('/rb/boom', Buffer.from('b')),
      s.create('/rb/c', Buffer.from('c')),
    ]);
    hist.put = put;
    assert.deepEqual(
      batch.map((r) => (r.status === 'rejected' ? (r.reason as { code: string }).code : 'ok')),
      ['Unavailable', 'Unavailable', 'Unavailable'],
    );
    assert.equal(await s.currentRevision(), before.modRevision, 'nothing of the batch was kept');
    assert.equal(await s.count('/rb/'), 1);
    const after = await s.create('/rb/a', Buffer.from('a'));
    assert.equal(after.modRevision, before.modRevision + 1);
    const evs = await collect(w, 2);
    w.stop();
    assert.deepEqual(
      evs.map((e) => e.key),
      ['/rb/before', '/rb/a'],
    );
    await s.checkHealth(1000);
    await assert.rejects(s.create('/rb/str', 'not a buffer' as unknown as Buffer), { code: 'InvalidObject' });
  });

  it('tells onCommitted the revision before the write is acknowledged, and later writes see it', async () => {
    const base = await s.create('/oc/k', Buffer.from('0'));
    let told = 0;
    let ackedBeforeTold = false;
    const write = s.update('/oc/k', Buffer.from('1'), base.modRevision, {
      onCommitted: (rev) => {
        told = rev;
      },
    });
    void write.then(() => (ackedBeforeTold = told === 0));
    // Once told, a write compared against that revision goes through while the first may still be syncing.
    while (told === 0) await new Promise((r) => setImmediate(r));
    const next = await s.update('/oc/k', Buffer.from('2'), told);
    const first = await write;
    assert.equal(ackedBeforeTold, false, 'told before the acknowledgement');
    assert.equal(first.modRevision, told);
    assert.equal(next.modRevision, told + 1);
    // Not told: a failed compare, and a write without the hook.
    let toldConflict = false;
    await assert.rejects(
      s.update('/oc/k', Buffer.from('x'), base.modRevision, { onCommitted: () => (toldConflict = true) }),
      (e) => isStorageError(e, 'Conflict'),
    );
    assert.equal(toldConflict, false);
  });

  it('stores and replays large values', async () => {
    const big = Buffer.alloc(2 * 1024 * 1024);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) & 0xff;
    const other = Buffer.from(big).reverse();
    const a = await s.create('/big/k', big);
    const b = await s.update('/big/k', other, a.modRevision);
    const d = await s.delete('/big/k');
    assert.ok((await s.get('/big/k', a.modRevision)).kv!.value.equals(big));
    assert.ok((await s.get('/big/k', b.modRevision)).kv!.value.equals(other));
    const w = s.watch('/big/', a.modRevision - 1);
    const evs = await collect(w, 3);
    w.stop();
    assert.deepEqual(
      evs.map((e) => e.revision),
      [a.modRevision, b.modRevision, d.revision],
    );
    assert.ok(evs[1].prevKv!.value.equals(big) && evs[1].kv!.value.equals(other));
    assert.ok(evs[2].prevKv!.value.equals(other));
  });

  it('refuses to open one directory twice in a process', async () => {
    await assert.rejects(openAt(tmp.dir), (e) => isStorageError(e, 'Unavailable'));
  });

  it('runs the periodic compactor', async () => {
    await s.close();
    s = await openAt(tmp.dir, { compactionIntervalMs: 50 });
    const first = await s.create('/pc/k', Buffer.from('0'));
    let kv = first;
    const deadline = Date.now() + 10_000;
    while (s.compactedRevision() <= first.modRevision && Date.now() < deadline) {
      kv = await s.update('/pc/k', Buffer.from(String(kv.modRevision)), kv.modRevision);
      await new Promise((r) => setTimeout(r, 5));
    }
    assert.ok(s.compactedRevision() > first.modRevision, 'compacted past the first write');
    await assert.rejects(s.get('/pc/k', first.modRevision), (e) => isStorageError(e, 'Compacted'));
  });
});
