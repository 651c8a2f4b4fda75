// The scheduler's placements against a real apiserver, each worked out by hand
// from the default plugins and weights: pod (anti-)affinity, topology spread,
// preferences weighed together, VolumeBinding with the persistent volume
// binder, its metrics, and concurrent binding that never overfills a node or
// binds a pod twice.
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { MetricsRegistry } from '../../../shared/metrics/registry';
import { persistentVolumeBinderController } from '../persistentvolume/binder';
import { TestEnv, waitFor } from '../testing';
import { schedulerController } from './scheduler';

const SELECTED_NODE = 'volume.kubernetes.io/selected-node';

describe('controllers/scheduler: placement', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let metrics: MetricsRegistry;

  async function start(options: Record<string, unknown> = {}) {
    // A short claim resync: the binder binds a claim soon after its PV appears.
    env = await TestEnv.start({ pvclaimbinderSyncPeriod: 300, ...options });
    metrics = new MetricsRegistry({ currentVersion: '1.36' });
    await env.run(
      { name: 'scheduler', start: (ctx) => schedulerController.start({ ...ctx, metrics }) },
      persistentVolumeBinderController,
    );
  }
  afterEach(async () => env?.stop());

  const pods = () => env.client.resource('pods').namespace('default');
  const pod = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}) =>
    pods().create({
      metadata: { name, labels },
      spec: { containers: [{ name: 'c', image: 'img' }], ...spec },
    } as KubeObject);
  const boundNode = async (name: string) => (await pods().get(name)).spec?.nodeName as string | undefined;
  const waitBound = (name: string) => waitFor(`${name} bound`, () => boundNode(name));
  const unschedulable = (name: string) =>
    waitFor(`${name} unschedulable`, async () => {
      const c = ((await pods().get(name)).status?.conditions ?? []).find(
        (x: any) => x.type === 'PodScheduled',
      );
      return c?.status === 'False' && c.reason === 'Unschedulable' ? (c.message as string) : undefined;
    });
  const zoned = async (name: string, zone: string) => env.createNode(name, { labels: { zone } });

  it('weighs TaintToleration (3) against NodeAffinity (2): an untolerated PreferNoSchedule taint outweighs a preference', async () => {
    await start();
    await env.createNode('tainted', {
      labels: { disk: 'ssd' },
      taints: [{ key: 'spot', effect: 'PreferNoSchedule' }],
    });
    await env.createNode('plain');
    await env.createNode('ssd', { labels: { disk: 'ssd' } });
    const prefersSSD = {
      affinity: {
        nodeAffinity: {
          preferredDuringSchedulingIgnoredDuringExecution: [
            {
              weight: 1,
              preference: { matchExpressions: [{ key: 'disk', operator: 'In', values: ['ssd'] }] },
            },
          ],
        },
      },
    };
    // tainted: 3*0 + 2*100, plain: 3*100 + 2*0, ssd: 3*100 + 2*100 (resources equal everywhere).
    await pod('p', prefersSSD);
    assert.equal(await waitBound('p'), 'ssd');
    // Without the ssd node: tainted 3*0 + 2*100 = 200 against plain 3*100 + 2*0 = 300.
    const notOnSSD = {
      requiredDuringSchedulingIgnoredDuringExecution: {
        nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'NotIn', values: ['ssd'] }] }],
      },
    };
    await pod('q', { affinity: { nodeAffinity: { ...prefersSSD.affinity.nodeAffinity, ...notOnSSD } } });
    assert.equal(await waitBound('q'), 'plain');
  });

  it('InterPodAffinity: required anti-affinity keeps one pod per node; required affinity follows its peer', async () => {
    await start();
    for (const n of ['n1', 'n2', 'n3']) await env.createNode(n);
    const solo = {
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { app: 'solo' } } },
          ],
        },
      },
    };
    for (let i = 0; i < 4; i++) await pod(`solo-${i}`, solo, { app: 'solo' });
    const msg = await unschedulable(
      (
        await waitFor('three bound, one left', async () => {
          const list = (await pods().list()).items;
          const bound = list.filter((p) => p.spec?.nodeName);
          return bound.length === 3 ? list.find((p) => !p.spec?.nodeName) : undefined;
        })
      ).metadata.name!,
    );
    const nodes = (await pods().list()).items.map((p) => p.spec?.nodeName).filter(Boolean);
    assert.deepEqual(nodes.sort(), ['n1', 'n2', 'n3']);
    assert.equal(
      msg,
      "0/3 nodes are available: 3 node(s) didn't satisfy existing pods anti-affinity rules. preemption: 0/3 nodes are available: 3 No preemption victims found for incoming pod.",
    );
    const peerNode = await boundNode('solo-0');
    await pod('follower', {
      affinity: {
        podAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              topologyKey: 'kubernetes.io/hostname',
              labelSelector: { matchExpressions: [{ key: 'peer', operator: 'Exists' }] },
            },
          ],
        },
      },
    });
    assert.match(await unschedulable('follower'), /3 node\(s\) didn't match pod affinity rules/);
    await pods().patch('solo-0', { metadata: { labels: { peer: 'yes' } } }, 'merge');
    await waitFor('follower next to its peer', async () => (await boundNode('follower')) === peerNode);
  });

  it('PodTopologySpread DoNotSchedule: four pods over two zones end two and two', async () => {
    await start();
    await zoned('a1', 'a');
    await zoned('a2', 'a');
    await zoned('b1', 'b');
    const spread = {
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { app: 'w' } },
        },
      ],
    };
    for (let i = 0; i < 4; i++) await pod(`w${i}`, spread, { app: 'w' });
    const zones = await waitFor('four bound', async () => {
      const bound = (await pods().list()).items.map((p) => p.spec?.nodeName).filter(Boolean);
      return bound.length === 4 ? bound : undefined;
    });
    const inA = zones.filter((n) => n.startsWith('a')).length;
    assert.equal(inA, 2, `zones: ${zones.join(' ')}`);
  });

  describe('VolumeBinding', () => {
    const pvs = () => env.client.resource('persistentvolumes');
    const pvcs = () => env.client.resource('persistentvolumeclaims').namespace('default');
    const classes = () => env.client.resource('storageclasses.storage.k8s.io');
    const onNode = (node: string) => ({
      required: {
        nodeSelectorTerms: [
          { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
        ],
      },
    });
    const claim = (name: string, storageClassName: string, extra: Record<string, unknown> = {}) =>
      pvcs().create({
        metadata: { name },
        spec: {
          accessModes: ['ReadWriteOnce'],
          resources: { requests: { storage: '1Gi' } },
          storageClassName,
          ...extra,
        },
      });
    const volume = (name: string, storageClassName: string, extra: Record<string, unknown> = {}) =>
      pvs().create({
        metadata: { name },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          local: { path: `/mnt/${name}` },
          storageClassName,
          ...extra,
        },
      });
    const using = (claimName: string) => ({
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
    });

    beforeEach(async () => {
      await start();
      for (const n of ['n1', 'n2', 'n3'])
        await env.createNode(n, { labels: { zone: n === 'n3' ? 'z2' : 'z1' } });
      await classes().create({ metadata: { name: 'manual' }, provisioner: 'kubernetes.io/no-provisioner' });
      await classes().create({
        metadata: { name: 'local' },
        provisioner: 'kubernetes.io/no-provisioner',
        volumeBindingMode: 'WaitForFirstConsumer',
      });
    });

    it('an unbound Immediate claim keeps the pod Pending; a bound one sends it where its PV may be', async () => {
      await claim('now', 'manual');
      await pod('waits', using('now'));
      assert.equal(
        await unschedulable('waits'),
        '0/3 nodes are available: pod has unbound immediate PersistentVolumeClaims. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.',
      );
      await volume('pv-n2', 'manual', { nodeAffinity: onNode('n2') });
      // The binder binds the claim; the pod follows its PV to n2.
      assert.equal(await waitBound('waits'), 'n2');
    });

    it('WaitForFirstConsumer: the pod goes where an Available PV fits, the claim gets selected-node, then the pod is bound', async () => {
      await volume('local-n3', 'local', { nodeAffinity: onNode('n3') });
      await waitFor('PV Available', async () => (await pvs().get('local-n3')).status?.phase === 'Available');
      await claim('data', 'local');
      await pod('consumer', using('data'));
      assert.equal(await waitBound('consumer'), 'n3');
      const pvc = await pvcs().get('data');
      assert.equal(pvc.metadata.annotations?.[SELECTED_NODE], 'n3');
      assert.equal(pvc.spec.volumeName, 'local-n3');
      // No PV left and a class that cannot provision: nowhere to go.
      await claim('more', 'local');
      await pod('second', using('more'));
      assert.equal(
        await unschedulable('second'),
        "0/3 nodes are available: 3 node(s) didn't find available persistent volumes to bind. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
      );
    });

    it('WaitForFirstConsumer with a provisioner: only nodes in allowedTopologies, and the pod waits for the claim to be bound', async () => {
      await classes().create({
        metadata: { name: 'dynamic' },
        provisioner: 'example.com/local',
        volumeBindingMode: 'WaitForFirstConsumer',
        allowedTopologies: [{ matchLabelExpressions: [{ key: 'zone', values: ['z2'] }] }],
      });
      await claim('dyn', 'dynamic');
      await pod('app', using('dyn'));
      const selected = await waitFor(
        'selected-node',
        async () => (await pvcs().get('dyn')).metadata.annotations?.[SELECTED_NODE],
      );
      assert.equal(selected, 'n3');
      assert.equal(await boundNode('app'), undefined, 'bound before its claim');
      // What a provisioner does: a PV for the claim on the selected node.
      const c = await pvcs().get('dyn');
      await volume('pv-dyn', 'dynamic', {
        nodeAffinity: onNode('n3'),
        claimRef: { kind: 'PersistentVolumeClaim', namespace: 'default', name: 'dyn', uid: c.metadata.uid },
      });
      assert.equal(await waitBound('app'), 'n3');
    });
  });

  it('binds concurrently without overfilling a node or binding a pod twice, and counts attempts in its metrics', async () => {
    await start({ concurrentSchedulerSyncs: 4 });
    // 5 nodes x 1 cpu: three pods of 300m each, 15 in all.
    for (let i = 0; i < 5; i++)
      await env.createNode(`c${i}`, { allocatable: { cpu: '1', memory: '8Gi', pods: '110' } });
    const requests = { containers: [{ name: 'c', image: 'img', resources: { requests: { cpu: '300m' } } }] };
    await Promise.all(Array.from({ length: 25 }, (_, i) => pod(`p${i}`, requests, { n: String(i) })));
    // Updates while bindings are in flight requeue the pods: none may be scheduled again.
    await Promise.all(
      Array.from({ length: 25 }, (_, i) =>
        pods().patch(`p${i}`, { metadata: { annotations: { touched: 'yes' } } }, 'merge'),
      ),
    );
    const list = await waitFor('15 bound and 10 unschedulable', async () => {
      const items = (await pods().list()).items;
      const bound = items.filter((p) => p.spec?.nodeName).length;
      const pending = items.filter((p) =>
        (p.status?.conditions ?? []).some(
          (c: any) => c.type === 'PodScheduled' && c.reason === 'Unschedulable',
        ),
      ).length;
      return bound === 15 && pending === 10 ? items : undefined;
    });
    const perNode = new Map<string, number>();
    for (const p of list)
      if (p.spec?.nodeName) perNode.set(p.spec.nodeName, (perNode.get(p.spec.nodeName) ?? 0) + 1);
    assert.deepEqual([...perNode.values()], [3, 3, 3, 3, 3]);
    for (const p of list.filter((x) => x.spec?.nodeName))
      assert.equal(
        env.eventsFor(p.metadata.name!, 'Scheduled').length,
        1,
        `${p.metadata.name} scheduled once`,
      );
    const text = metrics.expose();
    assert.match(
      text,
      /^scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} 15$/m,
    );
    assert.doesNotMatch(text, /result="error"/);
    assert.match(
      text,
      /^scheduler_scheduling_attempt_duration_seconds_count\{result="scheduled",profile="default-scheduler"\} 15$/m,
    );
    assert.match(text, /^scheduler_pending_pods\{queue="unschedulable"\} (\d+)$/m);
    assert.match(text, /^scheduler_pending_pods\{queue="gated"\} 0$/m);
    assert.match(text, /# TYPE scheduler_pending_pods gauge/);
  });
});
