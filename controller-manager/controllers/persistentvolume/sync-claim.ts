// syncClaim: a claim not yet bound (no bind-completed annotation) gets the
// volume it names or the best match, waits for its first consumer, or asks
// for provisioning; a bound one is checked against its volume and ends Lost
// when that is gone or claimed by another.
import type { Obj } from '../util/base';
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_SELECTED_NODE,
  claimClass,
  claimHasClass,
  defaultClass,
  hasAnnotation,
} from '../util/volumes';
import { jsonClone } from '../../../shared/api/json-value';
import type { PersistentVolumeBinder } from './binder';
import { findBestMatchForClaim, isVolumeBoundToClaim, volumeMismatch } from './matching';

export async function syncClaim(b: PersistentVolumeBinder, pvc: Obj): Promise<void> {
  if (!hasAnnotation(pvc, ANN_BIND_COMPLETED)) await syncUnboundClaim(b, pvc);
  else await syncBoundClaim(b, pvc);
}

/** The claim's class exists with volumeBindingMode WaitForFirstConsumer. */
function isDelayBinding(b: PersistentVolumeBinder, pvc: Obj): boolean {
  const cls = claimClass(pvc);
  if (!cls) return false;
  return b.class(cls)?.volumeBindingMode === 'WaitForFirstConsumer';
}

async function syncUnboundClaim(b: PersistentVolumeBinder, pvc: Obj): Promise<void> {
  if (!pvc.spec?.volumeName) {
    const delayBinding = isDelayBinding(b, pvc);
    // With the scheduler's choice of node, a PV whose node affinity admits that node can be taken.
    const selected = pvc.metadata.annotations?.[ANN_SELECTED_NODE];
    const node = delayBinding && selected ? b.nodes.lister().get(selected) : undefined;
    const pv = findBestMatchForClaim(b.allVolumes(), pvc, delayBinding, node);
    if (pv) {
      await b.writes.bind(pv, pvc);
      return;
    }
    if (await assignDefaultStorageClass(b, pvc)) return;
    if (delayBinding && !selected) {
      emitEventForUnboundDelayBindingClaim(b, pvc);
    } else if (claimClass(pvc) !== '') {
      await provisionClaim(b, pvc);
      return;
    } else {
      b.event(
        pvc,
        'Normal',
        'FailedBinding',
        'no persistent volumes available for this claim and no storage class is set',
      );
    }
    await b.writes.updateClaimStatus(pvc, 'Pending');
    return;
  }
  // The user asked for a specific PV.
  const pv = b.volume(pvc.spec.volumeName);
  if (!pv) {
    await b.writes.updateClaimStatus(pvc, 'Pending');
    return;
  }
  if (!pv.spec?.claimRef) {
    const why = volumeMismatch(pv, pvc);
    if (why) {
      b.event(
        pvc,
        'Warning',
        'VolumeMismatch',
        `Cannot bind to requested volume "${pv.metadata.name}": ${why}`,
      );
      await b.writes.updateClaimStatus(pvc, 'Pending');
      return;
    }
    await b.writes.bind(pv, pvc);
    return;
  }
  if (isVolumeBoundToClaim(pv, pvc)) {
    // Finish the binding (the claim uid goes into the claimRef).
    await b.writes.bind(pv, pvc);
    return;
  }
  b.event(
    pvc,
    'Warning',
    'FailedBinding',
    `volume "${pv.metadata.name}" already bound to a different claim.`,
  );
  if (!hasAnnotation(pvc, ANN_BOUND_BY_CONTROLLER)) {
    await b.writes.updateClaimStatus(pvc, 'Pending');
    return;
  }
  const ref = pv.spec.claimRef;
  throw new Error(
    `invalid binding of claim "${pvc.metadata.namespace}/${pvc.metadata.name}" to volume "${pv.metadata.name}": volume already claimed by "${ref.namespace}/${ref.name}"`,
  );
}

