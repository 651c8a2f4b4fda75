import assert from 'node:assert/strict';
import { TestEnv, waitFor } from '../testing';
import { replicaSetController, replicationController } from './replicaset';

describe('controllers/replicaset: ReplicaSet and ReplicationController', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    await env.run(replicaSetController, replicationController);
  });
  after(async () => env?.stop());

  const rsBody = (name: string, replicas: number) => ({
    metadata: { name, labels: { app: name } },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name, extra: 'x' } },
        spec: { containers: [{ name: 'c', image: 'img' }] },
      },
    },
  });

  const podsOf = async (selector: string, ns = 'default') =>
    (await env.client.resource('pods').namespace(ns).list({ labelSelector: selector })).items.filter(
      (p) => !p.metadata.deletionTimestamp,
    );

  it('creates pods from the template, owned by the ReplicaSet, and reports status', async () => {
    const rsClient = env.client.resource('replicasets.apps').namespace('default');
    const rs = await rsClient.create(rsBody('web', 3));
    const pods = await waitFor('3 pods', async () => {
      const p = await podsOf('app=web');
      return p.length === 3 ? p : undefined;
    });
    for (const p of pods) {
      assert.match(p.metadata.name!, /^web-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.deepEqual(p.metadata.ownerReferences, [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: 'web',
          uid: rs.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
      assert.equal(p.metadata.labels!.extra, 'x');
    }
    // Two become ready (a node agent's job).
    await env.setPodRunning(pods[0], true);
    await env.setPodRunning(pods[1], true);
    const st = await waitFor('status', async () => {
      const cur = await rsClient.get('web');
      const s = cur.status;
      return s?.replicas === 3 && s.readyReplicas === 2 && s.availableReplicas === 2 ? s : undefined;
    });
    assert.equal(st.fullyLabeledReplicas, 3);
    assert.equal(st.observedGeneration, 1);
    await waitFor('3 create events', () => env.eventsFor('web', 'SuccessfulCreate').length >= 3);
    assert.match(env.eventsFor('web', 'SuccessfulCreate')[0].note, /^Created pod: web-/);

    // Scale down to 1: the not-ready pod goes first.
    await rsClient.patch('web', { spec: { replicas: 1 } }, 'merge');
    const left = await waitFor('1 pod', async () => {
      const p = await podsOf('app=web');
      return p.length === 1 ? p : undefined;
    });
    assert.ok([pods[0].metadata.name, pods[1].metadata.name].includes(left[0].metadata.name));
    await waitFor('status after scale down', async () => {
      const cur = await rsClient.get('web');
      return cur.status?.replicas === 1 && cur.status.observedGeneration === 2;
    });
    await waitFor('2 delete events', () => env.eventsFor('web', 'SuccessfulDelete').length >= 2);
  });

  it('adopts a matching orphan and releases a pod whose labels no longer match', async () => {
    const pods = env.client.resource('pods').namespace('default');
    const orphan = await pods.create({
      metadata: { name: 'orphan', labels: { app: 'adopt' } },
      spec: { containers: [{ name: 'c', image: 'img' }] },
    });
    const rsClient = env.client.resource('replicasets.apps').namespace('default');
    const rs = await rsClient.create(rsBody('adopt', 2));
    await waitFor('adoption', async () => {
      const p = await pods.get('orphan');
      return p.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid;
    });
    await waitFor('2 pods in all', async () => (await podsOf('app=adopt')).length === 2);
    // The orphan counted: only one pod was created.
    await new Promise((r) => setTimeout(r, 200));
    assert.equal((await podsOf('app=adopt')).length, 2);
    assert.equal(orphan.metadata.name, 'orphan');

    await pods.patch('orphan', { metadata: { labels: { app: 'gone' } } }, 'merge');
    await waitFor('release', async () => !(await pods.get('orphan')).metadata.ownerReferences?.length);
    await waitFor('replacement', async () => (await podsOf('app=adopt')).length === 2);
  });

  it('runs ReplicationControllers the same way', async () => {
    const rcs = env.client.resource('replicationcontrollers').namespace('default');
    await rcs.create({
      metadata: { name: 'rc1' },
      spec: {
        replicas: 2,
        selector: { app: 'rc1' },
        template: {
          metadata: { labels: { app: 'rc1' } },
          spec: { containers: [{ name: 'c', image: 'img' }] },
        },
      },
    });
    const pods = await waitFor('2 rc pods', async () => {
      const p = await podsOf('app=rc1');
      return p.length === 2 ? p : undefined;
    });
    assert.equal(pods[0].metadata.ownerReferences![0].kind, 'ReplicationController');
    await waitFor('rc status', async () => (await rcs.get('rc1')).status?.replicas === 2);
  });
});
