// `npm run bench:density` (issue 17): a density test modelled on ClusterLoader2's
// — a whole local cluster (apiserver, controller manager, simulated nodes) as
// processes, Deployments that fill every node with pods, then one Deployment of
// --big-replicas. Figures only, never pass/fail (Kubernetes' SLOs are printed
// beside them): pod startup latency (creation → Running and Ready, both as a
// watch sees them), scheduler throughput, mutating API call latency (the
// apiserver's request histogram, as ClusterLoader2 reads it), event-loop lag
// and resident memory per component, and the big Deployment's time to Ready.
//
//   node dist/bench/density.js [--nodes 100] [--pods-per-node 30] [--deployments 10]
//                              [--big-replicas 1000] [--record]
//   node dist/bench/density.js --nodes 1000 --pods-per-node 10
//   node dist/bench/density.js --size 1000x10000    (issue 38: 1,000 nodes, a 10,000-replica Deployment)
//   node dist/bench/density.js --size 5000x30       (issue 38: 5,000 nodes × 30 pods, 150,000 pods)
import { writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { Client, loadKubeconfig, type KubeObject } from '../shared/client';
import { LocalCluster, SIMULATED_NODES } from '../shared/cluster/local-cluster';
import { freePort, waitUntil } from '../shared/cluster/process';
import { setSilent } from '../shared/log';
import { DIST, memDetail, removeDir, tempDir } from './lib/procs';
import { gitInfo } from './lib/report';
import { mb, ms, num, summarize, type LatencySummary } from './lib/stats';
import { PodTimeline } from './lib/pod-timeline';
import { LeaseMonitor } from './lib/lease-monitor';
import { histogramQuantile, metricValue, parseHistogram, type Buckets } from './lib/prometheus';

const USAGE = `usage: node dist/bench/density.js [options]
  --nodes <n>            simulated nodes (default 100)
  --pods-per-node <n>    pods per node, through Deployments (default 30)
  --deployments <n>      Deployments sharing those pods (default 10)
  --big-replicas <n>     then one Deployment of this many replicas, timed to Ready (default 1000; 0 skips)
  --size <preset>        1000x10000 (1,000 nodes, then a 10,000-replica Deployment) or 5000x30
                         (5,000 nodes × 30 pods); sets --nodes, --pods-per-node, --deployments, --big-replicas
  --timeout <s>          per phase (default 1200)
  --hold <s>             after the pods, hold the cluster this long and report Lease renewals,
                         Nodes leaving Ready and peak RSS over that window (default 0)
  --apiserver-arg <flag> one more apiserver flag, as --watch-cache-sizes=events#100 (repeatable;
                         for before/after runs of a setting)
  --record               write the figures to bench/results/density-<date>-<commit>-<nodes>x<pods-per-node>+<big-replicas>.json`;

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Issue 38's sizes. */
const SIZES: Record<string, Pick<Options, 'nodes' | 'podsPerNode' | 'deployments' | 'bigReplicas'>> = {
  '1000x10000': { nodes: 1000, podsPerNode: 0, deployments: 1, bigReplicas: 10_000 },
  '5000x30': { nodes: 5000, podsPerNode: 30, deployments: 30, bigReplicas: 0 },
};

/**
 * Published figures printed beside ours. kube-scheduler: scheduler_perf's SchedulingBasic
 * 5000Nodes_10000Pods, whose CI job fails below an Average SchedulingThroughput of 680 pods/s
 * (test/integration/scheduler_perf/misc/performance-config.yaml; an apiserver and etcd, no
 * kubelets, a dedicated machine). SLOs: Kubernetes' scalability SLOs (pod startup p99 ≤ 5 s,
 * mutating API calls p99 ≤ 1 s).
 */
const KUBE_SCHEDULER_5000_NODES =
  'kube-scheduler SchedulingBasic/5000Nodes_10000Pods: CI threshold ≥ 680 pods/s';
const SLO_STARTUP = 'SLO p99 ≤ 5 s';
const SLO_MUTATING = 'SLO p99 ≤ 1 s';

interface Options {
  nodes: number;
  podsPerNode: number;
  deployments: number;
  bigReplicas: number;
  timeoutMs: number;
  holdMs: number;
  record: boolean;
  apiserverArgs: string[];
}

function options(): Options {
  const { values } = parseArgs({
    options: {
      nodes: { type: 'string', default: '100' },
      'pods-per-node': { type: 'string', default: '30' },
      deployments: { type: 'string', default: '10' },
      'big-replicas': { type: 'string', default: '1000' },
      size: { type: 'string' },
      timeout: { type: 'string', default: '1200' },
      hold: { type: 'string', default: '0' },
      record: { type: 'boolean', default: false },
      'apiserver-arg': { type: 'string', multiple: true, default: [] },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (v: string | undefined, name: string) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`--${name} must be a non-negative integer\n${USAGE}`);
    return n;
  };
  if (values.size !== undefined && !SIZES[values.size])
    throw new Error(`--size must be one of ${Object.keys(SIZES).join(', ')}\n${USAGE}`);
  return {
    nodes: Math.max(1, int(values.nodes, 'nodes')),
    podsPerNode: int(values['pods-per-node'], 'pods-per-node'),
    deployments: Math.max(1, int(values.deployments, 'deployments')),
    bigReplicas: int(values['big-replicas'], 'big-replicas'),
    timeoutMs: int(values.timeout, 'timeout') * 1000,
    holdMs: int(values.hold, 'hold') * 1000,
    record: !!values.record,
    apiserverArgs: values['apiserver-arg'] ?? [],
    ...(values.size ? SIZES[values.size] : {}),
  };
}

const load = () =>
  loadavg()
    .map((l) => l.toFixed(2))
    .join(' ');

function deployment(name: string, replicas: number): KubeObject {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, labels: { group: 'density' } },
    spec: {
      replicas,
      selector: { matchLabels: { name } },
      template: {
        metadata: { labels: { name, group: 'density' } },
        spec: {
          containers: [
            {
              name: 'pause',
              image: 'registry.k8s.io/pause:3.10',
              resources: { requests: { cpu: '1m', memory: '1Mi' } },
            },
          ],
        },
      },
    },
  };
}

