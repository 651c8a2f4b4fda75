import assert from 'node:assert/strict';
import { allProtoMessages } from '../api/schema';
import { encodeObject, ProtobufError } from './protobuf';
import { decodeWatchFrameBody, encodeWatchFrame, WatchFrameDecoder } from './watch-frame';

const pod = (name: string, rv: string) => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name, namespace: 'default', resourceVersion: rv },
  spec: { containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }] },
});

describe('protobuf watch frames', () => {
  const events = [
    { type: 'ADDED', object: pod('a', '1') },
    { type: 'MODIFIED', object: pod('a', '2') },
    { type: 'BOOKMARK', object: { apiVersion: 'v1', kind: 'Pod', metadata: { resourceVersion: '3' } } },
    { type: 'DELETED', object: pod('a', '4') },
    {
      type: 'ERROR',
      object: {
        apiVersion: 'v1',
        kind: 'Status',
        status: 'Failure',
        message: 'too old',
        reason: 'Expired',
        code: 410,
      },
    },
  ];

  it('frame layout: big-endian length + bare WatchEvent{type, object: RawExtension{raw: envelope}}', () => {
    const env = encodeObject(pod('x', '9'));
    const f = encodeWatchFrame('ADDED', env);
    assert.equal(f.readUInt32BE(0), f.length - 4);
    assert.notDeepEqual([...f.subarray(4, 8)], [0x6b, 0x38, 0x73, 0x00]); // no magic on the event itself
    const num = (m: string, field: string) => allProtoMessages()[m].fields.find((x) => x.name === field)!.n;
    const WE = 'k8s.io.apimachinery.pkg.apis.meta.v1.WatchEvent';
    assert.equal(f[4], num(WE, 'type') * 8 + 2);
    assert.equal(f[5], 5);
    assert.equal(f.subarray(6, 11).toString(), 'ADDED');
    assert.equal(f[11], num(WE, 'object') * 8 + 2);
    const lenBytes = f[12] > 127 ? 2 : 1;
    assert.equal(f[12 + lenBytes], num('k8s.io.apimachinery.pkg.runtime.RawExtension', 'raw') * 8 + 2);
    assert.ok(f.subarray(-env.length).equals(env));
    const ev = decodeWatchFrameBody(f.subarray(4));
    assert.equal(ev.type, 'ADDED');
    assert.deepStrictEqual(ev.object, pod('x', '9'));
    assert.ok(ev.raw!.equals(env));
  });

  it('round-trips a stream split at every possible point', () => {
    const stream = Buffer.concat(events.map((e) => encodeWatchFrame(e.type, encodeObject(e.object))));
    for (let cut = 0; cut <= stream.length; cut++) {
      const d = new WatchFrameDecoder();
      const got = [...d.push(stream.subarray(0, cut)), ...d.push(stream.subarray(cut))];
      d.end();
      assert.deepStrictEqual(
        got.map((e) => ({ type: e.type, object: e.object })),
        events,
      );
    }
  });

  it('byte-at-a-time and one big chunk give the same events', () => {
    const stream = Buffer.concat(events.map((e) => encodeWatchFrame(e.type, encodeObject(e.object))));
    const d = new WatchFrameDecoder();
    const got = [];
    for (let i = 0; i < stream.length; i++) got.push(...d.push(stream.subarray(i, i + 1)));
    assert.equal(d.pending, 0);
    assert.deepStrictEqual(
      got.map((e) => e.type),
      events.map((e) => e.type),
    );
  });

  it('reports a stream that ends inside a frame, and oversized frames', () => {
    const f = encodeWatchFrame('ADDED', encodeObject(pod('a', '1')));
    const d = new WatchFrameDecoder();
    assert.deepStrictEqual(d.push(f.subarray(0, 10)), []);
    assert.throws(() => d.end(), ProtobufError);
    const small = new WatchFrameDecoder({ maxFrameBytes: 16 });
    assert.throws(() => small.push(f), /exceeds/);
  });

  it('an event without an object', () => {
    const f = encodeWatchFrame('BOOKMARK', Buffer.alloc(0));
    const [ev] = new WatchFrameDecoder().push(f);
    assert.equal(ev.type, 'BOOKMARK');
    assert.equal(ev.object, undefined);
  });
});
