// PersistentVolumeClaimResize (plugin/pkg/admission/storage/persistentvolume/resize):
// a claim's storage request may grow only once it is bound and only when its
// class (unchanged, not "") sets allowVolumeExpansion: true.
import { compareQuantity, parseQuantity } from '../../../shared/api/validation/quantity';
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, Lister } from './util';

const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

/** GetPersistentVolumeClaimClass: the beta annotation first, then spec.storageClassName. */
function claimClass(pvc: any): string {
  return pvc?.metadata?.annotations?.[BETA_STORAGE_CLASS] ?? pvc?.spec?.storageClassName ?? '';
}

const storageRequest = (pvc: any) => pvc?.spec?.resources?.requests?.storage;

export class PersistentVolumeClaimResize implements AdmissionPlugin {
  readonly name = 'PersistentVolumeClaimResize';
  private readonly classes: Lister;
  constructor(registry: () => Registry) {
    this.classes = new Lister(registry, 'storage.k8s.io', 'storageclasses');
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (
      a.group !== '' ||
      a.resource !== 'persistentvolumeclaims' ||
      a.subresource ||
      a.operation !== 'UPDATE'
    )
      return;
    const oldSize = storageRequest(a.oldObject);
    const newSize = storageRequest(a.object);
    if (newSize === undefined) return;
    if (
      oldSize !== undefined &&
      compareQuantity(parseQuantity(String(newSize)), parseQuantity(String(oldSize))) <= 0
    )
      return;
    if (a.oldObject?.status?.phase !== 'Bound')
      throw admissionForbidden(a, 'Only bound persistent volume claims can be expanded');
    if (!(await this.allowResize(a.object, a.oldObject)))
      throw admissionForbidden(
        a,
        'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize',
      );
  }

  private async allowResize(pvc: any, old: any): Promise<boolean> {
    const cls = claimClass(pvc);
    if (!cls || cls !== claimClass(old)) return false;
    const sc = await this.classes.get('', cls);
    return sc?.allowVolumeExpansion === true;
  }
}
