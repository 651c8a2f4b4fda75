// Controllers of persistent storage: binding claims to volumes, the
// protection finalizers, and the claims of generic ephemeral volumes.
import type { ControllerDescriptor } from '../controller';
import { persistentVolumeBinderController } from './persistentvolume/binder';
import { pvProtectionController } from './pvprotection/pvprotection';
import { pvcProtectionController } from './pvcprotection/pvcprotection';
import { ephemeralVolumeController } from './ephemeral/ephemeral';

export const volumeControllers: ControllerDescriptor[] = [
  persistentVolumeBinderController, // --pvclaimbinder-sync-period, --enable-dynamic-provisioning
  pvProtectionController,
  pvcProtectionController,
  ephemeralVolumeController, // --concurrent-ephemeralvolume-syncs
];
