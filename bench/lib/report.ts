// Printing a run: one table per backend (tkube, same-run ceiling, ratio,
// reference figures measured elsewhere, budget), the budget lines met/missed,
// the JSON record under bench/results/ and a history line in docs/performance.md.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendResult, BudgetLine, LoadRow, RawEtcdRow, RunResult, WatchFigures } from './results';
import { loneBudget, loneRows, loneSummary } from './report-lone';
import { kib, ms, num, pct } from './stats';

export { loneProfileTable } from './report-lone';

/** kube-apiserver v1.20 + etcd 3.4 figures from issue 11: reference only, measured elsewhere. */
export const REFERENCE = {
  label: 'kube-apiserver v1.20 + etcd 3.4 (reference, measured elsewhere)',
  startReady: '5.4–6.7 s',
  idleRss: '307–351 MB',
  loadedRss: '870 MB after load',
  create: { 1: 229, 16: 770, 64: 1012 } as Record<number, number>,
  createP99At64Ms: 201,
  get64: 2417,
  podCreates: '726/s (3.8 KB pods)',
  list10k: { rv0: 672, consistent: 862, pages500: 1518 } as Record<string, number>,
  watch: '1000 watchers x 300 updates: p50 62 ms, p99 151 ms',
};

/**
 * kube-apiserver v1.20.2 on etcd 3.4.23 measured side by side with tkube on the
 * same etcd and machine (issue 21); the etcd table prints tkube's ratio to them.
 */
export const SAME_ETCD_REFERENCE = {
  label: 'kube-apiserver v1.20.2, same etcd (issue 21)',
  create64: 1866,
  get64: 3937,
  podCreate64: 1318,
  listConsistentMs: 677,
  watch: '1000 watchers x 300 updates, same etcd (issue 21): p50 31 ms, p99 62 ms',
  loadedRss: '1,207 MB after the load (issue 21)',
};

/** " | kube on the same etcd 1,866/s: 1.2x" for the etcd backend (higher is better). */
function vsKube(r: BackendResult, ours: number, theirs: number, unit: '/s' | 'ms'): string {
  if (r.backend !== 'etcd') return '';
  const ratio = unit === '/s' ? ours / theirs : theirs / ours;
  return `; ${SAME_ETCD_REFERENCE.label} ${unit === '/s' ? rate(theirs) : ms(theirs)}: tkube ${num(ratio, 2)}x`;
}

/** "; 35% of bare grpc-js Put (2,900/s)" when the raw etcd loop ran. */
function ofRaw(ours: number, raw: RawEtcdRow | undefined, what: string): string {
  return raw ? `; ${pct(ours / raw.rate)} of bare grpc-js ${what} (${rate(raw.rate)})` : '';
}

export const BUDGET = {
  startEmptyMs: 300,
  start100kMs: 1000,
  idleRssBytes: 60e6,
  createShareOfStore: 0.5,
  createP99Ms: 50,
  getShareOfBare: 0.5,
  listRv0JsonMs: 150,
  /** Issue 21: watch 1,000 × 300 p99 per backend, memory per cached pod, RSS after the load. */
  watchP99Ms: { embedded: 30, etcd: 40 } as Record<string, number>,
  perPodBytes: 10 * 1024,
  loadedRssBytes: 300e6,
  /** Issue 21: on the same etcd, 1.5x kube-apiserver's rates, and a consistent 10k list. */
  vsKubeOnEtcd: 1.5,
  listConsistentEtcdMs: 400,
};

const MB = (b: number | undefined) => (b === undefined || !Number.isFinite(b) ? '–' : `${num(b / 1e6)} MB`);
const rate = (r: number) => `${num(r)}/s`;
const lat = (l: LoadRow) => `p50 ${num(l.p50)} / p99 ${num(l.p99)} ms`;
const errs = (n: number) => (n ? ` (${n} errors)` : '');
/** "; apiserver 98% CPU, clients 60%" when measured. */
const cpuOf = (x: { apiserverCpu?: number; etcdCpu?: number; clientCpu?: number }) =>
  x.apiserverCpu === undefined
    ? ''
    : `; apiserver ${pct(x.apiserverCpu)} CPU${x.etcdCpu !== undefined ? `, etcd ${pct(x.etcdCpu)}` : ''}, clients ${pct(x.clientCpu)}`;

