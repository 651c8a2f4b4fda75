// etcd's MVCC and transaction rules in the stand-in's KV service, on a real lmdb journal in
// a temp dir: revisions, versions, tombstones, atomic txns with one revision, compares,
// rejected txns that change nothing, compaction and a reopen.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CmpResult, Target } from '../shared/etcd/rpc';
import { Reader, encode, lenTag, varintTag } from '../shared/etcd/wire';
import type { Compare, RangeRequest, RequestOp } from './messages';
import { EtcdStore } from './store';

const range = (key: string, o: Partial<RangeRequest> = {}): RangeRequest => ({
  key,
  end: '',
  limit: 0,
  revision: 0,
  sortOrder: 0,
  sortTarget: 0,
  keysOnly: false,
  countOnly: false,
  minMod: 0,
  maxMod: 0,
  minCreate: 0,
  maxCreate: 0,
  ...o,
});
const put = (key: string, value: string, lease = 0n): RequestOp => ({
  kind: 'put',
  put: { key, value: Buffer.from(value), lease, prevKv: false, ignoreValue: false, ignoreLease: false },
});
const del = (key: string, end = ''): RequestOp => ({ kind: 'delete', del: { key, end, prevKv: false } });
const cmp = (key: string, target: Target, result: CmpResult, operand: number | string): Compare => ({
  key,
  end: '',
  target,
  result,
  number: typeof operand === 'number' ? operand : 0,
  value: Buffer.from(typeof operand === 'string' ? operand : ''),
  lease: 0n,
});

interface Kv {
  key: string;
  value: string;
  create: number;
  mod: number;
  version: number;
}

/** A RangeResponse as encoded on the wire, read back: header revision, kvs, count. */
function decodeRange(fields: ReturnType<EtcdStore['range']>): {
  rev: number;
  kvs: Kv[];
  count: number;
  more: boolean;
} {
  const r = new Reader(encode(fields));
  const out = { rev: 0, kvs: [] as Kv[], count: 0, more: false };
  while (r.more) {
    const t = r.tag();
    if (t === lenTag(1)) {
      const h = r.sub();
      while (h.more) {
        const ht = h.tag();
        if (ht === varintTag(3)) out.rev = h.varint();
        else h.skip(ht);
      }
    } else if (t === lenTag(2)) {
      const k = r.sub();
      const kv: Kv = { key: '', value: '', create: 0, mod: 0, version: 0 };
      while (k.more) {
        const kt = k.tag();
        if (kt === lenTag(1)) kv.key = k.string();
        else if (kt === varintTag(2)) kv.create = k.varint();
        else if (kt === varintTag(3)) kv.mod = k.varint();
        else if (kt === varintTag(4)) kv.version = k.varint();
        else if (kt === lenTag(5)) kv.value = k.string();
        else k.skip(kt);
      }
      out.kvs.push(kv);
    } else if (t === varintTag(3)) out.more = r.bool();
    else if (t === varintTag(4)) out.count = r.varint();
    else r.skip(t);
  }
  return out;
}

