// The local-path provisioner with the persistentvolume-binder against a real
// apiserver: a claim with no class gets the default local-path class, waits
// for its first consumer, and once a node is selected gets a directory under
// that node's base dir and a PV bound to it; deleting the claim removes both.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isNotFound } from '../../../shared/client';
import { localPathStorageClass } from '../../../shared/api/local-path';
import { TestEnv, waitFor } from '../testing';
import { persistentVolumeBinderController } from '../persistentvolume/binder';
import { pvcProtectionController } from '../pvcprotection/pvcprotection';
import { pvProtectionController } from '../pvprotection/pvprotection';
import { localPathProvisionerController } from './provisioner';

describe('controllers/local-path-provisioner', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let root: string;
  const NS = 'default';
  const pvcs = () => env.client.resource('persistentvolumeclaims').namespace(NS);
  const pvs = () => env.client.resource('persistentvolumes');

  before(async () => {
    root = mkdtempSync(join(tmpdir(), 'tkube-local-path-'));
    env = await TestEnv.start({
      pvclaimbinderSyncPeriod: 300,
      localPathBaseDir: join(root, '{node}', 'storage'),
    });
    await env.client.resource('storageclasses.storage.k8s.io').create(localPathStorageClass());
    await env.createNode('node-a', { labels: { 'kubernetes.io/hostname': 'host-a' } });
    await env.run(
      persistentVolumeBinderController,
      pvcProtectionController,
      pvProtectionController,
      localPathProvisionerController,
    );
  });
  after(async () => {
    await env?.stop();
    rmSync(root, { recursive: true, force: true });
  });

  const claim = (name: string, spec: Record<string, any> = {}) =>
    pvcs().create({
      metadata: { name },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } }, ...spec },
    });
  const selectNode = (name: string, node: string) =>
    pvcs().patch(
      name,
      { metadata: { annotations: { 'volume.kubernetes.io/selected-node': node } } },
      'merge',
    );

  it('provisions a hostPath PV on the selected node for a claim of the default class, and deletes it with the claim', async () => {
    const created = await claim('data');
    assert.equal(created.spec.storageClassName, 'local-path', 'the default class is filled in');
    // WaitForFirstConsumer: the binder hands the claim to the provisioner only once a node is chosen.
    await waitFor('WaitForFirstConsumer event', async () =>
      env.events.some((e) => e.name === 'data' && e.reason === 'WaitForFirstConsumer'),
    );
    const name = `pvc-${created.metadata.uid}`;
    await assert.rejects(pvs().get(name), isNotFound);

    await selectNode('data', 'node-a');
    const bound = await waitFor('claim Bound', async () => {
      const c = await pvcs().get('data');
      return c.status?.phase === 'Bound' ? c : undefined;
    });
    assert.equal(bound.spec.volumeName, name);
    assert.equal(
      bound.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'],
      'rancher.io/local-path',
    );
    assert.equal(
      bound.metadata.annotations?.['volume.beta.kubernetes.io/storage-provisioner'],
      'rancher.io/local-path',
    );
    const pv = await pvs().get(name);
    const dir = join(root, 'node-a', 'storage', `${name}_${NS}_data`);
    assert.deepEqual(pv.spec.hostPath, { path: dir, type: 'DirectoryOrCreate' });
    assert.deepEqual(pv.spec.capacity, { storage: '2Gi' });
    assert.equal(pv.spec.persistentVolumeReclaimPolicy, 'Delete');
    assert.equal(pv.spec.storageClassName, 'local-path');
    assert.equal(pv.spec.volumeMode, 'Filesystem');
    assert.equal(pv.metadata.annotations?.['pv.kubernetes.io/provisioned-by'], 'rancher.io/local-path');
    assert.equal(pv.metadata.annotations?.['local.path.provisioner/selected-node'], 'node-a');
    assert.deepEqual(pv.spec.nodeAffinity.required.nodeSelectorTerms, [
      { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['host-a'] }] },
    ]);
    assert.equal(pv.spec.claimRef.uid, created.metadata.uid);
    assert.ok(statSync(dir).isDirectory());
    assert.equal(statSync(dir).mode & 0o777, 0o777, 'mkdir -m 0777, whatever the umask');
    assert.ok(env.events.some((e) => e.name === 'data' && e.reason === 'ProvisioningSucceeded'));
    writeFileSync(join(dir, 'file'), 'kept until the claim goes');

    await pvcs().delete('data');
    await waitFor('PV deleted', async () => {
      try {
        await pvs().get(name);
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
    assert.equal(existsSync(dir), false, 'the directory is removed with the PV');
  });

  it('refuses access modes a node-local directory cannot give, with an event', async () => {
    await claim('shared', { accessModes: ['ReadWriteMany'] });
    await selectNode('shared', 'node-a');
    const ev = await waitFor('ProvisioningFailed', async () =>
      env.events.find((e) => e.name === 'shared' && e.reason === 'ProvisioningFailed'),
    );
    assert.match(
      ev.note,
      /NodePath only supports ReadWriteOnce and ReadWriteOncePod \(1 node\) access modes/,
    );
    assert.equal((await pvcs().get('shared')).status?.phase, 'Pending');
  });

  it('makes a local PV when the claim asks for volumeType local', async () => {
    const created = await claim('fast');
    await pvcs().patch(
      'fast',
      { metadata: { annotations: { volumeType: 'local', 'volume.kubernetes.io/selected-node': 'node-a' } } },
      'merge',
    );
    const pv = await waitFor('PV', async () => {
      try {
        return await pvs().get(`pvc-${created.metadata.uid}`);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    });
    assert.deepEqual(pv.spec.local, {
      path: join(root, 'node-a', 'storage', `pvc-${created.metadata.uid}_${NS}_fast`),
    });
    assert.equal(pv.spec.hostPath, undefined);
  });
});
