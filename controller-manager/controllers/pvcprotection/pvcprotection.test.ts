// pv-protection and pvc-protection against a real apiserver: a claim in use
// by a scheduled pod stays (terminating) until the pod goes; a bound volume
// stays until it is released; finalizers missing on older objects are added.
import assert from 'node:assert/strict';
import { isNotFound } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { persistentVolumeBinderController } from '../persistentvolume/binder';
import { pvProtectionController } from '../pvprotection/pvprotection';
import { pvcProtectionController } from './pvcprotection';

describe('controllers/pvc-protection and pv-protection', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const NS = 'default';

  before(async () => {
    env = await TestEnv.start();
    await env.run(pvcProtectionController, pvProtectionController, persistentVolumeBinderController);
    await env.createNode('n1');
  });
  after(async () => env?.stop());

  const pvs = () => env.client.resource('persistentvolumes');
  const pvcs = () => env.client.resource('persistentvolumeclaims').namespace(NS);
  const pods = () => env.client.resource('pods').namespace(NS);
  const gone = (what: string, get: () => Promise<unknown>) =>
    waitFor(`${what} gone`, async () => {
      try {
        await get();
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
  const claim = (name: string, storageClassName = 'none') =>
    pvcs().create({
      metadata: { name },
      spec: {
        accessModes: ['ReadWriteOnce'],
        storageClassName,
        resources: { requests: { storage: '1Gi' } },
      },
    });
  const podUsing = (name: string, claimName: string, nodeName?: string) =>
    pods().create({
      metadata: { name },
      spec: {
        ...(nodeName ? { nodeName } : {}),
        containers: [{ name: 'c', image: 'img' }],
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName } }],
      },
    });
  const pause = () => new Promise((r) => setTimeout(r, 1000));

  it('keeps a claim used by a scheduled pod until the pod is gone', async () => {
    const c = await claim('in-use');
    assert.deepEqual(c.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    await podUsing('user', 'in-use', 'n1');
    await pvcs().delete('in-use');
    await pause();
    const held = await pvcs().get('in-use');
    assert.ok(held.metadata.deletionTimestamp, 'terminating');
    assert.deepEqual(held.metadata.finalizers, ['kubernetes.io/pvc-protection']);
    // A finished pod still counts: only the pod object going frees the claim.
    const p = await pods().get('user');
    await pods().updateStatus({ ...p, status: { phase: 'Succeeded' } });
    await pause();
    assert.ok((await pvcs().get('in-use')).metadata.deletionTimestamp);
    await pods().delete('user', { gracePeriodSeconds: 0 });
    await gone('claim in-use', () => pvcs().get('in-use'));
  });

  it('frees a claim at once when only unscheduled pods reference it', async () => {
    await claim('unused');
    await podUsing('pending-user', 'unused');
    await pvcs().delete('unused');
    await gone('claim unused', () => pvcs().get('unused'));
  });

  it('adds the finalizer to a claim that lacks it', async () => {
    await claim('bare');
    await pvcs().patch('bare', { metadata: { finalizers: null } }, 'merge');
    await waitFor('finalizer back', async () =>
      ((await pvcs().get('bare')).metadata.finalizers ?? []).includes('kubernetes.io/pvc-protection'),
    );
  });

  it('keeps a Bound volume being deleted until it is released', async () => {
    const v = await pvs().create({
      metadata: { name: 'held' },
      spec: {
        capacity: { storage: '1Gi' },
        accessModes: ['ReadWriteOnce'],
        storageClassName: 'held',
        hostPath: { path: '/tmp/tkube-pv-test/held' },
      },
    });
    assert.deepEqual(v.metadata.finalizers, ['kubernetes.io/pv-protection']);
    await claim('holder', 'held');
    await waitFor('bound', async () => (await pvs().get('held')).status?.phase === 'Bound');
    await pvs().delete('held');
    await pause();
    const still = await pvs().get('held');
    assert.ok(still.metadata.deletionTimestamp);
    assert.equal(still.status.phase, 'Bound');
    await pvcs().delete('holder');
    await gone('volume held', () => pvs().get('held'));
  });
});
