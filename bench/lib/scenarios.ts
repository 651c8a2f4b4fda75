// The scenarios of `npm run bench`, run against real apiserver processes of one
// backend. Instance A (configmaps) serves start/idle, create, get and watch;
// instance B (pods) serves memory, list and restart-with-data, so the objects
// of one scenario never weigh on another's figures.
import { join } from 'node:path';
import type { EtcdServer } from '../../apiserver/storage/etcd3/etcd-server';
import { decodeObject } from '../../shared/codec/protobuf';
import { Api } from './api';
import type { OpSpec } from './load';
import { configMap } from './objects';
import {
  type Apiserver,
  CpuMeter,
  memDetail,
  type MemDetail,
  NoiseMeter,
  removeDir,
  rssBytes,
  startApiserver,
} from './procs';
import type { BackendResult, ListRow, LoadRow } from './results';
import { median, merged, quantile, Samples, sleep, summarize, wallNow } from './stats';
import { type LoadFigures, splitLoad, Workers } from './workers';

export type Scenario = 'start' | 'create' | 'get' | 'list' | 'watch' | 'memory';
export const SCENARIOS: Scenario[] = ['start', 'create', 'get', 'list', 'watch', 'memory'];

export interface Options {
  backends: ('embedded' | 'etcd')[];
  only: Set<Scenario>;
  full: boolean;
  pods: number;
  starts: number;
  watchers: number;
  watchSeconds: number;
  updateRate: number;
  clientProcs: number;
  watchProcs: number;
  /** Also run the fan-out with the watches multiplexed over h2. */
  watchH2: boolean;
  profileDir?: string;
  record: boolean;
  idleWaitMs: number;
}

export interface Ctx {
  opts: Options;
  backend: 'embedded' | 'etcd';
  /** Temp folder of this backend's runs. */
  root: string;
  /** Pre-generated CA, serving and admin certificates, shared by every start. */
  certDir: string;
  etcd?: EtcdServer;
  workers: Workers;
  result: BackendResult;
  log: (s: string) => void;
}

const PROTOBUF = 'application/vnd.kubernetes.protobuf';

function etcdArgs(ctx: Ctx, prefix: string): string[] {
  return ctx.etcd ? ['--etcd-servers', ctx.etcd.endpoint, '--etcd-prefix', prefix] : [];
}

function loadRow(f: LoadFigures): LoadRow {
  return {
    concurrency: f.concurrency,
    rate: f.rate,
    p50: quantile(f.lat, 0.5),
    p99: quantile(f.lat, 0.99),
    errors: f.errors,
    ...(f.errorSamples.length ? { errorSamples: f.errorSamples } : {}),
  };
}

/** Logs and keeps the first errors of a load (a benchmark with errors measures something else). */
function noteErrors(ctx: Ctx, what: string, errors: number, samples: string[] | undefined): void {
  if (!errors) return;
  const n = `${what}: ${errors} errors, e.g. ${(samples ?? []).slice(0, 2).join(' | ')}`;
  ctx.result.notes.push(n);
  ctx.log(n);
}

function procsFor(ctx: Ctx, concurrency: number): number {
  return concurrency >= 16 ? ctx.opts.clientProcs : 1;
}

interface Usage {
  /** Cores the rest of the machine used meanwhile. */
  other: number;
  /** Cores the apiserver, the etcd server and the load workers used. */
  apiserverCpu: number;
  etcdCpu?: number;
  clientCpu: number;
}

/** Runs fn against instance i and tells who used how much CPU meanwhile. */
async function measured<T>(ctx: Ctx, i: Instance, fn: () => Promise<T>): Promise<[T, Usage]> {
  const m = new NoiseMeter(ctx.etcd ? [ctx.etcd.pid] : []);
  const pids = i.pids();
  const cpu = new CpuMeter([...pids, ...ctx.workers.pids]);
  const r = await fn();
  const c = cpu.read();
  return [
    r,
    {
      other: m.read(),
      apiserverCpu: c.cores[0],
      ...(ctx.etcd ? { etcdCpu: c.cores[1] } : {}),
      clientCpu: c.cores.slice(pids.length).reduce((x, y) => x + y, 0),
    },
  ];
}

const BOOTSTRAP_EXCLUDED = '/readyz?exclude=poststarthook/bootstrap-controller';

/** One apiserver on a data dir (or etcd prefix) that survives restarts. */
export class Instance {
  server!: Apiserver;
  api!: Api;
  readonly dataDir: string;
  private readonly prefix: string;
  private phaseName = '';
  private starts = 0;

