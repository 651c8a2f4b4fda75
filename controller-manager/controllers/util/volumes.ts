// Facts about PersistentVolumes and claims the volume controllers share
// (k8s.io/component-helpers/storage/volume): annotations, class resolution,
// which pods use which claim.
import type { Obj } from './base';

export const ANN_BIND_COMPLETED = 'pv.kubernetes.io/bind-completed';
export const ANN_BOUND_BY_CONTROLLER = 'pv.kubernetes.io/bound-by-controller';
export const ANN_DYNAMICALLY_PROVISIONED = 'pv.kubernetes.io/provisioned-by';
export const ANN_STORAGE_PROVISIONER = 'volume.kubernetes.io/storage-provisioner';
export const ANN_BETA_STORAGE_PROVISIONER = 'volume.beta.kubernetes.io/storage-provisioner';
export const ANN_SELECTED_NODE = 'volume.kubernetes.io/selected-node';
export const ANN_MIGRATED_TO = 'pv.kubernetes.io/migrated-to';
export const ANN_BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';
export const ANN_IS_DEFAULT_CLASS = 'storageclass.kubernetes.io/is-default-class';
export const ANN_BETA_IS_DEFAULT_CLASS = 'storageclass.beta.kubernetes.io/is-default-class';

export const PVC_PROTECTION_FINALIZER = 'kubernetes.io/pvc-protection';
export const PV_PROTECTION_FINALIZER = 'kubernetes.io/pv-protection';

/** Pods by the "<namespace>/<claim>" keys of the claims they use (common.PodPVCIndex). */
export const POD_PVC_INDEX = 'pod-pvc-index';

export const hasAnnotation = (o: Obj, key: string): boolean => o.metadata.annotations?.[key] !== undefined;

/** spec.storageClassName when set (even ""), else the beta annotation, else "". */
export function claimClass(pvc: Obj): string {
  if (pvc.spec?.storageClassName !== undefined && pvc.spec?.storageClassName !== null)
    return pvc.spec.storageClassName;
  return pvc.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? '';
}

/** The class was named at all (spec or beta annotation), "" included. */
export function claimHasClass(pvc: Obj): boolean {
  return (
    (pvc.spec?.storageClassName !== undefined && pvc.spec?.storageClassName !== null) ||
    hasAnnotation(pvc, ANN_BETA_STORAGE_CLASS)
  );
}

export function volumeClass(pv: Obj): string {
  return pv.metadata.annotations?.[ANN_BETA_STORAGE_CLASS] ?? pv.spec?.storageClassName ?? '';
}

/** The default StorageClass: annotated "true" (the GA key wins over the beta one), the newest, then by name. */
export function defaultClass(classes: Obj[]): Obj | undefined {
  const isDefault = (c: Obj) => {
    const a = c.metadata.annotations ?? {};
    return (
      a[ANN_IS_DEFAULT_CLASS] === 'true' ||
      (a[ANN_IS_DEFAULT_CLASS] === undefined && a[ANN_BETA_IS_DEFAULT_CLASS] === 'true')
    );
  };
  let best: Obj | undefined;
  for (const c of classes.filter(isDefault)) {
    if (!best) {
      best = c;
      continue;
    }
    const d = Date.parse(c.metadata.creationTimestamp!) - Date.parse(best.metadata.creationTimestamp!);
    if (d > 0 || (d === 0 && c.metadata.name! < best.metadata.name!)) best = c;
  }
  return best;
}

/** The name of the claim a pod volume uses: its persistentVolumeClaim, or the ephemeral one's `<pod>-<volume>`. */
export function podVolumeClaimName(pod: Obj, volume: any): string | undefined {
  if (volume?.persistentVolumeClaim?.claimName) return volume.persistentVolumeClaim.claimName;
  if (volume?.ephemeral) return `${pod.metadata.name}-${volume.name}`;
  return undefined;
}

/** The index function of POD_PVC_INDEX: every claim the pod references (terminated pods too). */
export function podClaimKeys(pod: Obj): string[] {
  const keys: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    const name = podVolumeClaimName(pod, v);
    if (name) keys.push(`${pod.metadata.namespace}/${name}`);
  }
  return keys;
}
