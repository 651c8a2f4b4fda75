// Node lifecycle and taint eviction against a real apiserver, with short
// grace periods: a node whose agent stops heartbeating goes Unknown, gets the
// unreachable taints, its pods turn NotReady and are evicted as their
// tolerations allow; when it heartbeats again the taints go.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { type Client, type KubeObject } from '../../../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';
import { getCondition, retryOnConflict, type Condition } from '../../app/controller-util';
import { RateLimitedTimedQueue } from './rate-limited-queue';
import { matchingTolerations, minTolerationSeconds, zoneKey } from './taints';
import { toleratesTaint, type Taint } from '../../../shared/api/taints';

const NS = 'nl-test';
const micro = (ms: number) => new Date(ms).toISOString().replace(/Z$/, '000Z');
const seconds = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('controller-manager: node lifecycle and taint eviction', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;
  const stopped = new Set<string>();
  let beat: ReturnType<typeof setInterval> | undefined;

  const nodes = () => client.resource('nodes');
  const leases = () => client.resource('leases.coordination.k8s.io').namespace('kube-node-lease');
  const pods = () => client.resource('pods').namespace(NS);

  /** What a node agent does: post Ready=True and renew its Lease. */
  async function heartbeat(name: string): Promise<void> {
    const now = Date.now();
    const lease = await leases().get(name);
    await leases().update({ ...lease, spec: { ...lease.spec, renewTime: micro(now) } });
  }

  async function postReady(name: string): Promise<void> {
    await retryOnConflict(() => postReadyOnce(name));
  }

  async function postReadyOnce(name: string): Promise<void> {
    const node = await nodes().get(name);
    const ts = seconds(Date.now());
    const conditions = ['MemoryPressure', 'DiskPressure', 'PIDPressure'].map((type) => ({
      type,
      status: 'False',
      reason: `KubeletHas${type === 'PIDPressure' ? 'SufficientPID' : type === 'DiskPressure' ? 'NoDiskPressure' : 'SufficientMemory'}`,
      message: 'ok',
      lastHeartbeatTime: ts,
      lastTransitionTime: ts,
    }));
    conditions.push({
      type: 'Ready',
      status: 'True',
      reason: 'KubeletReady',
      message: 'kubelet is posting ready status',
      lastHeartbeatTime: ts,
      lastTransitionTime: ts,
    });
    await nodes().updateStatus({ ...node, status: { ...node.status, conditions } });
  }

  async function createNode(name: string): Promise<void> {
    await nodes().create({ metadata: { name, labels: { 'topology.kubernetes.io/zone': 'z1' } } });
    await postReady(name);
    await leases().create({
      metadata: { name },
      spec: { holderIdentity: name, leaseDurationSeconds: 40, renewTime: micro(Date.now()) },
    });
  }

  async function createPod(name: string, node: string, tolerations: unknown[]): Promise<void> {
    const pod = await pods().create({
      metadata: { name },
      spec: { nodeName: node, tolerations, containers: [{ name: 'c', image: 'busybox' }] },
    });
    const ts = seconds(Date.now());
    await pods().updateStatus({
      ...pod,
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: ts }] },
    });
  }

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, ['nodelifecycle', 'taint-eviction-controller'], {
      nodeMonitorPeriod: 200,
      nodeMonitorGracePeriod: 2_000,
      nodeStartupGracePeriod: 2_000,
    });
    client = kcm.client;
    await client.resource('namespaces').create({ metadata: { name: NS } });
    await createNode('alive');
    await createNode('dead');
    beat = setInterval(() => {
      for (const n of ['alive', 'dead']) if (!stopped.has(n)) heartbeat(n).catch(() => {});
    }, 300);
  });

  after(async () => {
    if (beat) clearInterval(beat);
    await kcm?.stop();
    await srv?.stop();
  });

  it('marks a silent node Unknown, taints it unreachable, and evicts its pods as tolerations allow', async () => {
    const unreachable = { key: 'node.kubernetes.io/unreachable', operator: 'Exists', effect: 'NoExecute' };
    await createPod('intolerant', 'dead', [{ ...unreachable, tolerationSeconds: 0 }]);
    await createPod('patient', 'dead', [{ ...unreachable, tolerationSeconds: 2 }]);
    await createPod('forever', 'dead', [unreachable]);
    await createPod('elsewhere', 'alive', []);
    // Healthy nodes get no taints.
    await new Promise((r) => setTimeout(r, 1000));
    assert.deepEqual((await nodes().get('dead')).spec?.taints ?? [], []);

    stopped.add('dead');
    const node = await waitUntil(
      async () => {
        const n = await nodes().get('dead');
        const taints: Taint[] = n.spec?.taints ?? [];
        return taints.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoExecute') &&
          taints.some((t) => t.key === 'node.kubernetes.io/unreachable' && t.effect === 'NoSchedule')
          ? n
          : undefined;
      },
      15_000,
      'the unreachable taints',
    );
    for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
      const c = getCondition<Condition>(node.status.conditions, type)!;
      assert.deepEqual(
        [c.status, c.reason, c.message],
        ['Unknown', 'NodeStatusUnknown', 'Kubelet stopped posting node status.'],
        type,
      );
    }
    const noExecute = (node.spec.taints as Taint[]).find((t) => t.effect === 'NoExecute')!;
    assert.match(noExecute.timeAdded ?? '', /^\d{4}-/);

    // Pods on the node are NotReady; the intolerant one is evicted at once, the patient one after 2 s.
    const terminating = async (name: string) => {
      try {
        return !!(await pods().get(name)).metadata.deletionTimestamp;
      } catch {
        return true;
      }
    };
    await waitUntil(() => terminating('intolerant'), 10_000, 'the intolerant pod to be evicted');
    const ready = async (name: string) =>
      getCondition<Condition>((await pods().get(name)).status?.conditions, 'Ready')?.status;
    await waitUntil(
      async () => (await ready('forever')) === 'False',
      10_000,
      'pods of the node to become NotReady',
    );
    const intolerant = await pods()
      .get('intolerant')
      .catch(() => undefined);
    if (intolerant) {
      const dt = getCondition<Condition>(intolerant.status?.conditions, 'DisruptionTarget');
      assert.deepEqual([dt?.status, dt?.reason], ['True', 'DeletionByTaintManager']);
    }
    assert.equal(await terminating('patient'), false, 'tolerates the taint for 2 s');
    await waitUntil(
      () => terminating('patient'),
      10_000,
      'the patient pod to be evicted after its tolerationSeconds',
    );
    assert.equal(await terminating('forever'), false, 'tolerates the taint forever');
    assert.equal(await terminating('elsewhere'), false);
    assert.equal(await ready('elsewhere'), 'True');
    const alive = await nodes().get('alive');
    assert.equal(getCondition<Condition>(alive.status.conditions, 'Ready')?.status, 'True');
    assert.deepEqual(alive.spec?.taints ?? [], []);

    const events = await client.resource('events.events.k8s.io').namespace('default').list();
    assert.ok(
      events.items.some((e: KubeObject) => e.reason === 'NodeNotReady' && e.regarding?.name === 'dead'),
      'a NodeNotReady event on the node',
    );
  });

  it('removes the taints when the node heartbeats again', async () => {
    stopped.delete('dead');
    await heartbeat('dead');
    await postReady('dead');
    await waitUntil(
      async () => ((await nodes().get('dead')).spec?.taints ?? []).length === 0,
      10_000,
      'the taints to go',
    );
  });

  it('works the tainting queue no faster than the eviction rate', async () => {
    let t = 0;
    const q = new RateLimitedTimedQueue(1, () => t);
    for (const n of ['a', 'b', 'c']) q.add(n, n);
    assert.equal(q.add('a', 'a'), false, 'queued once');
    const done: string[] = [];
    await q.tryEach(async (v) => {
      done.push(v.value);
      return [true];
    });
    assert.deepEqual(done, ['a'], 'burst 1');
    await new Promise((r) => setTimeout(r, 1100));
    t = 1;
    await q.tryEach(async (v) => {
      done.push(v.value);
      return [true];
    });
    assert.deepEqual(done, ['a', 'b']);
    q.swapLimiter(0);
    await new Promise((r) => setTimeout(r, 1100));
    await q.tryEach(async (v) => {
      done.push(v.value);
      return [true];
    });
    assert.deepEqual(done, ['a', 'b'], 'rate 0 stops tainting');
  });

  it('matches tolerations and zones like Kubernetes', () => {
    const taint: Taint = { key: 'node.kubernetes.io/unreachable', effect: 'NoExecute' };
    assert.ok(toleratesTaint({ operator: 'Exists' }, taint));
    assert.ok(toleratesTaint({ key: taint.key, operator: 'Exists', effect: 'NoExecute' }, taint));
    assert.ok(!toleratesTaint({ key: taint.key, operator: 'Exists', effect: 'NoSchedule' }, taint));
    assert.ok(
      toleratesTaint(
        { key: 'k', operator: 'Equal', value: 'v' },
        { key: 'k', value: 'v', effect: 'NoExecute' },
      ),
    );
    assert.ok(!toleratesTaint({ key: 'k', value: 'w' }, { key: 'k', value: 'v', effect: 'NoExecute' }));
    assert.deepEqual(matchingTolerations([taint], [{ key: 'other', operator: 'Exists' }])[0], false);
    assert.equal(minTolerationSeconds([{ operator: 'Exists' }]), -1);
    assert.equal(
      minTolerationSeconds([
        { operator: 'Exists', tolerationSeconds: 30 },
        { operator: 'Exists', tolerationSeconds: 5 },
      ]),
      5,
    );
    assert.equal(minTolerationSeconds([{ operator: 'Exists', tolerationSeconds: -1 }]), 0);
    // int64 seconds past 2^53 come from the codecs as bigints: still a number of seconds.
    assert.equal(minTolerationSeconds([{ operator: 'Exists', tolerationSeconds: 2n ** 60n }]), 2 ** 60);
    assert.equal(
      zoneKey({
        metadata: { labels: { 'topology.kubernetes.io/region': 'r', 'topology.kubernetes.io/zone': 'z' } },
      }),
      'r:\x00:z',
    );
    assert.equal(zoneKey({ metadata: {} }), '');
  });
});