  constructor(
    private readonly ctx: Ctx,
    readonly label: string,
  ) {
    this.dataDir = join(ctx.root, `data-${label}`);
    this.prefix = `/bench-${label}-${Date.now()}`;
  }

  /** Starts the apiserver; when profiling, under a CPU profile named after the phase. */
  async start(phase: string): Promise<Apiserver> {
    this.phaseName = phase;
    const dir = this.ctx.opts.profileDir;
    const name = `${this.ctx.backend}-${this.label}-${phase}.cpuprofile`;
    const restart = this.starts++ > 0;
    this.server = await startApiserver({
      dir: this.ctx.root,
      dataDir: this.dataDir,
      certDir: this.ctx.certDir,
      args: etcdArgs(this.ctx, this.prefix),
      nodeArgs: dir ? ['--cpu-prof', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${name}`] : [],
      label: `${this.label}-${phase}`,
      // On existing data a post-start hook may fail for good; go on with a server that serves.
      ...(restart ? { alsoProbe: BOOTSTRAP_EXCLUDED, tolerateNotReady: true } : {}),
    });
    if (this.server.notReady) {
      const n = `${this.label}/${phase}: /readyz never passed after a restart on existing data: ${this.server.notReady}`;
      if (!this.ctx.result.notes.some((x) => x.startsWith(`${this.label}/`)))
        this.ctx.result.notes.push(n.slice(0, 1500));
      this.ctx.log(n.slice(0, 600));
    }
    if (dir) (this.ctx.result.profiles ??= []).push(join(dir, name));
    this.api = new Api(this.server.target);
    return this.server;
  }

  /** With --profile, restarts so that the next scenario gets a profile of its own. */
  async phase(name: string): Promise<void> {
    if (!this.ctx.opts.profileDir || this.phaseName === name) return;
    await this.stop();
    await this.start(name);
  }

  async stop(): Promise<void> {
    await this.api?.close();
    await this.server?.stop();
  }

  rss(): number {
    return rssBytes(this.server.pid);
  }

  mem(): MemDetail {
    return memDetail(this.server.pid);
  }

  /** V8 heap in use, from the apiserver's /metrics (nodejs_heap_used_bytes). */
  async heap(): Promise<number | undefined> {
    const r = await this.api.call('GET', '/metrics', undefined, 'text/plain');
    const m = /^nodejs_heap_used_bytes(?:\{[^}]*\})?\s+([0-9.e+]+)/m.exec(r.body.toString('utf8'));
    return m ? Number(m[1]) : undefined;
  }

  pids(): number[] {
    return [this.server.pid, ...(this.ctx.etcd ? [this.ctx.etcd.pid] : [])];
  }
}

// ---- start --------------------------------------------------------------------

export async function coldStarts(ctx: Ctx): Promise<number[]> {
  const runs: number[] = [];
  for (let i = 0; i < ctx.opts.starts; i++) {
    const dataDir = join(ctx.root, `cold-${i}`);
    const s = await startApiserver({
      dir: ctx.root,
      dataDir,
      certDir: ctx.certDir,
      args: etcdArgs(ctx, `/cold-${i}-${Date.now()}`),
      label: `cold-${i}`,
    });
    runs.push(s.readyMs);
    await s.stop();
    removeDir(dataDir);
  }
  ctx.log(`start→ready ${runs.map((r) => r.toFixed(0)).join(', ')} ms`);
  if (ctx.opts.profileDir) {
    const name = `${ctx.backend}-start.cpuprofile`;
    const dataDir = join(ctx.root, 'cold-profile');
    const s = await startApiserver({
      dir: ctx.root,
      dataDir,
      certDir: ctx.certDir,
      args: etcdArgs(ctx, `/cold-profile-${Date.now()}`),
      nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${ctx.opts.profileDir}`, `--cpu-prof-name=${name}`],
      label: 'cold-profile',
    });
    await s.stop();
    removeDir(dataDir);
    (ctx.result.profiles ??= []).push(join(ctx.opts.profileDir, name));
  }
  return runs;
}

// ---- create / get ---------------------------------------------------------------