export function table(header: string[], rows: string[][]): string {
  const w = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: string[]) => `| ${r.map((c, i) => (c ?? '').padEnd(w[i])).join(' | ')} |`;
  return [line(header), `|${w.map((n) => '-'.repeat(n + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}

export function backendTable(r: BackendResult, run: RunResult): string {
  const c = run.ceilings;
  const rows: string[][] = [];
  const add = (what: string, ours: string, ceiling = '', share = '', ref = '', budget = '', other?: number) =>
    rows.push([what, ours, ceiling, share, ref, budget, other === undefined ? '' : num(other)]);
  if (r.start) {
    const rs = r.start.runsMs;
    add(
      `start→/readyz 200, empty data (median of ${rs.length})`,
      `${ms(r.start.medianMs)} (${num(Math.min(...rs), 0)}–${num(Math.max(...rs), 0)})`,
      '',
      '',
      REFERENCE.startReady,
      `≤ ${BUDGET.startEmptyMs} ms`,
    );
    add(
      'idle RSS, 10 s after ready',
      `${MB(r.start.idleRss)} (anon ${MB(r.start.idleAnon)})${r.start.etcdRss ? ` + etcd ${MB(r.start.etcdRss)}` : ''}`,
      '',
      '',
      REFERENCE.idleRss,
      '≤ 60 MB',
    );
  }
  for (const x of r.restart ?? []) {
    const ready = Number.isFinite(x.readyMs)
      ? ms(x.readyMs)
      : `never (${ms(x.readyExclBootstrapMs)} excluding the failed bootstrap-controller hook)`;
    add(
      `restart with ${num(x.objects, 0)} pods: ready; + cache fill; + first RV=0 list`,
      `${ready}; + ${ms(x.cacheFillMs)}; + ${ms(x.firstListMs)}`,
      '',
      '',
      '',
      x.objects >= 100_000 ? '≤ 1 s (100k)' : '≤ 1 s at 100k (run --full)',
    );
  }
  for (const x of r.create ?? []) {
    const top = x.concurrency === 64;
    add(
      `create 1 KB ConfigMap, ${x.concurrency} client${x.concurrency > 1 ? 's' : ''}`,
      `${rate(x.rate)}, ${lat(x)}${cpuOf(x)}${errs(x.errors)}`,
      top && r.storeCeiling ? `${rate(r.storeCeiling)} raw store` : '',
      top && r.storeCeiling ? pct(x.rate / r.storeCeiling) : '',
      `${rate(REFERENCE.create[x.concurrency])}${top ? `, p99 ${REFERENCE.createP99At64Ms} ms` : ''}` +
        (top
          ? vsKube(r, x.rate, SAME_ETCD_REFERENCE.create64, '/s') + ofRaw(x.rate, r.rawEtcdPut, 'Put')
          : ''),
      top ? '≥ 50% of store, p99 ≤ 50 ms' : '',
      x.other,
    );
  }
  if (r.podCreate) {
    const x = r.podCreate;
    add(
      `pod create (${num(x.bytes / 1000, 1)} KB pod, 64 clients, create only)`,
      `${rate(x.rate)}, ${lat(x)}${cpuOf(x)}${errs(x.errors)}` +
        (x.warmupMs ? `; after ${num(x.warmupMs / 1000, 0)} s of warm-up at ${rate(x.warmupRate ?? 0)}` : ''),
      '',
      '',
      `–${vsKube(r, x.rate, SAME_ETCD_REFERENCE.podCreate64, '/s')}${ofRaw(x.rate, r.rawEtcdPut, 'Put')}`,
      r.backend === 'etcd' ? `≥ ${rate(1.5 * SAME_ETCD_REFERENCE.podCreate64)} (1.5x kube)` : '',
      x.other,
    );
  }
  if (r.get) {
    add(
      'get one object, 64 clients, HTTP/1.1',
      `${rate(r.get.h1.rate)}, ${lat(r.get.h1)}${cpuOf(r.get.h1)}${errs(r.get.h1.errors)}`,
      c.bareGetH1 ? `${rate(c.bareGetH1.rate)} bare TLS server` : '',
      c.bareGetH1 ? pct(r.get.h1.rate / c.bareGetH1.rate) : '',
      rate(REFERENCE.get64) +
        vsKube(r, r.get.h1.rate, SAME_ETCD_REFERENCE.get64, '/s') +
        ofRaw(r.get.h1.rate, r.rawEtcdRange, 'Range'),
      '≥ 50% of bare server',
      r.get.h1.other,
    );
    if (r.get.h2)
      add(
        'get one object, 64 streams, h2 (extra)',
        `${rate(r.get.h2.rate)}, ${lat(r.get.h2)}${cpuOf(r.get.h2)}${errs(r.get.h2.errors)}`,
        c.bareGetH2 ? `${rate(c.bareGetH2.rate)} bare, h2` : '',
        c.bareGetH2 ? pct(r.get.h2.rate / c.bareGetH2.rate) : '',
        '',
        '',
        r.get.h2.other,
      );
  }
  for (const [what, ours, ref, budget, other] of loneRows(r)) add(what, ours, '', '', ref, budget, other);
  if (r.pods)
    add(
      `${num(r.pods.count, 0)} pods, create + status update, 64 clients`,
      `${rate(r.pods.rate)} pods (${rate(2 * r.pods.rate)} writes); create ${num(r.pods.createP50)} / ${num(r.pods.createP99)} ms, status ${num(r.pods.statusP50)} / ${num(r.pods.statusP99)} ms; each ${num(r.pods.jsonBytes, 0)} B JSON (${num(r.pods.jsonBytesNoManagedFields, 0)} B without managedFields), ${num(r.pods.protobufBytes, 0)} B PB${cpuOf(r.pods)}${errs(r.pods.errors)}`,
      '',
      '',
      REFERENCE.podCreates,
      '',
      r.pods.other,
    );
  for (const l of r.list ?? []) {
    const bare = c.bareTransfer?.find((t) => t.format === l.format);
    add(
      `list ${num(l.items, 0)} pods, ${l.name}`,
      `${ms(l.medianMs)} (best ${num(l.minMs)}), ${MB(l.bytes)}, ${MB(l.bytesPerSec)}/s`,
      bare ? `${ms(bare.medianMs)} bare TLS transfer of ${MB(bare.bytes)}` : '',
      bare ? `${num(l.medianMs / bare.medianMs, 1)}x bare` : '',
      l.format === 'json'
        ? ms(REFERENCE.list10k[l.mode]) +
            (l.mode === 'consistent' ? vsKube(r, l.medianMs, SAME_ETCD_REFERENCE.listConsistentMs, 'ms') : '')
        : '',
      l.mode === 'rv0' ? (l.format === 'json' ? '≤ 150 ms' : '< JSON') : '',
      l.other,
    );
  }
  for (const w of [r.watchH2, r.watch]) {
    if (!w) continue;
    add(
      `watch${w.h2 ? ', h2 (100 streams to a connection)' : ', HTTP/1.1 (extra)'}: ${w.opened} watchers, ${num(w.updateRate)} updates/s x ${num(w.updates / w.updateRate, 0)} s`,
      `p50 ${num(w.p50)} / p99 ${num(w.p99)} ms (max ${num(w.max)}); ${num((100 * w.delivered) / Math.max(1, w.expected), 1)}% delivered; apiserver ${pct(w.apiserverCpu)} CPU (${num(w.apiserverCpuUsPerEvent)} µs per delivery)${w.etcdCpu !== undefined ? `, etcd ${pct(w.etcdCpu)}` : ''}, watch clients ${pct(w.clientCpu)}; PUT p99 ${num(w.putP99)} ms${w.fsyncWorstMs !== undefined ? `; slowest 4 KB fdatasync ${num(w.fsyncWorstMs)} ms` : ''}${errs(w.errors)}`,
      ((f) => (f ? `bare TLS fan-out p99 ${num(f.p99)} ms` : ''))(w.h2 ? c.bareFanoutH2 : c.bareFanout),
      '',
      w !== budgetWatch(r) ? '' : r.backend === 'etcd' ? SAME_ETCD_REFERENCE.watch : REFERENCE.watch,
      w !== budgetWatch(r) ? '' : `p99 ≤ ${BUDGET.watchP99Ms[r.backend] ?? BUDGET.watchP99Ms.embedded} ms`,
      w.other,
    );
  }
  if (r.memory) {
    add(
      'memory instance idle: RSS (anon; V8 heap used)',
      `${MB(r.memory.idleRss)} (${MB(r.memory.idleAnon)}; ${MB(r.memory.idleHeap)})`,
    );
    for (const p of r.memory.points) {
      add(
        `${num(p.pods, 0)} pods: RSS (heap) after storing them, same process`,
        `${MB(p.loadedRss)} (${MB(p.loadedHeap)})`,
        '',
        '',
        r.backend === 'etcd' ? SAME_ETCD_REFERENCE.loadedRss : REFERENCE.loadedRss,
        r.backend === 'embedded' ? '≤ 300 MB' : '',
      );
      add(
        `${num(p.pods, 0)} pods: restarted, cache filled: RSS (anon; heap); per pod over idle`,
        `${MB(p.rss)} (${MB(p.anon)}; ${MB(p.heap)}); ${kib(p.perPod)} per pod (anon ${kib(p.perPodAnon)})${p.etcdRss ? `; etcd ${MB(p.etcdRss)}` : ''}`,
        '',
        '',
        '',
        '≤ 10 KiB per pod',
      );
      add(
        `${num(p.pods, 0)} pods: then after one JSON RV=0 list`,
        `${MB(p.rssAfterList)} (${MB(p.anonAfterList)}; ${MB(p.heapAfterList)}); ${kib(p.perPodAfterList)} per pod (anon ${kib(p.perPodAnonAfterList)})`,
      );
    }
  }
  return table(
    ['', 'tkube', 'ceiling (same run)', 'of ceiling', REFERENCE.label, 'budget', 'other load'],
    rows,
  );
}

export function ceilingTable(run: RunResult): string {
  const c = run.ceilings;
  const rows: string[][] = [];
  const o = (x: number | undefined) => (x === undefined ? '' : num(x));
  if (c.firstStartWithCertsMs !== undefined)
    rows.push([
      'first apiserver start, generating CA + certificates (embedded)',
      ms(c.firstStartWithCertsMs),
      '',
    ]);
  if (c.embeddedWrites !== undefined)
    rows.push([
      'raw embedded store: 64 concurrent 1 KB creates (in-process, median of 3)',
      rate(c.embeddedWrites),
      o(c.embeddedWritesOther),
    ]);
  for (const b of run.backends)
    if (b.backend === 'etcd' && b.storeCeiling !== undefined)
      rows.push([
        'raw etcd via the etcd3 storage client: 64 concurrent 1 KB creates',
        rate(b.storeCeiling),
        o(b.storeCeilingOther),
      ]);
  for (const b of run.backends) {
    const raw = (what: string, x: RawEtcdRow | undefined) => {
      if (x)
        rows.push([
          `bare grpc-js ${what} on etcd, 64 concurrent, no storage layer`,
          `${rate(x.rate)}; CPU per op: etcd ${num(x.etcdCpuUsPerOp)} µs, grpc-js client ${num(x.clientCpuUsPerOp)} µs`,
          o(x.other),
        ]);
    };
    raw('Put of fresh 1 KB keys', b.rawEtcdPut);
    raw('linearizable Range of one 1 KB key', b.rawEtcdRange);
  }
  if (c.bareGetH1)
    rows.push([
      'bare node:http2 TLS server, 1 KB GET, 64 clients, HTTP/1.1',
      `${rate(c.bareGetH1.rate)}, ${lat(c.bareGetH1)}${cpuOf(c.bareGetH1).replace('apiserver', 'server')}`,
      o(c.bareGetH1.other),
    ]);
  if (c.bareGetH2)
    rows.push([
      'bare node:http2 TLS server, 1 KB GET, 64 streams, h2',
      `${rate(c.bareGetH2.rate)}, ${lat(c.bareGetH2)}${cpuOf(c.bareGetH2).replace('apiserver', 'server')}`,
      o(c.bareGetH2.other),
    ]);
  for (const f of [c.bareFanout, c.bareFanoutH2]) {
    if (!f) continue;
    const to = f.h2
      ? `${num(f.watchers, 0)} h2 watch streams (100 to a connection)`
      : `${num(f.watchers, 0)} HTTP/1.1 watchers`;
    rows.push([
      `bare TLS server writing ${num(f.updates, 0)} 1.4 KB events at ${num(f.rate, 0)}/s to ${to}, one write each`,
      `p50 ${num(f.p50)} / p99 ${num(f.p99)} ms (max ${num(f.max)}); ${num((100 * f.delivered) / Math.max(1, f.expected), 1)}% delivered; server ${num(f.serverCpuUsPerWrite)} µs per write, watch clients ${pct(f.clientCpu)}`,
      o(f.other),
    ]);
  }
  for (const t of c.bareTransfer ?? [])
    rows.push([
      `bare TLS server sending one ${MB(t.bytes)} body (a ${t.format} pod list's size), median of 5`,
      ms(t.medianMs),
      '',
    ]);
  return table(['ceiling', 'figure', 'other load'], rows);
}

