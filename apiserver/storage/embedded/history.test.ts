// Reads at past revisions, compaction and watch replay checked against a model
// of the whole history: thousands of revisions, so historic reads go both
// through the log scan (recent revisions) and through the hist index (older).
import assert from 'node:assert/strict';
import type { KeyValue, Storage, StorageEvent } from '../interface';
import { isStorageError } from '../errors';
import { collect } from '../conformance';
import { openAt, rng, tempDir } from './test-util';

interface MKv {
  value: string;
  createRevision: number;
  modRevision: number;
}
interface MEvent {
  revision: number;
  type: 'create' | 'update' | 'delete';
  key: string;
  kv: MKv | null;
  prev: MKv | null;
}

const KEYS = [
  ...Array.from({ length: 30 }, (_, i) => `/h/a/k${String(i).padStart(2, '0')}`),
  ...Array.from({ length: 10 }, (_, i) => `/h/ab/k${i}`),
];

class Model {
  events: MEvent[] = [];
  current = new Map<string, MKv>();

  apply(e: MEvent): void {
    this.events.push(e);
    if (e.kv) this.current.set(e.key, e.kv);
    else this.current.delete(e.key);
  }

  stateAt(revision: number): Map<string, MKv> {
    const state = new Map<string, MKv>();
    for (const e of this.events) {
      if (e.revision > revision) break;
      if (e.kv) state.set(e.key, e.kv);
      else state.delete(e.key);
    }
    return state;
  }
}

const plain = (kv: KeyValue | null): MKv | null =>
  kv && { value: kv.value.toString(), createRevision: kv.createRevision, modRevision: kv.modRevision };

/** Writes in waves of concurrent operations on distinct keys, so the model can predict every outcome. */
async function churn(s: Storage, model: Model, waves: number, seed: number): Promise<void> {
  const rand = rng(seed);
  let expectedRev = await s.currentRevision();
  for (let w = 0; w < waves; w++) {
    const keys = [...KEYS].sort(() => rand() - 0.5).slice(0, 16);
    const ops = keys.map(async (key, i) => {
      const cur = model.current.get(key);
      const value = `${key}@${w}.${i}`;
      const r = rand();
      if (!cur) {
        if (r < 0.05) {
          await assert.rejects(s.update(key, Buffer.from(value), 1), (e) => isStorageError(e, 'KeyNotFound'));
          return null;
        }
        const kv = await s.create(key, Buffer.from(value));
        return { revision: kv.modRevision, type: 'create', key, kv: plain(kv), prev: null } as MEvent;
      }
      if (r < 0.05) {
        await assert.rejects(s.update(key, Buffer.from(value), cur.modRevision - 1), (e) =>
          isStorageError(e, 'Conflict'),
        );
        return null;
      }
      if (r < 0.2) {
        const d = await s.delete(key, r < 0.12 ? cur.modRevision : undefined);
        return { revision: d.revision, type: 'delete', key, kv: null, prev: plain(d.prevKv) } as MEvent;
      }
      const kv = await s.update(key, Buffer.from(value), cur.modRevision);
      assert.equal(kv.createRevision, cur.createRevision);
      return { revision: kv.modRevision, type: 'update', key, kv: plain(kv), prev: cur } as MEvent;
    });
    const done = (await Promise.all(ops)).filter((e): e is MEvent => e !== null);
    done.sort((a, b) => a.revision - b.revision);
    for (const e of done) {
      assert.equal(e.revision, ++expectedRev, 'revisions are consecutive');
      if (e.prev) assert.deepEqual(e.prev, model.current.get(e.key));
      model.apply(e);
    }
  }
}

async function checkReadsAt(s: Storage, model: Model, revision: number): Promise<void> {
  const state = model.stateAt(revision);
  for (const key of KEYS) {
    const got = await s.get(key, revision);
    assert.deepEqual(plain(got.kv), state.get(key) ?? null, `get ${key} at ${revision}`);
  }
  const want = [...state.entries()]
    .filter(([k]) => k.startsWith('/h/a/'))
    .sort(([a], [b]) => (a < b ? -1 : 1))
    .map(([key, kv]) => ({ key, ...kv }));
  const all = await s.range('/h/a/', { revision });
  assert.equal(all.revision, revision);
  assert.deepEqual(
    all.kvs.map((kv) => ({ key: kv.key, ...plain(kv) })),
    want,
    `range at ${revision}`,
  );
  // Paged, continuing after the last key like kube's continue tokens.
  const seen: string[] = [];
  let startKey: string | undefined;
  for (;;) {
    const page = await s.range('/h/a/', { revision, limit: 7, startKey });
    seen.push(...page.kvs.map((kv) => kv.key));
    assert.equal(page.remaining, want.length - seen.length, `remaining at ${revision} after ${seen.length}`);
    assert.equal(page.more, page.remaining > 0);
    if (!page.more) break;
    startKey = page.kvs[page.kvs.length - 1].key + '\x00';
  }
  assert.deepEqual(
    seen,
    want.map((w) => w.key),
  );
}

