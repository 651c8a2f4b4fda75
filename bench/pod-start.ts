// `npm run bench:pods`: pod start latency on one node — N pods created at once
// (bound to the node, as the scheduler would), each timed from its create to
// the watch event that shows it Running — on the fake runtime and on the real
// one (a containerd of the node's own). Figures only, never pass/fail.
//
//   node dist/bench/pod-start.js [--pods 30] [--runtime fake,containerd] [--rounds 2] [--one-rounds 5] [--pull-policy IfNotPresent]
//
// With containerd, the same run also times containerd alone (lib/cri-alone.ts: a
// private containerd driven through the CRI with the same pods, while the cluster
// idles), before and after tkube's rounds, and prints the ratio of the two; and
// a "one pod alone" row (--one-rounds rounds of a single pod) for both.
//
// --phases: the agent runs at -v 4 and logs each pod's first start step by step
// (nodeagent/pods/start-trace.ts); the bench prints the p50/p99 of each step's end,
// in ms since the agent saw the pod, for the 30 at once and the one alone.
//
// --pull-policy Always: every container start pulls `busybox` through the cluster's registry
// (what `kubectl run --image=busybox` does: an untagged image defaults to Always).
//
// For comparison (issue 15): kubelet v1.20 with the same containerd on this kind
// of machine showed p99 18-21 s at its default API QPS of 5 and 3.6-4.1 s at QPS 100.
import { copyFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runtimeTestsUnavailable } from '../nodeagent/cri/testing';
import { Client } from '../shared/client/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { freePort } from '../shared/cluster/process';
import { LocalCluster, nodeName, type NodeRuntime } from '../shared/cluster/local-cluster';
import { ContainerdAlone, type AloneSteps } from './lib/cri-alone';
import { cpuSeconds, rssBytes, tempDir } from './lib/procs';
import { summarize, type LatencySummary } from './lib/stats';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '30' },
    runtime: { type: 'string', default: 'fake,containerd' },
    rounds: { type: 'string', default: '2' },
    'one-rounds': { type: 'string', default: '5' },
    'pull-policy': { type: 'string', default: 'IfNotPresent' },
    phases: { type: 'boolean', default: false },
  },
});
const PODS = Number(values.pods);
const ROUNDS = Number(values.rounds);
const ONE_ROUNDS = Number(values['one-rounds']);
const PULL_POLICY = String(values['pull-policy']);

function pod(name: string, node: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { bench: 'pod-start' } },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 0,
      containers: [
        {
          name: 'c',
          image: 'busybox',
          imagePullPolicy: PULL_POLICY,
          command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"],
        },
      ],
    },
  };
}

/** One round: create all pods at once, time each one to Running as the watch sees it, then delete them. */
async function round(client: Client, node: string, r: string, n: number): Promise<number[]> {
  const pods = client.resource('pods').namespace('default');
  const created = new Map<string, number>();
  const latency = new Map<string, number>();
  const list = await pods.list();
  const watch = await pods.watch({ resourceVersion: list.metadata.resourceVersion });
  const done = (async () => {
    for await (const ev of watch) {
      const p: any = ev.object;
      const name = p.metadata?.name;
      if (!created.has(name) || latency.has(name)) continue;
      if (p.status?.phase === 'Running') latency.set(name, Date.now() - created.get(name)!);
      if (latency.size === n) break;
    }
  })();
  await Promise.all(
    Array.from({ length: n }, async (_, i) => {
      const name = `start-${r}-${i}`;
      created.set(name, Date.now());
      await pods.create(pod(name, node));
    }),
  );
  await Promise.race([done, new Promise((res) => setTimeout(res, 120_000))]);
  watch.stop();
  await pods.deleteCollection({ labelSelector: 'bench=pod-start', gracePeriodSeconds: 0 });
  for (let i = 0; i < 600 && (await pods.list({ labelSelector: 'bench=pod-start' })).items.length; i++)
    await new Promise((res) => setTimeout(res, 100));
  if (latency.size < n) console.log(`  round ${r}: only ${latency.size} of ${n} pods reached Running`);
  return [...latency.values()];
}