// ---- budget ---------------------------------------------------------------------

function over(measured: number, target: number, unit: string): string {
  return measured <= target
    ? `${num(target - measured)} ${unit} to spare`
    : `${num(measured / target, 1)}x the budget (+${num(measured - target)} ${unit})`;
}

export function evaluateBudget(run: RunResult): BudgetLine[] {
  const out: BudgetLine[] = [];
  for (const r of run.backends) {
    const add = (item: string, target: string, measured: string, met: boolean | undefined, gap?: string) =>
      out.push({ backend: r.backend, item, target, measured, met, ...(gap ? { gap } : {}) });
    if (r.start)
      add(
        'start→ready, empty',
        `≤ ${BUDGET.startEmptyMs} ms`,
        ms(r.start.medianMs),
        r.start.medianMs <= BUDGET.startEmptyMs,
        over(r.start.medianMs, BUDGET.startEmptyMs, 'ms'),
      );
    const big = (r.restart ?? []).find((x) => x.objects >= 100_000);
    const small = (r.restart ?? [])[0];
    const readyText = (x: NonNullable<BackendResult['restart']>[number]) =>
      Number.isFinite(x.readyMs)
        ? ms(x.readyMs)
        : `never ready (${ms(x.readyExclBootstrapMs)} excluding the failed bootstrap-controller hook)`;
    if (big)
      add(
        'start→ready, 100k objects',
        '≤ 1 s',
        readyText(big),
        Number.isFinite(big.readyMs) && big.readyMs <= BUDGET.start100kMs,
        Number.isFinite(big.readyMs) ? over(big.readyMs, BUDGET.start100kMs, 'ms') : 'never ready',
      );
    else if (small)
      add(
        'start→ready, 100k objects',
        '≤ 1 s',
        `${readyText(small)} with ${num(small.objects, 0)} (run --full for 100k)`,
        undefined,
      );
    if (r.start)
      add(
        'idle RSS',
        '≤ 60 MB',
        `${MB(r.start.idleRss)} (anon ${MB(r.start.idleAnon)})`,
        r.start.idleRss <= BUDGET.idleRssBytes,
        over(r.start.idleRss / 1e6, BUDGET.idleRssBytes / 1e6, 'MB'),
      );
    const c64 = r.create?.find((x) => x.concurrency === 64);
    if (c64 && r.storeCeiling) {
      const share = c64.rate / r.storeCeiling;
      add(
        'create at 64 clients vs raw store',
        '≥ 50%',
        `${pct(share)} (${rate(c64.rate)} of ${rate(r.storeCeiling)})`,
        share >= BUDGET.createShareOfStore,
        share >= BUDGET.createShareOfStore
          ? undefined
          : `needs ${num(BUDGET.createShareOfStore / share, 1)}x the rate`,
      );
    }
    if (c64)
      add(
        'create p99 at 64 clients',
        '≤ 50 ms',
        ms(c64.p99),
        c64.p99 <= BUDGET.createP99Ms,
        over(c64.p99, BUDGET.createP99Ms, 'ms'),
      );
    if (r.get && run.ceilings.bareGetH1) {
      const share = r.get.h1.rate / run.ceilings.bareGetH1.rate;
      add(
        'get at 64 clients vs bare server',
        '≥ 50%',
        `${pct(share)} (${rate(r.get.h1.rate)} of ${rate(run.ceilings.bareGetH1.rate)})`,
        share >= BUDGET.getShareOfBare,
        share >= BUDGET.getShareOfBare
          ? undefined
          : `needs ${num(BUDGET.getShareOfBare / share, 1)}x the rate`,
      );
    }
    for (const [item, target, measured, met] of loneBudget(r)) add(item, target, measured, met);
    const rv0j = r.list?.find((l) => l.mode === 'rv0' && l.format === 'json');
    const rv0p = r.list?.find((l) => l.mode === 'rv0' && l.format === 'protobuf');
    if (rv0j)
      add(
        `list ${num(rv0j.items, 0)} pods RV=0, JSON`,
        '≤ 150 ms',
        ms(rv0j.medianMs),
        rv0j.medianMs <= BUDGET.listRv0JsonMs,
        over(rv0j.medianMs, BUDGET.listRv0JsonMs, 'ms'),
      );
    if (rv0j && rv0p)
      add(
        `list ${num(rv0p.items, 0)} pods RV=0, Protobuf`,
        '< JSON',
        `${ms(rv0p.medianMs)} vs ${ms(rv0j.medianMs)}`,
        rv0p.medianMs < rv0j.medianMs,
      );
    const w = budgetWatch(r);
    if (w) {
      const all = w.delivered >= w.expected && w.opened >= w.watchers;
      const budget = BUDGET.watchP99Ms[r.backend] ?? BUDGET.watchP99Ms.embedded;
      add(
        `watch ${w.watchers} watchers × ${num(w.updates, 0)} updates p99 at ${num(w.updateRate, 0)} updates/s${w.h2 ? ', h2' : ''}`,
        `≤ ${budget} ms, all delivered`,
        `${ms(w.p99)}, ${num((100 * w.delivered) / Math.max(1, w.expected), 1)}% delivered`,
        w.p99 <= budget && all,
        over(w.p99, budget, 'ms'),
      );
    }
    if (r.backend === 'etcd') {
      const k = SAME_ETCD_REFERENCE;
      const x = BUDGET.vsKubeOnEtcd;
      const vs = (item: string, ours: number | undefined, theirs: number) =>
        ours !== undefined &&
        add(
          `${item} vs kube-apiserver on the same etcd`,
          `≥ ${num(x, 1)}x (${rate(x * theirs)})`,
          `${rate(ours)} (${num(ours / theirs, 2)}x)`,
          ours >= x * theirs,
          ours >= x * theirs ? undefined : `needs ${num((x * theirs) / ours, 2)}x the rate`,
        );
      vs('create 1 KB at 64 clients', c64?.rate, k.create64);
      vs('get at 64 clients', r.get?.h1.rate, k.get64);
      vs('pod create at 64 clients', r.podCreate?.rate, k.podCreate64);
      const cons = r.list?.find((l) => l.mode === 'consistent' && l.format === 'json');
      if (cons)
        add(
          `consistent list of ${num(cons.items, 0)} pods, JSON`,
          `≤ ${BUDGET.listConsistentEtcdMs} ms`,
          ms(cons.medianMs),
          cons.medianMs <= BUDGET.listConsistentEtcdMs,
          over(cons.medianMs, BUDGET.listConsistentEtcdMs, 'ms'),
        );
    }
    for (const p of r.memory?.points ?? [])
      add(
        `memory per pod at ${num(p.pods, 0)}`,
        '≤ 10 KiB',
        `${kib(p.perPod)} RSS, ${kib(p.perPodAnon)} anon; after a JSON list ${kib(p.perPodAfterList)} / ${kib(p.perPodAnonAfterList)}`,
        p.perPod <= BUDGET.perPodBytes,
        over(p.perPod / 1024, BUDGET.perPodBytes / 1024, 'KiB'),
      );
    if (!r.memory?.points.some((p) => p.pods >= 100_000) && r.memory)
      add('memory per pod at 100k', '≤ 10 KiB', 'not measured (run --full)', undefined);
    const stored = r.memory?.points[0];
    if (stored?.loadedRss !== undefined && r.backend === 'embedded')
      add(
        `RSS after storing ${num(stored.pods, 0)} pods (the load)`,
        '≤ 300 MB',
        MB(stored.loadedRss),
        stored.loadedRss <= BUDGET.loadedRssBytes,
        over(stored.loadedRss / 1e6, BUDGET.loadedRssBytes / 1e6, 'MB'),
      );
  }
  return out;
}