describe('tkube etcd: MVCC and transactions', () => {
  let dir: string;
  let store: EtcdStore;
  const get = (key: string, o: Partial<RangeRequest> = {}) => decodeRange(store.range(range(key, o)));
  const txn = (compare: Compare[], success: RequestOp[], failure: RequestOp[] = []) =>
    store.txn({ compare, success, failure });

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-etcd-mvcc-'));
    store = new EtcdStore({ dataDir: join(dir, 'data'), fsync: false });
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('gives each write the next revision; version counts from 1 and a delete resets it', async () => {
    assert.equal(store.published, 1, 'etcd starts at revision 1');
    await txn([], [put('a', 'v1')]);
    await txn([], [put('a', 'v2')]);
    assert.deepEqual(get('a').kvs, [{ key: 'a', value: 'v2', create: 2, mod: 3, version: 2 }]);
    await txn([], [del('a')]);
    assert.equal(store.published, 4, 'a delete is a revision');
    assert.deepEqual(get('a').kvs, []);
    await txn([], [put('a', 'v3')]);
    assert.deepEqual(get('a').kvs, [{ key: 'a', value: 'v3', create: 5, mod: 5, version: 1 }]);
    // History: each revision reads as it was.
    assert.equal(get('a', { revision: 3 }).kvs[0].value, 'v2');
    assert.deepEqual(get('a', { revision: 4 }).kvs, []);
    assert.equal(get('a', { revision: 4 }).rev, 5, 'the header names the current revision');
  });

  it('applies a transaction atomically at one revision, and reads inside it see its writes', async () => {
    await txn([], [put('x', '0')]);
    const res = await txn(
      [cmp('x', Target.Version, CmpResult.Equal, 1)],
      [put('y', '1'), put('z', '2'), { kind: 'range', range: range('y') }],
    );
    assert.equal(res.succeeded, true);
    const y = get('y').kvs[0];
    const z = get('z').kvs[0];
    assert.equal(y.mod, 3);
    assert.equal(z.mod, 3, 'both puts share the revision');
    assert.equal(store.published, 3);
    assert.equal(decodeRange([[1, []], ...res.ops[2]]).kvs[0].value, '1');
  });

  it('compares version, create, mod, value and lease with each result, a missing key as zero', async () => {
    await txn([], [put('k', 'b')]); // rev 2, version 1
    await txn([], [put('k', 'b')]); // rev 3, version 2
    const holds = async (c: Compare) => (await txn([c], [])).succeeded;
    assert.equal(await holds(cmp('k', Target.Version, CmpResult.Equal, 2)), true);
    assert.equal(await holds(cmp('k', Target.Version, CmpResult.Greater, 2)), false);
    assert.equal(await holds(cmp('k', Target.Version, CmpResult.Less, 3)), true);
    assert.equal(await holds(cmp('k', Target.Create, CmpResult.Equal, 2)), true);
    assert.equal(await holds(cmp('k', Target.Mod, CmpResult.NotEqual, 3)), false);
    assert.equal(await holds(cmp('k', Target.Mod, CmpResult.Greater, 2)), true);
    assert.equal(await holds(cmp('k', Target.Value, CmpResult.Equal, 'b')), true);
    assert.equal(await holds(cmp('k', Target.Value, CmpResult.Greater, 'a')), true);
    assert.equal(await holds(cmp('k', Target.Value, CmpResult.Less, 'a')), false);
    assert.equal(await holds({ ...cmp('k', Target.Lease, CmpResult.Equal, 0), lease: 0n }), true);
    assert.equal(await holds(cmp('missing', Target.Create, CmpResult.Equal, 0)), true);
    assert.equal(await holds(cmp('missing', Target.Version, CmpResult.Equal, 0)), true);
    assert.equal(await holds(cmp('missing', Target.Value, CmpResult.NotEqual, 'x')), false);
    assert.equal(store.published, 3, 'read-only transactions write nothing');
  });

  it('takes the failure branch when a compare fails', async () => {
    const res = await txn(
      [cmp('k', Target.Create, CmpResult.Greater, 0)],
      [put('k', 'yes')],
      [put('f', 'no')],
    );
    assert.equal(res.succeeded, false);
    assert.deepEqual(get('k').kvs, []);
    assert.equal(get('f').kvs[0].value, 'no');
  });

  it("rejects a transaction whole: an unknown lease, a key twice, a put inside a delete's range", async () => {
    await txn([], [put('a', '1')]);
    await assert.rejects(txn([], [put('b', '1'), put('c', '1', 12345n)]), /requested lease not found/);
    await assert.rejects(txn([], [put('b', '1'), put('b', '2')]), /duplicate key given in txn request/);
    await assert.rejects(txn([], [del('a', 'z'), put('b', '1')]), /duplicate key given in txn request/);
    assert.equal(store.published, 2);
    assert.deepEqual(get('b').kvs, []);
    assert.equal(get('a').kvs.length, 1);
  });

  it('deletes a range counting the keys, and a delete of nothing is no revision', async () => {
    await txn([], [put('p/1', 'a'), put('p/2', 'b'), put('q', 'c')]);
    const res = await txn([], [del('p/', 'p0')]);
    const r = new Reader(encode(res.ops[0]));
    assert.equal(r.tag(), varintTag(2));
    assert.equal(r.varint(), 2, 'deleted');
    assert.equal(store.published, 3);
    assert.deepEqual(
      get('', { end: '\0' }).kvs.map((k) => k.key),
      ['q'],
    );
    await txn([], [del('nothing')]);
    assert.equal(store.published, 3);
  });

  it('pages a range with limit, more and count, and keys_only/count_only', async () => {
    await txn([], [put('r/a', '1'), put('r/b', '2'), put('r/c', '3')]);
    const page = get('r/', { end: 'r0', limit: 2 });
    assert.deepEqual(
      page.kvs.map((k) => k.key),
      ['r/a', 'r/b'],
    );
    assert.equal(page.more, true);
    assert.equal(page.count, 3);
    assert.equal(get('r/', { end: 'r0', keysOnly: true }).kvs[0].value, '');
    const counted = get('r/', { end: 'r0', countOnly: true });
    assert.equal(counted.kvs.length, 0);
    assert.equal(counted.count, 3);
  });

  it('compacts as etcd: older revisions are gone, the latest version stays, and a reopen keeps it all', async () => {
    await txn([], [put('c', '1')]); // 2
    await txn([], [put('c', '2')]); // 3
    await txn([], [put('gone', 'x')]); // 4
    await txn([], [del('gone')]); // 5
    await store.compact(4);
    assert.throws(() => get('c', { revision: 3 }), /required revision has been compacted/);
    assert.throws(() => get('c', { revision: 9 }), /required revision is a future revision/);
    await assert.rejects(store.compact(4), /required revision has been compacted/);
    assert.equal(get('c', { revision: 4 }).kvs[0].value, '2');
    await store.close();
    store = new EtcdStore({ dataDir: join(dir, 'data'), fsync: false });
    assert.equal(store.published, 5);
    assert.equal(store.mvcc.compacted, 4);
    assert.deepEqual(get('c').kvs, [{ key: 'c', value: '2', create: 2, mod: 3, version: 2 }]);
    assert.deepEqual(get('gone').kvs, []);
    await txn([], [put('c', '3')]);
    assert.deepEqual(get('c').kvs[0], { key: 'c', value: '3', create: 2, mod: 6, version: 3 });
  });
});