export async function createScenario(ctx: Ctx, a: Instance): Promise<void> {
  await a.phase('create');
  const rows: LoadRow[] = [];
  for (const c of [1, 16, 64]) {
    const op: OpSpec = { type: 'create-cm', namespace: 'bench', bytes: 1024, prefix: '' };
    const [f, usage] = await measured(ctx, a, () =>
      splitLoad(
        ctx.workers,
        procsFor(ctx, c),
        { kind: 'load', target: a.server.target, op, concurrency: c, warmupMs: 1000, durationMs: 6000 },
        (t, i) => ({ ...t, op: { ...op, prefix: `c${c}-${Date.now()}-w${i}` } }),
      ),
    );
    rows.push({ ...loadRow(f), ...usage });
    noteErrors(ctx, `create c=${c}`, f.errors, f.errorSamples);
    ctx.log(`create c=${c}: ${f.rate.toFixed(0)}/s p99 ${quantile(f.lat, 0.99).toFixed(1)} ms`);
  }
  ctx.result.create = rows;
}

export async function getScenario(ctx: Ctx, a: Instance): Promise<void> {
  await a.phase('get');
  await a.api.must(
    'POST',
    '/api/v1/namespaces/bench/configmaps',
    configMap('bench', 'get-target'),
    [201, 409],
  );
  const run = async (h2: boolean): Promise<LoadRow> => {
    const [f, usage] = await measured(ctx, a, () =>
      splitLoad(ctx.workers, procsFor(ctx, 64), {
        kind: 'load',
        target: a.server.target,
        h2,
        op: { type: 'get', path: '/api/v1/namespaces/bench/configmaps/get-target' },
        concurrency: 64,
        warmupMs: 1000,
        durationMs: 6000,
      }),
    );
    return { ...loadRow(f), ...usage };
  };
  const h1 = await run(false);
  const h2 = await run(true);
  noteErrors(ctx, 'get h1', h1.errors, h1.errorSamples);
  noteErrors(ctx, 'get h2', h2.errors, h2.errorSamples);
  ctx.result.get = { h1, h2 };
  ctx.log(`get c=64: ${h1.rate.toFixed(0)}/s (h2 ${h2.rate.toFixed(0)}/s)`);
}

// ---- watch fan-out ----------------------------------------------------------------

interface WatchPart {
  opened: number;
  received: number;
  minPerWatcher: number;
  lat: Float64Array;
  errors: number;
  errorSamples: string[];
}

