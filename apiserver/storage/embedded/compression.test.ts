// The store's kv and log records are LZ4-compressed by lmdb-js, and records written
// before compression was on (by an older tkube) must read back unchanged.
import assert from 'node:assert/strict';
import { open } from 'lmdb';
import { openDbs } from './dbs';
import { CREATE, encodeKv, encodeLog, Event, Kv, kvKeys, logKeys, Scratch, UPDATE } from './codec';
import { tempDir } from './test-util';

/** A value that compresses well, and one whose first byte is LZ4's marker. */
const big = Buffer.from('k8s\0' + '{"f:metadata":{"f:labels":{}}}'.repeat(100));
const marked = Buffer.concat([Buffer.from([0xff, 0xfe, 0xfa]), Buffer.alloc(1500, 7)]);

/** The raw bytes of kv and log as stored, read with no codec and no compression. */
function rawRecords(dir: string, key: string, rev: number): { kv: Buffer; log: Buffer } {
  const env = open({ path: dir, maxDbs: 8 });
  try {
    const kvDb = env.openDB({ name: 'kv', encoding: 'binary', keyEncoder: kvKeys } as never);
    const logDb = env.openDB({ name: 'log', encoding: 'binary', keyEncoder: logKeys } as never);
    return { kv: Buffer.from(kvDb.getBinary(key)!), log: Buffer.from(logDb.getBinary(rev)!) };
  } finally {
    env.close();
  }
}

describe('embedded: compressed records', () => {
  it('stores large records compressed and reads them back', async () => {
    const t = tempDir();
    try {
      const dbs = openDbs(t.dir);
      const s = new Scratch();
      const kv = new Kv('/registry/a', big, 2 ** 40, 2 ** 40 + 1, 0);
      await dbs.env.transaction(() => {
        dbs.kv.put('/registry/a', encodeKv(s, kv));
        dbs.log.put(2 ** 40 + 1, encodeLog(s, UPDATE, '/registry/a', 2 ** 40 + 1, kv, kv, true));
      });
      const got = dbs.kv.get('/registry/a')!;
      assert.deepEqual([got.value, got.createRevision, got.modRevision], [big, 2 ** 40, 2 ** 40 + 1]);
      const ev = dbs.log.get(2 ** 40 + 1) as Event;
      assert.deepEqual([ev.kv!.value, ev.prevKv!.value], [big, big]);
      await dbs.env.close();

      const raw = rawRecords(t.dir, '/registry/a', 2 ** 40 + 1);
      assert.ok(raw.kv.length < big.length / 2, `kv record of ${raw.kv.length} bytes`);
      assert.ok(raw.kv[7] >= 250, 'kv record carries the compression marker after its plain prefix');
      assert.ok(raw.log.length < big.length / 2, `log record of ${raw.log.length} bytes`);
    } finally {
      t.remove();
    }
  });

  it('reads records written without compression, and round-trips values that start with its marker', async () => {
    const t = tempDir();
    try {
      // An older store: the same records, put with no compression.
      const s = new Scratch();
      // A revision whose double's low byte is 0xfb: a marker at byte 0 would misread it.
      const rev = 2 ** 52 + 0xfb;
      const old = new Kv('/registry/old', big, rev, rev, 0);
      const env = open({ path: t.dir, maxDbs: 8 });
      const kvDb = env.openDB({ name: 'kv', encoding: 'binary', keyEncoder: kvKeys } as never);
      const logDb = env.openDB({ name: 'log', encoding: 'binary', keyEncoder: logKeys } as never);
      await env.transaction(() => {
        kvDb.put('/registry/old', Buffer.from(encodeKv(s, old)));
        logDb.put(3, Buffer.from(encodeLog(s, CREATE, '/registry/old', 3, old, null, false)));
      });
      await env.close();

      const dbs = openDbs(t.dir);
      const got = dbs.kv.get('/registry/old')!;
      assert.deepEqual([got.value, got.createRevision, got.modRevision], [big, rev, rev]);
      assert.deepEqual((dbs.log.get(3) as Event).kv!.value, big);

      const small = new Kv('/registry/m', marked, 4, 4, 0);
      await dbs.env.transaction(() => {
        dbs.kv.put('/registry/m', encodeKv(s, small));
        dbs.log.put(4, encodeLog(s, CREATE, '/registry/m', 4, small, null, false));
      });
      assert.deepEqual(dbs.kv.get('/registry/m')!.value, marked);
      assert.deepEqual((dbs.log.get(4) as Event).kv!.value, marked);
      await dbs.env.close();
    } finally {
      t.remove();
    }
  });
});
