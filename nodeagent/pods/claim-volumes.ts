// A pod's persistentVolumeClaim (and generic ephemeral) volumes resolved as
// the kubelet's desired-state populator does: the claim must be Bound (and
// not being deleted, and an ephemeral one the pod's own), its PV bound back
// to it; the PV's hostPath or local path is what gets mounted. Other PV types
// need plugins (CSI, network filesystems) this node agent does not have.
import type { PodObjects } from './pod-objects';

/** A volume the pod cannot have yet (claim unbound, PV missing): kubelet's "failed to process volumes". */
export class VolumeProcessingError extends Error {}

export interface ClaimVolume {
  /** The PV's name (the kubelet's volume spec name). */
  volumeName: string;
  kind: 'hostPath' | 'local';
  path: string;
  /** hostPath.type, for the kubelet's type check. */
  hostPathType?: string;
  /** The pod's persistentVolumeClaim.readOnly. */
  readOnly: boolean;
}

/** The claim a pod volume uses: persistentVolumeClaim.claimName, or an ephemeral volume's `<pod>-<volume>`. */
export function podVolumeClaim(pod: any, vol: any): string | undefined {
  if (vol.persistentVolumeClaim) return vol.persistentVolumeClaim.claimName;
  if (vol.ephemeral) return `${pod.metadata.name}-${vol.name}`;
  return undefined;
}

const errText = (err: unknown) => (err instanceof Error ? err.message : String(err));

/** The PV behind a claim volume of the pod; throws VolumeProcessingError with the kubelet's texts. */
export async function resolveClaimVolume(pod: any, vol: any, objects: PodObjects): Promise<ClaimVolume> {
  const ns: string = pod.metadata.namespace;
  const claimName = podVolumeClaim(pod, vol)!;
  const fail = (msg: string) => new VolumeProcessingError(`error processing PVC ${ns}/${claimName}: ${msg}`);
  let pvc: any;
  try {
    pvc = await objects.claim(ns, claimName);
  } catch (err) {
    throw fail(`failed to fetch PVC from API server: ${errText(err)}`);
  }
  if (pvc.metadata.deletionTimestamp) throw fail('PVC is being deleted');
  if (pvc.status?.phase !== 'Bound') throw fail('PVC is not bound');
  const pvName: string | undefined = pvc.spec?.volumeName;
  if (!pvName) throw fail('PVC has empty pvc.Spec.VolumeName');
  // ephemeral.VolumeIsForPod, once the claim is known to be bound.
  if (vol.ephemeral && !isControlledByPod(pvc, pod))
    throw new VolumeProcessingError(
      `PVC ${ns}/${claimName} was not created for pod ${ns}/${pod.metadata.name} (pod is not owner)`,
    );
  let pv: any;
  try {
    pv = await objects.persistentVolume(pvName);
  } catch (err) {
    throw fail(`failed to fetch PV ${pvName} from API server: ${errText(err)}`);
  }
  const ref = pv.spec?.claimRef;
  if (!ref)
    throw fail(
      `found PV object ${pvName} but it has a nil pv.Spec.ClaimRef indicating it is not yet bound to the claim`,
    );
  if (ref.uid !== pvc.metadata.uid)
    throw fail(
      `found PV object ${pvName} but its pv.Spec.ClaimRef.UID ${ref.uid} does not point to claim.UID ${pvc.metadata.uid}`,
    );
  const readOnly = !!vol.persistentVolumeClaim?.readOnly;
  if (pv.spec.hostPath)
    return {
      volumeName: pvName,
      kind: 'hostPath',
      path: pv.spec.hostPath.path,
      hostPathType: pv.spec.hostPath.type,
      readOnly,
    };
  if (pv.spec.local) return { volumeName: pvName, kind: 'local', path: pv.spec.local.path, readOnly };
  throw new Error(
    `PersistentVolume ${pvName}: volume type not supported by this node (it mounts hostPath and local volumes only)`,
  );
}

function isControlledByPod(pvc: any, pod: any): boolean {
  return (pvc.metadata.ownerReferences ?? []).some((r: any) => r.controller && r.uid === pod.metadata.uid);
}