async function measure(runtime: NodeRuntime): Promise<void> {
  const dir = tempDir(`bench-pods-${runtime}`);
  const ports = { port: await freePort(), readOnlyPort: await freePort(), healthzPort: await freePort() };
  const cluster = new LocalCluster({
    dataDir: dir,
    nodes: 1,
    // "fake": one agent process on the fake runtime (not the simulated-nodes host), to compare like with like.
    runtime: runtime === 'containerd' ? 'containerd' : undefined,
    apiserverPort: await freePort(),
    controllerManagerPort: await freePort(),
    registryPort: await freePort(),
    nodePorts: () => ports,
    podCIDR: () => '10.199.0.0/24',
    nodeagentArgs: () => (values.phases ? ['-v', '4'] : []),
  });
  try {
    await cluster.up();
    const client = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
    const sa = client.resource('serviceaccounts').namespace('default');
    for (let i = 0; i < 100; i++) {
      if (await sa.get('default').catch(() => undefined)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const alone = runtime === 'containerd' ? await ContainerdAlone.start() : undefined;
    try {
      const node = nodeName(0);
      const ctdAll: AloneSteps[] = [];
      // CPU seconds of each process over the 30-at-once rounds: who shares the 2 cores with containerd.
      const tkubePids = () => [
        ...cluster.procs.map((p) => [p.name, p.pid] as const),
        ...cluster.containerds.map((c) => ['containerd', c.pid] as const),
      ];
      const cpuTkube = new CpuSpent();
      const cpuAlone = new CpuSpent();
      const aloneRounds = async () => {
        const pids = [['containerd', alone!.pid] as const];
        cpuAlone.begin(pids);
        for (let r = 0; r < ROUNDS; r++)
          ctdAll.push(...(await alone!.round(PODS, (name) => pod(name, node))));
        cpuAlone.end(pids);
      };
      if (alone) await aloneRounds();
      const all: number[] = [];
      cpuTkube.begin(tkubePids());
      for (let r = 0; r < ROUNDS; r++) all.push(...(await round(client, node, String(r), PODS)));
      cpuTkube.end(tkubePids());
      const agentLog = cluster.procs.find((p) => p.name === nodeName(0))?.logFile;
      if (values.phases && agentLog) printSteps(`${PODS} at once`, agentLog, /^start-\d+-/);
      if (alone) await aloneRounds();
      const one: number[] = [];
      for (let r = 0; r < ONE_ROUNDS; r++) one.push(...(await round(client, node, `one-${r}`, 1)));
      if (values.phases && agentLog) {
        printSteps('one alone', agentLog, /^start-one-/);
        const kept = join(tmpdir(), `pod-start-agent-${runtime}.log`);
        copyFileSync(agentLog, kept);
        console.log(`  the agent's log: ${kept}`);
      }
      const ctdOne: AloneSteps[] = [];
      for (let r = 0; alone && r < ONE_ROUNDS; r++)
        ctdOne.push(...(await alone.round(1, (name) => pod(name, node))));
      const agent = cluster.procs.find((p) => p.name === nodeName(0));
      const rss = agent ? rssBytes(agent.pid) / 2 ** 20 : NaN;
      const s = stats(all);
      console.log(
        `${runtime.padEnd(16)} ${PODS} pods x ${ROUNDS} (${PULL_POLICY}): create -> Running ${fmt(s)}; node agent RSS ${rss.toFixed(0)} MiB`,
      );
      if (alone) {
        const c = stats(ctdAll.map((x) => x.started));
        console.log(
          `${'containerd alone'.padEnd(16)} ${PODS} pods x ${ROUNDS * 2} (before and after): RunPodSandbox -> StartContainer ${fmt(c)}; tkube/alone p50 ${(s.p50 / c.p50).toFixed(2)}x, p99 ${(s.p99 / c.p99).toFixed(2)}x`,
        );
      }
      console.log(`  CPU s over the ${PODS}-at-once rounds (create to all deleted): ${cpuTkube.report()}`);
      if (alone) {
        console.log(`  CPU s over containerd alone's rounds: ${cpuAlone.report()}`);
        if (values.phases) printAloneSteps(`${PODS} at once`, ctdAll);
      }
      const o = stats(one);
      console.log(`${runtime.padEnd(16)} 1 pod x ${ONE_ROUNDS}: create -> Running ${fmt(o)}`);
      if (alone) {
        const c = stats(ctdOne.map((x) => x.started));
        console.log(
          `${'containerd alone'.padEnd(16)} 1 pod x ${ONE_ROUNDS}: RunPodSandbox -> StartContainer ${fmt(c)}; tkube/alone p50 ${(o.p50 / c.p50).toFixed(2)}x`,
        );
      }
      if (alone && values.phases) printAloneSteps('one alone', ctdOne);
    } finally {
      await alone?.stop();
    }
    await client.close();
  } finally {
    await cluster.down();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The agent's step lines (start-trace.ts) of the pods whose name matches: each step's p50 / p99. */
function printSteps(what: string, logFile: string, names: RegExp): void {
  const byStep = new Map<string, number[]>();
  for (const line of readFileSync(logFile, 'utf8').split('\n')) {
    if (!line.includes('"steps"')) continue;
    let e: any;
    try {
      e = JSON.parse(line);
    } catch {
      continue;
    }
    if (!names.test(String(e.pod ?? '').split('_')[0])) continue;
    for (const [step, ms] of Object.entries<number>(e.steps))
      byStep.set(step, [...(byStep.get(step) ?? []), ms]);
  }
  const steps = [...byStep].sort((a, b) => stats(a[1]).p50 - stats(b[1]).p50);
  console.log(`  agent steps, ${what} (ms since the agent saw the pod, p50/p99):`);
  for (const [step, xs] of steps) {
    const s = stats(xs);
    console.log(
      `    ${step.padEnd(24)} ${s.p50.toFixed(0).padStart(6)} ${s.p99.toFixed(0).padStart(6)}  (${xs.length})`,
    );
  }
}

/** CPU seconds each named process used between begin and end (summed over several spans). */
class CpuSpent {
  private readonly spent = new Map<string, number>();
  private readonly at = new Map<number, number>();
  begin(pids: readonly (readonly [string, number])[]): void {
    for (const [, pid] of pids) this.at.set(pid, cpuSeconds(pid));
  }
  end(pids: readonly (readonly [string, number])[]): void {
    for (const [name, pid] of pids)
      this.spent.set(name, (this.spent.get(name) ?? 0) + cpuSeconds(pid) - (this.at.get(pid) ?? NaN));
  }
  report(): string {
    return [...this.spent].map(([n, s]) => `${n} ${s.toFixed(1)}`).join(', ');
  }
}

function printAloneSteps(what: string, xs: AloneSteps[]): void {
  console.log(`  containerd alone steps, ${what} (ms since RunPodSandbox was called, p50/p99):`);
  for (const step of ['sandbox', 'created', 'started'] as const) {
    const s = stats(xs.map((x) => x[step]));
    console.log(
      `    ${step.padEnd(24)} ${s.p50.toFixed(0).padStart(6)} ${s.p99.toFixed(0).padStart(6)}  (${xs.length})`,
    );
  }
}

const stats = (xs: number[]) => summarize(Float64Array.from(xs).sort());
const fmt = (s: LatencySummary) =>
  `p50 ${s.p50.toFixed(0)} ms, p90 ${s.p90.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms, max ${s.max.toFixed(0)} ms`;

async function main(): Promise<void> {
  for (const rt of String(values.runtime).split(',') as NodeRuntime[]) {
    if (rt === 'containerd' && runtimeTestsUnavailable()) {
      console.log(`containerd: skipped (${runtimeTestsUnavailable()})`);
      continue;
    }
    await measure(rt);
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
