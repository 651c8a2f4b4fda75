// The compact cache entry (stored bytes, decoded on demand) against the decoded
// one: the same object, attributes and encodings, whichever bytes it keeps.
import assert from 'node:assert/strict';
import { StorageCodec, jsonCodec, type ObjectCodec } from '../../registry/storage-codec';
import {
  decodeMessage,
  decodeObject,
  encodeMessage,
  encodeObject,
  hasProtobufMagic,
  protobufSupported,
} from '../../../shared/codec/protobuf';
import { goJSONText, goShapeObject } from '../../../shared/codec/go-json';
import { CachedObject, type CacheCodec } from './cached-object';

const protobuf: ObjectCodec = { encode: encodeObject, decode: decodeObject, supports: protobufSupported };

function pod(i: number): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: `p${i}`,
      namespace: 'ns',
      uid: `uid-${i}`,
      labels: { app: 'a', i: String(i) },
      managedFields: [
        {
          manager: 'kubectl',
          operation: 'Update',
          apiVersion: 'v1',
          time: '2026-11-01T10:00:00Z',
          fieldsType: 'FieldsV1',
          fieldsV1: { 'f:spec': { 'f:containers': {} } },
        },
      ],
    },
    spec: { nodeName: `node-${i % 3}`, containers: [{ name: 'c', image: 'img' }] },
    status: { phase: 'Running' },
  };
}

function codecFor(storage: StorageCodec, compact: boolean): CacheCodec {
  return {
    decode: (value, rv, key) => storage.decode(value, rv, key ?? ''),
    attrs: (obj) => ({
      labels: obj.metadata.labels ?? {},
      fields: { 'metadata.name': obj.metadata.name, 'spec.nodeName': obj.spec?.nodeName ?? '' },
    }),
    compact,
    messageDecoder: (value) =>
      hasProtobufMagic(value) ? (m: Buffer) => decodeMessage('v1', 'Pod', m) : undefined,
  };
}

const json = (obj: unknown) => Buffer.from(goJSONText(goShapeObject(obj)));
const pb = (obj: unknown) => encodeMessage('v1', 'Pod', obj);

