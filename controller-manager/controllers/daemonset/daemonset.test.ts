import assert from 'node:assert/strict';
import { TestEnv, waitFor } from '../testing';
import { schedulerController } from '../scheduler/scheduler';
import { daemonSetController, nodeShouldRunDaemonPod } from './daemonset';

describe('controllers/daemonset', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    env.startKubelet();
    await env.run(schedulerController, daemonSetController);
    await env.createNode('n1');
    await env.createNode('n2', { taints: [{ key: 'dedicated', value: 'db', effect: 'NoSchedule' }] });
    await env.createNode('n3', { labels: { role: 'edge' }, unschedulable: true });
  });
  after(async () => env?.stop());

  const daemonsets = () => env.client.resource('daemonsets.apps').namespace('default');
  const podsOf = async (app: string) =>
    (
      await env.client
        .resource('pods')
        .namespace('default')
        .list({ labelSelector: `app=${app}` })
    ).items.filter((p) => !p.metadata.deletionTimestamp);
  const ds = (name: string, spec: Record<string, unknown> = {}, podSpec: Record<string, unknown> = {}) => ({
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: 'c', image: 'v1' }], ...podSpec },
      },
      ...spec,
    },
  });

  it('runs one pod per eligible node (taints respected, cordoned nodes included), bound by the scheduler', async () => {
    await daemonsets().create(ds('agent'));
    const st = await waitFor('status', async () => {
      const s = (await daemonsets().get('agent')).status;
      return s?.numberReady === 2 && s.numberAvailable === 2 ? s : undefined;
    });
    assert.deepEqual(
      {
        desired: st.desiredNumberScheduled,
        current: st.currentNumberScheduled,
        misscheduled: st.numberMisscheduled,
        updated: st.updatedNumberScheduled,
        observedGeneration: st.observedGeneration,
      },
      { desired: 2, current: 2, misscheduled: 0, updated: 2, observedGeneration: 1 },
    );
    assert.equal(st.numberUnavailable, undefined);
    const pods = await podsOf('agent');
    assert.deepEqual(pods.map((p) => p.spec.nodeName).sort(), ['n1', 'n3']);
    for (const p of pods) {
      const terms =
        p.spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms;
      assert.deepEqual(terms, [
        { matchFields: [{ key: 'metadata.name', operator: 'In', values: [p.spec.nodeName] }] },
      ]);
      const keys = p.spec.tolerations.map((t: any) => `${t.key}:${t.effect}`);
      for (const k of [
        'node.kubernetes.io/not-ready:NoExecute',
        'node.kubernetes.io/unreachable:NoExecute',
        'node.kubernetes.io/disk-pressure:NoSchedule',
        'node.kubernetes.io/memory-pressure:NoSchedule',
        'node.kubernetes.io/pid-pressure:NoSchedule',
        'node.kubernetes.io/unschedulable:NoSchedule',
      ])
        assert.ok(keys.includes(k), `toleration ${k}`);
      assert.ok(p.metadata.labels!['controller-revision-hash']);
      assert.equal(p.metadata.ownerReferences![0].kind, 'DaemonSet');
    }
    await env.expectEvent('agent', 'SuccessfulCreate', (n) => /^Created pod: agent-/.test(n));
  });

  it('rolls out a template change (maxUnavailable 1) and covers newly tolerated nodes', async () => {
    const before = (await podsOf('agent')).map((p) => p.metadata.labels!['controller-revision-hash']);
    await daemonsets().patch(
      'agent',
      {
        spec: {
          template: {
            spec: {
              containers: [{ name: 'c', image: 'v2' }],
              tolerations: [{ key: 'dedicated', operator: 'Exists', effect: 'NoSchedule' }],
            },
          },
        },
      },
      'strategic',
    );
    const st = await waitFor('rollout', async () => {
      const s = (await daemonsets().get('agent')).status;
      return s?.desiredNumberScheduled === 3 &&
        s.updatedNumberScheduled === 3 &&
        s.numberAvailable === 3 &&
        s.observedGeneration === 2
        ? s
        : undefined;
    });
    assert.equal(st.currentNumberScheduled, 3);
    const pods = await waitFor('3 new pods', async () => {
      const p = await podsOf('agent');
      return p.length === 3 && p.every((x) => x.spec.containers[0].image === 'v2') ? p : undefined;
    });
    assert.deepEqual(pods.map((p) => p.spec.nodeName).sort(), ['n1', 'n2', 'n3']);
    assert.notEqual(pods[0].metadata.labels!['controller-revision-hash'], before[0]);
    const revisions = (
      await env.client.resource('controllerrevisions.apps').namespace('default').list()
    ).items.filter((r) => r.metadata.ownerReferences?.[0]?.name === 'agent');
    assert.equal(revisions.length, 2);
  });

  it('follows nodeSelector and removes pods from nodes that stop matching', async () => {
    await daemonsets().create(ds('edge', {}, { nodeSelector: { role: 'edge' } }));
    await waitFor('edge pod on n3', async () => {
      const p = await podsOf('edge');
      return p.length === 1 && p[0].spec.nodeName === 'n3';
    });
    await env.client.resource('nodes').patch('n3', { metadata: { labels: { role: null } } }, 'merge');
    await waitFor('edge pod gone', async () => (await podsOf('edge')).length === 0);
    const st = await waitFor('status', async () => {
      const s = (await daemonsets().get('edge')).status;
      // The pod counts as misscheduled until it is gone.
      return s?.desiredNumberScheduled === 0 && s.currentNumberScheduled === 0 && s.numberMisscheduled === 0
        ? s
        : undefined;
    });
    assert.equal(st.numberReady, 0);
  });

  it('maxSurge: the new pod runs next to the old one until it is available', async () => {
    await daemonsets().create(
      ds(
        'surge',
        { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } },
        { nodeSelector: { 'kubernetes.io/hostname': 'n1' } },
      ),
    );
    const [old] = await waitFor('one pod on n1', async () => {
      const p = await podsOf('surge');
      return p.length === 1 && p[0].status?.phase === 'Running' ? p : undefined;
    });
    let none = false;
    let watching = true;
    const sampler = (async () => {
      while (watching) {
        const p = await podsOf('surge');
        if (p.length === 0) none = true;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await daemonsets().patch(
      'surge',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2' }] } } } },
      'strategic',
    );
    const fresh = await waitFor('replaced', async () => {
      const p = await podsOf('surge');
      return p.length === 1 &&
        p[0].metadata.name !== old.metadata.name &&
        p[0].spec.containers[0].image === 'v2'
        ? p[0]
        : undefined;
    });
    watching = false;
    await sampler;
    assert.equal(none, false, 'never without a pod');
    // The new pod was created before the old one was deleted.
    await env.expectEvent('surge', 'SuccessfulDelete', (n) => n === `Deleted pod: ${old.metadata.name}`);
    const notes = env.eventsFor('surge').map((e) => e.note);
    const created = notes.indexOf(`Created pod: ${fresh.metadata.name}`);
    assert.ok(created >= 0 && created < notes.indexOf(`Deleted pod: ${old.metadata.name}`));
  });

  it('decides eligibility like NodeShouldRunDaemonPod', () => {
    const set = ds(
      'x',
      {},
      { tolerations: [{ key: 'soft', operator: 'Exists', effect: 'NoSchedule' }] },
    ) as any;
    const node = (taints: any[]) => ({ metadata: { name: 'n', labels: {} }, spec: { taints } });
    assert.deepEqual(nodeShouldRunDaemonPod(node([]), set), { shouldRun: true, shouldContinueRunning: true });
    assert.deepEqual(nodeShouldRunDaemonPod(node([{ key: 'soft', effect: 'NoSchedule' }]), set), {
      shouldRun: true,
      shouldContinueRunning: true,
    });
    assert.deepEqual(nodeShouldRunDaemonPod(node([{ key: 'hard', effect: 'NoSchedule' }]), set), {
      shouldRun: false,
      shouldContinueRunning: true,
    });
    assert.deepEqual(nodeShouldRunDaemonPod(node([{ key: 'hard', effect: 'NoExecute' }]), set), {
      shouldRun: false,
      shouldContinueRunning: false,
    });
    assert.deepEqual(
      nodeShouldRunDaemonPod(node([{ key: 'node.kubernetes.io/not-ready', effect: 'NoExecute' }]), set),
      {
        shouldRun: true,
        shouldContinueRunning: true,
      },
    );
  });
});
