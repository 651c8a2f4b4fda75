// Compaction keeps the database file bounded under endless updates of the same
// keys (kine/k3s grows without bound here: its compaction cannot keep up with
// "latest row per key" history).
//
// 200,000 updates of 512-byte values over 100 keys, compacting every 5,000
// revisions to the revision of the previous compaction, so at most ~10,000
// revisions of history are kept. Each kept revision costs about 700 bytes of
// log (64-byte header, key, value; log pages are filled by appends) plus about
// 130 bytes of hist index: ~8 MB, plus the current state and LMDB's free pages
// (measured: 11 MB at most). BOUND (24 MB) leaves room for that; without
// compaction the same run ends at 161 MB.
import assert from 'node:assert/strict';
import { openAt, tempDir } from './test-util';

const BOUND = 24 * 1024 * 1024;
const UPDATES = 200_000;
const KEYS = 100;
const COMPACT_EVERY = 5_000;

describe('embedded: compaction', function () {
  this.timeout(60_000);

  it(`keeps the file under ${BOUND / 1024 / 1024} MB through ${UPDATES} updates of ${KEYS} keys`, async () => {
    const tmp = tempDir();
    const s = await openAt(tmp.dir);
    try {
      const value = Buffer.alloc(512, 'v');
      const keys = Array.from({ length: KEYS }, (_, i) => `/registry/leases/kube-node-lease/node-${i}`);
      await Promise.all(keys.map((k) => s.create(k, value)));
      let written = 0;
      let compactAt = (await s.currentRevision()) + COMPACT_EVERY;
      let previousMark = 0;
      let compacting: Promise<void> = Promise.resolve();
      let maxSize = 0;
      const compactions: Promise<void>[] = [];
      // One writer per key, each updating its key as fast as commits allow.
      await Promise.all(
        keys.map(async (key) => {
          let kv = (await s.get(key)).kv!;
          while (written < UPDATES) {
            written++;
            kv = await s.update(key, value, kv.modRevision);
            if (kv.modRevision >= compactAt) {
              compactAt = kv.modRevision + COMPACT_EVERY;
              const target = previousMark;
              previousMark = kv.modRevision;
              compacting = compacting.then(async () => {
                if (target > 0) await s.compact(target);
                maxSize = Math.max(maxSize, await s.dbSize());
              });
              compactions.push(compacting);
            }
          }
        }),
      );
      await Promise.all(compactions);
      const size = await s.dbSize();
      maxSize = Math.max(maxSize, size);
      assert.ok(s.compactedRevision() > UPDATES - 3 * COMPACT_EVERY, 'compaction kept up');
      assert.ok(maxSize < BOUND, `database file reached ${(maxSize / 1e6).toFixed(1)} MB`);
      // History below the last compaction is gone, the current state is all there.
      assert.equal(await s.count('/registry/leases/'), KEYS);
    } finally {
      await s.close();
      tmp.remove();
    }
  });
});
