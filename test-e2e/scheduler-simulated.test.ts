// The simulator end to end: 200 simulated nodes in one agent process, the
// launcher's client rates on the controller manager, and a Deployment whose
// pods the scheduler spreads evenly, then fills every node to its allocatable
// and no further — while bindings run concurrently. Correctness only: nothing
// here depends on speed.
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { Client, loadKubeconfig } from '../shared/client';
import { SIMULATOR_CLIENT_RATES, SIMULATOR_COMPACTION_INTERVAL } from '../shared/cluster/component-flags';
import { waitUntil } from '../shared/cluster/process';
import { startCluster } from './support/cluster';

const NODES = 200;
/** Simulated nodes have 32 cores: three pods of 10 fit, a fourth does not. */
const CPU = '10';
const PER_NODE = 3;

describe(`the scheduler on ${NODES} simulated nodes (processes)`, function () {
  this.timeout(1_200_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let client: Client;

  before(async () => {
    cluster = await startCluster({ nodes: NODES, runtime: 'fake', timeoutMs: 300_000 });
    client = Client.create(loadKubeconfig(cluster.kubeconfig), { qps: -1, http2: false });
  });
  after(async () => {
    await client?.close();
    await cluster?.cleanup();
  });

  const deployments = () => client.resource('deployments.apps').namespace('default');
  const podsPerNode = async () => {
    const items = (await client.resource('pods').namespace('default').list({ labelSelector: 'app=fill' }))
      .items;
    const perNode = new Map<string, number>();
    for (const p of items)
      if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    return { items, perNode };
  };

  it('runs the controller manager with the simulator client rates', () => {
    const args = cluster.procs.find((p) => p.name === 'controller-manager')!.child.spawnargs;
    const { controllers, scheduler } = SIMULATOR_CLIENT_RATES;
    for (const flag of [
      `--kube-api-qps=${controllers.qps}`,
      `--kube-api-burst=${controllers.burst}`,
      `--scheduler-kube-api-qps=${scheduler.qps}`,
      `--scheduler-kube-api-burst=${scheduler.burst}`,
    ])
      assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
  });

  it("runs the apiserver with the simulator's compaction interval", () => {
    const args = cluster.procs.find((p) => p.name === 'apiserver')!.child.spawnargs;
    const flag = `--etcd-compaction-interval=${SIMULATOR_COMPACTION_INTERVAL}`;
    assert.ok(args.includes(flag), `${flag} in ${args.join(' ')}`);
  });

  it('spreads a Deployment over every node, then fills each node to its allocatable and no further', async () => {
    await deployments().create({
      metadata: { name: 'fill' },
      spec: {
        replicas: 2 * NODES,
        selector: { matchLabels: { app: 'fill' } },
        template: {
          metadata: { labels: { app: 'fill' } },
          spec: { containers: [{ name: 'c', image: 'nginx', resources: { requests: { cpu: CPU } } }] },
        },
      },
    });
    await waitUntil(
      async () => (await deployments().get('fill')).status?.readyReplicas === 2 * NODES,
      600_000,
      `${2 * NODES} ready replicas`,
    );
    // LeastAllocated, BalancedAllocation and the default spread all prefer the emptiest node. Like
    // kube-scheduler (percentageOfNodesToScore), each pod looks at 100 of the 200 nodes, the two
    // halves in turn: each half fills evenly, the halves may take a few pods more or fewer.
    const first = await podsPerNode();
    const counts = [...first.perNode.values()];
    assert.equal(first.perNode.size, NODES, 'every node used');
    assert.ok(Math.max(...counts) - Math.min(...counts) <= 2, `per node: ${counts.join(' ')}`);

    // 50 more than fit: every node ends full, the rest stay Pending for lack of cpu.
    const want = PER_NODE * NODES + 50;
    await deployments().patch('fill', { spec: { replicas: want } }, 'merge');
    const full = await waitUntil(
      async () => {
        const r = await podsPerNode();
        const bound = [...r.perNode.values()].reduce((a, b) => a + b, 0);
        const pending = r.items.filter((p) =>
          (p.status?.conditions ?? []).some(
            (c: any) =>
              c.type === 'PodScheduled' && c.status === 'False' && /Insufficient cpu/.test(c.message),
          ),
        );
        return r.items.length === want && bound === PER_NODE * NODES && pending.length === 50 ? r : undefined;
      },
      600_000,
      `${PER_NODE * NODES} bound and 50 unschedulable`,
    );
    assert.deepEqual(new Set(full.perNode.values()), new Set([PER_NODE]));
  });

  it("reports the scheduler's metrics on the controller manager's /metrics", async () => {
    const cfg = loadKubeconfig(cluster.kubeconfig);
    const admin = new Agent({ connect: { rejectUnauthorized: false, cert: cfg.certPem, key: cfg.keyPem } });
    try {
      const args = cluster.procs.find((p) => p.name === 'controller-manager')!.child.spawnargs;
      const port = args[args.indexOf('--secure-port') + 1];
      const r = await request(`https://127.0.0.1:${port}/metrics`, { dispatcher: admin });
      const body = await r.body.text();
      assert.equal(r.statusCode, 200);
      const scheduled =
        /^scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} (\d+)$/m.exec(
          body,
        );
      assert.ok(scheduled && Number(scheduled[1]) >= 2 * NODES, `scheduled attempts: ${scheduled?.[1]}`);
      assert.match(
        body,
        /^scheduler_scheduling_attempt_duration_seconds_bucket\{result="unschedulable",profile="default-scheduler",le="\+Inf"\} \d+$/m,
      );
      assert.match(body, /^scheduler_pending_pods\{queue="unschedulable"\} \d+$/m);
    } finally {
      await admin.close();
    }
  });
});
