import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { replicaSetController } from '../replicaset/replicaset';
import { schedulerController } from '../scheduler/scheduler';
import { deploymentController } from './deployment';
import { computeHash } from '../util/hash';

/** What `kubectl rollout status` decides from a Deployment (done, or why it waits). */
function rolloutStatus(d: KubeObject): { done: boolean; message: string } {
  const s = d.status ?? {};
  if ((d.metadata.generation ?? 0) > (s.observedGeneration ?? 0))
    return { done: false, message: 'Waiting for deployment spec update to be observed...' };
  const cond = (s.conditions ?? []).find((c: any) => c.type === 'Progressing');
  if (cond?.reason === 'ProgressDeadlineExceeded')
    throw new Error(`deployment "${d.metadata.name}" exceeded its progress deadline`);
  const want = d.spec.replicas ?? 1;
  const updated = s.updatedReplicas ?? 0;
  if (updated < want)
    return { done: false, message: `${updated} out of ${want} new replicas have been updated...` };
  if ((s.replicas ?? 0) > updated)
    return { done: false, message: `${(s.replicas ?? 0) - updated} old replicas are pending termination...` };
  if ((s.availableReplicas ?? 0) < updated)
    return {
      done: false,
      message: `${s.availableReplicas ?? 0} of ${updated} updated replicas are available...`,
    };
  return { done: true, message: `deployment "${d.metadata.name}" successfully rolled out` };
}