export function budgetTable(lines: BudgetLine[]): string {
  return table(
    ['backend', 'budget item', 'target', 'measured', 'verdict'],
    lines.map((l) => [
      l.backend,
      l.item,
      l.target,
      l.measured,
      l.met === undefined ? 'not measured' : l.met ? 'met' : `MISSED${l.gap ? `: ${l.gap}` : ''}`,
    ]),
  );
}

// ---- records ----------------------------------------------------------------------

export function gitInfo(repo: string): { commit: string; dirty: boolean } {
  try {
    const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], {
      cwd: repo,
      encoding: 'utf8',
    }).trim();
    const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=no'], {
      cwd: repo,
      encoding: 'utf8',
    });
    return { commit, dirty: status.trim().length > 0 };
  } catch {
    return { commit: 'unknown', dirty: false };
  }
}

/** Writes bench/results/<date>-<commit>.json (-2, -3 ... when that run exists); returns the path. */
export function saveResult(repo: string, run: RunResult): string {
  const dir = join(repo, 'bench', 'results');
  mkdirSync(dir, { recursive: true });
  let file = join(dir, `${run.date}-${run.commit}.json`);
  for (let i = 2; existsSync(file); i++) file = join(dir, `${run.date}-${run.commit}-${i}.json`);
  writeFileSync(file, JSON.stringify(run, null, 2) + '\n');
  return file;
}