for (const [media, preferred] of [
  ['protobuf', protobuf],
  ['json', jsonCodec],
] as const) {
  describe(`cached object: compact entries (stored as ${media})`, () => {
    const storage = new StorageCodec(preferred, protobuf);
    const kvs = Array.from({ length: 600 }, (_, i) => {
      const key = `/registry/pods/ns/p${i}`;
      // A value in a larger buffer, as a store may hand it out.
      const bytes = storage.encode(pod(i), key);
      const value = Buffer.concat([Buffer.from('xx'), bytes]).subarray(2);
      return { key, value, modRevision: 100 + i, createRevision: 100 + i, lease: 0 };
    });

    it('reads back the same object, attrs and encodings as a decoded entry', () => {
      const compact = kvs.map((kv) => CachedObject.fromKV(kv, codecFor(storage, true)));
      const decoded = kvs.map((kv) => CachedObject.fromKV(kv, codecFor(storage, false)));
      // More entries than stay decoded: most reads decode the stored bytes again.
      for (let i = 0; i < kvs.length; i++) {
        const c = compact[i];
        const d = decoded[i];
        assert.equal(c.key, d.key);
        assert.equal(c.rv, d.rv);
        assert.deepEqual(c.obj, d.obj);
        assert.equal(c.obj.metadata.resourceVersion, String(100 + i));
        assert.deepEqual(c.attrs, d.attrs);
        assert.ok(c.encoded('json', json).equals(d.encoded('json', json)));
        assert.ok(c.encoded('pb', pb).equals(d.encoded('pb', pb)));
        assert.ok(c.message('pbm', pb).equals(d.message('pbm', pb)));
        assert.ok(c.message('pbm', pb).equals(pb(d.obj)));
        assert.deepEqual(c.obj.metadata.managedFields, pod(i).metadata.managedFields);
      }
    });

    it("gives a writer a private copy that leaves the entry's object alone", () => {
      for (const compact of [true, false]) {
        const c = CachedObject.fromKV(kvs[1], codecFor(storage, compact));
        const shared = c.obj;
        const mine = c.copy();
        assert.deepEqual(mine, shared);
        assert.notEqual(mine, shared);
        mine.metadata.labels.app = 'changed';
        mine.spec.containers[0].image = 'other';
        assert.equal(c.obj.metadata.labels.app, 'a');
        assert.equal(c.obj.spec.containers[0].image, 'img');
        assert.equal(mine.metadata.resourceVersion, String(101));
      }
    });

    it('memoises each encoding once, in a buffer of its own', () => {
      const c = CachedObject.fromKV(kvs[0], codecFor(storage, true));
      let calls = 0;
      const enc = (obj: unknown) => {
        calls++;
        return Buffer.concat([Buffer.from('....'), json(obj)]).subarray(4);
      };
      const a = c.encoded('json', enc);
      const b = c.encoded('json', enc);
      assert.equal(a, b);
      assert.equal(calls, 1);
      assert.equal(a.byteOffset, 0);
      assert.equal(a.buffer.byteLength, a.length);
      assert.ok(a.equals(json(c.obj)));
      assert.notEqual(c.encoded('pb', pb), a);
    });

    it("withRV: the delete's revision in the object and its encodings; the entry itself unchanged", () => {
      const c = CachedObject.fromKV(kvs[1], codecFor(storage, true));
      const before = c.encoded('json', json);
      const del = c.withRV(999);
      assert.equal(del.rv, 999);
      assert.equal(del.obj.metadata.resourceVersion, '999');
      assert.deepEqual(del.attrs, c.attrs);
      assert.equal(JSON.parse(del.encoded('json', json).toString()).metadata.resourceVersion, '999');
      assert.equal(c.obj.metadata.resourceVersion, String(c.rv));
      assert.equal(c.encoded('json', json), before);
    });

    it("message(): made once; with Protobuf stored, it takes the stored bytes' place", () => {
      const codec = codecFor(storage, true);
      const c = CachedObject.fromKV(kvs[2], codec);
      const d = CachedObject.fromKV(kvs[2], codecFor(storage, false));
      let calls = 0;
      const counted = (obj: unknown) => (calls++, pb(obj));
      const a = c.message('pb', counted);
      assert.equal(c.message('pb', counted), a);
      assert.equal(calls, 1);
      assert.ok(a.equals(d.message('pb', pb)));
      // Read back from whichever bytes the entry now keeps: the same object and encodings.
      assert.deepEqual(c.obj, d.obj);
      assert.ok(c.encoded('json', json).equals(d.encoded('json', json)));
      assert.deepEqual(c.attrs, d.attrs);
      // A delete of the entry carries its own revision, in the object and its message.
      const del = c.withRV(4242);
      assert.equal(del.obj.metadata.resourceVersion, '4242');
      assert.deepEqual(
        { ...del.obj, metadata: { ...del.obj.metadata, resourceVersion: c.obj.metadata.resourceVersion } },
        c.obj,
      );
      assert.equal(decodeMessage('v1', 'Pod', del.message('pb', pb)).metadata.resourceVersion, '4242');
      assert.equal(c.obj.metadata.resourceVersion, String(c.rv));
    });

    it('a decoded entry keeps its object as given', () => {
      const obj = pod(7);
      const c = new CachedObject('/k', 5, obj, { labels: {}, fields: {} });
      assert.equal(c.obj, obj);
      assert.equal(c.withRV(6).obj.metadata.resourceVersion, '6');
      assert.equal(obj.metadata.resourceVersion, undefined);
    });
  });
}

describe('cached object: a new version shares what equals the previous one', () => {
  const storage = new StorageCodec(protobuf, protobuf);
  const codec = codecFor(storage, true);
  const kv = (obj: any, rv: number) => {
    const key = `/registry/pods/ns/${obj.metadata.name}`;
    return { key, value: storage.encode(obj, key), modRevision: rv, createRevision: 1, lease: 0 };
  };

  it('its key, and its labels and fields where they equal the previous ones', () => {
    const v1 = CachedObject.fromKV(kv(pod(1), 10), codec);
    // A status change: labels and fields as they were.
    const same = pod(1);
    same.status.phase = 'Succeeded';
    const v2 = CachedObject.fromKV(kv(same, 11), codec, v1);
    assert.equal(v2.key, v1.key);
    assert.equal(v2.attrs, v1.attrs);
    assert.equal(v2.obj.status.phase, 'Succeeded');
    // Moved to another node, labels changed: new objects, with the values that equal sharing.
    const moved = pod(1);
    moved.spec.nodeName = 'elsewhere';
    moved.metadata.labels.i = 'other';
    const v3 = CachedObject.fromKV(kv(moved, 12), codec, v2);
    assert.notEqual(v3.attrs.fields, v2.attrs.fields);
    assert.notEqual(v3.attrs.labels, v2.attrs.labels);
    assert.deepEqual(v3.attrs, {
      labels: { app: 'a', i: 'other' },
      fields: { 'metadata.name': 'p1', 'spec.nodeName': 'elsewhere' },
    });
    // A label removed is a change, though every label left equals the previous one.
    const fewer = pod(1);
    delete fewer.metadata.labels.i;
    const v4 = CachedObject.fromKV(kv(fewer, 13), codec, v1);
    assert.deepEqual(v4.attrs.labels, { app: 'a' });
    assert.deepEqual(v1.attrs.labels, { app: 'a', i: '1' });
  });
});
