// `npm run bench:pods`: pod start latency on one node — N pods created at once
// (bound to the node, as the scheduler would), each timed from its create to
// the watch event that shows it Running — on the fake runtime and on the real
// one (a containerd of the node's own). Figures only, never pass/fail.
//
//   node dist/bench/pod-start.js [--pods 30] [--runtime fake,containerd] [--rounds 2] [--pull-policy IfNotPresent]
//
// --pull-policy Always: every container start pulls `busybox` through the cluster's registry
// (what `kubectl run --image=busybox` does: an untagged image defaults to Always).
//
// For comparison (issue 15): kubelet v1.20 with the same containerd on this kind
// of machine showed p99 18-21 s at its default API QPS of 5 and 3.6-4.1 s at QPS 100.
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runtimeTestsUnavailable } from '../nodeagent/cri/testing';
import { Client } from '../shared/client/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { freePort } from '../shared/cluster/process';
import { LocalCluster, nodeName, type NodeRuntime } from '../shared/cluster/local-cluster';
import { rssBytes, tempDir } from './lib/procs';
import { summarize } from './lib/stats';

const { values } = parseArgs({
  options: {
    pods: { type: 'string', default: '30' },
    runtime: { type: 'string', default: 'fake,containerd' },
    rounds: { type: 'string', default: '2' },
    'pull-policy': { type: 'string', default: 'IfNotPresent' },
  },
});
const PODS = Number(values.pods);
const ROUNDS = Number(values.rounds);
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
async function round(client: Client, node: string, r: number): Promise<number[]> {
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
      if (latency.size === PODS) break;
    }
  })();
  await Promise.all(
    Array.from({ length: PODS }, async (_, i) => {
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
  if (latency.size < PODS) console.log(`  round ${r}: only ${latency.size} of ${PODS} pods reached Running`);
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
  });
  try {
    await cluster.up();
    const client = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
    const sa = client.resource('serviceaccounts').namespace('default');
    for (let i = 0; i < 100; i++) {
      if (await sa.get('default').catch(() => undefined)) break;
      await new Promise((res) => setTimeout(res, 100));
    }
    const all: number[] = [];
    for (let r = 0; r < ROUNDS; r++) all.push(...(await round(client, nodeName(0), r)));
    const s = summarize(Float64Array.from(all).sort());
    const agent = cluster.procs.find((p) => p.name === nodeName(0));
    const rss = agent ? rssBytes(agent.pid) / 2 ** 20 : NaN;
    console.log(
      `${runtime.padEnd(10)} ${PODS} pods x ${ROUNDS} (${PULL_POLICY}): create -> Running p50 ${s.p50.toFixed(0)} ms, p90 ${s.p90.toFixed(0)} ms, p99 ${s.p99.toFixed(0)} ms, max ${s.max.toFixed(0)} ms; node agent RSS ${rss.toFixed(0)} MiB`,
    );
    await client.close();
  } finally {
    await cluster.down();
    rmSync(dir, { recursive: true, force: true });
  }
}

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