function summaryOf(r: BackendResult, run: RunResult): string {
  const parts: string[] = [];
  if (r.start) parts.push(`start ${num(r.start.medianMs, 0)} ms, idle ${MB(r.start.idleRss)}`);
  const c64 = r.create?.find((x) => x.concurrency === 64);
  if (c64)
    parts.push(
      `create64 ${rate(c64.rate)} p99 ${num(c64.p99)} ms${r.storeCeiling ? ` (${pct(c64.rate / r.storeCeiling)} of store)` : ''}`,
    );
  if (r.get)
    parts.push(
      `get64 ${rate(r.get.h1.rate)}${run.ceilings.bareGetH1 ? ` (${pct(r.get.h1.rate / run.ceilings.bareGetH1.rate)} of bare)` : ''}`,
    );
  const lone = loneSummary(r);
  if (lone) parts.push(lone);
  const rv0j = r.list?.find((l) => l.mode === 'rv0' && l.format === 'json');
  const rv0p = r.list?.find((l) => l.mode === 'rv0' && l.format === 'protobuf');
  if (rv0j)
    parts.push(
      `list ${num(rv0j.items, 0)} RV=0 ${num(rv0j.medianMs, 0)} ms JSON / ${num(rv0p?.medianMs, 0)} ms PB`,
    );
  if (r.watchH2) parts.push(`watch ${r.watchH2.opened} p99 ${num(r.watchH2.p99)} ms (h2)`);
  if (r.watch) parts.push(`(HTTP/1.1 ${num(r.watch.p99)} ms)`);
  for (const p of r.memory?.points ?? []) parts.push(`${kib(p.perPod)}/pod at ${num(p.pods, 0)}`);
  return `${r.backend}: ${parts.join(', ')}`;
}