describe('controllers/deployment', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    env.startKubelet({ ready: (p) => !p.metadata.labels?.['never-ready'] });
    await env.run(schedulerController, replicaSetController, deploymentController);
    for (const n of ['node-a', 'node-b', 'node-c']) await env.createNode(n);
  });
  after(async () => env?.stop());

  const deployments = () => env.client.resource('deployments.apps').namespace('default');
  const replicaSets = () => env.client.resource('replicasets.apps').namespace('default');
  const podsOf = async (app: string) =>
    (
      await env.client
        .resource('pods')
        .namespace('default')
        .list({ labelSelector: `app=${app}` })
    ).items.filter((p) => !p.metadata.deletionTimestamp);
  const setsOf = async (name: string) =>
    (await replicaSets().list()).items.filter((rs) => rs.metadata.ownerReferences?.[0]?.name === name);

  /** kubectl create deployment <name> --image=<image> --replicas=<n> */
  const createDeployment = (
    name: string,
    image: string,
    replicas: number,
    spec: Record<string, unknown> = {},
  ) =>
    deployments().create({
      metadata: { name, labels: { app: name } },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: image, image }] } },
        ...spec,
      },
    });

  const rolledOut = (name: string, ms = 20_000) =>
    waitFor(
      `rollout of ${name}`,
      async () => {
        const d = await deployments().get(name);
        return rolloutStatus(d).done ? d : undefined;
      },
      ms,
    );

  it('kubectl create deployment web --image=x --replicas=3: three bound, running pods', async () => {
    const created = await createDeployment('web', 'x', 3);
    const d = await rolledOut('web');
    const pods = await podsOf('web');
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.ok(p.spec.nodeName, 'bound');
      assert.equal(p.status.phase, 'Running');
    }
    const sets = await setsOf('web');
    assert.equal(sets.length, 1);
    const rs = sets[0];
    const hash = rs.metadata.labels!['pod-template-hash'];
    assert.equal(hash, computeHash(created.spec.template, undefined));
    assert.equal(rs.metadata.name, `web-${hash}`);
    assert.equal(rs.spec.selector.matchLabels['pod-template-hash'], hash);
    assert.equal(rs.spec.template.metadata.labels['pod-template-hash'], hash);
    assert.equal(rs.metadata.annotations!['deployment.kubernetes.io/revision'], '1');
    assert.equal(rs.metadata.annotations!['deployment.kubernetes.io/desired-replicas'], '3');
    assert.equal(rs.metadata.annotations!['deployment.kubernetes.io/max-replicas'], '4');
    assert.deepEqual(rs.metadata.ownerReferences, [
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        name: 'web',
        uid: created.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    for (const p of pods) assert.equal(p.metadata.labels!['pod-template-hash'], hash);
    assert.equal(d.metadata.annotations!['deployment.kubernetes.io/revision'], '1');
    assert.deepEqual(
      {
        replicas: d.status.replicas,
        updatedReplicas: d.status.updatedReplicas,
        readyReplicas: d.status.readyReplicas,
        availableReplicas: d.status.availableReplicas,
        unavailableReplicas: d.status.unavailableReplicas ?? 0, // omitempty in Go
        observedGeneration: d.status.observedGeneration,
      },
      {
        replicas: 3,
        updatedReplicas: 3,
        readyReplicas: 3,
        availableReplicas: 3,
        unavailableReplicas: 0,
        observedGeneration: 1,
      },
    );
    const byType = Object.fromEntries(d.status.conditions.map((c: any) => [c.type, c]));
    assert.equal(byType.Available.status, 'True');
    assert.equal(byType.Available.reason, 'MinimumReplicasAvailable');
    assert.equal(byType.Available.message, 'Deployment has minimum availability.');
    await waitFor('NewReplicaSetAvailable', async () => {
      const cur = await deployments().get('web');
      const c = cur.status.conditions.find((x: any) => x.type === 'Progressing');
      return (
        c?.reason === 'NewReplicaSetAvailable' &&
        c.message === `ReplicaSet "web-${hash}" has successfully progressed.`
      );
    });
    await env.expectEvent(
      'web',
      'ScalingReplicaSet',
      (n) => n === `Scaled up replica set web-${hash} from 0 to 3`,
    );
  });

  it('scales up and down', async () => {
    await deployments().patch('web', { spec: { replicas: 5 } }, 'merge');
    await rolledOut('web');
    assert.equal((await podsOf('web')).length, 5);
    await deployments().patch('web', { spec: { replicas: 2 } }, 'merge');
    await rolledOut('web');
    // Scaling down is not a rollout: status.replicas follows the ReplicaSet's status.
    await waitFor('status.replicas 2', async () => (await deployments().get('web')).status.replicas === 2);
    await waitFor('2 pods', async () => (await podsOf('web')).length === 2);
    const [rs] = await setsOf('web');
    assert.equal(rs.metadata.annotations!['deployment.kubernetes.io/desired-replicas'], '2');
  });

  it('rolls out a new template within maxSurge/maxUnavailable, keeps revisions, rolls back by template', async () => {
    await createDeployment('roll', 'v1', 4, {
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: 1, maxUnavailable: '25%' } },
    });
    await rolledOut('roll');
    const [first] = await setsOf('roll');

    // Watch the rollout: never more than replicas+maxSurge pods wanted, never fewer than replicas-maxUnavailable available.
    let violated = '';
    let watching = true;
    const sampler = (async () => {
      while (watching) {
        const sets = await setsOf('roll');
        const total = sets.reduce((n, rs) => n + (rs.spec.replicas ?? 0), 0);
        const available = sets.reduce((n, rs) => n + (rs.status?.availableReplicas ?? 0), 0);
        if (total > 5) violated ||= `total ${total} > 5`;
        if (available < 3) violated ||= `available ${available} < 3`;
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    await deployments().patch(
      'roll',
      { spec: { template: { spec: { containers: [{ name: 'v1', image: 'v2' }] } } } },
      'strategic',
    );
    const d = await rolledOut('roll');
    watching = false;
    await sampler;
    assert.equal(violated, '');
    assert.equal(d.metadata.annotations!['deployment.kubernetes.io/revision'], '2');
    const sets = await setsOf('roll');
    assert.equal(sets.length, 2);
    const second = sets.find((rs) => rs.metadata.name !== first.metadata.name)!;
    assert.equal(second.metadata.annotations!['deployment.kubernetes.io/revision'], '2');
    assert.equal(second.spec.replicas, 4);
    const old = sets.find((rs) => rs.metadata.name === first.metadata.name)!;
    assert.equal(old.spec.replicas, 0);
    const pods = await podsOf('roll');
    assert.equal(pods.length, 4);
    for (const p of pods) assert.equal(p.spec.containers[0].image, 'v2');
    await env.expectEvent('roll', 'ScalingReplicaSet', (n) =>
      /^Scaled down replica set roll-\w+ from \d to \d$/.test(n),
    );

    // Rollback as kubectl rollout undo does it: revision 1's template from its ReplicaSet, without
    // the pod-template-hash label, and with metadata.creationTimestamp null as Go writes it.
    const template = structuredClone(first.spec.template);
    delete template.metadata.labels['pod-template-hash'];
    template.metadata.creationTimestamp = null;
    await deployments().patch('roll', [{ op: 'replace', path: '/spec/template', value: template }], 'json');
    const back = await rolledOut('roll');
    assert.equal(back.metadata.annotations!['deployment.kubernetes.io/revision'], '3');
    const after = await setsOf('roll');
    assert.equal(after.length, 2, 'the old ReplicaSet is reused');
    const reused = after.find((rs) => rs.metadata.name === first.metadata.name)!;
    assert.equal(reused.metadata.annotations!['deployment.kubernetes.io/revision'], '3');
    assert.equal(reused.metadata.annotations!['deployment.kubernetes.io/revision-history'], '1');
    assert.equal(reused.spec.replicas, 4);
  });

  it('cleans up old ReplicaSets beyond revisionHistoryLimit', async () => {
    await createDeployment('hist', 'i1', 1, { revisionHistoryLimit: 1 });
    await rolledOut('hist');
    for (const image of ['i2', 'i3', 'i4']) {
      await deployments().patch(
        'hist',
        { spec: { template: { spec: { containers: [{ name: 'i1', image }] } } } },
        'strategic',
      );
      await rolledOut('hist');
    }
    const sets = await waitFor('2 sets left', async () => {
      const s = await setsOf('hist');
      return s.length === 2 ? s : undefined;
    });
    const revisions = sets.map((rs) => rs.metadata.annotations!['deployment.kubernetes.io/revision']).sort();
    assert.deepEqual(revisions, ['3', '4']);
  });

  it('counts revisions as int64: the next after 3546343826724306000 is 3546343826724306001', async () => {
    const REV = 'deployment.kubernetes.io/revision';
    await createDeployment('int64', 'a1', 1, { revisionHistoryLimit: 1 });
    await rolledOut('int64');
    const [first] = await setsOf('int64');
    // Past 2^53 a float cannot tell this revision from its successor.
    await replicaSets().patch(
      first.metadata.name!,
      { metadata: { annotations: { [REV]: '3546343826724306000' } } },
      'merge',
    );
    await waitFor('the Deployment takes its ReplicaSet revision', async () => {
      const d = await deployments().get('int64');
      return d.metadata.annotations?.[REV] === '3546343826724306000';
    });
    const next = async (image: string, revision: string) => {
      await deployments().patch(
        'int64',
        { spec: { template: { spec: { containers: [{ name: 'a1', image }] } } } },
        'strategic',
      );
      const d = await rolledOut('int64');
      assert.equal(d.metadata.annotations![REV], revision);
    };
    await next('a2', '3546343826724306001');
    await next('a3', '3546343826724306002');
    // revisionHistoryLimit 1 keeps the newest old set, ordered by the exact revisions.
    const sets = await waitFor('2 sets left', async () => {
      const s = await setsOf('int64');
      return s.length === 2 ? s : undefined;
    });
    assert.deepEqual(sets.map((rs) => rs.metadata.annotations![REV]).sort(), [
      '3546343826724306001',
      '3546343826724306002',
    ]);
  });

  it('Recreate: old pods go before new ones come', async () => {
    await createDeployment('rec', 'r1', 2, { strategy: { type: 'Recreate' } });
    await rolledOut('rec');
    let overlap = false;
    let watching = true;
    const sampler = (async () => {
      while (watching) {
        const images = new Set((await podsOf('rec')).map((p) => p.spec.containers[0].image));
        if (images.size > 1) overlap = true;
        await new Promise((r) => setTimeout(r, 5));
      }
    })();
    await deployments().patch(
      'rec',
      { spec: { template: { spec: { containers: [{ name: 'r1', image: 'r2' }] } } } },
      'strategic',
    );
    await rolledOut('rec');
    await waitFor('2 new pods', async () => {
      const pods = await podsOf('rec');
      return pods.length === 2 && pods.every((p) => p.spec.containers[0].image === 'r2');
    });
    watching = false;
    await sampler;
    assert.equal(overlap, false);
  });

  it('paused: template changes wait for resume', async () => {
    await createDeployment('pause', 'p1', 1);
    await rolledOut('pause');
    await deployments().patch('pause', { spec: { paused: true } }, 'merge');
    await waitFor('paused condition', async () => {
      const d = await deployments().get('pause');
      const c = d.status.conditions.find((x: any) => x.type === 'Progressing');
      return (
        c?.status === 'Unknown' && c.reason === 'DeploymentPaused' && c.message === 'Deployment is paused'
      );
    });
    await deployments().patch(
      'pause',
      { spec: { template: { spec: { containers: [{ name: 'p1', image: 'p2' }] } } } },
      'strategic',
    );
    await waitFor('generation observed', async () => {
      const d = await deployments().get('pause');
      return d.status.observedGeneration === d.metadata.generation;
    });
    assert.equal((await setsOf('pause')).length, 1);
    await deployments().patch('pause', { spec: { paused: false } }, 'merge');
    await rolledOut('pause');
    assert.equal((await setsOf('pause')).length, 2);
  });

  it('reports ProgressDeadlineExceeded when pods never become ready', async () => {
    await deployments().create({
      metadata: { name: 'stuck' },
      spec: {
        replicas: 1,
        progressDeadlineSeconds: 30,
        selector: { matchLabels: { app: 'stuck' } },
        template: {
          metadata: { labels: { app: 'stuck', 'never-ready': 'true' } },
          spec: { containers: [{ name: 'c', image: 'c' }] },
        },
      },
    });
    const progressing = await waitFor('progressing', async () => {
      const d = await deployments().get('stuck');
      const c = (d.status?.conditions ?? []).find((x: any) => x.type === 'Progressing');
      const a = (d.status?.conditions ?? []).find((x: any) => x.type === 'Available');
      return c?.reason === 'ReplicaSetUpdated' &&
        a?.reason === 'MinimumReplicasUnavailable' &&
        d.status.replicas === 1
        ? c
        : undefined;
    });
    assert.equal(progressing.status, 'True');
    // Let the last status writes of this rollout settle before moving the clock.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal(rolloutStatus(await deployments().get('stuck')).done, false);
    // 31 seconds later (on the controller's clock) the deadline has passed.
    env.clock.advance(31_000);
    await deployments().patch('stuck', { metadata: { annotations: { poke: '1' } } }, 'merge');
    const d = await waitFor('deadline exceeded', async () => {
      const cur = await deployments().get('stuck');
      const c = (cur.status?.conditions ?? []).find((x: any) => x.type === 'Progressing');
      return c?.reason === 'ProgressDeadlineExceeded' ? cur : undefined;
    });
    const c = d.status.conditions.find((x: any) => x.type === 'Progressing');
    assert.equal(c.status, 'False');
    assert.match(c.message, /^ReplicaSet "stuck-\w+" has timed out progressing\.$/);
    assert.throws(() => rolloutStatus(d), /exceeded its progress deadline/);
    assert.equal(d.status.unavailableReplicas, 1);
  });
});
