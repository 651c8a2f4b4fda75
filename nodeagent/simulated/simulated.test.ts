// Simulated nodes against a real apiserver: each registers a Ready Node and
// renews its Lease; a pod bound to one goes Running and Ready with an address
// from that node's pod CIDR; a deleted pod is removed for good.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { createClientCert } from '../../shared/pki/certs';
import { Client, isNotFound } from '../../shared/client';
import { waitUntil } from '../../shared/cluster/process';
import { defaultFlagValues } from '../../shared/options/defaults';
import type { FlagValues } from '../../shared/options/flags';
import { resolveConfig } from '../app/config';
import { nodeagentFlags } from '../app/options';
import { CLIENT_CONNECTIONS, startSimulatedNodes, type RunningSimulatedNodes } from './host';
import { SIMULATED_ANNOTATION, SIMULATED_SYSTEM_USAGE } from './nodes';

const NODES = 5;

/** Simulated nodes against srv on 127.0.0.1, state in dir, only the secure ports open; flags on top. */
async function startSim(
  srv: TestAPIServer,
  dir: string,
  flags: FlagValues,
): Promise<{ cfg: ReturnType<typeof resolveConfig>; sim: RunningSimulatedNodes }> {
  const values = defaultFlagValues(nodeagentFlags, {
    kubeconfig: srv.kubeconfig,
    nodeIp: ['127.0.0.1'],
    rootDir: dir,
    readOnlyPort: 0,
    healthzPort: 0,
    ...flags,
  });
  const cfg = resolveConfig(values, { explicit: () => true });
  return { cfg, sim: await startSimulatedNodes(cfg, cfg.simulatedNodes) };
}