/** Appends one line per run to the "History" section of docs/performance.md. */
export function appendHistory(repo: string, run: RunResult, resultFile: string): void {
  const file = join(repo, 'docs', 'performance.md');
  let text = existsSync(file) ? readFileSync(file, 'utf8') : '# Performance\n';
  const heading = '## History (`npm run bench`)';
  if (!text.includes(heading))
    text = `${text.trimEnd()}\n\n${heading}\n\nOne line per run, appended by \`bench/run.ts\`; the full record is the JSON file named.\n`;
  const missed = run.budget.filter((b) => b.met === false).map((b) => `${b.backend} ${b.item}`);
  const line =
    `- ${run.date} \`${run.commit}\`${run.dirty ? ' (uncommitted changes)' : ''}, ` +
    `${run.machine.cpus} cpus, node ${run.machine.node}: ` +
    run.backends.map((b) => summaryOf(b, run)).join('; ') +
    `. Budget missed: ${missed.length ? missed.join(', ') : 'none'}. ` +
    `([record](../${resultFile.slice(resultFile.indexOf('bench/results/'))}))`;
  const at = text.indexOf(heading);
  const next = text.indexOf('\n## ', at + heading.length);
  if (next < 0) text = `${text.trimEnd()}\n${line}\n`;
  else text = `${text.slice(0, next).trimEnd()}\n${line}\n${text.slice(next)}`;
  writeFileSync(file, text);
}

/** The watch row the budget reads: h2 when measured (records before the fourth session have only HTTP/1.1). */
function budgetWatch(r: BackendResult): WatchFigures | undefined {
  return r.watchH2 ?? r.watch;
}
