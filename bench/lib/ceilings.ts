// What the machine can do without tkube's request path, measured in the same
// run: a store's raw write rate (64 concurrent 1 KB creates straight on the
// Storage interface, in this process), bare grpc-js Put and Range loops against
// the same etcd (no storage layer above them), a bare TLS server's GET rate, and
// the same server's watch fan-out.
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import type { Storage } from '../../apiserver/storage/interface';
import { openEmbeddedStorage } from '../../apiserver/storage/embedded/index';
import { openEtcdStorage } from '../../apiserver/storage/etcd3/index';
import { METHOD, putFields, rangeFields } from '../../apiserver/storage/etcd3/proto';
import { encode } from '../../shared/etcd/wire';
import { Api } from './api';
import { CpuMeter, NoiseMeter, forkScript, removeDir, tempDir, terminate } from './procs';
import type { Target } from './procs';
import type { BareFanoutRow, RawEtcdRow } from './results';
import { merged, median, sleep, summarize } from './stats';
import type { WatchResult } from './watch';
import { Workers } from './workers';

const VALUE = Buffer.alloc(1024, 'x');

/** Writes/s of `concurrency` writers creating fresh 1 KB keys for durationMs. */
async function writeRate(
  s: Storage,
  prefix: string,
  concurrency: number,
  durationMs: number,
): Promise<number> {
  let n = 0;
  const t0 = performance.now();
  const until = t0 + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) await s.create(`${prefix}/${n++}`, VALUE);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** Median of 3 runs, each on a fresh embedded store (what `npm run bench:storage` does). */
export async function embeddedWriteCeiling(concurrency = 64, durationMs = 3000): Promise<number> {
  const rates: number[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = tempDir('bench-store');
    const s = await openEmbeddedStorage({ dataDir: join(dir, 'db'), compactionIntervalMs: 0 });
    try {
      rates.push(await writeRate(s, '/bench/ceiling', concurrency, durationMs));
    } finally {
      await s.close();
      removeDir(dir);
    }
  }
  return median(rates);
}

/** Median of 3 runs against a running etcd, each under a fresh prefix. */
export async function etcdWriteCeiling(
  endpoint: string,
  concurrency = 64,
  durationMs = 3000,
): Promise<number> {
  const s = await openEtcdStorage({ servers: [endpoint], compactionIntervalMs: 0 });
  const rates: number[] = [];
  try {
    for (let i = 0; i < 3; i++)
      rates.push(await writeRate(s, `/bench-ceiling-${Date.now()}-${i}`, concurrency, durationMs));
  } finally {
    await s.close();
  }
  return median(rates);
}

/**
 * `concurrency` closed-loop callers of one unary etcd method on a bare grpc-js
 * client (one channel, requests pre-encoded, responses not decoded): what etcd
 * and grpc-js can do before tkube's storage layer adds anything.
 */
