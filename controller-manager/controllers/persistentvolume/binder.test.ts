// The persistentvolume-binder against a real apiserver: phases of volumes and
// claims, matching, pre-binding both ways, classes ("" vs the default, set
// retroactively), WaitForFirstConsumer, reclaim policies and lost claims —
// every assertion on objects read back from the apiserver.
import assert from 'node:assert/strict';
import { isNotFound, type KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { persistentVolumeBinderController } from './binder';
import { pvProtectionController } from '../pvprotection/pvprotection';
import { pvcProtectionController } from '../pvcprotection/pvcprotection';

describe('controllers/persistentvolume-binder', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const NS = 'default';

  before(async () => {
    // A short resync so the periodic sync's work (retroactive class) shows quickly.
    env = await TestEnv.start({ pvclaimbinderSyncPeriod: 300 });
    await env.run(persistentVolumeBinderController, pvProtectionController, pvcProtectionController);
  });
  after(async () => env?.stop());

  const pvs = () => env.client.resource('persistentvolumes');
  const pvcs = () => env.client.resource('persistentvolumeclaims').namespace(NS);
  const classes = () => env.client.resource('storageclasses.storage.k8s.io');

  async function pv(name: string, size: string, o: Record<string, any> = {}, meta: Record<string, any> = {}) {
    return pvs().create({
      metadata: { name, ...meta },
      spec: {
        capacity: { storage: size },
        accessModes: ['ReadWriteOnce'],
        hostPath: { path: `/tmp/tkube-pv-test/${name}` },
        ...o,
      },
    });
  }
  async function pvc(
    name: string,
    size: string,
    o: Record<string, any> = {},
    meta: Record<string, any> = {},
  ) {
    return pvcs().create({
      metadata: { name, ...meta },
      spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: size } }, ...o },
    });
  }
  const phaseOf = async (kind: 'pv' | 'pvc', name: string) =>
    (await (kind === 'pv' ? pvs() : pvcs()).get(name)).status?.phase;
  const waitPhase = (kind: 'pv' | 'pvc', name: string, phase: string) =>
    waitFor(`${kind} ${name} ${phase}`, async () => {
      const o = await (kind === 'pv' ? pvs() : pvcs()).get(name);
      return o.status?.phase === phase ? o : undefined;
    });
  const gone = (kind: 'pv' | 'pvc', name: string) =>
    waitFor(`${kind} ${name} gone`, async () => {
      try {
        await (kind === 'pv' ? pvs() : pvcs()).get(name);
        return false;
      } catch (err) {
        return isNotFound(err);
      }
    });
  /** Lets the controller see the latest state: a few resync periods pass. */
  const settle = () => new Promise((r) => setTimeout(r, 1000));

  it('makes a new volume Available and binds a claim to the smallest volume that fits', async () => {
    await pv('small', '1Gi', { storageClassName: '' });
    await pv('mid', '5Gi', { storageClassName: '' });
    await pv('big', '10Gi', { storageClassName: '' });
    for (const n of ['small', 'mid', 'big']) await waitPhase('pv', n, 'Available');
    await pvc('fits', '3Gi', { storageClassName: '' });
    const claim = await waitPhase('pvc', 'fits', 'Bound');
    assert.equal(claim.spec.volumeName, 'mid');
    assert.equal(claim.metadata.annotations?.['pv.kubernetes.io/bind-completed'], 'yes');
    assert.equal(claim.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.deepEqual(claim.status.capacity, { storage: '5Gi' });
    assert.deepEqual(claim.status.accessModes, ['ReadWriteOnce']);
    const vol = await waitPhase('pv', 'mid', 'Bound');
    assert.equal(vol.spec.claimRef.name, 'fits');
    assert.equal(vol.spec.claimRef.namespace, NS);
    assert.equal(vol.spec.claimRef.uid, claim.metadata.uid);
    assert.equal(vol.spec.claimRef.kind, 'PersistentVolumeClaim');
    assert.equal(vol.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    assert.equal(await phaseOf('pv', 'small'), 'Available');
    assert.equal(await phaseOf('pv', 'big'), 'Available');
  });

  it('matches access modes, volumeMode, selector and class; a claim with class "" and no match says so', async () => {
    await pv('rwx', '1Gi', { storageClassName: '', accessModes: ['ReadWriteMany', 'ReadWriteOnce'] });
    await pv('block', '1Gi', { storageClassName: '', volumeMode: 'Block', accessModes: ['ReadWriteMany'] });
    await pv('fast', '1Gi', { storageClassName: 'fast', accessModes: ['ReadWriteMany'] });
    await pv(
      'labelled',
      '1Gi',
      { storageClassName: '', accessModes: ['ReadWriteMany'] },
      { labels: { tier: 'gold' } },
    );
    for (const n of ['rwx', 'block', 'fast', 'labelled']) await waitPhase('pv', n, 'Available');
    await pvc('wants-rwx', '1Gi', { storageClassName: '', accessModes: ['ReadWriteMany'] });
    // The one-mode set {RWX} is tried first; in it only "labelled" fits (mode, class).
    const c1 = await waitPhase('pvc', 'wants-rwx', 'Bound');
    assert.equal(c1.spec.volumeName, 'labelled');
    await pvc('wants-gold', '1Gi', {
      storageClassName: '',
      accessModes: ['ReadWriteMany'],
      selector: { matchLabels: { tier: 'gold' } },
    });
    await pvc('wants-block', '1Gi', {
      storageClassName: '',
      accessModes: ['ReadWriteMany'],
      volumeMode: 'Block',
    });
    assert.equal((await waitPhase('pvc', 'wants-block', 'Bound')).spec.volumeName, 'block');
    // "labelled" is taken and "rwx" has no labels: the selector keeps this one Pending.
    await env.expectEvent(
      'wants-gold',
      'FailedBinding',
      (n) => n === 'no persistent volumes available for this claim and no storage class is set',
    );
    assert.equal(await phaseOf('pvc', 'wants-gold'), 'Pending');
    assert.equal(await phaseOf('pv', 'fast'), 'Available');
    assert.equal(await phaseOf('pv', 'rwx'), 'Available');
  });

  it('keeps a volume pre-bound by claimRef for its claim, and binds a claim pre-bound by volumeName', async () => {
    await pv('reserved', '2Gi', {
      storageClassName: 'other',
      claimRef: { namespace: NS, name: 'owner' },
    });
    await waitPhase('pv', 'reserved', 'Available');
    await pvc('intruder', '1Gi', { storageClassName: 'other' });
    await settle();
    assert.equal((await pvs().get('reserved')).spec.claimRef.name, 'owner');
    assert.equal(await phaseOf('pvc', 'intruder'), 'Pending');
    // The pre-bound claim gets it whatever its class (the shortcut checks size, mode and access modes only).
    await pvc('owner', '1Gi', { storageClassName: '' });
    const owner = await waitPhase('pvc', 'owner', 'Bound');
    assert.equal(owner.spec.volumeName, 'reserved');
    assert.equal(owner.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    const vol = await waitPhase('pv', 'reserved', 'Bound');
    assert.equal(vol.spec.claimRef.uid, owner.metadata.uid);
    assert.equal(
      vol.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'],
      undefined,
      'the user bound it',
    );

    await pv('wanted', '4Gi', { storageClassName: '' });
    await pv('tiny', '1Gi', { storageClassName: '' });
    await pvc('named', '3Gi', { storageClassName: '', volumeName: 'wanted' });
    const named = await waitPhase('pvc', 'named', 'Bound');
    assert.equal(named.spec.volumeName, 'wanted');
    assert.equal(
      named.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'],
      undefined,
      'the user bound it',
    );
    const wanted = await waitPhase('pv', 'wanted', 'Bound');
    assert.equal(wanted.metadata.annotations?.['pv.kubernetes.io/bound-by-controller'], 'yes');
    // A volume too small for the claim that names it is refused.
    await pvc('named-too-big', '3Gi', { storageClassName: '', volumeName: 'tiny' });
    await env.expectEvent(
      'named-too-big',
      'VolumeMismatch',
      (n) => n === 'Cannot bind to requested volume "tiny": requested PV is too small',
    );
    assert.equal(await phaseOf('pvc', 'named-too-big'), 'Pending');
    assert.equal(await phaseOf('pv', 'tiny'), 'Available');
  });

  it('gives a claim without a class the default class (at create, and later once one exists); "" stays without', async () => {
    await pvc('early', '50Gi'); // larger than every class-less PV, so it stays unbound
    await settle();
    assert.equal((await pvcs().get('early')).spec.storageClassName, undefined);
    await classes().create({
      metadata: { name: 'standard', annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
      provisioner: 'example.com/external',
    });
    // Retroactively, by the binder.
    await waitFor(
      'default class written',
      async () => (await pvcs().get('early')).spec.storageClassName === 'standard',
    );
    // At create, by the DefaultStorageClass admission plugin.
    const late = await pvc('late', '1Gi');
    assert.equal(late.spec.storageClassName, 'standard');
    const note =
      "Waiting for a volume to be created either by the external provisioner 'example.com/external' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.";
    await env.expectEvent('late', 'ExternalProvisioning', (n) => n === note);
    const annotated = await waitFor('provisioner annotations', async () => {
      const c = await pvcs().get('late');
      return c.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'] ? c : undefined;
    });
    assert.equal(
      annotated.metadata.annotations?.['volume.kubernetes.io/storage-provisioner'],
      'example.com/external',
    );
    assert.equal(
      annotated.metadata.annotations?.['volume.beta.kubernetes.io/storage-provisioner'],
      'example.com/external',
    );
    assert.equal(annotated.status.phase, 'Pending');
    const none = await pvc('no-class', '100Gi', { storageClassName: '' });
    assert.equal(none.spec.storageClassName, '');
    await env.expectEvent('no-class', 'FailedBinding');
    await settle();
    assert.equal((await pvcs().get('no-class')).spec.storageClassName, '');
    // The external provisioner's PV (claimRef, provisioned-by) is then bound by the binder.
    await pv(
      'pvc-' + annotated.metadata.uid,
      '1Gi',
      {
        storageClassName: 'standard',
        persistentVolumeReclaimPolicy: 'Delete',
        claimRef: { namespace: NS, name: 'late', uid: annotated.metadata.uid },
      },
      { annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/external' } },
    );
    assert.equal((await waitPhase('pvc', 'late', 'Bound')).spec.volumeName, 'pvc-' + annotated.metadata.uid);
    await classes().delete('standard');
  });

  it('waits for the first consumer, then binds to a volume whose node affinity admits the selected node', async () => {
    await env.createNode('node-a');
    await env.createNode('node-b');
    await classes().create({
      metadata: { name: 'local' },
      provisioner: 'kubernetes.io/no-provisioner',
      volumeBindingMode: 'WaitForFirstConsumer',
    });
    const onNode = (node: string) => ({
      storageClassName: 'local',
      local: { path: '/mnt/disk' },
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node] }] },
          ],
        },
      },
    });
    await pv('local-a', '1Gi', onNode('node-a'));
    await pv('local-b', '1Gi', onNode('node-b'));
    await pvc('waits', '1Gi', { storageClassName: 'local' });
    await env.expectEvent(
      'waits',
      'WaitForFirstConsumer',
      (n) => n === 'waiting for first consumer to be created before binding',
    );
    await settle();
    assert.equal(await phaseOf('pvc', 'waits'), 'Pending');
    assert.equal(await phaseOf('pv', 'local-a'), 'Available');
    assert.equal(await phaseOf('pv', 'local-b'), 'Available');
    // A pod not yet scheduled is named in the event.
    await env.client
      .resource('pods')
      .namespace(NS)
      .create({
        metadata: { name: 'consumer' },
        spec: {
          containers: [{ name: 'c', image: 'img' }],
          volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'waits' } }],
        },
      });
    await env.expectEvent(
      'waits',
      'WaitForPodScheduled',
      (n) => n === 'waiting for pod consumer to be scheduled',
    );
    await pvcs().patch(
      'waits',
      { metadata: { annotations: { 'volume.kubernetes.io/selected-node': 'node-b' } } },
      'merge',
    );
    const claim = await waitPhase('pvc', 'waits', 'Bound');
    assert.equal(claim.spec.volumeName, 'local-b');
    assert.equal(await phaseOf('pv', 'local-a'), 'Available');
  });

  it('Retain keeps a released volume; Delete deletes it unless an external provisioner made it', async () => {
    await pv('keep', '1Gi', { storageClassName: 'r', persistentVolumeReclaimPolicy: 'Retain' });
    await pv('drop', '1Gi', { storageClassName: 'd', persistentVolumeReclaimPolicy: 'Delete' });
    await pv(
      'theirs',
      '1Gi',
      { storageClassName: 'e', persistentVolumeReclaimPolicy: 'Delete' },
      {
        annotations: { 'pv.kubernetes.io/provisioned-by': 'example.com/external' },
      },
    );
    for (const [c, cls] of [
      ['keep-c', 'r'],
      ['drop-c', 'd'],
      ['theirs-c', 'e'],
    ])
      await pvc(c, '1Gi', { storageClassName: cls });
    for (const c of ['keep-c', 'drop-c', 'theirs-c']) await waitPhase('pvc', c, 'Bound');
    for (const c of ['keep-c', 'drop-c', 'theirs-c']) await pvcs().delete(c);
    const kept = await waitPhase('pv', 'keep', 'Released');
    assert.equal(kept.spec.claimRef.name, 'keep-c', 'a retained volume keeps its stale claimRef');
    await gone('pv', 'drop');
    await waitPhase('pv', 'theirs', 'Released');
    await settle();
    assert.equal(await phaseOf('pv', 'keep'), 'Released');
    assert.equal(await phaseOf('pv', 'theirs'), 'Released', "the provisioner's to delete");
    // An admin clearing the claimRef makes it Available again.
    await pvs().patch('keep', { spec: { claimRef: null } }, 'merge');
    await waitPhase('pv', 'keep', 'Available');
  });

  it('refuses Recycle (deprecated, no recycler): the released volume fails with an event', async () => {
    await pv('recycled', '1Gi', { storageClassName: 'rc', persistentVolumeReclaimPolicy: 'Recycle' });
    await pvc('recycled-c', '1Gi', { storageClassName: 'rc' });
    await waitPhase('pvc', 'recycled-c', 'Bound');
    await pvcs().delete('recycled-c');
    await waitPhase('pv', 'recycled', 'Failed');
    await env.expectEvent(
      'recycled',
      'VolumeFailedRecycle',
      (n) => n === 'No recycler plugin found for the volume!',
    );
  });

  it('marks a bound claim Lost when its volume goes', async () => {
    await pv('doomed', '1Gi', { storageClassName: 'l' });
    await pvc('orphaned', '1Gi', { storageClassName: 'l' });
    await waitPhase('pvc', 'orphaned', 'Bound');
    await pvs().delete('doomed');
    // pv-protection keeps a Bound volume: an admin forces it away.
    const v: KubeObject = await pvs().get('doomed');
    assert.ok(v.metadata.deletionTimestamp);
    await pvs().patch('doomed', { metadata: { finalizers: null } }, 'merge');
    await gone('pv', 'doomed');
    await waitPhase('pvc', 'orphaned', 'Lost');
    await env.expectEvent(
      'orphaned',
      'ClaimLost',
      (n) => n === 'Bound claim has lost its PersistentVolume. Data on the volume is lost!',
    );
  });
});
