// tkube up --nodes 1000 --runtime fake: one node-agent process hosts a
// thousand simulated nodes, all Ready, within 500 MB of resident memory, and a
// Deployment's pods are scheduled onto them and run.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { Client, loadKubeconfig } from '../shared/client';
import { waitUntil } from '../shared/cluster/process';
import { SIMULATED_NODES } from '../shared/cluster/local-cluster';
import { startCluster } from './support/cluster';

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
