// Resizing claims against a real apiserver: the PersistentVolumeClaimResize
// admission plugin and the claim update rules decide what may change, the
// expander records a grown hostPath volume in the PV and the claim's status
// as a resize with no node step ends, and leaves other volume types to an
// external resizer.
import assert from 'node:assert/strict';
import { isForbidden, isInvalid, type KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { persistentVolumeBinderController } from '../persistentvolume/binder';
import { expandController } from './expand';

describe('controllers/persistentvolume-expander', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const pvcs = () => env.client.resource('persistentvolumeclaims').namespace('default');
  const pvs = () => env.client.resource('persistentvolumes');

  before(async () => {
    env = await TestEnv.start({ pvclaimbinderSyncPeriod: 300 });
    const classes = env.client.resource('storageclasses.storage.k8s.io');
    await classes.create({
      metadata: { name: 'grow' },
      provisioner: 'example.com/none',
      allowVolumeExpansion: true,
    });
    await classes.create({ metadata: { name: 'fixed' }, provisioner: 'example.com/none' });
    await env.run(persistentVolumeBinderController, expandController);
  });
  after(async () => env?.stop());

  /** A PV of the class and a claim bound to it. */
  async function boundClaim(name: string, cls: string, source: Record<string, any>): Promise<KubeObject> {
    await pvs().create({
      metadata: { name: `pv-${name}` },
      spec: {
        storageClassName: cls,
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '1Gi' },
        claimRef: { namespace: 'default', name },
        ...source,
      },
    });
    await pvcs().create({
      metadata: { name },
      spec: {
        storageClassName: cls,
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    });
    return waitFor(`${name} Bound`, async () => {
      const c = await pvcs().get(name);
      return c.status?.phase === 'Bound' ? c : undefined;
    });
  }
  const request = (name: string, storage: string) =>
    pvcs().patch(name, { spec: { resources: { requests: { storage } } } }, 'merge');

  it('grows a bound hostPath claim of an expandable class: PV capacity, then the claim status', async () => {
    await boundClaim('data', 'grow', { hostPath: { path: '/tmp/tkube-expand-test' } });
    await request('data', '3Gi');
    const grown = await waitFor('capacity 3Gi', async () => {
      const c = await pvcs().get('data');
      return c.status?.capacity?.storage === '3Gi' ? c : undefined;
    });
    assert.deepEqual(grown.status.allocatedResources, { storage: '3Gi' });
    assert.equal(grown.status.allocatedResourceStatuses, undefined, 'no resize in progress');
    assert.equal(grown.status.conditions, undefined, 'no Resizing condition left');
    assert.deepEqual((await pvs().get('pv-data')).spec.capacity, { storage: '3Gi' });
    assert.ok(env.events.some((e) => e.name === 'data' && e.reason === 'VolumeResizeSuccessful'));
    // Back down to (or under) the capacity is refused; the request stays.
    await assert.rejects(
      request('data', '3Gi').then(() => request('data', '2Gi')),
      (err: any) => {
        assert.ok(isInvalid(err));
        assert.match(
          err.message,
          /spec\.resources\.requests\.storage: Forbidden: field can not be less than status\.capacity/,
        );
        return true;
      },
    );
  });

  it('refuses growth unless the class allows it, and any size change of an unbound claim', async () => {
    await boundClaim('stuck', 'fixed', { hostPath: { path: '/tmp/tkube-expand-test' } });
    await assert.rejects(request('stuck', '2Gi'), (err: any) => {
      assert.ok(isForbidden(err));
      assert.match(
        err.message,
        /persistentvolumeclaims "stuck" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize/,
      );
      return true;
    });
    await pvcs().create({
      metadata: { name: 'waiting' },
      spec: {
        storageClassName: 'nothing',
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    });
    await assert.rejects(request('waiting', '2Gi'), (err: any) => {
      assert.ok(isInvalid(err));
      assert.match(err.message, /spec is immutable after creation except resources\.requests/);
      return true;
    });
  });

  it('leaves a volume it cannot grow to an external resizer; the request may shrink back above the capacity', async () => {
    await boundClaim('remote', 'grow', { nfs: { server: '127.0.0.1', path: '/export' } });
    await request('remote', '3Gi');
    await waitFor('ExternalExpanding', async () =>
      env.events.some((e) => e.name === 'remote' && e.reason === 'ExternalExpanding'),
    );
    assert.deepEqual((await pvcs().get('remote')).status.capacity, { storage: '1Gi' });
    // RecoverVolumeExpansionFailure: a smaller request that is still above the capacity is accepted.
    assert.equal((await request('remote', '2Gi')).spec.resources.requests.storage, '2Gi');
  });
});
