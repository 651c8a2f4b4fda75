// StatefulSet claims against a real apiserver with the garbage collector:
// one claim per template and ordinal made before the pod, kept across scale
// down and reused on scale up, and persistentVolumeClaimRetentionPolicy's
// owner references (the set for whenDeleted=Delete, the condemned pod for
// whenScaled=Delete) that let the garbage collector delete them.
import assert from 'node:assert/strict';
import { isNotFound, type KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { garbageCollectorController } from '../garbagecollector/garbagecollector';
import { pvcProtectionController } from '../pvcprotection/pvcprotection';
import { statefulSetController } from './statefulset';

describe('controllers/statefulset: claims and their retention policy', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    env.startKubelet({ unbound: true });
    await env.run(statefulSetController, garbageCollectorController, pvcProtectionController);
  });
  after(async () => env?.stop());

  const sets = () => env.client.resource('statefulsets.apps').namespace('default');
  const pods = () => env.client.resource('pods').namespace('default');
  const pvcs = () => env.client.resource('persistentvolumeclaims').namespace('default');
  const sts = (name: string, replicas: number, policy?: Record<string, string>): KubeObject => ({
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      ...(policy ? { persistentVolumeClaimRetentionPolicy: policy } : {}),
      template: {
        metadata: { labels: { app: name } },
        spec: {
          containers: [{ name: 'c', image: 'v1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: 'data', labels: { tier: 'db' } },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      ],
    },
  });
  const claimOrUndefined = async (name: string) => {
    try {
      return await pvcs().get(name);
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  };
  const readyPods = async (app: string) =>
    (await pods().list({ labelSelector: `app=${app}` })).items.filter(
      (p) => !p.metadata.deletionTimestamp && p.status?.phase === 'Running',
    ).length;
  const scale = (name: string, replicas: number) => sets().patch(name, { spec: { replicas } }, 'merge');
  const gone = (name: string) =>
    waitFor(`claim ${name} deleted`, async () => !(await claimOrUndefined(name)));

  it('Retain: makes data-<set>-<ordinal> before each pod, keeps it on scale down and reuses it on scale up', async () => {
    await sets().create(sts('keep', 2));
    await waitFor('2 pods Running', async () => (await readyPods('keep')) === 2);
    const claim1 = (await claimOrUndefined('data-keep-1'))!;
    assert.ok(claim1, 'claim of ordinal 1');
    assert.deepEqual(claim1.metadata.labels, { tier: 'db', app: 'keep' });
    assert.equal(claim1.metadata.ownerReferences, undefined, 'Retain/Retain: no owner');
    const pod1 = await pods().get('keep-1');
    assert.ok(
      Date.parse(claim1.metadata.creationTimestamp!) <= Date.parse(pod1.metadata.creationTimestamp!),
      'the claim comes first',
    );
    assert.deepEqual(
      pod1.spec.volumes.find((v: any) => v.name === 'data'),
      { name: 'data', persistentVolumeClaim: { claimName: 'data-keep-1' } },
    );

    await scale('keep', 1);
    await waitFor('keep-1 gone', async () => {
      try {
        await pods().get('keep-1');
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
    assert.equal((await claimOrUndefined('data-keep-1'))?.metadata.uid, claim1.metadata.uid, 'kept');
    await scale('keep', 2);
    await waitFor('2 pods Running again', async () => (await readyPods('keep')) === 2);
    assert.equal((await claimOrUndefined('data-keep-1'))?.metadata.uid, claim1.metadata.uid, 'reused');
  });

  it('whenScaled=Delete: the claim of a condemned ordinal is owned by its pod and goes with it', async () => {
    await sets().create(sts('shrink', 2, { whenScaled: 'Delete', whenDeleted: 'Retain' }));
    await waitFor('2 pods Running', async () => (await readyPods('shrink')) === 2);
    assert.equal((await claimOrUndefined('data-shrink-1'))?.metadata.ownerReferences, undefined);
    await scale('shrink', 1);
    // Owned by its pod before the pod is deleted, so the garbage collector deletes it after.
    await gone('data-shrink-1');
    const kept = await claimOrUndefined('data-shrink-0');
    assert.ok(kept, 'ordinals in range keep their claims');
    assert.equal(kept.metadata.ownerReferences, undefined);
  });

  it("whenScaled=Delete: a scale up waits until the old pod's claim is gone, then makes a new one", async () => {
    await sets().create(sts('bounce', 2, { whenScaled: 'Delete', whenDeleted: 'Retain' }));
    await waitFor('2 pods Running', async () => (await readyPods('bounce')) === 2);
    // Held by a finalizer: the garbage collector's delete leaves it (with the old pod's ref) in place.
    await pvcs().patch('data-bounce-1', { metadata: { finalizers: ['example.com/hold'] } }, 'merge');
    await scale('bounce', 1);
    const held = await waitFor('claim deleted but held', async () => {
      const c = await claimOrUndefined('data-bounce-1');
      return c?.metadata.deletionTimestamp ? c : undefined;
    });
    assert.equal(held.metadata.ownerReferences?.[0]?.kind, 'Pod');
    const up = await scale('bounce', 2);
    await waitFor('scale up observed', async () => {
      const s = await sets().get('bounce');
      return (s.status?.observedGeneration ?? 0) >= up.metadata.generation!;
    });
    await assert.rejects(pods().get('bounce-1'), isNotFound, 'no pod on a claim being deleted');
    await pvcs().patch('data-bounce-1', { metadata: { finalizers: null } }, 'merge');
    await waitFor('2 pods Running again', async () => (await readyPods('bounce')) === 2);
    const fresh = (await claimOrUndefined('data-bounce-1'))!;
    assert.notEqual(fresh.metadata.uid, held.metadata.uid, 'a new claim');
  });

  it('whenDeleted=Delete: the set owns its claims, deleted with it; both Delete: a condemned one moves to its pod', async () => {
    const set = await sets().create(sts('drop', 2, { whenScaled: 'Delete', whenDeleted: 'Delete' }));
    await waitFor('2 pods Running', async () => (await readyPods('drop')) === 2);
    const refs = (await claimOrUndefined('data-drop-1'))!.metadata.ownerReferences;
    assert.deepEqual(refs, [
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: 'drop',
        uid: set.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    await scale('drop', 1);
    await gone('data-drop-1');
    await sets().delete('drop');
    await gone('data-drop-0');
  });
});
