// gRPC over tkube's HTTP/2 client against a real etcd: unary calls and the failures a
// caller must be able to tell apart (never connected, deadline, etcd's errors), and a Watch stream.
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { type EtcdServer, etcdAvailable, startEtcd } from './etcd-server';
import { METHOD, prefixEnd, putFields, rangeFields, watchCreate } from './proto';
import { decodePut, decodeRange, decodeWatch, type WatchResp } from './responses';
import { GrpcCallError, GrpcClient, GrpcStatus } from './grpc-client';
import { encode } from '../../../shared/etcd/wire';

const failure = async (p: Promise<unknown>): Promise<GrpcCallError> => {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof GrpcCallError, `not a GrpcCallError: ${String(err)}`);
    return err;
  }
  assert.fail('the call succeeded');
};

describe('etcd3 gRPC over its own HTTP/2 client', function () {
  this.timeout(60_000);

  it('says a call never reached a server when nothing listens', async () => {
    const probe = createServer();
    await new Promise<void>((r) => probe.listen(0, '127.0.0.1', r));
    const port = (probe.address() as { port: number }).port;
    await new Promise((r) => probe.close(r));
    const c = new GrpcClient(`http://127.0.0.1:${port}`, null);
    const err = await failure(c.call(METHOD.range, encode(rangeFields({ key: 'a' })), decodeRange, 5_000));
    assert.equal(err.code, GrpcStatus.UNAVAILABLE);
    assert.match(err.details, /^No connection established/);
    c.close();
  });

  it('ends a call at its deadline when the server does not answer', async () => {
    const sockets: Socket[] = [];
    const mute: Server = createServer((s) => sockets.push(s));
    await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
    const c = new GrpcClient(`http://127.0.0.1:${(mute.address() as { port: number }).port}`, null);
    const err = await failure(c.call(METHOD.range, encode(rangeFields({ key: 'a' })), decodeRange, 200));
    assert.equal(err.code, GrpcStatus.DEADLINE_EXCEEDED);
    c.close();
    for (const s of sockets) s.destroy();
    await new Promise((r) => mute.close(r));
  });

  it('tells the server its deadline in grpc-timeout, in whole seconds from 10 s on', async () => {
    const seen: string[] = [];
    const server = http2.createServer();
    server.on('stream', (st, h) => {
      seen.push(String(h['grpc-timeout']));
      st.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      st.on('wantTrailers', () => st.sendTrailers({ 'grpc-status': '0' }));
      st.end(Buffer.from([0, 0, 0, 0, 0])); // an empty message
      st.resume();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const c = new GrpcClient(`http://127.0.0.1:${(server.address() as { port: number }).port}`, null);
    try {
      for (const ms of [200, 9_998.5, 10_001, 30_000, 1e12])
        assert.equal(await c.call(METHOD.range, Buffer.alloc(0), (b) => b.length, ms), 0);
      assert.deepEqual(seen, ['200m', '9999m', '11S', '30S', '99999999S']);
    } finally {
      c.close();
      await new Promise((r) => server.close(r));
    }
  });

  describe('against etcd', () => {
    let etcd: EtcdServer | undefined;
    let c: GrpcClient;
    before(async function () {
      if (!etcdAvailable()) this.skip();
      etcd = await startEtcd();
      c = new GrpcClient(etcd.endpoint, null);
    });
    after(async () => {
      c?.close();
      await etcd?.stop();
    });

    it('writes and reads, and passes etcd errors on with their code and message', async () => {
      const put = await c.call(
        METHOD.put,
        encode(putFields({ key: '/u/a', value: Buffer.from('v') })),
        decodePut,
        5_000,
      );
      const got = await c.call(METHOD.range, encode(rangeFields({ key: '/u/a' })), decodeRange, 5_000);
      assert.equal(got.kvs[0].value.toString(), 'v');
      assert.equal(got.kvs[0].modRevision, put.revision);
      const err = await failure(
        c.call(
          METHOD.range,
          encode(rangeFields({ key: '/u/a', revision: put.revision + 1000 })),
          decodeRange,
          5_000,
        ),
      );
      assert.equal(err.code, GrpcStatus.OUT_OF_RANGE);
      assert.match(err.details, /required revision is a future revision/);
    });

    it('drops a connection whose peer went silent, and carries on over a new one', async function () {
      this.timeout(60_000);
      // A TCP relay to etcd that can swallow everything on its open connections
      // without closing them, as a dead peer behind a partition does.
      const open: { client: Socket; upstream: Socket }[] = [];
      const relay = createServer((client) => {
        const upstream = connect(Number(new URL(etcd!.endpoint).port), '127.0.0.1');
        client.pipe(upstream);
        upstream.pipe(client);
        const pair = { client, upstream };
        open.push(pair);
        const end = () => {
          client.destroy();
          upstream.destroy();
        };
        client.on('error', end);
        upstream.on('error', end);
      });
      await new Promise<void>((r) => relay.listen(0, '127.0.0.1', r));
      const viaRelay = new GrpcClient(`http://127.0.0.1:${(relay.address() as { port: number }).port}`, null);
      const read = (ms: number) =>
        viaRelay.call(METHOD.range, encode(rangeFields({ key: '/u/a' })), decodeRange, ms);
      try {
        await c.call(
          METHOD.put,
          encode(putFields({ key: '/u/a', value: Buffer.from('v') })),
          decodePut,
          5_000,
        );
        assert.equal((await read(5_000)).kvs[0].value.toString(), 'v');
        for (const { client, upstream } of open) {
          client.unpipe(upstream);
          upstream.unpipe(client);
          upstream.destroy();
          client.pause(); // neither answer nor close: silence
        }
        assert.equal((await failure(read(300))).code, GrpcStatus.DEADLINE_EXCEEDED);
        // The deadline pinged the connection; unanswered, it is dropped and the next call reconnects.
        let ok = false;
        for (let i = 0; i < 30 && !ok; i++) {
          ok = await read(1_000).then(
            (r) => r.kvs[0].value.toString() === 'v',
            () => false,
          );
          if (!ok) await new Promise((r) => setTimeout(r, 500));
        }
        assert.ok(ok, 'no call got through after the silent connection');
      } finally {
        viaRelay.close();
        for (const { client, upstream } of open) {
          client.destroy();
          upstream.destroy();
        }
        await new Promise((r) => relay.close(r));
      }
    });

    it('receives a response far larger than the HTTP/2 windows, and many calls at once', async () => {
      const big = Buffer.alloc(1 << 20, 'b');
      for (let i = 0; i < 40; i++)
        await c.call(METHOD.put, encode(putFields({ key: `/big/${i}`, value: big })), decodePut, 10_000);
      const all = await c.call(
        METHOD.range,
        encode(rangeFields({ key: '/big/', rangeEnd: prefixEnd('/big/') })),
        decodeRange,
        30_000,
      );
      assert.equal(all.kvs.length, 40);
      assert.ok(all.kvs.every((kv) => kv.value.equals(big)));
      const reads = await Promise.all(
        Array.from({ length: 200 }, () =>
          c.call(METHOD.range, encode(rangeFields({ key: '/u/a' })), decodeRange, 10_000),
        ),
      );
      assert.ok(reads.every((r) => r.kvs[0].value.toString() === 'v'));
    });

    it('streams: watch events arrive as messages of their own, and a cancel ends the stream', async () => {
      const w = c.stream(METHOD.watch, [['hasleader', 'true']]);
      const got: WatchResp[] = [];
      const sizes: boolean[] = [];
      let waiter: (() => void) | null = null;
      w.on('data', (m: Buffer) => {
        sizes.push(m.buffer.byteLength === m.length);
        got.push(decodeWatch(m));
        waiter?.();
      });
      const until = async (n: number) => {
        while (got.length < n) await new Promise<void>((r) => (waiter = r));
      };
      w.write(
        watchCreate({
          key: '/s/',
          rangeEnd: prefixEnd('/s/'),
          startRevision: 0,
          watchId: 7,
          prevKv: false,
          fragment: true,
          progressNotify: false,
        }),
      );
      await until(1);
      assert.equal(got[0].created, true);
      const big = Buffer.alloc(100_000, 'w'); // several DATA frames
      for (const v of [Buffer.from('one'), big])
        await c.call(METHOD.put, encode(putFields({ key: '/s/k', value: v })), decodePut, 5_000);
      await until(3);
      const values = got.slice(1).flatMap((r) => r.events.map((e) => e.kv!.value));
      assert.deepEqual(values, [Buffer.from('one'), big]);
      assert.ok(got.every((r) => r.watchId === 7));
      assert.ok(sizes.every(Boolean), 'each message owns its buffer');
      const ended = new Promise<unknown>((resolve) => {
        w.on('error', resolve);
        w.on('end', () => resolve('end'));
      });
      w.cancel();
      const err = await ended;
      assert.ok(err instanceof GrpcCallError && err.code === GrpcStatus.CANCELLED, String(err));
      // The connection carries on for calls.
      assert.equal(
        (await c.call(METHOD.range, encode(rangeFields({ key: '/s/k' })), decodeRange, 5_000)).count,
        1,
      );
    });
  });
});
