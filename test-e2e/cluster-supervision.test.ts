// The launcher supervises its processes: a controller manager killed with
// SIGKILL while a Deployment scales up is started again (it takes the lease
// back) and the Deployment converges; a node agent killed the same way comes
// back, its node turns Ready again and it keeps the pods bound to it.
import assert from 'node:assert/strict';
import { Client, loadKubeconfig } from '../shared/client';
import { waitUntil } from '../shared/cluster/process';
import type { Restart } from '../shared/cluster/supervisor';
import { startCluster } from './support/cluster';

describe('tkube up supervision (processes)', function () {
  this.timeout(300_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: Client;
  const restarts: Restart[] = [];

  before(async () => {
    cluster = await startCluster({ nodes: 2, onRestart: (r) => restarts.push(r) });
    client = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
  });

  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  const proc = (name: string) => cluster.procs.find((p) => p.name === name)!;
  const deployments = () => client.resource('deployments.apps').namespace('default');

  async function ready(name: string, replicas: number, timeoutMs: number): Promise<void> {
    await waitUntil(
      async () => {
        const d = await deployments().get(name);
        return d.status?.readyReplicas === replicas && d.status?.updatedReplicas === replicas;
      },
      timeoutMs,
      `${name} with ${replicas} ready replicas`,
    );
  }

  it('restarts a controller manager killed under load, and the Deployment converges', async () => {
    const replicas = 150;
    await deployments().create({
      metadata: { name: 'big' },
      spec: {
        replicas,
        selector: { matchLabels: { app: 'big' } },
        template: {
          metadata: { labels: { app: 'big' } },
          spec: { containers: [{ name: 'c', image: 'nginx' }] },
        },
      },
    });
    // Kill it mid-way: some pods exist, not all.
    await waitUntil(
      async () => {
        const pods = await client.resource('pods').namespace('default').list({ labelSelector: 'app=big' });
        return pods.items.length >= 20;
      },
      60_000,
      'the first pods',
    );
    const cm = proc('controller-manager');
    const before = cm.pid;
    process.kill(before, 'SIGKILL');
    await waitUntil(
      async () => cm.pid !== before && cm.child.exitCode === null,
      30_000,
      'a new controller manager',
    );
    assert.ok(restarts.some((r) => r.name === 'controller-manager' && /SIGKILL/.test(r.why)));
    await ready('big', replicas, 240_000);
  });

  it('restarts a killed node agent, whose node is Ready again with its pods', async () => {
    const node = 'tkube-node-1';
    const podsOn = async () =>
      (await client.resource('pods').list({ fieldSelector: `spec.nodeName=${node}` })).items
        .filter((p) => !p.metadata!.deletionTimestamp)
        .map((p) => p.metadata!.uid!)
        .sort();
    const uids = await podsOn();
    /** Each pod's container start time and restart count, as the agent reports them. */
    const started = async () =>
      (await client.resource('pods').list({ fieldSelector: `spec.nodeName=${node}` })).items
        .map(
          (p: any) =>
            `${p.metadata.name} ${p.status?.containerStatuses?.[0]?.state?.running?.startedAt} ${p.status?.containerStatuses?.[0]?.restartCount}`,
        )
        .sort();
    const startedBefore = await started();
    assert.ok(uids.length > 0, 'pods run on the node');
    const agent = proc(node);
    const before = agent.pid;
    process.kill(before, 'SIGKILL');
    await waitUntil(
      async () => agent.pid !== before && agent.child.exitCode === null,
      30_000,
      'a new node agent',
    );
    assert.ok(restarts.some((r) => r.name === node && /SIGKILL/.test(r.why)));
    // The new agent heartbeats: its Lease is renewed after the kill.
    const killedAt = Date.now();
    await waitUntil(
      async () => {
        const l = await client.resource('leases.coordination.k8s.io').namespace('kube-node-lease').get(node);
        return Date.parse(l.spec?.renewTime ?? '') > killedAt;
      },
      60_000,
      `${node}'s lease renewed by the new agent`,
    );
    await waitUntil(() => cluster.nodeReady(node), 60_000, `${node} Ready again`);
    // The same pods (same UIDs) stay bound to it and ready: the new agent took them over.
    await ready('big', 150, 120_000);
    assert.deepEqual(await podsOn(), uids);
    // Not started again: the same start times, no restarts counted.
    assert.deepEqual(await started(), startedBefore);
  });
});
