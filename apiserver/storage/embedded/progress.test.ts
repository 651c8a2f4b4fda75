// Progress notifications of the embedded store's watches: what consistent reads
// from the watch cache rely on.
import assert from 'node:assert/strict';
import type { StorageEvent } from '../interface';
import type { EmbeddedStorage } from './index';
import { openAt, tempDir } from './test-util';

describe('embedded storage: watch progress', () => {
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

  /** Applies each batch synchronously, the way the watch cache does. */
  function follow(prefix: string, from = 0) {
    const seen: StorageEvent[] = [];
    const w = s.watch(prefix, from);
    const done = (async () => {
      for await (const batch of w) seen.push(...batch);
    })();
    return { w, seen, done };
  }

  it('resolves once the consumer holds every acknowledged write of its prefix', async () => {
    const { w, seen, done } = follow('/a/');
    for (let i = 0; i < 50; i++) {
      const kv = await s.create(`/a/${i}`, Buffer.from('x'));
      // Writes to other prefixes move the revision without events for this watch.
      const other = await s.create(`/b/${i}`, Buffer.from('y'));
      const rev = await w.progress!();
      assert.ok(rev !== undefined && rev >= other.modRevision, `progress ${rev} < ${other.modRevision}`);
      assert.equal(seen.at(-1)?.revision, kv.modRevision);
    }
    w.stop();
    await done;
  });

  it('waits for a consumer that is behind, and answers undefined once the watch ended', async () => {
    const w = s.watch('/a/', 0);
    const it = w[Symbol.asyncIterator]();
    const first = it.next(); // the consumer waits
    await s.create('/a/1', Buffer.from('x'));
    await s.create('/a/2', Buffer.from('x'));
    let settled: number | undefined | 'pending' = 'pending';
    const p = w.progress!().then((r) => (settled = r));
    await new Promise((r) => setTimeout(r, 20));
    // The first batch is handed out but the consumer has not asked for the second yet.
    assert.equal(settled, 'pending');
    assert.equal((await first).value![0].key, '/a/1');
    const second = await it.next();
    assert.equal(second.value![0].key, '/a/2');
    void it.next();
    assert.equal(await p, await s.currentRevision());
    w.stop();
    assert.equal(await w.progress!(), undefined);
  });

  it('answers undefined while a watch from an old revision still replays', async () => {
    for (let i = 0; i < 5; i++) await s.create(`/a/${i}`, Buffer.from('x'));
    const w = s.watch('/a/', 1);
    assert.equal(await w.progress!(), undefined);
    w.stop();
  });
});