function sampleRevisions(from: number, to: number): number[] {
  const picks = [to, to - 1, to - 17, to - 500, to - 2047, to - 2049, to - 2600, from + 3, from + 1, from];
  return [...new Set(picks.filter((r) => r >= from && r <= to))];
}

const asModel = (e: StorageEvent): MEvent => ({
  revision: e.revision,
  type: e.type,
  key: e.key,
  kv: plain(e.kv),
  prev: plain(e.prevKv),
});

describe('embedded: history', function () {
  this.timeout(60_000);

  it('reads at any kept revision, compacts, replays, and keeps it all across a reopen', async () => {
    const tmp = tempDir();
    let s = await openAt(tmp.dir);
    try {
      const model = new Model();
      await churn(s, model, 260, 42);
      const current = await s.currentRevision();
      const first = model.events[0].revision;
      assert.ok(current - first > 3000, `enough history (${current - first} revisions)`);
      for (const r of sampleRevisions(first - 1, current)) await checkReadsAt(s, model, r);

      // Compact in the middle: keys changed on both sides of it need their
      // previous value carried over into the first kept event.
      const compacted = current - 1500;
      await s.compact(compacted);
      assert.equal(s.compactedRevision(), compacted);
      await assert.rejects(s.get(KEYS[0], compacted - 1), (e) => isStorageError(e, 'Compacted'));
      await assert.rejects(s.range('/h/', { revision: compacted - 1 }), (e) =>
        isStorageError(e, 'Compacted'),
      );
      for (const r of sampleRevisions(compacted, current)) await checkReadsAt(s, model, r);

      const replay = async (st: Storage) => {
        const w = st.watch('/h/', compacted - 1);
        const want = model.events.filter((e) => e.revision >= compacted);
        const got = await collect(w, want.length);
        w.stop();
        assert.deepEqual(got.map(asModel), want);
      };
      await replay(s);

      await s.close();
      s = await openAt(tmp.dir);
      assert.equal(await s.currentRevision(), current);
      assert.equal(s.compactedRevision(), compacted);
      for (const r of sampleRevisions(compacted, current)) await checkReadsAt(s, model, r);
      await replay(s);
      const next = await s.create('/h/after-reopen', Buffer.from('x'));
      assert.equal(next.modRevision, current + 1);
    } finally {
      await s.close();
      tmp.remove();
    }
  });

  it('resumes a compaction cut short by a restart', async () => {
    const tmp = tempDir();
    let s = await openAt(tmp.dir);
    try {
      const model = new Model();
      await churn(s, model, 150, 11);
      const current = await s.currentRevision();
      const target = current - 300;
      // Recorded, then cut off by close() after its first chunks.
      const compacting = s.compact(target).catch((e: unknown) => e);
      await new Promise((r) => setImmediate(r));
      await s.close();
      assert.ok(isStorageError(await compacting, 'Closed'), 'close() cut the compaction short');
      s = await openAt(tmp.dir);
      assert.equal(s.compactedRevision(), target);
      // Correct while the deletions resume in the background...
      for (const r of sampleRevisions(target, current)) await checkReadsAt(s, model, r);
      // ...and after they are done (a compaction one past waits for all of them).
      await s.compact(target + 1);
      for (const r of sampleRevisions(target + 1, current)) await checkReadsAt(s, model, r);
      const w = s.watch('/h/', target);
      const want = model.events.filter((e) => e.revision > target);
      const got = await collect(w, want.length);
      w.stop();
      assert.deepEqual(got.map(asModel), want);
    } finally {
      await s.close();
      tmp.remove();
    }
  });

  it('keeps history intact through a compaction running concurrently with writes', async () => {
    const tmp = tempDir();
    const s = await openAt(tmp.dir);
    try {
      const model = new Model();
      await churn(s, model, 120, 7);
      const target = await s.currentRevision();
      // Compaction deletes in chunks between write batches: interleave them.
      const [, ,] = await Promise.all([s.compact(target - 200), churn(s, model, 60, 8), s.compact(target)]);
      const current = await s.currentRevision();
      for (const r of sampleRevisions(target, current)) await checkReadsAt(s, model, r);
      const w = s.watch('/h/', target - 1);
      const want = model.events.filter((e) => e.revision >= target);
      const got = await collect(w, want.length);
      w.stop();
      assert.deepEqual(got.map(asModel), want);
    } finally {
      await s.close();
      tmp.remove();
    }
  });
});
