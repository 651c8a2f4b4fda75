// tkube's etcd as a process (by PID), spoken to over gRPC with the apiserver's own etcd3
// client and over HTTP/1.1 on the same port: leases that expire (watchers see the DELETE),
// keep-alives, a watch from a compacted revision, a restart that keeps keys, revisions
// and leases, etcd's errors, and the flags envtest looks for.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as http2 from 'node:http2';
import { GrpcClient, GrpcStatus, type GrpcStream } from '../apiserver/storage/etcd3/grpc-client';
import {
  METHOD,
  compactionFields,
  leaseGrantFields,
  putFields,
  rangeFields,
  watchCreate,
} from '../apiserver/storage/etcd3/proto';
import {
  type WatchResp,
  decodeHeaderOnly,
  decodeLeaseGrant,
  decodePut,
  decodeRange,
  decodeWatch,
} from '../apiserver/storage/etcd3/responses';
import { Reader, encode, varintTag } from '../shared/etcd/wire';
import { MAX_STREAM_PENDING } from './grpc';
import { type EtcdServer, standInCommand, startStandIn } from './testing';

const T = 5_000;

/** Reads watch responses off a stream as they come. */
class Responses {
  private readonly got: WatchResp[] = [];
  private wake: (() => void) | null = null;
  constructor(readonly stream: GrpcStream) {
    stream.on('data', (b: Buffer) => {
      this.got.push(decodeWatch(b));
      this.wake?.();
    });
    stream.on('error', () => {});
  }
  async next(timeoutMs = 10_000): Promise<WatchResp> {
    const deadline = Date.now() + timeoutMs;
    while (this.got.length === 0) {
      if (Date.now() > deadline) throw new Error('no watch response in time');
      await new Promise<void>((r) => {
        this.wake = r;
        setTimeout(r, 100);
      });
    }
    return this.got.shift()!;
  }
}

function grpcFailure(p: Promise<unknown>): Promise<{ code: number; details: string }> {
  return p.then(
    () => assert.fail('expected the call to fail'),
    (err: { code: number; details: string }) => err,
  );
}