interface ComponentFigures {
  name: string;
  rssBytes: number;
  eventLoopLagP99Ms: number;
  eventLoopLagMaxMs: number;
}

interface PhaseFigures {
  pods: number;
  seconds: number;
  startup: LatencySummary;
  toBound: LatencySummary;
  boundToRunning: LatencySummary;
  schedulerPodsPerSecond: number;
}

async function main(): Promise<void> {
  const o = options();
  setSilent(true);
  const dir = tempDir('density');
  const ports = { api: await freePort(), cm: await freePort() };
  const nodePorts = { port: await freePort(), readOnlyPort: await freePort(), healthzPort: await freePort() };
  const cluster = new LocalCluster({
    dataDir: join(dir, 'cluster'),
    nodes: o.nodes,
    runtime: 'fake',
    apiserverPort: ports.api,
    apiserverArgs: o.apiserverArgs,
    controllerManagerPort: ports.cm,
    nodePorts: () => nodePorts,
    supervise: false,
    timeoutMs: o.timeoutMs,
    progress: (step, state, detail) => {
      if (state === 'start') stepStarted.set(step, Date.now());
      if (state === 'done') console.log(`  ${step}${detail ? `: ${detail}` : ''}`);
      if (step === 'nodes' && state === 'done')
        nodesReadySeconds = (Date.now() - stepStarted.get('nodes')!) / 1000;
    },
  });
  const stepStarted = new Map<string, number>();
  let nodesReadySeconds = NaN;
  let monitor: LeaseMonitor | undefined;
  let client: Client | undefined;
  let admin: Agent | undefined;
  const stop = async () => {
    await monitor?.stop();
    await client?.close();
    await admin?.close();
    await cluster.down().catch(() => {});
    removeDir(dir);
  };
  process.once('SIGINT', () => void stop().then(() => process.exit(130)));
  try {
    console.log(
      `density: ${o.nodes} simulated nodes × ${o.podsPerNode} pods, then ${o.bigReplicas} replicas (load average ${load()})`,
    );
    const t0 = Date.now();
    await cluster.up();
    console.log(
      `  cluster up in ${((Date.now() - t0) / 1000).toFixed(1)} s; the ${o.nodes} nodes Ready ${nodesReadySeconds.toFixed(1)} s after their agent started`,
    );
    const cfg = loadKubeconfig(cluster.kubeconfig);
    client = Client.create(cfg, { qps: -1, http2: false });
    monitor = new LeaseMonitor(client);
    monitor.start();
    admin = new Agent({
      connect: { rejectUnauthorized: false, cert: cfg.certPem, key: cfg.keyPem, ca: cfg.caPem },
    });
    const scrape = async (url: string) => {
      const r = await request(url, { dispatcher: admin, headersTimeout: 30_000, bodyTimeout: 30_000 });
      const body = await r.body.text();
      if (r.statusCode !== 200) throw new Error(`${url}: ${r.statusCode} ${body.slice(0, 200)}`);
      return body;
    };
    const urls: Record<string, string> = {
      apiserver: `${cluster.server}/metrics`,
      'controller-manager': `https://127.0.0.1:${ports.cm}/metrics`,
      [SIMULATED_NODES]: `http://127.0.0.1:${nodePorts.readOnlyPort}/metrics`,
    };
    const mutatingBuckets = async (): Promise<Buckets> =>
      parseHistogram(await scrape(urls.apiserver), 'apiserver_request_duration_seconds', (l) =>
        MUTATING.has(l.verb),
      );
    const before = await mutatingBuckets();

    const phase = async (ns: string, deployments: KubeObject[]): Promise<PhaseFigures> => {
      await client!.resource('namespaces').create({ metadata: { name: ns } });
      const total = deployments.reduce((n, d) => n + d.spec.replicas, 0);
      const timeline = new PodTimeline(client!, ns);
      await timeline.start();
      const start = Date.now();
      for (const d of deployments) await client!.resource('deployments.apps').namespace(ns).create(d);
      await waitUntil(async () => timeline.running() >= total, o.timeoutMs, `${total} pods Running in ${ns}`);
      const seconds = (Date.now() - start) / 1000;
      timeline.stop();
      const bound = timeline.boundTimes();
      const split = timeline.startupSplit();
      return {
        pods: total,
        seconds,
        startup: summarize(timeline.startupLatencies()),
        toBound: summarize(split.toBound),
        boundToRunning: summarize(split.boundToRunning),
        schedulerPodsPerSecond:
          bound.length > 1 ? (bound.length - 1) / ((bound[bound.length - 1] - bound[0]) / 1000) : NaN,
      };
    };

    const perDeployment = Math.ceil((o.nodes * o.podsPerNode) / o.deployments);
    const saturation =
      o.podsPerNode > 0
        ? await phase(
            'density',
            Array.from({ length: o.deployments }, (_, i) => deployment(`density-${i}`, perDeployment)),
          )
        : undefined;
    if (saturation) report('saturation', saturation);

    let big: PhaseFigures | undefined;
    if (o.bigReplicas > 0) {
      big = await phase('density-big', [deployment('big', o.bigReplicas)]);
      const start = Date.now() - big.seconds * 1000;
      await waitUntil(
        async () => {
          const d = await client!.resource('deployments.apps').namespace('density-big').get('big');
          return d.status?.readyReplicas === o.bigReplicas && d.status?.updatedReplicas === o.bigReplicas;
        },
        o.timeoutMs,
        `the ${o.bigReplicas}-replica Deployment Ready`,
      );
      const readySeconds = (Date.now() - start) / 1000;
      report(`${o.bigReplicas}-replica Deployment`, big);
      console.log(
        `  ${o.bigReplicas}-replica Deployment fully Ready in ${readySeconds.toFixed(1)} s: ${num(o.bigReplicas / readySeconds)} pods/s end to end`,
      );
      big = { ...big, seconds: readySeconds };
    }
    const held = o.holdMs > 0 ? await hold(monitor, o.holdMs, cluster.procs) : undefined;
    const after = await mutatingBuckets();
    const mutatingP99 = histogramQuantile(after, before, 0.99);
    const components: ComponentFigures[] = [];
    for (const p of cluster.procs) {
      const metrics = await scrape(urls[p.name]).catch(() => '');
      components.push({
        name: p.name,
        rssBytes: memDetail(p.pid).rss,
        eventLoopLagP99Ms: metricValue(metrics, 'nodejs_eventloop_lag_p99_seconds') * 1000,
        eventLoopLagMaxMs: metricValue(metrics, 'nodejs_eventloop_lag_max_seconds') * 1000,
      });
    }
    console.log(
      `\n  mutating API calls p99 (apiserver histogram, bucket bound): ${ms(mutatingP99 * 1000)}  (${SLO_MUTATING})`,
    );
    console.log('\n  component            RSS          event-loop lag p99   max');
    for (const c of components)
      console.log(
        `  ${c.name.padEnd(20)} ${mb(c.rssBytes).padEnd(12)} ${ms(c.eventLoopLagP99Ms).padEnd(20)} ${ms(c.eventLoopLagMaxMs)}`,
      );
    console.log(`\n  load average at the end: ${load()}`);
    if (o.record) {
      const git = gitInfo(resolve(DIST, '..'));
      const file = join(
        resolve(DIST, '..', 'bench', 'results'),
        // The size in the name: two sizes run on one commit must not overwrite each other.
        `density-${new Date().toISOString().slice(0, 10)}-${git.commit}-${o.nodes}x${o.podsPerNode}+${o.bigReplicas}.json`,
      );
      writeFileSync(
        file,
        JSON.stringify(
          {
            options: o,
            git,
            loadAverage: loadavg(),
            nodesReadySeconds,
            saturation,
            big,
            held,
            mutatingP99Seconds: mutatingP99,
            components,
          },
          null,
          2,
        ),
      );
      console.log(`\n  recorded in ${file}`);
    }
  } finally {
    await stop();
  }
}

