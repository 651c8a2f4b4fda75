// The hand-written protobuf codec: round trips and etcd's wire shapes (no etcd needed).
import assert from 'node:assert/strict';
import { Reader, encode, lenTag, varintTag } from '../../../shared/etcd/wire';
import { CmpResult, Target, compare, prefixEnd, txnFields, watchCreate } from './proto';
import { decodeKeyValue, decodeTxn, decodeWatch } from './responses';

describe('etcd3 wire codec', () => {
  it('round-trips varints across the 32-bit and 53-bit boundaries', () => {
    const values = [0, 1, 127, 128, 300, 2 ** 31 - 1, 2 ** 31, 2 ** 32 + 5, 2 ** 53 - 1];
    const buf = encode(values.map((v, i) => [i + 1, v] as const));
    const r = new Reader(buf);
    for (const [i, v] of values.entries()) {
      assert.equal(r.tag(), varintTag(i + 1));
      assert.equal(r.varint(), v);
    }
    assert.equal(r.more, false);
  });

  it('round-trips 63-bit and negative int64 values as bigint', () => {
    const values = [0x7fffffffffffffffn, 7587869128437297000n, -1n];
    const r = new Reader(encode(values.map((v) => [1, v] as const)));
    for (const v of values) {
      r.tag();
      assert.equal(r.bigVarint(), v);
    }
  });

  it('encodes strings, bytes, nested messages and booleans; skips unknown fields', () => {
    const buf = encode([
      [1, 'κλειδί'],
      [9, 42],
      [2, Buffer.from([0, 255])],
      [3, [[1, true]]],
      [4, false],
    ]);
    const r = new Reader(buf);
    assert.equal(r.tag(), lenTag(1));
    assert.equal(r.string(), 'κλειδί');
    r.skip(r.tag());
    assert.equal(r.tag(), lenTag(2));
    assert.deepEqual([...r.bytes()], [0, 255]);
    assert.equal(r.tag(), lenTag(3));
    const sub = r.sub();
    assert.equal(sub.tag(), varintTag(1));
    assert.equal(sub.bool(), true);
    assert.equal(r.more, false, 'false booleans are left out');
  });

  it('writes a Compare operand even when it is 0 (it sits in a oneof)', () => {
    const buf = encode(compare('/k', Target.Create, CmpResult.Equal, 0));
    // result (0) and target (1) and key, then create_revision = 0 as field 5.
    assert.deepEqual([...buf.subarray(-2)], [varintTag(5), 0]);
  });

  it('decodes KeyValues with zero-copy values and exact lease IDs', () => {
    const lease = 0x694d8a3b1c2d3e4fn;
    const msg = encode([
      [1, '/registry/pods/default/nginx'],
      [2, 5],
      [3, 9],
      [4, 3],
      [5, Buffer.from('value')],
      [6, lease],
    ]);
    const kv = decodeKeyValue(new Reader(msg));
    assert.equal(kv.key, '/registry/pods/default/nginx');
    assert.equal(kv.createRevision, 5);
    assert.equal(kv.modRevision, 9);
    assert.equal(kv.version, 3);
    assert.equal(kv.leaseId, lease);
    assert.ok(kv.lease !== 0);
    assert.equal(kv.value.toString(), 'value');
    assert.equal(kv.value.buffer, msg.buffer, 'the value is a view of the message');
  });

  it('decodes a Txn response with a failed compare and a range answer', () => {
    const kv = [
      [1, '/k'],
      [2, 3],
      [3, 4],
      [5, 'cur'],
    ] as const;
    const msg = encode([
      [1, [[3, 17]]],
      [
        3,
        [
          [
            1,
            [
              [2, [...kv]],
              [4, 1],
            ],
          ],
        ],
      ],
    ]);
    const res = decodeTxn(msg);
    assert.equal(res.revision, 17);
    assert.equal(res.succeeded, false);
    const op = res.responses[0];
    assert.equal(op.kind, 'range');
    assert.equal(op.kind === 'range' && op.range.kvs[0].value.toString(), 'cur');
    // txnFields nests compare/success/failure as fields 1/2/3.
    const req = encode(txnFields([compare('/k', Target.Mod, CmpResult.Equal, 4)], [], []));
    assert.equal(req[0], lenTag(1));
  });

  it('decodes watch responses, including a failed create with watch_id -1', () => {
    const canceled = decodeWatch(
      encode([
        [2, -1n],
        [3, true],
        [4, true],
        [5, 12],
        [6, 'compacted'],
      ]),
    );
    assert.deepEqual(
      [
        canceled.watchId,
        canceled.created,
        canceled.canceled,
        canceled.compactRevision,
        canceled.cancelReason,
      ],
      [-1, true, true, 12, 'compacted'],
    );
    const create = watchCreate({
      key: '/a/',
      rangeEnd: prefixEnd('/a/'),
      startRevision: 0,
      watchId: 7,
      prevKv: true,
      fragment: true,
      progressNotify: false,
    });
    assert.equal(create[0], lenTag(1));
  });

  it('computes the end of a prefix range', () => {
    assert.equal(prefixEnd('/registry/pods/').toString(), '/registry/pods0');
    assert.deepEqual([...prefixEnd('a\xff')], [0x61, 0xc3, 0xc0]);
    assert.deepEqual([...prefixEnd('')], [0]);
  });
});