async function rawEtcdLoop(
  endpoint: string,
  etcdPid: number,
  method: string,
  request: (n: number) => Buffer,
  concurrency: number,
  durationMs: number,
): Promise<RawEtcdRow> {
  const target = endpoint.replace(/^https?:\/\//, '');
  const client = new grpc.Client(target, grpc.credentials.createInsecure(), {
    'grpc.max_receive_message_length': -1,
  });
  const id = (b: Buffer) => b;
  const call = (req: Buffer) =>
    new Promise<void>((resolve, reject) =>
      client.makeUnaryRequest(method, id, id, req, (err) => (err ? reject(err) : resolve())),
    );
  try {
    let n = 0;
    const loop = async (until: number) => {
      await Promise.all(
        Array.from({ length: concurrency }, async () => {
          while (performance.now() < until) await call(request(n++));
        }),
      );
    };
    await loop(performance.now() + 500); // warm-up: connection, etcd's caches
    n = 0;
    const noise = new NoiseMeter([etcdPid]);
    const cpu = new CpuMeter([etcdPid, process.pid]);
    const t0 = performance.now();
    await loop(t0 + durationMs);
    const wallS = (performance.now() - t0) / 1000;
    const c = cpu.read();
    const perOp = (cores: number) => (cores * c.wallS * 1e6) / Math.max(1, n);
    return {
      rate: n / wallS,
      etcdCpuUsPerOp: perOp(c.cores[0]),
      clientCpuUsPerOp: perOp(c.cores[1]),
      other: noise.read(),
    };
  } finally {
    client.close();
  }
}

/** Bare grpc-js Put of fresh 1 KB keys, 64 concurrent: etcd's write ceiling for a 1 KB create. */
export function etcdRawPutCeiling(endpoint: string, etcdPid: number, concurrency = 64, durationMs = 3000) {
  const prefix = `/bench-raw-put-${Date.now()}/`;
  return rawEtcdLoop(
    endpoint,
    etcdPid,
    METHOD.put,
    (n) => encode(putFields({ key: `${prefix}${n}`, value: VALUE })),
    concurrency,
    durationMs,
  );
}

/** Bare grpc-js linearizable Range of one 1 KB key, 64 concurrent: etcd's ceiling for a consistent GET. */
export async function etcdRawRangeCeiling(
  endpoint: string,
  etcdPid: number,
  concurrency = 64,
  durationMs = 3000,
): Promise<RawEtcdRow> {
  const key = `/bench-raw-range-${Date.now()}`;
  const s = await openEtcdStorage({ servers: [endpoint], compactionIntervalMs: 0 });
  try {
    await s.create(key, VALUE);
  } finally {
    await s.close();
  }
  const req = encode(rangeFields({ key }));
  return rawEtcdLoop(endpoint, etcdPid, METHOD.range, () => req, concurrency, durationMs);
}

export interface BareServer {
  target: Target;
  pid: number;
  stop(): Promise<void>;
}

/** Forks bench/bare-server.js with the apiserver's serving certificate. */
export async function startBareServer(certDir: string, creds: Omit<Target, 'origin'>): Promise<BareServer> {
  const c = forkScript('bare-server.js', [
    join(certDir, 'apiserver.crt'),
    join(certDir, 'apiserver.key'),
    join(certDir, 'ca.crt'),
  ]);
  const port = await new Promise<number>((resolve, reject) => {
    c.once('message', (m: { port: number }) => resolve(m.port));
    c.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    target: { origin: `https://127.0.0.1:${port}`, ...creds },
    pid: c.pid!,
    stop: () => terminate(c, 3000),
  };
}

/**
 * The watch scenario's load on the bare server: `watchers` watches over `procs`
 * worker processes (the same receivers: HTTP/1.1 connections, or with `h2` one
 * connection per worker), `updates` events at `rate`/s, each written to every
 * watch with no API work in between.
 */
export async function bareFanoutCeiling(
  bare: BareServer,
  o: { watchers: number; updates: number; warmup: number; rate: number; procs: number; h2: boolean },
): Promise<BareFanoutRow> {
  const ww = new Workers(Math.min(o.procs, o.watchers));
  try {
    const per = Array.from(
      { length: ww.size },
      (_, i) => Math.floor(o.watchers / ww.size) + (i < o.watchers % ww.size ? 1 : 0),
    );
    const opened = (
      await Promise.all(
        per.map((n, i) =>
          ww.run<number>(i, {
            kind: 'watch-open',
            target: bare.target,
            path: '/watch',
            watchers: n,
            h2: o.h2,
          }),
        ),
      )
    ).reduce((s, n) => s + n, 0);
    await sleep(1000);
    const api = new Api(bare.target, 1);
    // The same warm-up as tkube's watch rows: its events are not counted.
    if (o.warmup > 0) {
      const w = await api.call('POST', `/fanout?updates=${o.warmup}&rate=${o.rate}`);
      if (w.status !== 200) throw new Error(`bare fan-out warm-up: ${w.status}`);
      await Promise.all(
        per.map((_, i) => ww.run<number>(i, { kind: 'watch-settle', expect: o.warmup, timeoutMs: 30_000 })),
      );
    }
    const noise = new NoiseMeter();
    const cpu = new CpuMeter(ww.pids);
    const r = await api.call('POST', `/fanout?updates=${o.updates}&rate=${o.rate}`);
    await api.close();
    if (r.status !== 200) throw new Error(`bare fan-out: ${r.status}`);
    const served = JSON.parse(r.body.toString()) as { writes: number; cpuUsPerWrite: number };
    const parts = await Promise.all(
      per.map((_, i) =>
        ww.run<WatchResult>(i, { kind: 'watch-collect', expect: o.updates, timeoutMs: 30_000 }),
      ),
    );
    const c = cpu.read();
    const s = summarize(merged(parts.map((p) => p.lat)));
    return {
      h2: o.h2,
      watchers: opened,
      updates: o.updates,
      warmup: o.warmup,
      rate: o.rate,
      p50: s.p50,
      p99: s.p99,
      max: s.max,
      delivered: parts.reduce((n, p) => n + p.received, 0),
      expected: opened * o.updates,
      serverCpuUsPerWrite: served.cpuUsPerWrite,
      clientCpu: c.cores.reduce((x, y) => x + y, 0),
      other: noise.read(),
    };
  } finally {
    await ww.close();
  }
}
