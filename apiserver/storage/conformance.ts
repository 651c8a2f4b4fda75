// The one conformance suite every Storage backend must pass, unchanged.
// A backend's test file calls describeStorageConformance with a fixture.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import type { Storage, StorageEvent, StorageWatch } from './interface';
import { isStorageError, type StorageErrorCode } from './errors';
import { guaranteedUpdate } from './guaranteed-update';

export interface StorageFixture {
  /** A store for one test. Keys a test writes are under a fresh prefix, so stores may be shared. */
  open(): Promise<Storage>;
  /** Called after each test with the store open() returned. */
  release(storage: Storage): Promise<void>;
  /** Called once after the suite. */
  teardown?(): Promise<void>;
}

const b = (s: string) => Buffer.from(s);

async function rejectsWith(p: Promise<unknown>, code: StorageErrorCode): Promise<any> {
  try {
    await p;
  } catch (err) {
    assert.ok(isStorageError(err, code), `expected StorageError ${code}, got ${String(err)}`);
    return err;
  }
  assert.fail(`expected StorageError ${code}, but the call succeeded`);
}

/** Reads a watch until `count` events arrived or timeoutMs passed. */
export async function collect(w: StorageWatch, count: number, timeoutMs = 10_000): Promise<StorageEvent[]> {
  const out: StorageEvent[] = [];
  const it = w[Symbol.asyncIterator]();
  const deadline = Date.now() + timeoutMs;
  while (out.length < count) {
    const left = deadline - Date.now();
    if (left <= 0) break;
    let timer: NodeJS.Timeout | undefined;
    const step = await Promise.race([
      it.next(),
      new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), left))),
    ]);
    clearTimeout(timer);
    if (step === 'timeout' || step.done) break;
    out.push(...step.value);
  }
  return out;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function describeStorageConformance(name: string, fixture: StorageFixture): void {
  describe(`storage conformance: ${name}`, function () {
    this.timeout(60_000);
    let s: Storage;
    let p: string; // this test's key prefix

    beforeEach(async () => {
      s = await fixture.open();
      p = `/conformance/${randomUUID()}/`;
    });
    afterEach(async () => {
      await fixture.release(s);
    });
    after(async () => {
      await fixture.teardown?.();
    });

    describe('create and get', () => {
      it('creates a key, refuses a second create, and reads it back', async () => {
        const kv = await s.create(p + 'a', b('one'));
        assert.equal(kv.key, p + 'a');
        assert.equal(kv.value.toString(), 'one');
        assert.equal(kv.createRevision, kv.modRevision);
        assert.ok(kv.modRevision > 0);
        const err = await rejectsWith(s.create(p + 'a', b('two')), 'KeyExists');
        assert.equal(err.key, p + 'a');
        const got = await s.get(p + 'a');
        assert.equal(got.kv?.value.toString(), 'one');
        assert.equal(got.kv?.modRevision, kv.modRevision);
        assert.ok(got.revision >= kv.modRevision);
        assert.equal((await s.get(p + 'missing')).kv, null);
      });

      it('gives every write the next revision', async () => {
        const r0 = await s.currentRevision();
        const a = await s.create(p + 'a', b('1'));
        const b2 = await s.update(p + 'a', b('2'), a.modRevision);
        const d = await s.delete(p + 'a');
        assert.ok(a.modRevision > r0);
        assert.ok(b2.modRevision > a.modRevision);
        assert.equal(b2.createRevision, a.createRevision);
        assert.ok(d.revision > b2.modRevision);
        assert.equal(d.prevKv.value.toString(), '2');
        assert.equal(await s.currentRevision(), d.revision);
      });

      it('reads a key at an exact historic revision', async () => {
        const v1 = await s.create(p + 'k', b('v1'));
        const v2 = await s.update(p + 'k', b('v2'), v1.modRevision);
        await s.create(p + 'other', b('x'));
        const v3 = await s.update(p + 'k', b('v3'), v2.modRevision);
        const del = await s.delete(p + 'k');
        assert.equal((await s.get(p + 'k', v1.modRevision)).kv?.value.toString(), 'v1');
        assert.equal((await s.get(p + 'k', v2.modRevision)).kv?.value.toString(), 'v2');
        assert.equal((await s.get(p + 'k', v2.modRevision + 1)).kv?.value.toString(), 'v2');
        const at3 = await s.get(p + 'k', v3.modRevision);
        assert.equal(at3.kv?.value.toString(), 'v3');
        assert.equal(at3.kv?.modRevision, v3.modRevision);
        assert.equal(at3.kv?.createRevision, v1.modRevision);
        assert.equal(at3.revision, v3.modRevision);
        assert.equal((await s.get(p + 'k', del.revision)).kv, null);
        assert.equal((await s.get(p + 'k', v1.modRevision - 1)).kv, null);
      });

      it('answers Compacted for a revision below the compaction and FutureRevision beyond the current', async () => {
        const v1 = await s.create(p + 'k', b('v1'));
        const v2 = await s.update(p + 'k', b('v2'), v1.modRevision);
        const v3 = await s.update(p + 'k', b('v3'), v2.modRevision);
        await s.compact(v3.modRevision);
        const err = await rejectsWith(s.get(p + 'k', v1.modRevision), 'Compacted');
        assert.ok((err.revision ?? 0) >= v3.modRevision);
        await rejectsWith(s.range(p, { revision: v2.modRevision }), 'Compacted');
        assert.equal((await s.get(p + 'k', v3.modRevision)).kv?.value.toString(), 'v3');
        assert.equal((await s.get(p + 'k')).kv?.value.toString(), 'v3');
        const cur = await s.currentRevision();
        const fut = await rejectsWith(s.get(p + 'k', cur + 1000), 'FutureRevision');
        assert.ok((fut.revision ?? 0) >= cur);
      });
    });

    describe('range', () => {
      it('lists keys under a prefix in key order, not keys of a sibling prefix', async () => {
        for (const k of ['c', 'a', 'b']) await s.create(p + 'x/' + k, b(k));
        await s.create(p + 'xy/z', b('sibling'));
        await s.create(p + 'x', b('prefix itself is not under x/'));
        const r = await s.range(p + 'x/');
        assert.deepEqual(
          r.kvs.map((kv) => kv.key),
          ['a', 'b', 'c'].map((k) => p + 'x/' + k),
        );
        assert.equal(r.more, false);
        assert.equal(r.remaining, 0);
        assert.equal(await s.count(p + 'x/'), 3);
        assert.equal(r.revision, await s.currentRevision());
      });

      it('pages with limit and continue at one fixed revision, counting the remaining keys', async () => {
        for (let i = 0; i < 10; i++) await s.create(`${p}k${i}`, b(`v${i}`));
        const first = await s.range(p, { limit: 4 });
        assert.equal(first.kvs.length, 4);
        assert.equal(first.more, true);
        assert.equal(first.remaining, 6);
        const rev = first.revision;
        // Change the data under the reader: a consistent snapshot must not see it.
        await s.delete(`${p}k5`);
        const k6 = (await s.get(`${p}k6`)).kv!;
        await s.update(`${p}k6`, b('changed'), k6.modRevision);
        await s.create(`${p}k55`, b('new'));
        const seen = first.kvs.map((kv) => kv.key);
        let last = first;
        while (last.more) {
          const startKey = last.kvs[last.kvs.length - 1].key + '\x00';
          last = await s.range(p, { limit: 4, revision: rev, startKey });
          assert.equal(last.revision, rev);
          seen.push(...last.kvs.map((kv) => kv.key));
          if (last.more) assert.equal(last.remaining, 10 - seen.length);
        }
        assert.deepEqual(
          seen,
          Array.from({ length: 10 }, (_, i) => `${p}k${i}`),
        );
        const all = await s.range(p, { revision: rev });
        assert.equal(all.kvs.find((kv) => kv.key === `${p}k6`)?.value.toString(), 'v6');
        const now = await s.range(p);
        assert.equal(now.kvs.length, 10);
        assert.equal(now.kvs.find((kv) => kv.key === `${p}k6`)?.value.toString(), 'changed');
        assert.ok(!now.kvs.some((kv) => kv.key === `${p}k5`));
      });
    });

    describe('compare-and-swap and guaranteedUpdate', () => {
      it('updates only at the expected modRevision, returning the current value on conflict', async () => {
        const a = await s.create(p + 'k', b('a'));
        const a2 = await s.update(p + 'k', b('b'), a.modRevision);
        const err = await rejectsWith(s.update(p + 'k', b('c'), a.modRevision), 'Conflict');
        assert.equal(err.current?.modRevision, a2.modRevision);
        assert.equal(err.current?.value.toString(), 'b');
        await rejectsWith(s.update(p + 'missing', b('x'), 1), 'KeyNotFound');
        assert.equal((await s.get(p + 'k')).kv?.value.toString(), 'b');
      });

      it('retries concurrent read-modify-writes until each lands exactly once', async () => {
        await s.create(p + 'counter', b(JSON.stringify({ metadata: { uid: 'u1' }, n: 0 })));
        type Obj = { metadata: { uid: string }; n: number };
        const opts = {
          decode: (kv: { value: Buffer }) => JSON.parse(kv.value.toString()) as Obj,
          encode: (o: Obj) => b(JSON.stringify(o)),
          uidOf: (o: Obj) => o.metadata.uid,
        };
        await Promise.all(
          Array.from({ length: 25 }, () =>
            guaranteedUpdate<Obj>(s, p + 'counter', {
              ...opts,
              tryUpdate: (cur) => ({ ...cur!, n: cur!.n + 1 }),
            }),
          ),
        );
        const final = JSON.parse((await s.get(p + 'counter')).kv!.value.toString());
        assert.equal(final.n, 25);

        // uid and resourceVersion preconditions.
        const before = (await s.get(p + 'counter')).kv!;
        await rejectsWith(
          guaranteedUpdate<Obj>(s, p + 'counter', {
            ...opts,
            preconditions: { uid: 'other' },
            tryUpdate: (cur) => ({ ...cur!, n: -1 }),
          }),
          'Conflict',
        );
        await rejectsWith(
          guaranteedUpdate<Obj>(s, p + 'counter', {
            ...opts,
            preconditions: { resourceVersion: String(before.modRevision - 1) },
            tryUpdate: (cur) => ({ ...cur!, n: -1 }),
          }),
          'Conflict',
        );
        const ok = await guaranteedUpdate<Obj>(s, p + 'counter', {
          ...opts,
          preconditions: { uid: 'u1', resourceVersion: String(before.modRevision) },
          tryUpdate: (cur) => ({ ...cur!, n: 100 }),
        });
        assert.equal(ok.written, true);
        assert.equal(ok.obj.n, 100);

        // A no-op update writes nothing and keeps the revision.
        const same = await guaranteedUpdate<Obj>(s, p + 'counter', { ...opts, tryUpdate: (cur) => cur! });
        assert.equal(same.written, false);
        assert.equal(same.kv.modRevision, ok.kv.modRevision);

        // Missing key: KeyNotFound, or created with ignoreNotFound.
        await rejectsWith(
          guaranteedUpdate<Obj>(s, p + 'nope', {
            ...opts,
            tryUpdate: () => ({ metadata: { uid: 'x' }, n: 1 }),
          }),
          'KeyNotFound',
        );
        const created = await guaranteedUpdate<Obj>(s, p + 'nope', {
          ...opts,
          ignoreNotFound: true,
          tryUpdate: (cur) => {
            assert.equal(cur, null);
            return { metadata: { uid: 'x' }, n: 1 };
          },
        });
        assert.equal(created.kv.createRevision, created.kv.modRevision);
      });
    });

    describe('delete', () => {
      it('deletes with and without a modRevision precondition and returns the last value', async () => {
        const a = await s.create(p + 'k', b('a'));
        const a2 = await s.update(p + 'k', b('b'), a.modRevision);
        const err = await rejectsWith(s.delete(p + 'k', a.modRevision), 'Conflict');
        assert.equal(err.current?.modRevision, a2.modRevision);
        assert.equal((await s.get(p + 'k')).kv?.value.toString(), 'b');
        const d = await s.delete(p + 'k', a2.modRevision);
        assert.equal(d.prevKv.value.toString(), 'b');
        assert.equal(d.prevKv.modRevision, a2.modRevision);
        assert.equal((await s.get(p + 'k')).kv, null);
        await rejectsWith(s.delete(p + 'k'), 'KeyNotFound');
        // The name can be reused; it gets a new createRevision.
        const again = await s.create(p + 'k', b('c'));
        assert.ok(again.createRevision > a.createRevision);
      });
    });

    describe('watch', () => {
      it('delivers every change after fromRevision, in order, with previous values', async () => {
        const start = await s.currentRevision();
        const a = await s.create(p + 'a', b('1'));
        await s.create(p + 'b', b('1'));
        await s.update(p + 'a', b('2'), a.modRevision);
        await s.delete(p + 'b');
        await s.create('/outside/' + randomUUID(), b('not mine'));
        const w = s.watch(p, start);
        const evs = await collect(w, 4);
        w.stop();
        assert.deepEqual(
          evs.map((e) => [
            e.type,
            e.key.slice(p.length),
            e.kv?.value.toString() ?? null,
            e.prevKv?.value.toString() ?? null,
          ]),
          [
            ['create', 'a', '1', null],
            ['create', 'b', '1', null],
            ['update', 'a', '2', '1'],
            ['delete', 'b', null, '1'],
          ],
        );
        for (let i = 1; i < evs.length; i++) assert.ok(evs[i].revision > evs[i - 1].revision);
        assert.equal(evs[0].revision, a.modRevision);
        assert.equal(evs[3].prevKv?.createRevision, evs[1].revision);
      });

      it('starts from now when fromRevision is 0, then follows live writes without gaps', async () => {
        await s.create(p + 'old', b('before the watch'));
        const w = s.watch(p, 0);
        await sleep(200);
        const writes: number[] = [];
        for (let i = 0; i < 50; i++) writes.push((await s.create(`${p}n${i}`, b(String(i)))).modRevision);
        const evs = await collect(w, 50);
        w.stop();
        assert.deepEqual(
          evs.map((e) => e.revision),
          writes,
        );
        assert.ok(!evs.some((e) => e.key === p + 'old'));
      });

      it('fails a watch from a compacted revision with Compacted', async () => {
        const a = await s.create(p + 'a', b('1'));
        const a2 = await s.update(p + 'a', b('2'), a.modRevision);
        const a3 = await s.update(p + 'a', b('3'), a2.modRevision);
        await s.compact(a3.modRevision);
        const w = s.watch(p, a.modRevision);
        let err: unknown;
        try {
          for await (const _ of w) {
            /* must not deliver */
          }
        } catch (e) {
          err = e;
        }
        assert.ok(isStorageError(err, 'Compacted'), `expected Compacted, got ${String(err)}`);
        // From the compacted revision minus one, events from the compaction on are available.
        const w2 = s.watch(p, a3.modRevision - 1);
        const evs = await collect(w2, 1);
        w2.stop();
        assert.equal(evs[0]?.revision, a3.modRevision);
      });

      it('serves 1,000 concurrent watchers', async () => {
        const from = await s.currentRevision();
        const watchers = Array.from({ length: 1000 }, () => s.watch(p, from));
        const writes = 5;
        for (let i = 0; i < writes; i++) await s.create(`${p}w${i}`, b(String(i)));
        const results = await Promise.all(watchers.map((w) => collect(w, writes, 30_000)));
        watchers.forEach((w) => w.stop());
        for (const evs of results) assert.equal(evs.length, writes);
      });

      it('cuts off a watcher that does not read, without stalling the others', async () => {
        const from = await s.currentRevision();
        const slow = s.watch(p, from, { bufferSize: 50 });
        const fast = s.watch(p, from, { bufferSize: 50 });
        const fastDone = collect(fast, 200, 30_000);
        for (let i = 0; i < 200; i++) await s.create(`${p}s${i}`, b(String(i)));
        const got = await fastDone;
        fast.stop();
        assert.equal(got.length, 200);
        let err: any;
        try {
          for await (const _ of slow) {
            /* drain until the error */
          }
        } catch (e) {
          err = e;
        }
        assert.ok(isStorageError(err, 'WatchOverflow'), `expected WatchOverflow, got ${String(err)}`);
        assert.ok(typeof err.revision === 'number' && err.revision >= from, 'resumable: names a revision');
        // Resuming from that revision replays what was missed.
        const resumed = s.watch(p, err.revision);
        const rest = await collect(resumed, 1);
        resumed.stop();
        assert.ok(rest.length > 0 && rest[0].revision > err.revision);
      });

      it('stops cleanly', async () => {
        const w = s.watch(p, 0);
        const pending = w[Symbol.asyncIterator]().next();
        w.stop();
        assert.equal((await pending).done, true);
      });
    });

    describe('TTL', () => {
      it('expires keys written with a TTL and emits delete events', async function () {
        this.timeout(30_000);
        const from = await s.currentRevision();
        const w = s.watch(p, from);
        await s.create(p + 'short', b('x'), { ttlSeconds: 2 });
        await s.create(p + 'long', b('y'));
        const evs = await collect(w, 3, 20_000);
        w.stop();
        assert.deepEqual(
          evs.map((e) => [e.type, e.key.slice(p.length)]),
          [
            ['create', 'short'],
            ['create', 'long'],
            ['delete', 'short'],
          ],
        );
        assert.equal((await s.get(p + 'short')).kv, null);
        assert.equal((await s.get(p + 'long')).kv?.value.toString(), 'y');
        assert.equal(evs[2].prevKv?.value.toString(), 'x');
      });
    });

    describe('health and size', () => {
      it('answers a health check and reports a database size', async () => {
        await s.checkHealth(2000);
        assert.ok((await s.dbSize()) > 0);
      });
    });
  });
}