export async function watchScenario(ctx: Ctx, a: Instance, h2: boolean): Promise<void> {
  await a.phase(h2 ? 'watch-h2' : 'watch');
  const o = ctx.opts;
  const path = '/api/v1/namespaces/bench-watch/configmaps/target';
  await a.api.must(
    'POST',
    '/api/v1/namespaces/bench-watch/configmaps',
    configMap('bench-watch', 'target'),
    [201, 409],
  );
  // Like an informer: list (from the watch cache), then watch from the list's resourceVersion.
  const rv = (await a.api.must('GET', '/api/v1/namespaces/bench-watch/configmaps?resourceVersion=0')).metadata
    .resourceVersion;
  const ww = new Workers(Math.min(o.watchProcs, o.watchers));
  try {
    const per = Array.from(
      { length: ww.size },
      (_, i) => Math.floor(o.watchers / ww.size) + (i < o.watchers % ww.size ? 1 : 0),
    );
    const watchPath = `/api/v1/namespaces/bench-watch/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1800`;
    const t0 = performance.now();
    const opened = (
      await Promise.all(
        per.map((n, i) =>
          ww.run<number>(i, {
            kind: 'watch-open',
            target: a.server.target,
            path: watchPath,
            watchers: n,
            h2,
          }),
        ),
      )
    ).reduce((s, n) => s + n, 0);
    ctx.log(`${opened} watchers open in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await sleep(1000);

    const updates = Math.round(o.updateRate * o.watchSeconds);
    const interval = 1000 / o.updateRate;
    const putLat = new Samples(updates);
    let putErrors = 0;
    const putErrorSamples: string[] = [];
    const meter = new CpuMeter([...a.pids(), ...ww.pids]);
    const noise = new NoiseMeter(ctx.etcd ? [ctx.etcd.pid] : []);
    const start = performance.now();
    const puts: Promise<void>[] = [];
    for (let i = 0; i < updates; i++) {
      const due = start + i * interval;
      const wait = due - performance.now();
      if (wait > 1) await sleep(wait);
      // The stamp is taken when the update is due, so a queue in front of the server counts.
      const body = JSON.stringify(configMap('bench-watch', 'target', 1024, { ts: String(wallNow()) }));
      puts.push(
        a.api.call('PUT', path, body).then(
          (r) => {
            if (r.status === 200) putLat.push(r.ms);
            else {
              putErrors++;
              if (putErrorSamples.length < 3)
                putErrorSamples.push(`${r.status} ${r.body.toString().slice(0, 200)}`);
            }
          },
          (e) => {
            putErrors++;
            if (putErrorSamples.length < 3) putErrorSamples.push(String(e));
          },
        ),
      );
    }
    const issuedS = (performance.now() - start) / 1000;
    await Promise.all(puts);
    const parts = await Promise.all(
      per.map((_, i) =>
        ww.run<WatchPart>(i, { kind: 'watch-collect', expect: updates - putErrors, timeoutMs: 30_000 }),
      ),
    );
    const cpu = meter.read();
    const other = noise.read();
    const lat = merged(parts.map((p) => p.lat));
    const s = summarize(lat);
    const putSorted = merged([putLat.toArray()]);
    const nServer = a.pids().length;
    ctx.result[h2 ? 'watchH2' : 'watch'] = {
      h2,
      watchers: o.watchers,
      opened,
      updates,
      updateRate: (updates - 1) / Math.max(issuedS, 1e-3),
      p50: s.p50,
      p90: s.p90,
      p99: s.p99,
      max: s.max,
      delivered: parts.reduce((n, p) => n + p.received, 0),
      expected: opened * (updates - putErrors),
      apiserverCpu: cpu.cores[0],
      apiserverCpuUsPerEvent:
        (cpu.cores[0] * cpu.wallS * 1e6) /
        Math.max(
          1,
          parts.reduce((n, p) => n + p.received, 0),
        ),
      ...(ctx.etcd ? { etcdCpu: cpu.cores[1] } : {}),
      clientCpu: cpu.cores.slice(nServer).reduce((x, y) => x + y, 0),
      putP50: quantile(putSorted, 0.5),
      putP99: quantile(putSorted, 0.99),
      other,
      errors: putErrors + parts.reduce((n, p) => n + p.errors, 0),
      ...(putErrorSamples.length || parts.some((p) => p.errorSamples.length)
        ? { errorSamples: [...putErrorSamples, ...parts.flatMap((p) => p.errorSamples)].slice(0, 5) }
        : {}),
    };
    const w = ctx.result[h2 ? 'watchH2' : 'watch']!;
    noteErrors(ctx, h2 ? 'watch h2' : 'watch', w.errors, w.errorSamples);
    ctx.log(
      `watch${h2 ? ' (h2)' : ''} ${opened}x${updates}: p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} ms, ` +
        `apiserver ${(cpu.cores[0] * 100).toFixed(0)}% CPU`,
    );
  } finally {
    await ww.close();
  }
}

// ---- pods: create, memory, list ---------------------------------------------------

/** Creates `count` pods (create + kubelet status update each) at 64 concurrent clients. */
async function createPods(ctx: Ctx, b: Instance, namespace: string, count: number, first: number) {
  await b.api.namespace(namespace);
  const conc = 64;
  const procs = procsFor(ctx, conc);
  const share = Array.from(
    { length: procs },
    (_, i) => Math.floor(count / procs) + (i < count % procs ? 1 : 0),
  );
  return splitLoad(
    ctx.workers,
    procs,
    {
      kind: 'load',
      target: b.server.target,
      op: { type: 'pod', namespace, prefix: '', first },
      concurrency: conc,
      count,
    },
    (t, i) => ({
      ...t,
      op: {
        type: 'pod',
        namespace,
        prefix: `pod-w${i}`,
        first: first + share.slice(0, i).reduce((x, y) => x + y, 0),
      },
    }),
  );
}

/** Starts the pods' watch cache without serving a list from it; resolves with the time to the watch's headers. */
async function startPodCache(b: Instance): Promise<number> {
  const rv = (await b.api.must('GET', '/api/v1/pods?limit=1')).metadata.resourceVersion;
  return b.api.headersTime(`/api/v1/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
}

function listItems(body: Buffer, protobuf: boolean): { items: number; cont: string } {
  const o = protobuf ? decodeObject(body) : JSON.parse(body.toString('utf8'));
  return { items: o.items?.length ?? 0, cont: o.metadata?.continue ?? '' };
}

/** One list of all pods; for pages, the sum of the page times (the client's decoding between pages excluded). */
async function timedList(
  api: Api,
  mode: ListRow['mode'],
  format: ListRow['format'],
): Promise<{ ms: number; bytes: number; items: number }> {
  const accept = format === 'protobuf' ? PROTOBUF : 'application/json';
  const check = (r: { status: number; body: Buffer }) => {
    if (r.status !== 200) throw new Error(`list: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
  };
  if (mode !== 'pages500') {
    const r = await api.call(
      'GET',
      `/api/v1/pods${mode === 'rv0' ? '?resourceVersion=0' : ''}`,
      undefined,
      accept,
    );
    check(r);
    return { ms: r.ms, bytes: r.body.length, items: listItems(r.body, format === 'protobuf').items };
  }
  let ms = 0;
  let bytes = 0;
  let items = 0;
  let cont = '';
  do {
    const q = `limit=500${cont ? `&continue=${encodeURIComponent(cont)}` : ''}`;
    const r = await api.call('GET', `/api/v1/pods?${q}`, undefined, accept);
    check(r);
    ms += r.ms;
    bytes += r.body.length;
    const page = listItems(r.body, format === 'protobuf');
    items += page.items;
    cont = page.cont;
  } while (cont);
  return { ms, bytes, items };
}

export async function listScenario(ctx: Ctx, b: Instance): Promise<void> {
  await b.phase('list');
  const rows: ListRow[] = [];
  const variants: [ListRow['mode'], ListRow['format'], string][] = [
    ['rv0', 'json', 'RV=0 (watch cache), JSON'],
    ['rv0', 'protobuf', 'RV=0 (watch cache), Protobuf'],
    ['consistent', 'json', 'consistent (no RV), JSON'],
    ['consistent', 'protobuf', 'consistent (no RV), Protobuf'],
    ['pages500', 'json', 'limit=500 pages, JSON'],
    ['pages500', 'protobuf', 'limit=500 pages, Protobuf'],
  ];
  for (const [mode, format, name] of variants) {
    const runs = mode === 'pages500' ? 3 : 5;
    await timedList(b.api, mode, format); // warm-up: fills the cache and the memoised encodings
    const times: number[] = [];
    let bytes = 0;
    let items = 0;
    const noise = new NoiseMeter(ctx.etcd ? [ctx.etcd.pid] : []);
    for (let i = 0; i < runs; i++) {
      const r = await timedList(b.api, mode, format);
      times.push(r.ms);
      bytes = r.bytes;
      items = r.items;
    }
    const other = noise.read();
    const med = median(times);
    rows.push({
      name,
      mode,
      format,
      items,
      medianMs: med,
      minMs: Math.min(...times),
      bytes,
      bytesPerSec: bytes / (med / 1000),
      runs,
      other,
    });
    ctx.log(`list ${name}: ${med.toFixed(0)} ms, ${(bytes / 1e6).toFixed(1)} MB, ${items} items`);
  }
  ctx.result.list = rows;
}

export async function podsInstance(ctx: Ctx): Promise<void> {
  const o = ctx.opts;
  const memory = o.only.has('memory');
  const b = new Instance(ctx, 'b');
  await b.start('idle');
  try {
    let idle: MemDetail = { rss: NaN, anon: NaN, file: NaN };
    let idleHeap: number | undefined;
    if (memory) {
      await sleep(o.idleWaitMs);
      idle = b.mem();
      idleHeap = await b.heap();
    }
    await b.phase('pods');
    const [f, usage] = await measured(ctx, b, () => createPods(ctx, b, 'bench-pods', o.pods, 0));
    ctx.log(`${o.pods} pods: ${f.rate.toFixed(0)} pods/s (create + status), ${f.errors} errors`);
    noteErrors(ctx, 'pods', f.errors, f.errorSamples);
    // Sizes of one pod as served, with and without managedFields.
    const j = await b.api.call('GET', '/api/v1/pods?limit=100');
    const p = await b.api.call('GET', '/api/v1/pods?limit=100', undefined, PROTOBUF);
    const sample = JSON.parse(j.body.toString('utf8'));
    const jn = sample.items?.length || 1;
    for (const it of sample.items ?? []) delete it.metadata.managedFields;
    ctx.result.pods = {
      count: o.pods,
      rate: f.rate,
      createP50: quantile(f.lat, 0.5),
      createP99: quantile(f.lat, 0.99),
      statusP50: quantile(f.lat2, 0.5),
      statusP99: quantile(f.lat2, 0.99),
      jsonBytes: j.body.length / jn,
      jsonBytesNoManagedFields: JSON.stringify(sample).length / jn,
      protobufBytes: p.body.length / jn,
      errors: f.errors,
      ...usage,
      ...(f.errorSamples.length ? { errorSamples: f.errorSamples } : {}),
    };
    const points: NonNullable<BackendResult['memory']>['points'] = [];
    let stored = o.pods - f.errors;

    /** RSS of the loaded process, then restart: ready time, cache fill, RSS with the cache only and after a list. */
    const restartAndMeasure = async (pods: number) => {
      await sleep(3000);
      const loadedRss = b.rss();
      const loadedHeap = await b.heap();
      await b.stop();
      const s = await b.start('restart');
      const cacheFillMs = await startPodCache(b);
      await sleep(3000);
      const cached = b.mem();
      const heap = await b.heap();
      const l = await b.api.call('GET', '/api/v1/pods?resourceVersion=0');
      if (l.status !== 200) throw new Error(`list: ${l.status}`);
      await sleep(3000);
      const listed = b.mem();
      (ctx.result.restart ??= []).push({
        objects: pods,
        readyMs: s.readyMs,
        ...(s.alsoMs !== undefined ? { readyExclBootstrapMs: s.alsoMs } : {}),
        ...(s.notReady ? { notReady: s.notReady.slice(0, 500) } : {}),
        cacheFillMs,
        firstListMs: l.ms,
      });
      ctx.log(
        `restart with ${pods} pods: ready ${s.readyMs.toFixed(0)} ms` +
          `${s.alsoMs !== undefined ? ` (without bootstrap-controller ${s.alsoMs.toFixed(0)} ms)` : ''}, ` +
          `cache filled in ${cacheFillMs.toFixed(0)} ms, first list ${l.ms.toFixed(0)} ms`,
      );
      if (memory) {
        points.push({
          pods,
          loadedRss,
          loadedHeap,
          rss: cached.rss,
          heap,
          perPod: (cached.rss - idle.rss) / pods,
          anon: cached.anon,
          perPodAnon: (cached.anon - idle.anon) / pods,
          rssAfterList: listed.rss,
          anonAfterList: listed.anon,
          heapAfterList: await b.heap(),
          perPodAfterList: (listed.rss - idle.rss) / pods,
          perPodAnonAfterList: (listed.anon - idle.anon) / pods,
          ...(ctx.etcd ? { etcdRss: rssBytes(ctx.etcd.pid) } : {}),
        });
        ctx.log(
          `RSS with ${pods} pods: ${(loadedRss / 1e6).toFixed(0)} MB after storing them, ` +
            `${(cached.rss / 1e6).toFixed(0)} MB (anon ${(cached.anon / 1e6).toFixed(0)}) restarted with the cache, ` +
            `${(listed.rss / 1e6).toFixed(0)} MB (anon ${(listed.anon / 1e6).toFixed(0)}) after a list`,
        );
      }
    };

    if (memory || o.only.has('start')) await restartAndMeasure(stored);
    if (o.only.has('list')) await listScenario(ctx, b);
    if (memory && o.full) {
      await b.phase('pods-100k');
      const more = 100_000 - o.pods;
      const g = await createPods(ctx, b, 'bench-pods-more', more, o.pods);
      ctx.log(`+${more} pods: ${g.rate.toFixed(0)} pods/s, ${g.errors} errors`);
      noteErrors(ctx, 'pods to 100k', g.errors, g.errorSamples);
      stored += more - g.errors;
      await restartAndMeasure(stored);
    }
    if (memory) ctx.result.memory = { idleRss: idle.rss, idleAnon: idle.anon, idleHeap, points };
  } finally {
    await b.stop();
  }
}

export async function configMapsInstance(ctx: Ctx): Promise<void> {
  const o = ctx.opts;
  const runsMs = o.only.has('start') ? await coldStarts(ctx) : [];
  const a = new Instance(ctx, 'a');
  await a.start('idle');
  try {
    if (o.only.has('start')) {
      await sleep(o.idleWaitMs);
      const m = a.mem();
      ctx.result.start = {
        runsMs,
        medianMs: median(runsMs),
        idleRss: m.rss,
        idleAnon: m.anon,
        ...(ctx.etcd ? { etcdRss: rssBytes(ctx.etcd.pid) } : {}),
      };
      ctx.log(`idle RSS after ${o.idleWaitMs / 1000} s: ${(ctx.result.start.idleRss / 1e6).toFixed(1)} MB`);
    }
    await a.api.namespace('bench');
    await a.api.namespace('bench-watch');
    if (o.only.has('create')) await createScenario(ctx, a);
    if (o.only.has('get')) await getScenario(ctx, a);
    if (o.only.has('watch')) {
      await watchScenario(ctx, a, false);
      if (o.watchH2) await watchScenario(ctx, a, true);
    }
  } finally {
    await a.stop();
  }
}