/** Holds the cluster for ms, sampling RSS every 10 s; prints and returns what the window saw. */
async function hold(monitor: LeaseMonitor, ms: number, procs: { name: string; pid: number }[]) {
  monitor.reset();
  const peakRss: Record<string, number> = {};
  const end = Date.now() + ms;
  while (Date.now() < end) {
    for (const p of procs) peakRss[p.name] = Math.max(peakRss[p.name] ?? 0, memDetail(p.pid).rss || 0);
    await new Promise((r) => setTimeout(r, Math.min(10_000, Math.max(0, end - Date.now()))));
  }
  const f = monitor.figures();
  const kcm = f.gapOf('kube-system/kube-controller-manager');
  console.log(
    `\n  held ${(ms / 1000).toFixed(0)} s: ${f.leases} Leases, ${f.renewals} renewals, ${f.late} later than their lease duration, longest gap ${(f.maxGapMs / 1000).toFixed(1)} s (controller manager's ${(kcm / 1000).toFixed(1)} s); ${f.nodesReady} Nodes Ready, ${f.notReadyTransitions} left Ready`,
  );
  console.log(
    `  peak RSS over the window: ${Object.entries(peakRss)
      .map(([n, b]) => `${n} ${mb(b)}`)
      .join(', ')}`,
  );
  return {
    seconds: ms / 1000,
    leases: f.leases,
    renewals: f.renewals,
    late: f.late,
    maxGapMs: f.maxGapMs,
    controllerManagerMaxGapMs: kcm,
    nodesReady: f.nodesReady,
    notReadyTransitions: f.notReadyTransitions,
    peakRss,
  };
}

function report(name: string, f: PhaseFigures): void {
  const s = f.startup;
  console.log(
    `  ${name}: ${f.pods} pods Running in ${f.seconds.toFixed(1)} s; startup p50 ${ms(s.p50)}, p90 ${ms(s.p90)}, p99 ${ms(s.p99)} (${SLO_STARTUP}); scheduler ${num(f.schedulerPodsPerSecond)} pods/s (${KUBE_SCHEDULER_5000_NODES})`,
  );
  const b = f.toBound;
  const r = f.boundToRunning;
  console.log(
    `    of it: created → bound p50 ${ms(b.p50)}, p99 ${ms(b.p99)}; bound → Running and Ready p50 ${ms(r.p50)}, p99 ${ms(r.p99)}`,
  );
}

main().catch((err) => {
  console.error(err instanceof Error ? err.message : err);
  process.exit(1);
});
