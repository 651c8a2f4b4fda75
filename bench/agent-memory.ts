// `npm run bench:agent-memory`: the node agent's memory — idle after registering, and idle again
// with N pods running — on the fake runtime and on containerd: RSS split into anonymous and
// file-backed pages (/proc), and what V8 reports (heap used and committed, external) through the
// agent's own /metrics. Figures only, never pass/fail.
//
//   node dist/bench/agent-memory.js [--runtime fake,containerd] [--pods 30] [--idle-ms 20000] [--runs 1]
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { runtimeTestsUnavailable } from '../nodeagent/cri/testing';
import { Client } from '../shared/client/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { freePort, waitUntil } from '../shared/cluster/process';
import { LocalCluster, nodeName, type NodeRuntime } from '../shared/cluster/local-cluster';
import { memDetail, tempDir } from './lib/procs';
import { metricValue } from './lib/prometheus';
import { sleep } from './lib/stats';

const { values } = parseArgs({
  options: {
    runtime: { type: 'string', default: 'fake,containerd' },
    pods: { type: 'string', default: '30' },
    'idle-ms': { type: 'string', default: '20000' },
    runs: { type: 'string', default: '1' },
  },
});
const PODS = Number(values.pods);
const IDLE_MS = Number(values['idle-ms']);
const RUNS = Number(values.runs);

const MB = 2 ** 20;

function pod(name: string, node: string): any {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels: { bench: 'agent-memory' } },
    spec: {
      nodeName: node,
      terminationGracePeriodSeconds: 0,
      containers: [{ name: 'c', image: 'busybox', command: ['sleep', '3600'] }],
    },
  };
}

async function sample(client: Client, node: string, pid: number): Promise<string> {
  const text = (
    await client.rest.raw({ method: 'GET', path: `/api/v1/nodes/${node}/proxy/metrics`, accept: '*/*' })
  ).body.toString('utf8');
  const m = memDetail(pid);
  const v = (name: string) => (metricValue(text, name) / MB).toFixed(1);
  return (
    `RSS ${(m.rss / MB).toFixed(1)} MB (anon ${(m.anon / MB).toFixed(1)}, file ${(m.file / MB).toFixed(1)}); ` +
    `V8 heap used ${v('nodejs_heap_used_bytes')} of ${v('nodejs_heap_size_total_bytes')}, external ${v('nodejs_external_memory_bytes')}`
  );
}

async function measure(runtime: NodeRuntime): Promise<void> {
  const dir = tempDir(`bench-agent-memory-${runtime}`);
  const ports = { port: await freePort(), readOnlyPort: await freePort(), healthzPort: await freePort() };
  const cluster = new LocalCluster({
    dataDir: dir,
    nodes: 1,
    // "fake": one agent process on the fake runtime (not the simulated-nodes host).
    runtime: runtime === 'containerd' ? 'containerd' : undefined,
    apiserverPort: await freePort(),
    controllerManagerPort: await freePort(),
    registryPort: await freePort(),
    nodePorts: () => ports,
    podCIDR: () => '10.199.0.0/24',
  });
  const client = () => Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
  let c: Client | undefined;
  try {
    await cluster.up();
    c = client();
    const node = nodeName(0);
    const agent = cluster.procs.find((p) => p.name === node)!;
    await sleep(IDLE_MS);
    console.log(`${runtime.padEnd(10)} idle:         ${await sample(c, node, agent.pid)}`);
    const pods = c.resource('pods').namespace('default');
    const sa = c.resource('serviceaccounts').namespace('default');
    await waitUntil(async () => !!(await sa.get('default').catch(() => undefined)), 30_000, 'default SA');
    await Promise.all(Array.from({ length: PODS }, (_, i) => pods.create(pod(`mem-${i}`, node))));
    await waitUntil(
      async () =>
        (await pods.list({ labelSelector: 'bench=agent-memory' })).items.filter(
          (p: any) => p.status?.phase === 'Running',
        ).length === PODS,
      180_000,
      `${PODS} pods Running`,
    );
    await sleep(IDLE_MS);
    console.log(
      `${runtime.padEnd(10)} ${String(PODS).padStart(2)} pods idle: ${await sample(c, node, agent.pid)}`,
    );
    await pods.deleteCollection({ labelSelector: 'bench=agent-memory', gracePeriodSeconds: 0 });
  } finally {
    await c?.close();
    await cluster.down();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  for (let r = 0; r < RUNS; r++) {
    for (const rt of String(values.runtime).split(',') as NodeRuntime[]) {
      if (rt === 'containerd' && runtimeTestsUnavailable()) {
        console.log(`containerd: skipped (${runtimeTestsUnavailable()})`);
        continue;
      }
      await measure(rt);
    }
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
