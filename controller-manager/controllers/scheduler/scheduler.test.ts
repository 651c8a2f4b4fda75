import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { deleteWith } from '../util/status';
import { fitErrorMessage, schedulerController } from './scheduler';

describe('controllers/scheduler', function () {
  this.timeout(60_000);
  let env: TestEnv;

  beforeEach(async () => {
    env = await TestEnv.start();
    await env.run(schedulerController);
  });
  afterEach(async () => env?.stop());

  const pods = () => env.client.resource('pods').namespace('default');
  const pod = (name: string, spec: Record<string, unknown> = {}, cpu?: string): KubeObject => ({
    metadata: { name, labels: { app: 'x' } },
    spec: {
      containers: [{ name: 'c', image: 'img', ...(cpu ? { resources: { requests: { cpu } } } : {}) }],
      ...spec,
    },
  });
  const boundNode = async (name: string) => (await pods().get(name)).spec?.nodeName as string | undefined;
  const unschedulable = async (name: string) => {
    const p = await pods().get(name);
    const c = (p.status?.conditions ?? []).find((x: any) => x.type === 'PodScheduled');
    return c?.status === 'False' && c.reason === 'Unschedulable' ? (c.message as string) : undefined;
  };

  it('binds pods to Ready nodes, spread across them, with a Scheduled event', async () => {
    await env.createNode('n1');
    await env.createNode('n2');
    await env.createNode('n3');
    await env.createNode('down', { ready: false });
    for (let i = 0; i < 6; i++) await pods().create(pod(`p${i}`));
    const nodes = await waitFor('6 bound pods', async () => {
      const list = (await pods().list()).items;
      const bound = list.map((p) => p.spec?.nodeName).filter(Boolean);
      return bound.length === 6 ? bound : undefined;
    });
    const perNode = new Map<string, number>();
    for (const n of nodes) perNode.set(n, (perNode.get(n) ?? 0) + 1);
    assert.ok(!perNode.has('down'), 'not-ready node used');
    assert.deepEqual([...perNode.values()].sort(), [2, 2, 2], `spread: ${JSON.stringify([...perNode])}`);
    const p0 = await pods().get('p0');
    const cond = p0.status.conditions.find((c: any) => c.type === 'PodScheduled');
    assert.equal(cond.status, 'True');
    await waitFor('Scheduled event', () => env.eventsFor('p0', 'Scheduled').length > 0);
    assert.equal(
      env.eventsFor('p0', 'Scheduled')[0].note,
      `Successfully assigned default/p0 to ${p0.spec.nodeName}`,
    );
    // The event reached the API too.
    await waitFor('event object', async () => {
      const evs = (await env.client.resource('events.events.k8s.io').namespace('default').list()).items;
      return evs.some(
        (e) =>
          e.reason === 'Scheduled' &&
          e.regarding?.name === 'p0' &&
          e.reportingController === 'default-scheduler',
      );
    });
  });

  it('honours nodeSelector and required node affinity; reports FailedScheduling until a node fits', async () => {
    await env.createNode('a', { labels: { disk: 'hdd' } });
    await env.createNode('b', { labels: { disk: 'ssd' } });
    await env.createNode('c', { labels: { disk: 'hdd' } });
    await pods().create(pod('ssd', { nodeSelector: { disk: 'ssd' } }));
    await pods().create(
      pod('aff', {
        affinity: {
          nodeAffinity: {
            requiredDuringSchedulingIgnoredDuringExecution: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: 'disk', operator: 'NotIn', values: ['hdd'] }] },
              ],
            },
          },
        },
      }),
    );
    await pods().create(pod('nvme', { nodeSelector: { disk: 'nvme' } }));
    await waitFor('ssd bound', async () => (await boundNode('ssd')) === 'b');
    await waitFor('aff bound', async () => (await boundNode('aff')) === 'b');
    const msg = await waitFor('nvme unschedulable', () => unschedulable('nvme'));
    assert.equal(
      msg,
      "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.",
    );
    assert.equal((await env.expectEvent('nvme', 'FailedScheduling', (n) => n === msg)).type, 'Warning');
    // A node that fits appears: the pod is retried at once.
    await env.client.resource('nodes').patch('c', { metadata: { labels: { disk: 'nvme' } } }, 'merge');
    await waitFor('nvme bound after relabel', async () => (await boundNode('nvme')) === 'c', 5000);
  });

  it('keeps pods off tainted nodes unless they tolerate the taint', async () => {
    await env.createNode('t1', { taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }] });
    await env.createNode('t2', { taints: [{ key: 'evict', effect: 'NoExecute' }] });
    await pods().create(pod('plain'));
    const msg = await waitFor('plain unschedulable', () => unschedulable('plain'));
    assert.equal(
      msg,
      '0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {evict: }. preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling.',
    );
    await pods().create(
      pod('tolerant', {
        tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'gpu', effect: 'NoSchedule' }],
      }),
    );
    await waitFor('tolerant bound', async () => (await boundNode('tolerant')) === 't1');
    await env.createNode('free');
    await waitFor(
      'plain bound once a free node exists',
      async () => (await boundNode('plain')) === 'free',
      5000,
    );
  });

  it('fits resource requests into allocatable and respects max pods', async () => {
    await env.createNode('small', { allocatable: { cpu: '1', memory: '1Gi', pods: '110' } });
    await env.createNode('tiny', { allocatable: { cpu: '4', memory: '1Gi', pods: '1' } });
    await pods().create(pod('big1', { nodeSelector: { 'kubernetes.io/hostname': 'small' } }, '600m'));
    await waitFor('big1 bound', async () => (await boundNode('big1')) === 'small');
    await pods().create(pod('big2', { nodeSelector: { 'kubernetes.io/hostname': 'small' } }, '600m'));
    const msg = await waitFor('big2 unschedulable', () => unschedulable('big2'));
    assert.equal(
      msg,
      "0/2 nodes are available: 1 Insufficient cpu, 1 node(s) didn't match Pod's node affinity/selector. preemption: 0/2 nodes are available: 1 No preemption victims found for incoming pod, 1 Preemption is not helpful for scheduling.",
    );
    await pods().create(pod('one', { nodeSelector: { 'kubernetes.io/hostname': 'tiny' } }));
    await waitFor('one bound', async () => (await boundNode('one')) === 'tiny');
    await pods().create(pod('two', { nodeSelector: { 'kubernetes.io/hostname': 'tiny' } }));
    const msg2 = await waitFor('two unschedulable', () => unschedulable('two'));
    assert.match(msg2, /^0\/2 nodes are available: 1 Too many pods, 1 node\(s\) didn't match/);
    // Deleting the bound pod frees its slot.
    await deleteWith(pods(), 'big1', { gracePeriodSeconds: 0 });
    await waitFor('big2 bound after big1 is gone', async () => (await boundNode('big2')) === 'small', 5000);
  });

  it('places pods with one host port on other host IPs or protocols together, and keeps a real conflict Pending', async () => {
    await env.createNode('n1');
    const onN1 = { nodeSelector: { 'kubernetes.io/hostname': 'n1' } };
    const withPort = (name: string, port: Record<string, unknown>): KubeObject => ({
      metadata: { name },
      spec: { ...onN1, containers: [{ name: 'c', image: 'img', ports: [{ containerPort: 8080, ...port }] }] },
    });
    // Kubernetes' hostPort predicate spec: localhost/TCP, the node's IP/TCP, the node's IP/UDP.
    await pods().create(withPort('local', { hostPort: 54321, hostIP: '127.0.0.1', protocol: 'TCP' }));
    await pods().create(withPort('node-ip', { hostPort: 54321, hostIP: '192.168.0.1', protocol: 'TCP' }));
    await pods().create(withPort('node-udp', { hostPort: 54321, hostIP: '192.168.0.1', protocol: 'UDP' }));
    for (const name of ['local', 'node-ip', 'node-udp'])
      await waitFor(`${name} bound`, async () => (await boundNode(name)) === 'n1');
    // Every address (no hostIP) on TCP overlaps both specific ones.
    await pods().create(withPort('any-ip', { hostPort: 54321 }));
    const msg = await waitFor('any-ip unschedulable', () => unschedulable('any-ip'));
    assert.match(
      msg,
      /^0\/1 nodes are available: 1 node\(s\) didn't have free ports for the requested pod ports\./,
    );
  });

  it('over more than 100 nodes, searches past the sampled share until a node fits', async () => {
    // 150 nodes: 100 feasible ones are enough, but only one node fits this pod.
    await Promise.all(
      Array.from({ length: 150 }, (_, i) =>
        env.createNode(`n${String(i).padStart(3, '0')}`, i === 149 ? { labels: { disk: 'ssd' } } : {}),
      ),
    );
    await pods().create(pod('first', {}));
    await waitFor('first bound', async () => !!(await boundNode('first')));
    await pods().create(pod('picky', { nodeSelector: { disk: 'ssd' } }));
    await waitFor('picky bound to the one node that fits', async () => (await boundNode('picky')) === 'n149');
    // Nodes that fail stay counted in the fit error over all of them.
    await pods().create(pod('nowhere', { nodeSelector: { disk: 'nvme' } }));
    const msg = await waitFor('nowhere unschedulable', () => unschedulable('nowhere'));
    assert.match(
      msg,
      /^0\/150 nodes are available: 150 node\(s\) didn't match Pod's node affinity\/selector\./,
    );
  });

  it('formats fit errors like kube-scheduler', () => {
    assert.equal(
      fitErrorMessage(3, [
        { reasons: ['Insufficient cpu', 'Insufficient memory'], resolvable: true },
        { reasons: ['node(s) were unschedulable'], resolvable: false },
        { reasons: ['Insufficient cpu'], resolvable: true },
      ]),
      '0/3 nodes are available: 1 Insufficient memory, 1 node(s) were unschedulable, 2 Insufficient cpu. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod.',
    );
  });
});
