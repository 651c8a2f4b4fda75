// tkube up --nodes 1000 --runtime fake: one node-agent process hosts a
// thousand simulated nodes, all Ready, within 500 MB of resident memory, and a
// Deployment's pods are scheduled onto them and run. And on a small one, each
// simulated node serves the kubelet API: kubectl top (metrics-server), kubectl
// logs and the node proxy reach it.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client, loadKubeconfig } from '../shared/client';
import { waitUntil } from '../shared/cluster/process';
import { SIMULATED_NODES } from '../shared/cluster/local-cluster';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';

const NODES = 1000;
const MAX_RSS = 500 * 1024 * 1024;

/** Resident memory of a process (Linux /proc). */
function rss(pid: number): number {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Number(m[1]) * 1024 : NaN;
}

describe(`${NODES} simulated nodes (processes)`, function () {
  this.timeout(900_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: Client;

  before(async () => {
    cluster = await startCluster({ nodes: NODES, runtime: 'fake', timeoutMs: 600_000 });
    client = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  it('hosts them in one process within 500 MB and runs pods on them', async () => {
    const agents = cluster.procs.filter((p) => p.name === SIMULATED_NODES);
    assert.equal(agents.length, 1);
    assert.equal(await cluster.readyNodes(), NODES);
    const replicas = 200;
    const deployments = client.resource('deployments.apps').namespace('default');
    await deployments.create({
      metadata: { name: 'spread' },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'spread' } },
        template: {
          metadata: { labels: { app: 'spread' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    await waitUntil(
      async () => (await deployments.get('spread')).status?.readyReplicas === replicas,
      300_000,
      `${replicas} ready replicas`,
    );
    const pods = (await client.resource('pods').namespace('default').list({ labelSelector: 'app=spread' }))
      .items;
    assert.ok(new Set(pods.map((p: any) => p.spec.nodeName)).size > 1, 'spread over several nodes');
    const used = rss(agents[0].pid);
    assert.ok(used < MAX_RSS, `resident memory ${Math.round(used / 2 ** 20)} MiB`);
  });
});

describe('simulated nodes serve the kubelet API (processes, the real kubectl)', function () {
  this.timeout(240_000);
  const NAMES = ['tkube-node-1', 'tkube-node-2', 'tkube-node-3'];
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  const k = (...args: string[]) => kubectl(cluster.kubeconfig, args);

  before(async function () {
    if (!kubectlAvailable()) this.skip();
    cluster = await startCluster({
      nodes: NAMES.length,
      runtime: 'fake',
      metricsServerArgs: ['--metric-resolution=2s'],
    });
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'busy',
        namespace: 'default',
        annotations: { 'tkube.io/fake-cpu': '100m', 'tkube.io/fake-memory': '64Mi' },
      },
      spec: { nodeName: 'tkube-node-2', containers: [{ name: 'c', image: 'busybox' }] },
    };
    const r = await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], { input: JSON.stringify(pod) });
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => (await k('get', 'pod', 'busy', '-o', 'jsonpath={.status.phase}')).stdout === 'Running',
      60_000,
      'busy Running',
    );
  });

  after(async () => {
    await cluster?.cleanup();
  });

  it('answers the node proxy on every node, each on its own port', async () => {
    const ports = new Set<number>();
    for (const n of NAMES) {
      const r = await k('get', '--raw', `/api/v1/nodes/${n}/proxy/healthz`);
      assert.equal(r.stdout, 'ok', r.stderr);
      const node = JSON.parse((await k('get', 'node', n, '-o', 'json')).stdout);
      ports.add(node.status.daemonEndpoints.kubeletEndpoint.Port);
    }
    assert.equal(ports.size, NAMES.length);
  });

  it("kubectl logs shows the fake runtime's log of a simulated pod", async () => {
    const r = await k('logs', 'busy');
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout, 'fake container c started\nimage busybox, attempt 0\n');
  });

  it("kubectl top nodes and pods show each node's synthetic figures", async () => {
    // Each node: its own 50m and 256Mi, and its containers' (busy's 100m and 64Mi, others the
    // fake runtime's default 1m and 4Mi: the cluster may run pods of its own).
    const want = new Map(NAMES.map((n) => [n, { cpu: 50, memory: 256 }]));
    for (const p of JSON.parse((await k('get', 'pods', '-A', '-o', 'json')).stdout).items) {
      const w = want.get(p.spec.nodeName);
      if (!w) continue;
      const busy = p.metadata.name === 'busy';
      const containers = (p.spec.containers ?? []).length;
      w.cpu += containers * (busy ? 100 : 1);
      w.memory += containers * (busy ? 64 : 4);
    }
    let out = '';
    await waitUntil(
      async () => {
        const r = await k('top', 'nodes');
        out = r.stdout;
        return r.code === 0 && NAMES.every((n) => new RegExp(`^${n}\\s`, 'm').test(out));
      },
      90_000,
      'kubectl top nodes lists every node',
    );
    const row = (n: string) => {
      const m = new RegExp(`^${n}\\s+(\\d+)m\\s+\\d+%\\s+(\\d+)Mi\\s+\\d+%\\s*$`, 'm').exec(out);
      assert.ok(m, out);
      return { cpu: Number(m[1]), memory: Number(m[2]) };
    };
    for (const n of NAMES) {
      const { cpu, memory } = row(n);
      const w = want.get(n)!;
      assert.equal(memory, w.memory, `${n} memory: ${out}`);
      // A rate over two scrapes, whose spacing the machine's load sets: present, not a figure to match.
      assert.ok(cpu > 0, `${n} CPU ${cpu}m, want a rate (about ${w.cpu}m): ${out}`);
    }
    await waitUntil(
      async () => {
        const r = await k('top', 'pods', '--containers');
        out = r.stdout;
        return r.code === 0 && /^busy\s/m.test(out);
      },
      60_000,
      'kubectl top pods lists busy',
    );
    const m = /^busy\s+c\s+(\d+)m\s+(\d+)Mi\s*$/m.exec(out);
    assert.ok(m, out);
    assert.equal(Number(m[2]), 64);
    assert.ok(Math.abs(Number(m[1]) - 100) <= 20, out);
  });
});