describe('nodeagent: simulated nodes', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;
  let sim: RunningSimulatedNodes;
  let dir: string;
  let cfg: ReturnType<typeof resolveConfig>;

  before(async () => {
    // Node names do not resolve: the apiserver reaches the simulated nodes by their InternalIP.
    srv = await startTestAPIServer({ kubeletPreferredAddressTypes: ['InternalIP'] });
    client = Client.create(srv.config, { qps: -1, http2: false });
    dir = mkdtempSync(join(tmpdir(), 'tkube-sim-'));
    ({ cfg, sim } = await startSim(srv, dir, {
      hostnameOverride: 'sim',
      simulatedNodes: NODES,
      nodeLeaseDurationSeconds: 4,
    }));
  });

  after(async () => {
    await sim?.stop();
    await client?.close();
    await srv?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('rejects --simulated-nodes with another runtime', () => {
    const values = defaultFlagValues(nodeagentFlags, { simulatedNodes: 3, runtime: 'cri', rootDir: dir });
    assert.throws(
      () => resolveConfig(values, { explicit: () => true }),
      /--simulated-nodes needs --runtime=fake/,
    );
  });

  it('registers every node Ready, marked simulated, and renews each Lease', async () => {
    const nodes = (await client.resource('nodes').list()).items;
    assert.deepEqual(
      nodes.map((n) => n.metadata!.name).sort(),
      Array.from({ length: NODES }, (_, i) => `sim-${i + 1}`).sort(),
    );
    for (const n of nodes) {
      assert.equal(n.metadata!.annotations?.[SIMULATED_ANNOTATION], 'true');
      assert.equal(n.metadata!.labels?.['kubernetes.io/hostname'], n.metadata!.name);
      const ready = (n as any).status.conditions.find((c: any) => c.type === 'Ready');
      assert.equal(ready.status, 'True');
      assert.equal((n as any).status.allocatable.pods, '110');
    }
    const leases = client.resource('leases.coordination.k8s.io').namespace('kube-node-lease');
    // Each lease starts at a random point of its renew interval.
    const first = await waitUntil(() => leases.get('sim-2'), 10_000, 'the lease of sim-2');
    assert.equal(first.spec.holderIdentity, 'sim-2');
    assert.equal(first.metadata!.ownerReferences?.[0]?.name, 'sim-2');
    // Renewed every quarter of the 4 s lease duration.
    await waitUntil(
      async () => (await leases.get('sim-2')).spec.renewTime !== first.spec.renewTime,
      10_000,
      'a renewal',
    );
  });

  it('puts Ready back when the node lifecycle controller marked the node Unknown', async () => {
    const nodes = client.resource('nodes');
    const readyOf = async () =>
      ((await nodes.get('sim-4')) as any).status.conditions.find((c: any) => c.type === 'Ready');
    assert.equal((await readyOf()).status, 'True');
    const at = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    await nodes.patch(
      'sim-4',
      {
        status: {
          conditions: ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
            type,
            status: 'Unknown',
            reason: 'NodeStatusUnknown',
            message: 'Kubelet stopped posting node status.',
            lastTransitionTime: at,
          })),
        },
      },
      'strategic',
      { subresource: 'status' },
    );
    assert.equal((await readyOf()).status, 'Unknown');
    // Within a status turn or two (--node-status-update-frequency, 10 s), not the 5-minute report period.
    const back = await waitUntil(
      async () => {
        const ready = await readyOf();
        return ready.status === 'True' ? ready : undefined;
      },
      30_000,
      'sim-4 Ready again',
    );
    assert.equal(back.reason, 'KubeletReady');
  });

  it('runs a pod bound to a simulated node, and removes it when deleted', async () => {
    const pods = client.resource('pods').namespace('default');
    await pods.create({
      metadata: { name: 'p' },
      spec: {
        nodeName: 'sim-3',
        initContainers: [{ name: 'init', image: 'busybox' }],
        containers: [
          { name: 'a', image: 'nginx' },
          { name: 'b', image: 'redis' },
        ],
      },
    });
    const running = await waitUntil(
      async () => {
        const p: any = await pods.get('p');
        return p.status?.phase === 'Running' ? p : undefined;
      },
      20_000,
      'the pod Running',
    );
    // sim-3 is node index 2: 10.128.2.0/24.
    assert.match(running.status.podIP, /^10\.128\.2\.\d+$/);
    assert.equal(running.status.hostIP, '127.0.0.1');
    for (const t of ['Initialized', 'ContainersReady', 'Ready', 'PodScheduled'])
      assert.equal(running.status.conditions.find((c: any) => c.type === t)?.status, 'True', t);
    assert.deepEqual(
      running.status.containerStatuses.map((c: any) => [c.name, c.ready, !!c.state.running]),
      [
        ['a', true, true],
        ['b', true, true],
      ],
    );
    assert.equal(running.status.initContainerStatuses[0].state.terminated.reason, 'Completed');

    await pods.delete('p');
    await waitUntil(
      async () => {
        try {
          await pods.get('p');
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      20_000,
      'the pod gone',
    );
  });

  it("serves each node's kubelet API on a port of its own, with the fake runtime's figures and logs", async () => {
    const nodes: any[] = (await client.resource('nodes').list()).items;
    const ports = nodes.map((n) => n.status.daemonEndpoints.kubeletEndpoint.Port);
    assert.ok(ports.every((p) => p > 0));
    assert.equal(new Set(ports).size, NODES, `a port per node: ${ports}`);
    const get = async (path: string) => (await client.rest.raw({ method: 'GET', path })).body.toString();
    assert.equal(await get('/api/v1/nodes/sim-4/proxy/healthz'), 'ok');

    const pods = client.resource('pods').namespace('default');
    await pods.create({
      metadata: { name: 'load', annotations: { 'tkube.io/fake-cpu': '20m', 'tkube.io/fake-memory': '64Mi' } },
      spec: { nodeName: 'sim-4', containers: [{ name: 'c', image: 'busybox' }] },
    });
    await waitUntil(async () => (await pods.get('load')).status?.phase === 'Running', 20_000, 'load Running');
    const summary = JSON.parse(await get('/api/v1/nodes/sim-4/proxy/stats/summary'));
    assert.equal(summary.node.nodeName, 'sim-4');
    assert.equal(summary.node.memory.workingSetBytes, SIMULATED_SYSTEM_USAGE.memoryBytes + 64 * 2 ** 20);
    assert.equal(summary.node.cpu.usageNanoCores, (SIMULATED_SYSTEM_USAGE.milliCPU + 20) * 1e6);
    const load = summary.pods.find((p: any) => p.podRef.name === 'load');
    assert.equal(load.containers[0].memory.workingSetBytes, 64 * 2 ** 20);
    assert.equal(load.cpu.usageNanoCores, 20e6);
    const other = JSON.parse(await get('/api/v1/nodes/sim-5/proxy/stats/summary'));
    assert.equal(other.node.nodeName, 'sim-5');
    assert.deepEqual(other.pods, []);
    assert.match(
      await get('/api/v1/nodes/sim-4/proxy/metrics/resource'),
      /^container_memory_working_set_bytes\{[^}]*pod="load"[^}]*\} 67108864/m,
    );
    assert.match(
      await get('/api/v1/namespaces/default/pods/load/log?timestamps=true'),
      /^\S+Z fake container c started\n\S+Z image busybox, attempt 0\n$/,
    );
    await pods.delete('load', { gracePeriodSeconds: 0 });
  });

  it('takes its nodes and running pods over after a restart: addresses stay, new pods get free ones', async () => {
    const pods = client.resource('pods').namespace('default');
    const runningIP = (name: string) =>
      waitUntil(
        async () => {
          const p: any = await pods.get(name);
          return p.status?.phase === 'Running' ? (p.status.podIP as string) : undefined;
        },
        20_000,
        `${name} Running`,
      );
    await pods.create({
      metadata: { name: 'q' },
      spec: { nodeName: 'sim-1', containers: [{ name: 'c', image: 'x' }] },
    });
    const q = await runningIP('q');
    await sim.stop();
    sim = await startSimulatedNodes(cfg, cfg.simulatedNodes);
    await pods.create({
      metadata: { name: 'r' },
      spec: { nodeName: 'sim-1', containers: [{ name: 'c', image: 'x' }] },
    });
    const r = await runningIP('r');
    assert.notEqual(r, q);
    // Its kubelet API is on new ports, which the nodes published again.
    await waitUntil(
      () =>
        client.rest
          .raw({ method: 'GET', path: '/api/v1/nodes/sim-1/proxy/healthz' })
          .then((res) => res.body.toString() === 'ok')
          .catch(() => false),
      10_000,
      'sim-1 /healthz after the restart',
    );
    assert.equal(await runningIP('q'), q);
    assert.equal((await client.resource('nodes').list()).items.length, NODES);
  });
});

