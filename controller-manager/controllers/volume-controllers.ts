// Controllers of persistent storage: binding claims to volumes, the
// protection finalizers, the claims of generic ephemeral volumes, resizing, and the
// default class's local-path provisioner.
import type { ControllerDescriptor } from '../controller';
import { persistentVolumeBinderController } from './persistentvolume/binder';
import { pvProtectionController } from './pvprotection/pvprotection';
import { pvcProtectionController } from './pvcprotection/pvcprotection';
import { ephemeralVolumeController } from './ephemeral/ephemeral';
import { localPathProvisionerController } from './localpath/provisioner';
import { expandController } from './expand/expand';

export const volumeControllers: ControllerDescriptor[] = [
  persistentVolumeBinderController, // --pvclaimbinder-sync-period, --enable-dynamic-provisioning
  pvProtectionController,
  pvcProtectionController,
  ephemeralVolumeController, // --concurrent-ephemeralvolume-syncs
  expandController,
  localPathProvisionerController, // --local-path-base-dir (tkube's own)
];
