// Which PersistentVolume a claim gets (index.go's findByClaim and
// component-helpers' FindMatchingVolume): PVs grouped by their access-mode
// set, the sets holding every requested mode tried smallest first, and in a
// set the PV pre-bound to the claim, else the smallest Available one that fits.
import { compareQuantity, parseQuantity, type Quantity } from '../../../shared/api/validation/quantity';
import { selectorFromObject } from '../../../shared/api/labels';
import type { Obj } from '../util/base';
import { nodeSelectorMatches } from '../../../shared/api/scheduling';
import { claimClass, volumeClass } from '../util/volumes';

const ZERO = parseQuantity('0');

export function storageOf(list: Record<string, unknown> | undefined): Quantity {
  const v = list?.storage;
  if (v === undefined || v === null) return ZERO;
  try {
    return parseQuantity(String(v));
  } catch {
    return ZERO;
  }
}

/** The PV's claimRef names this claim (and its uid, once set). */
export function isVolumeBoundToClaim(pv: Obj, pvc: Obj): boolean {
  const ref = pv.spec?.claimRef;
  if (!ref) return false;
  if (ref.name !== pvc.metadata.name || ref.namespace !== pvc.metadata.namespace) return false;
  return !ref.uid || ref.uid === pvc.metadata.uid;
}

/** volumeMode differs (unset counts as Filesystem on both sides). */
export function volumeModeMismatch(pvc: Obj, pv: Obj): boolean {
  return (pvc.spec?.volumeMode ?? 'Filesystem') !== (pv.spec?.volumeMode ?? 'Filesystem');
}

/** Every mode the claim asks for is among the PV's. */
export function accessModesFit(pvc: Obj, pv: Obj): boolean {
  const have = new Set<string>(pv.spec?.accessModes ?? []);
  return (pvc.spec?.accessModes ?? []).every((m: string) => have.has(m));
}

/** PV node affinity admits the node (no affinity admits every node). */
export function nodeAffinityAdmits(pv: Obj, node: Obj): boolean {
  const required = pv.spec?.nodeAffinity?.required;
  return !required || nodeSelectorMatches(required, node);
}

/** Why a PV the claim names by volumeName cannot be bound to it (checkVolumeSatisfyClaim), or undefined. */
export function volumeMismatch(pv: Obj, pvc: Obj): string | undefined {
  if (pv.metadata.deletionTimestamp) return `the volume is marked for deletion "${pv.metadata.name}"`;
  if (compareQuantity(storageOf(pv.spec?.capacity), storageOf(pvc.spec?.resources?.requests)) < 0)
    return 'requested PV is too small';
  if (volumeClass(pv) !== claimClass(pvc)) return 'storageClassName does not match';
  if (volumeModeMismatch(pvc, pv)) return 'incompatible volumeMode';
  if (!accessModesFit(pvc, pv)) return 'incompatible accessMode';
  return undefined;
}

/**
 * FindMatchingVolume over one access-mode group. `node` is the scheduler's
 * path (node affinity and access modes checked); without it, a delayed-binding
 * claim only takes a PV pre-bound to it.
 */
function findMatchingVolume(
  pvc: Obj,
  volumes: Obj[],
  node: Obj | undefined,
  delayBinding: boolean,
): Obj | undefined {
  const requested = storageOf(pvc.spec?.resources?.requests);
  const cls = claimClass(pvc);
  const selector = pvc.spec?.selector ? selectorFromObject(pvc.spec.selector) : null;
  let smallest: Obj | undefined;
  let smallestQty: Quantity | undefined;
  for (const pv of volumes) {
    if (pv.spec?.claimRef && !isVolumeBoundToClaim(pv, pvc)) continue;
    const qty = storageOf(pv.spec?.capacity);
    if (compareQuantity(qty, requested) < 0) continue;
    if (volumeModeMismatch(pvc, pv)) continue;
    if (pv.metadata.deletionTimestamp) continue;
    const affinityOK = !node || nodeAffinityAdmits(pv, node);
    if (isVolumeBoundToClaim(pv, pvc)) return affinityOK ? pv : undefined;
    if (!node && delayBinding) continue;
    if (pv.status?.phase !== 'Available') continue;
    if (selector && !selector.matches(pv.metadata.labels ?? {})) continue;
    if (volumeClass(pv) !== cls) continue;
    if (!affinityOK) continue;
    if (node && !accessModesFit(pvc, pv)) continue;
    if (!smallestQty || compareQuantity(smallestQty, qty) > 0) {
      smallest = pv;
      smallestQty = qty;
    }
  }
  return smallest;
}

const modesKey = (pv: Obj): string => [...new Set<string>(pv.spec?.accessModes ?? [])].sort().join(',');

/** findBestMatchForClaim: the groups of PVs whose modes hold every requested one, fewest modes first. */
export function findBestMatchForClaim(
  volumes: Obj[],
  pvc: Obj,
  delayBinding: boolean,
  node?: Obj,
): Obj | undefined {
  const groups = new Map<string, Obj[]>();
  for (const pv of volumes) {
    const k = modesKey(pv);
    let g = groups.get(k);
    if (!g) groups.set(k, (g = []));
    g.push(pv);
  }
  const wanted: string[] = pvc.spec?.accessModes ?? [];
  const candidates = [...groups.entries()]
    .map(([k, pvs]) => ({ modes: k ? k.split(',') : [], pvs }))
    .filter((g) => wanted.every((m) => g.modes.includes(m)))
    .sort((a, b) => a.modes.length - b.modes.length);
  for (const g of candidates) {
    const pv = findMatchingVolume(pvc, g.pvs, node, delayBinding);
    if (pv) return pv;
  }
  return undefined;
}