describe("nodeagent: simulated nodes' kubelet API authenticates and authorizes as the agent's", function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;
  let sim: RunningSimulatedNodes;
  let dir: string;
  let alice: { certPem: string; keyPem: string };

  before(async () => {
    srv = await startTestAPIServer({
      authorizationMode: ['RBAC'],
      kubeletPreferredAddressTypes: ['InternalIP'],
    });
    client = Client.create(srv.config, { qps: -1, http2: false });
    dir = mkdtempSync(join(tmpdir(), 'tkube-sim-auth-'));
    const certs = join(srv.dir, 'certs');
    const ca = {
      certPem: readFileSync(join(certs, 'ca.crt'), 'utf8'),
      keyPem: readFileSync(join(certs, 'ca.key'), 'utf8'),
    };
    alice = await createClientCert(ca, { commonName: 'alice' });
    ({ sim } = await startSim(srv, dir, {
      hostnameOverride: 'authz',
      simulatedNodes: 2,
      anonymousAuth: false,
      authorizationMode: 'Webhook',
      clientCaFile: join(certs, 'ca.crt'),
    }));
  });

  after(async () => {
    await sim?.stop();
    await client?.close();
    await srv?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  /** GET /healthz on a node's kubelet port, as alice or with no credentials. */
  async function healthz(node: string, asAlice: boolean): Promise<{ status: number; body: string }> {
    const n: any = await client.resource('nodes').get(node);
    const a = new Agent({
      connect: { rejectUnauthorized: false, ...(asAlice ? { cert: alice.certPem, key: alice.keyPem } : {}) },
    });
    try {
      const r = await request(`https://127.0.0.1:${n.status.daemonEndpoints.kubeletEndpoint.Port}/healthz`, {
        dispatcher: a,
      });
      return { status: r.statusCode, body: await r.body.text() };
    } finally {
      await a.close();
    }
  }

  it('401 without credentials; SubjectAccessReviews name the node', async () => {
    assert.deepEqual(await healthz('authz-1', false), { status: 401, body: 'Unauthorized' });
    assert.deepEqual(await healthz('authz-2', true), {
      status: 403,
      body: 'Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)',
    });
    await client.resource('clusterroles.rbac.authorization.k8s.io').create({
      metadata: { name: 'proxy-authz-1' },
      rules: [{ apiGroups: [''], resources: ['nodes/proxy'], verbs: ['get'], resourceNames: ['authz-1'] }],
    } as any);
    await client.resource('clusterrolebindings.rbac.authorization.k8s.io').create({
      metadata: { name: 'alice-proxy-authz-1' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'proxy-authz-1' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'alice' }],
    } as any);
    assert.deepEqual(await healthz('authz-1', true), { status: 200, body: 'ok' });
    assert.equal((await healthz('authz-2', true)).status, 403);
    // The apiserver's kubelet client certificate (system:masters) may.
    const r = await client.rest.raw({ method: 'GET', path: '/api/v1/nodes/authz-2/proxy/healthz' });
    assert.equal(r.body.toString(), 'ok');
  });
});

