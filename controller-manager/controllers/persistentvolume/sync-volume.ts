// syncVolume: a PV with no claim (or reserved for one by name) is Available;
// bound to an existing claim that names it, Bound; its claim gone, Released
// and reclaimed by its policy (Retain keeps it, Delete deletes it — or leaves
// that to the external provisioner that made it — Recycle is refused).
import { isNotFound } from '../../../shared/client';
import type { Obj } from '../util/base';
import { ANN_DYNAMICALLY_PROVISIONED, ANN_MIGRATED_TO, hasAnnotation } from '../util/volumes';
import type { PersistentVolumeBinder } from './binder';
import { volumeModeMismatch } from './matching';

const released = (pv: Obj) => pv.status?.phase === 'Released' || pv.status?.phase === 'Failed';

async function getClaimOrUndefined(
  b: PersistentVolumeBinder,
  ns: string,
  name: string,
): Promise<Obj | undefined> {
  try {
    return await b.writes.getClaim(ns, name);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

export async function syncVolume(b: PersistentVolumeBinder, pv: Obj): Promise<void> {
  const ref = pv.spec?.claimRef;
  if (!ref || !ref.uid) {
    // Unused, or pre-bound to a claim the claim sync will bind.
    await b.writes.updateVolumePhase(pv, 'Available');
    return;
  }
  const key = `${ref.namespace}/${ref.name}`;
  let claim = b.claim(key);
  // A PV made by a provisioner or bound by the scheduler may come before its claim reaches the cache: ask the apiserver.
  if (!claim && !released(pv)) claim = await getClaimOrUndefined(b, ref.namespace, ref.name);
  if (claim && claim.metadata.uid !== ref.uid) {
    // Maybe a stale cache; the apiserver's copy decides whether the claim was replaced.
    claim = await getClaimOrUndefined(b, ref.namespace, ref.name);
    if (claim && claim.metadata.uid !== ref.uid) claim = undefined;
  }

  if (!claim) {
    // Keep Failed so the user sees what went wrong while reclaiming is retried.
    if (!released(pv)) pv = await b.writes.updateVolumePhase(pv, 'Released');
    await reclaimVolume(b, pv);
    return;
  }
  if (!claim.spec?.volumeName) {
    if (volumeModeMismatch(claim, pv)) {
      b.event(
        pv,
        'Warning',
        'VolumeMismatch',
        `Cannot bind PersistentVolume to requested PersistentVolumeClaim "${claim.metadata.name}" due to incompatible volumeMode.`,
      );
      b.event(
        claim,
        'Warning',
        'VolumeMismatch',
        `Cannot bind PersistentVolume "${pv.metadata.name}" to requested PersistentVolumeClaim due to incompatible volumeMode.`,
      );
      return;
    }
    // The binding is half done (or the claim was unbound): the claim sync finishes it.
    b.claimQueue.add(key);
    return;
  }
  if (claim.spec.volumeName === pv.metadata.name) {
    await b.writes.updateVolumePhase(pv, 'Bound');
    return;
  }
  // The claim is bound to another volume.
  if (hasAnnotation(pv, ANN_DYNAMICALLY_PROVISIONED) && pv.spec?.persistentVolumeReclaimPolicy === 'Delete') {
    if (!released(pv)) pv = await b.writes.updateVolumePhase(pv, 'Released');
    await reclaimVolume(b, pv);
    return;
  }
  // Ours is rolled back; a user's pre-binding keeps the claim's name and loses the uid.
  await b.writes.unbindVolume(pv);
}

/** The volume's claim is gone or bound elsewhere (read again: a reclaim must never act on a stale copy). */
function isVolumeReleased(b: PersistentVolumeBinder, pv: Obj): boolean {
  const ref = pv.spec?.claimRef;
  if (!ref || !ref.uid) return false;
  const claim = b.claim(`${ref.namespace}/${ref.name}`);
  if (claim && claim.metadata.uid === ref.uid)
    return !!claim.spec?.volumeName && claim.spec.volumeName !== pv.metadata.name;
  return true;
}

async function reclaimVolume(b: PersistentVolumeBinder, pv: Obj): Promise<void> {
  if (pv.metadata.annotations?.[ANN_MIGRATED_TO]) return;
  switch (pv.spec?.persistentVolumeReclaimPolicy) {
    case 'Retain':
      return;
    case 'Recycle':
      await recycleVolume(b, pv);
      return;
    case 'Delete':
      await deleteVolume(b, pv);
      return;
    default:
      await b.writes.updateVolumePhaseWithEvent(
        pv,
        'Failed',
        'Warning',
        'VolumeUnknownReclaimPolicy',
        'Volume has unrecognized PersistentVolumeReclaimPolicy',
      );
  }
}

/** The apiserver's copy of a volume about to be reclaimed, if it is still there and still released (the cache may be stale). */
async function stillReleased(b: PersistentVolumeBinder, pv: Obj): Promise<Obj | undefined> {
  let fresh: Obj;
  try {
    fresh = await b.writes.getVolume(pv.metadata.name!);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
  return isVolumeReleased(b, fresh) ? fresh : undefined;
}

/** Recycle (deprecated) needs a recycler plugin; tkube has none, so the volume fails as Kubernetes' does without one. */
async function recycleVolume(b: PersistentVolumeBinder, pv: Obj): Promise<void> {
  const fresh = await stillReleased(b, pv);
  if (!fresh) return;
  await b.writes.updateVolumePhaseWithEvent(
    fresh,
    'Failed',
    'Warning',
    'VolumeFailedRecycle',
    'No recycler plugin found for the volume!',
  );
}

/**
 * Delete: a PV an external provisioner made (provisioned-by outside
 * kubernetes.io/) is that provisioner's to delete; any other has no backend
 * here to clean up (tkube has no in-tree deleters), so its PV object is deleted.
 */
async function deleteVolume(b: PersistentVolumeBinder, pv: Obj): Promise<void> {
  const fresh = await stillReleased(b, pv);
  if (!fresh) return;
  const provisionedBy = fresh.metadata.annotations?.[ANN_DYNAMICALLY_PROVISIONED];
  if (provisionedBy && !provisionedBy.startsWith('kubernetes.io/')) return;
  if (fresh.metadata.deletionTimestamp) return;
  try {
    await b.writes.deleteVolume(fresh);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}
