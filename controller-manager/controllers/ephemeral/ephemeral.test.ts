// The ephemeral-volume controller against a real apiserver: the claim
// <pod>-<volume> from the template, controlled by the pod; a claim of that
// name the pod does not own is not taken over.
import assert from 'node:assert/strict';
import { TestEnv, waitFor } from '../testing';
import { ephemeralVolumeController } from './ephemeral';

describe('controllers/ephemeral-volume', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const NS = 'default';

  before(async () => {
    env = await TestEnv.start();
    await env.run(ephemeralVolumeController);
  });
  after(async () => env?.stop());

  const pvcs = () => env.client.resource('persistentvolumeclaims').namespace(NS);
  const pods = () => env.client.resource('pods').namespace(NS);
  const template = {
    metadata: { labels: { app: 'scratch' }, annotations: { note: 'from-template' } },
    spec: {
      accessModes: ['ReadWriteOnce'],
      storageClassName: 'fast',
      resources: { requests: { storage: '2Gi' } },
    },
  };
  const podWith = (name: string) =>
    pods().create({
      metadata: { name },
      spec: {
        containers: [{ name: 'c', image: 'img' }],
        volumes: [
          { name: 'scratch', ephemeral: { volumeClaimTemplate: template } },
          { name: 'tmp', emptyDir: {} },
        ],
      },
    });

  it('creates <pod>-<volume> from the template, controlled by the pod', async () => {
    const pod = await podWith('web');
    const c = await waitFor('claim', async () => {
      try {
        return await pvcs().get('web-scratch');
      } catch {
        return undefined;
      }
    });
    assert.deepEqual(c.metadata.ownerReferences, [
      {
        apiVersion: 'v1',
        kind: 'Pod',
        name: 'web',
        uid: pod.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    assert.equal(c.metadata.labels?.app, 'scratch');
    assert.equal(c.metadata.annotations?.note, 'from-template');
    assert.equal(c.spec.storageClassName, 'fast');
    assert.deepEqual(c.spec.resources.requests, { storage: '2Gi' });
    assert.deepEqual(c.spec.accessModes, ['ReadWriteOnce']);
    assert.equal((await pvcs().list()).items.filter((x) => x.metadata.name!.startsWith('web-')).length, 1);
  });

  it('does not take over a claim of that name the pod does not own, and says why', async () => {
    await pvcs().create({
      metadata: { name: 'db-scratch' },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
    });
    await podWith('db');
    await env.expectEvent(
      'db',
      'FailedBinding',
      (n) =>
        n ===
        'ephemeral volume scratch: PVC default/db-scratch was not created for pod default/db (pod is not owner)',
    );
    const c = await pvcs().get('db-scratch');
    assert.equal(c.metadata.ownerReferences, undefined);
    assert.deepEqual(c.spec.resources.requests, { storage: '1Gi' });
  });
});