describe('nodeagent: many simulated nodes on one timer', function () {
  this.timeout(120_000);
  const MANY = 200;
  let srv: TestAPIServer;
  let client: Client;
  let sim: RunningSimulatedNodes | undefined;
  let dir: string;

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1, http2: false });
    dir = mkdtempSync(join(tmpdir(), 'tkube-sim-many-'));
  });
  after(async () => {
    await sim?.stop();
    await client?.close();
    await srv?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  const timers = () => process.getActiveResourcesInfo().filter((r) => r === 'Timeout').length;
  /** Established TCP connections to the apiserver's port (both ends are in this process: the clients' ends). */
  const connections = () => {
    const port = srv.port.toString(16).toUpperCase().padStart(4, '0');
    let n = 0;
    for (const f of ['/proc/net/tcp', '/proc/net/tcp6'])
      for (const line of readFileSync(f, 'utf8').split('\n').slice(1)) {
        const cols = line.trim().split(/\s+/);
        if (cols[2]?.endsWith(`:${port}`) && cols[3] === '01') n++;
      }
    return n;
  };

  it(`renews ${MANY} nodes' Leases and reports their status without a timer per node, on a bounded pool`, async () => {
    const before = timers();
    const connectionsBefore = connections();
    let peak = 0;
    ({ sim } = await startSim(srv, dir, {
      hostnameOverride: 'many',
      simulatedNodes: MANY,
      nodeLeaseDurationSeconds: 4,
    }));
    const leases = client.resource('leases.coordination.k8s.io').namespace('kube-node-lease');
    const renewed = new Map<string, string>();
    // Every node's Lease renewed after its creation: each node's loop is running.
    await waitUntil(
      async () => {
        peak = Math.max(peak, connections());
        for (const l of (await leases.list()).items) {
          const name = l.metadata!.name!;
          const seen = renewed.get(name);
          if (seen === undefined) renewed.set(name, l.spec.renewTime);
          else if (seen !== l.spec.renewTime) renewed.set(name, 'renewed');
        }
        return [...renewed.values()].filter((v) => v === 'renewed').length === MANY;
      },
      60_000,
      `all ${MANY} Leases renewed`,
    );
    const added = timers() - before;
    // Two loops per node each sleeping on a timer of its own would add 2 × MANY.
    assert.ok(added < MANY / 4, `${added} timers for ${MANY} nodes`);
    // The agent's client opened no more than its pool (the test's own client holds one more).
    assert.ok(
      peak - connectionsBefore <= CLIENT_CONNECTIONS + 1,
      `${peak - connectionsBefore} connections to the apiserver`,
    );
  });
});