describe('tkube etcd as a process', function () {
  this.timeout(60_000);
  let etcd: EtcdServer | undefined;
  let c: GrpcClient;

  const put = (key: string, value: string, lease?: bigint) =>
    c.call(METHOD.put, encode(putFields({ key, value, lease })), decodePut, T);
  const get = (key: string, revision?: number) =>
    c.call(METHOD.range, encode(rangeFields({ key, revision })), decodeRange, T);
  const watch = (key: string, startRevision: number) => {
    const s = c.stream(METHOD.watch);
    s.write(
      watchCreate({ key, startRevision, watchId: 0, prevKv: true, fragment: false, progressNotify: false }),
    );
    return new Responses(s);
  };

  before(async () => {
    etcd = await startStandIn();
    c = new GrpcClient(etcd.endpoint, null);
  });
  after(async () => {
    c?.close();
    await etcd?.stop();
  });

  it('answers /health and /version over HTTP/1.1 on the gRPC port', async () => {
    const health = await fetch(`${etcd!.endpoint}/health`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { health: 'true', reason: '' });
    const version = (await (await fetch(`${etcd!.endpoint}/version`)).json()) as Record<string, string>;
    assert.match(version.etcdserver, /^3\.5\.\d+$/);
    assert.equal((await fetch(`${etcd!.endpoint}/nothing`)).status, 404);
  });

  it('expires a lease: its keys are deleted at a new revision and a watcher sees the DELETE', async () => {
    const grant = await c.call(METHOD.leaseGrant, encode(leaseGrantFields(1)), decodeLeaseGrant, T);
    assert.equal(grant.ttl, 2, "etcd's minimum TTL");
    const a = await put('/lease/a', 'x', grant.id);
    const w = watch('/lease/a', a.revision + 1);
    assert.equal((await w.next()).created, true);
    const gone = await w.next();
    assert.equal(gone.events.length, 1);
    assert.equal(gone.events[0].type, 1, 'DELETE');
    assert.equal(gone.events[0].prevKv?.value.toString(), 'x');
    assert.ok(gone.events[0].kv!.modRevision > a.revision);
    assert.equal((await get('/lease/a')).kvs.length, 0);
    // TimeToLive of a gone lease: TTL -1.
    const ttl = await c.call(
      METHOD.leaseTimeToLive,
      encode([[1, grant.id]]),
      (b) => {
        const r = new Reader(b);
        let v = 0n;
        while (r.more) {
          const t = r.tag();
          if (t === varintTag(3)) v = r.bigVarint();
          else r.skip(t);
        }
        return v;
      },
      T,
    );
    assert.equal(ttl, -1n);
    w.stream.cancel();
  });

  it('keeps a lease alive while keep-alives come, and answers TTL 0 for an unknown one', async () => {
    const grant = await c.call(METHOD.leaseGrant, encode(leaseGrantFields(2)), decodeLeaseGrant, T);
    await put('/lease/kept', 'x', grant.id);
    const ka = c.stream(METHOD.leaseKeepAlive);
    const ttls: bigint[] = [];
    ka.on('data', (b: Buffer) => {
      const r = new Reader(b);
      while (r.more) {
        const t = r.tag();
        if (t === varintTag(3)) ttls.push(BigInt(r.varint()));
        else r.skip(t);
      }
    });
    ka.on('error', () => {});
    for (let i = 0; i < 6; i++) {
      ka.write(encode([[1, grant.id]]));
      await new Promise((r) => setTimeout(r, 500));
    }
    assert.equal((await get('/lease/kept')).kvs.length, 1, 'alive after 3 s on a 2 s lease');
    assert.ok(ttls.length >= 6 && ttls.every((t) => t === 2n), String(ttls));
    ka.write(encode([[1, 424242n]]));
    await new Promise((r) => setTimeout(r, 300));
    assert.equal(ttls[ttls.length - 1], 0n);
    ka.cancel();
  });

  it('cancels a watch from a compacted revision with compact_revision, and reads there fail', async () => {
    const first = await put('/compact/k', '1');
    const second = await put('/compact/k', '2');
    await c.call(METHOD.compact, encode(compactionFields(second.revision)), decodeHeaderOnly, T);
    const w = watch('/compact/k', first.revision);
    assert.equal((await w.next()).created, true);
    const cancelled = await w.next();
    assert.equal(cancelled.canceled, true);
    assert.equal(cancelled.compactRevision, second.revision);
    const err = await grpcFailure(get('/compact/k', first.revision));
    assert.equal(err.code, GrpcStatus.OUT_OF_RANGE);
    assert.equal(err.details, 'etcdserver: mvcc: required revision has been compacted');
    assert.equal((await get('/compact/k', second.revision)).kvs[0].value.toString(), '2');
    // From the compacted revision on, history is there.
    const later = watch('/compact/k', second.revision);
    await later.next();
    assert.equal((await later.next()).events[0].kv?.value.toString(), '2');
    later.stream.cancel();
  });

  it("refuses what etcd refuses with etcd's codes: unknown methods, a too large request", async () => {
    const unknown = await grpcFailure(c.call('/etcdserverpb.KV/Nope', encode([]), decodeHeaderOnly, T));
    assert.equal(unknown.code, GrpcStatus.UNIMPLEMENTED);
    const big = await grpcFailure(put('/big', 'x'.repeat(2 * 1024 * 1024)));
    assert.equal(big.code, GrpcStatus.INVALID_ARGUMENT);
    assert.equal(big.details, 'etcdserver: request is too large');
    const lease = await grpcFailure(put('/nolease', 'x', 987654321n));
    assert.equal(lease.code, GrpcStatus.NOT_FOUND);
    assert.equal(lease.details, 'etcdserver: requested lease not found');
  });

  it('keeps keys, revisions, history and leases across a restart on the same data dir', async () => {
    const grant = await c.call(METHOD.leaseGrant, encode(leaseGrantFields(3600)), decodeLeaseGrant, T);
    const a = await put('/restart/a', 'one');
    const b = await put('/restart/b', 'two', grant.id);
    const { dataDir, clientPort } = etcd!;
    c.close();
    await etcd!.stop({ keepDataDir: true });
    etcd = await startStandIn({ dataDir, clientPort });
    c = new GrpcClient(etcd.endpoint, null);
    const now = await get('/restart/b');
    assert.equal(now.revision, b.revision);
    assert.equal(now.kvs[0].value.toString(), 'two');
    assert.equal(now.kvs[0].leaseId, grant.id);
    assert.equal((await get('/restart/a', a.revision)).kvs[0].value.toString(), 'one');
    const next = await put('/restart/a', 'three');
    assert.equal(next.revision, b.revision + 1);
    const again = await put('/restart/c', 'x', grant.id);
    assert.ok(again.revision > 0, 'the lease survived');
  });

  it('resets a watch stream whose client stopped reading once its backlog passes the bound', async () => {
    // A client of its own (node:http2) that opens a watch and never reads.
    const session = http2.connect(etcd!.endpoint);
    session.on('error', () => {});
    const stream = session.request({
      ':method': 'POST',
      ':path': METHOD.watch,
      'content-type': 'application/grpc',
      te: 'trailers',
    });
    stream.on('error', () => {});
    const create = watchCreate({
      key: '/slow/',
      rangeEnd: Buffer.from('/slow0'),
      startRevision: 0,
      watchId: 0,
      prevKv: false,
      fragment: false,
      progressNotify: false,
    });
    const head = Buffer.alloc(5);
    head.writeUInt32BE(create.length, 1);
    stream.write(Buffer.concat([head, create]));
    stream.pause();
    const closed = new Promise<number>((r) => stream.on('close', () => r(stream.rstCode ?? 0)));
    try {
      const value = 'v'.repeat(1 << 20);
      for (let i = 0; i * (1 << 20) < MAX_STREAM_PENDING + (8 << 20); i++) await put(`/slow/${i % 8}`, value);
      // The reset goes out as the last put is published; the wait only covers a slow host.
      const still = new Promise<string>((r) => setTimeout(() => r('still open'), 10_000).unref());
      assert.equal(await Promise.race([closed, still]), http2.constants.NGHTTP2_ENHANCE_YOUR_CALM);
      // The server is fine: other calls go on.
      assert.equal((await get('/slow/0')).kvs.length, 1);
    } finally {
      session.destroy();
    }
  });

  it("answers --help with envtest's --unsafe-no-fsync line and --version, loading no server", () => {
    const [node, script] = standInCommand();
    const help = spawnSync(node, [script, '--help'], { encoding: 'utf8' });
    assert.equal(help.status, 0);
    assert.match(help.stdout, /^\s*--unsafe-no-fsync\b/m);
    const version = spawnSync(node, [script, '--version'], { encoding: 'utf8' });
    assert.equal(version.status, 0);
    assert.match(version.stdout, /^etcd Version: 3\.5\.\d+$/m);
  });
});
