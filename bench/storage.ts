// Storage backend benchmark: figures only, never pass/fail.
//   npm run bench:storage
// To add a backend, append an entry to `backends`; nothing else changes.
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import type { Storage, StorageWatch } from '../apiserver/storage/interface';
import { openEmbeddedStorage } from '../apiserver/storage/embedded/index';
import { type EtcdServer, etcdAvailable, startEtcd } from '../apiserver/storage/etcd3/etcd-server';
import { openEtcdStorage } from '../apiserver/storage/etcd3/index';

interface Backend {
  name: string;
  open(): Promise<Storage>;
  /** Closes the store open() returned and removes what it left behind. */
  close(): Promise<void>;
}

function embedded(): Backend {
  let dir = '';
  let store: Storage | null = null;
  return {
    name: 'embedded',
    async open() {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tkube-bench-'));
      store = await openEmbeddedStorage({ dataDir: dir, compactionIntervalMs: 0 });
      return store;
    },
    async close() {
      await store?.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A real etcd (Debian's etcd-server) on free ports with a temp data dir, and a client. */
function etcd3(): Backend {
  let etcd: EtcdServer | null = null;
  let store: Storage | null = null;
  return {
    name: 'etcd3',
    async open() {
      etcd = await startEtcd();
      store = await openEtcdStorage({ servers: [etcd.endpoint], compactionIntervalMs: 0 });
      return store;
    },
    async close() {
      await store?.close();
      await etcd?.stop();
    },
  };
}

const backends: Backend[] = [embedded(), ...(etcdAvailable() ? [etcd3()] : [])];

const SEQ_WRITES = 2_000;
const CONCURRENT_WRITES = 20_000;
const CONCURRENCY = 64;
const POINT_READS = 100_000;
const RANGE_KEYS = 500;
const RANGE_RUNS = 200;
const WATCHERS = 100;
const WATCH_EVENTS = 500;

const value = Buffer.alloc(1024, 'x');

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))];
}

async function sequentialWrites(s: Storage): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < SEQ_WRITES; i++) await s.create(`/bench/seq/${i}`, value);
  return SEQ_WRITES / ((performance.now() - t0) / 1000);
}

async function concurrentWrites(s: Storage): Promise<number> {
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (next < CONCURRENT_WRITES) await s.create(`/bench/conc/${next++}`, value);
    }),
  );
  return CONCURRENT_WRITES / ((performance.now() - t0) / 1000);
}

async function pointReads(s: Storage): Promise<number> {
  const t0 = performance.now();
  for (let i = 0; i < POINT_READS; i++) {
    const r = await s.get(`/bench/conc/${(i * 7919) % CONCURRENT_WRITES}`);
    if (!r.kv) throw new Error('missing key');
  }
  return POINT_READS / ((performance.now() - t0) / 1000);
}

async function rangeLatency(s: Storage): Promise<[number, number]> {
  await Promise.all(Array.from({ length: RANGE_KEYS }, (_, i) => s.create(`/bench/range/${i}`, value)));
  const times: number[] = [];
  for (let i = 0; i < RANGE_RUNS; i++) {
    const t0 = performance.now();
    const r = await s.range('/bench/range/');
    times.push(performance.now() - t0);
    if (r.kvs.length !== RANGE_KEYS) throw new Error(`range returned ${r.kvs.length}`);
  }
  times.sort((a, b) => a - b);
  return [quantile(times, 0.5), quantile(times, 0.99)];
}

/** From the start of a write to each watcher holding its event. */
async function watchLatency(s: Storage): Promise<[number, number]> {
  const from = await s.currentRevision();
  const sentAt = new Map<string, number>();
  const latencies: number[] = [];
  const watchers: StorageWatch[] = Array.from({ length: WATCHERS }, () => s.watch('/bench/watch/', from));
  const readers = watchers.map(async (w) => {
    let seen = 0;
    for await (const batch of w) {
      const now = performance.now();
      for (const e of batch) latencies.push(now - sentAt.get(e.key)!);
      seen += batch.length;
      if (seen >= WATCH_EVENTS) return;
    }
  });
  for (let i = 0; i < WATCH_EVENTS; i++) {
    const key = `/bench/watch/${i}`;
    sentAt.set(key, performance.now());
    await s.create(key, value);
  }
  await Promise.all(readers);
  watchers.forEach((w) => w.stop());
  latencies.sort((a, b) => a - b);
  return [quantile(latencies, 0.5), quantile(latencies, 0.99)];
}

const ROUNDS = 3;

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(2));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[xs.length >> 1];

/** One full pass over a fresh store; figures keyed by column name. */
async function run(b: Backend): Promise<Record<string, number>> {
  const s = await b.open();
  try {
    const seq = await sequentialWrites(s);
    const conc = await concurrentWrites(s);
    const reads = await pointReads(s);
    const [r50, r99] = await rangeLatency(s);
    const [w50, w99] = await watchLatency(s);
    return {
      'seq 1KB writes/s': seq,
      [`${CONCURRENCY}-conc 1KB writes/s`]: conc,
      'point reads/s': reads,
      [`range ${RANGE_KEYS} p50 ms`]: r50,
      [`range ${RANGE_KEYS} p99 ms`]: r99,
      [`watch x${WATCHERS} p50 ms`]: w50,
      [`watch x${WATCHERS} p99 ms`]: w99,
      'db MB': (await s.dbSize()) / 1e6,
    };
  } finally {
    await b.close();
  }
}

async function main(): Promise<void> {
  const cpu = os.cpus()[0]?.model ?? '?';
  console.log(
    `node ${process.version}, ${os.cpus().length} cores (${cpu}), ${os.platform()}; median of ${ROUNDS} runs`,
  );
  const rows: Record<string, Record<string, string>> = {};
  for (const b of backends) {
    const runs: Record<string, number>[] = [];
    for (let i = 0; i < ROUNDS; i++) runs.push(await run(b));
    rows[b.name] = Object.fromEntries(
      Object.keys(runs[0]).map((k) => [k, fmt(median(runs.map((r) => r[k])))]),
    );
  }
  console.table(rows);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