/** A bound claim whose volume is gone becomes Lost, with a ClaimLost warning saying how. */
async function claimLost(b: PersistentVolumeBinder, pvc: Obj, message: string): Promise<void> {
  await b.writes.updateClaimStatusWithEvent(pvc, 'Lost', undefined, 'Warning', 'ClaimLost', message);
}

async function syncBoundClaim(b: PersistentVolumeBinder, pvc: Obj): Promise<void> {
  if (!pvc.spec?.volumeName) {
    await claimLost(
      b,
      pvc,
      'Bound claim has lost reference to PersistentVolume. Data on the volume is lost!',
    );
    return;
  }
  const pv = b.volume(pvc.spec.volumeName);
  if (!pv) {
    await claimLost(b, pvc, 'Bound claim has lost its PersistentVolume. Data on the volume is lost!');
    return;
  }
  if (!pv.spec?.claimRef || pv.spec.claimRef.uid === pvc.metadata.uid) {
    // Unbound volume (or a binding in progress) is bound again; a correct one is a no-op.
    await b.writes.bind(pv, pvc);
    return;
  }
  await b.writes.updateClaimStatusWithEvent(
    pvc,
    'Lost',
    undefined,
    'Warning',
    'ClaimMisbound',
    'Two claims are bound to the same volume, this one is bound incorrectly',
  );
}

/** RetroactiveDefaultStorageClass: a claim that never named a class gets the default one, then syncs again. */
async function assignDefaultStorageClass(b: PersistentVolumeBinder, pvc: Obj): Promise<boolean> {
  if (claimHasClass(pvc)) return false;
  const dflt = defaultClass(b.classes.lister().list());
  if (!dflt) return false;
  const clone = jsonClone(pvc);
  clone.spec.storageClassName = dflt.metadata.name;
  await b.writes.updateClaim(clone);
  return true;
}

function emitEventForUnboundDelayBindingClaim(b: PersistentVolumeBinder, pvc: Obj): void {
  const unscheduled = b
    .podsUsing(pvc)
    .filter((p) => !p.spec?.nodeName)
    .map((p) => p.metadata.name!);
  if (!unscheduled.length)
    b.event(pvc, 'Normal', 'WaitForFirstConsumer', 'waiting for first consumer to be created before binding');
  else if (unscheduled.length === 1)
    b.event(pvc, 'Normal', 'WaitForPodScheduled', `waiting for pod ${unscheduled[0]} to be scheduled`);
  else
    b.event(
      pvc,
      'Normal',
      'WaitForPodScheduled',
      `waiting for pods ${unscheduled.join(',')} to be scheduled`,
    );
}

/**
 * provisionClaim: tkube has no in-tree volume plugins, so every class names
 * an external provisioner (its name outside kubernetes.io/), or one that
 * cannot provision (kubernetes.io/no-provisioner and other in-tree names).
 */
async function provisionClaim(b: PersistentVolumeBinder, pvc: Obj): Promise<void> {
  if (!b.enableDynamicProvisioning) return;
  const name = claimClass(pvc);
  const cls = b.class(name);
  if (!cls) {
    b.event(pvc, 'Warning', 'ProvisioningFailed', `storageclass.storage.k8s.io "${name}" not found`);
    return;
  }
  const provisioner: string = cls.provisioner ?? '';
  if (provisioner.startsWith('kubernetes.io/')) {
    b.event(pvc, 'Warning', 'ProvisioningFailed', `no volume plugin matched name: ${provisioner}`);
    return;
  }
  let claim: Obj;
  try {
    claim = await b.writes.setClaimProvisioner(pvc, provisioner);
  } catch (err) {
    b.event(
      pvc,
      'Warning',
      'ProvisioningFailed',
      `Error saving claim: ${err instanceof Error ? err.message : String(err)}`,
    );
    throw err;
  }
  b.event(
    claim,
    'Normal',
    'ExternalProvisioning',
    `Waiting for a volume to be created either by the external provisioner '${provisioner}' or manually by the system administrator. If volume creation is delayed, please verify that the provisioner is running and correctly registered.`,
  );
}
