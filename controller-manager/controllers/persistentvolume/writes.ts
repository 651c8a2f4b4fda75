// The binder's writes to the apiserver (spec through update, phase through the
// status subresource, as the real controller), each written object kept until
// the informer delivers it or a newer one: binding makes four writes in a row,
// and a sync must not act on the informer's older copy in between.
import type { ControllerContext } from '../../controller';
import type { Obj } from '../util/base';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';
import {
  ANN_BIND_COMPLETED,
  ANN_BOUND_BY_CONTROLLER,
  ANN_BETA_STORAGE_PROVISIONER,
  ANN_STORAGE_PROVISIONER,
  hasAnnotation,
} from '../util/volumes';
import { isVolumeBoundToClaim } from './matching';

/** resourceVersions are etcd revisions: decimal and increasing. */
function newer(a: Obj | undefined, b: Obj | undefined): Obj | undefined {
  if (!a || !b || a.metadata.uid !== b.metadata.uid) return b;
  try {
    return BigInt(a.metadata.resourceVersion ?? '0') > BigInt(b.metadata.resourceVersion ?? '0') ? a : b;
  } catch {
    return b;
  }
}

interface Events {
  event(obj: Obj, type: 'Normal' | 'Warning', reason: string, note: string): void;
}

export class BinderWrites {
  private readonly writtenVolumes = new Map<string, Obj>();
  private readonly writtenClaims = new Map<string, Obj>();
  private readonly pvs;
  private readonly pvcs;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly events: Events,
  ) {
    this.pvs = ctx.client.resource('persistentvolumes');
    this.pvcs = ctx.client.resource('persistentvolumeclaims');
  }

  newerVolume(fromInformer: Obj | undefined): Obj | undefined {
    if (!fromInformer) return undefined;
    const mine = this.writtenVolumes.get(fromInformer.metadata.name!);
    const n = newer(mine, fromInformer);
    if (mine && n !== mine) this.writtenVolumes.delete(fromInformer.metadata.name!);
    return n;
  }

  newerClaim(fromInformer: Obj | undefined): Obj | undefined {
    if (!fromInformer) return undefined;
    const key = `${fromInformer.metadata.namespace}/${fromInformer.metadata.name}`;
    const mine = this.writtenClaims.get(key);
    const n = newer(mine, fromInformer);
    if (mine && n !== mine) this.writtenClaims.delete(key);
    return n;
  }

  forgetVolume(name: string): void {
    this.writtenVolumes.delete(name);
  }

  forgetClaim(key: string): void {
    this.writtenClaims.delete(key);
  }

  private keepVolume(pv: Obj): Obj {
    this.writtenVolumes.set(pv.metadata.name!, pv);
    return pv;
  }

  private keepClaim(pvc: Obj): Obj {
    this.writtenClaims.set(`${pvc.metadata.namespace}/${pvc.metadata.name}`, pvc);
    return pvc;
  }

  private opts() {
    return { signal: this.ctx.signal };
  }

  async updateVolume(pv: Obj): Promise<Obj> {
    return this.keepVolume(await this.pvs.update(pv, this.opts()));
  }

  async updateClaim(pvc: Obj): Promise<Obj> {
    return this.keepClaim(await this.pvcs.namespace(pvc.metadata.namespace!).update(pvc, this.opts()));
  }

  /** status.phase (and message) of a PV, written only when it changes. */
  async updateVolumePhase(pv: Obj, phase: string, message = ''): Promise<Obj> {
    if (pv.status?.phase === phase) return pv;
    const clone = jsonClone(pv);
    clone.status = { ...(clone.status ?? {}), phase };
    if (message) clone.status.message = message;
    else delete clone.status.message;
    return this.keepVolume(await this.pvs.updateStatus(clone, this.opts()));
  }

  /** As updateVolumePhase, with an event when the phase changes. */
  async updateVolumePhaseWithEvent(
    pv: Obj,
    phase: string,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<Obj> {
    if (pv.status?.phase === phase) return pv;
    const updated = await this.updateVolumePhase(pv, phase, message);
    this.events.event(updated, type, reason, message);
    return updated;
  }

  /**
   * status of a claim: the phase; with a volume its access modes and, on the
   * transition only, its capacity (a differing size may be intended); without one neither.
   */
  async updateClaimStatus(pvc: Obj, phase: string, pv?: Obj): Promise<Obj> {
    const status = jsonClone(pvc.status ?? {});
    status.phase = phase;
    if (!pv) {
      delete status.accessModes;
      delete status.capacity;
    } else {
      status.accessModes = pv.spec?.accessModes;
      if (pvc.status?.phase !== phase) {
        if (pv.spec?.capacity?.storage === undefined)
          throw new Error(`PersistentVolume "${pv.metadata.name}" is without a storage capacity`);
        if (status.capacity?.storage !== pv.spec.capacity.storage) status.capacity = pv.spec.capacity;
      }
    }
    if (jsonEqual(status, pvc.status ?? {})) return pvc;
    const rc = this.pvcs.namespace(pvc.metadata.namespace!);
    return this.keepClaim(await rc.updateStatus({ ...jsonClone(pvc), status }, this.opts()));
  }

  /** As updateClaimStatus, with an event when the phase changes. */
  async updateClaimStatusWithEvent(
    pvc: Obj,
    phase: string,
    pv: Obj | undefined,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<Obj> {
    if (pvc.status?.phase === phase) return pvc;
    const updated = await this.updateClaimStatus(pvc, phase, pv);
    this.events.event(updated, type, reason, message);
    return updated;
  }

  /** PV.spec.claimRef to the claim (and bound-by-controller unless the user pre-bound it). */
  async bindVolumeToClaim(pv: Obj, pvc: Obj): Promise<Obj> {
    const clone = jsonClone(pv);
    let dirty = false;
    const ref = pv.spec?.claimRef;
    if (
      !ref ||
      ref.name !== pvc.metadata.name ||
      ref.namespace !== pvc.metadata.namespace ||
      ref.uid !== pvc.metadata.uid
    ) {
      clone.spec.claimRef = {
        kind: 'PersistentVolumeClaim',
        namespace: pvc.metadata.namespace,
        name: pvc.metadata.name,
        uid: pvc.metadata.uid,
        apiVersion: 'v1',
        resourceVersion: pvc.metadata.resourceVersion,
      };
      dirty = true;
    }
    if (!isVolumeBoundToClaim(pv, pvc) && !hasAnnotation(pv, ANN_BOUND_BY_CONTROLLER)) {
      clone.metadata.annotations = {
        ...(clone.metadata.annotations ?? {}),
        [ANN_BOUND_BY_CONTROLLER]: 'yes',
      };
      dirty = true;
    }
    return dirty ? this.updateVolume(clone) : pv;
  }

  /** PVC.spec.volumeName (bound-by-controller when the controller chose it) and bind-completed. */
  async bindClaimToVolume(pvc: Obj, pv: Obj): Promise<Obj> {
    const clone = jsonClone(pvc);
    const ann = (clone.metadata.annotations ??= {});
    let dirty = false;
    if (pvc.spec?.volumeName !== pv.metadata.name) {
      clone.spec.volumeName = pv.metadata.name;
      if (ann[ANN_BOUND_BY_CONTROLLER] === undefined) ann[ANN_BOUND_BY_CONTROLLER] = 'yes';
      dirty = true;
    }
    if (ann[ANN_BIND_COMPLETED] === undefined) {
      ann[ANN_BIND_COMPLETED] = 'yes';
      dirty = true;
    }
    return dirty ? this.updateClaim(clone) : pvc;
  }

  /** bind(): the volume first, then its phase, the claim, the claim's phase — each a write of its own, retried by the next sync. */
  async bind(pv: Obj, pvc: Obj): Promise<void> {
    pv = await this.bindVolumeToClaim(pv, pvc);
    pv = await this.updateVolumePhase(pv, 'Bound');
    pvc = await this.bindClaimToVolume(pvc, pv);
    await this.updateClaimStatus(pvc, 'Bound', pv);
  }

  /** Rolls a binding back: the controller's is removed, a user's pre-binding keeps its name without the uid. */
  async unbindVolume(pv: Obj): Promise<void> {
    const clone = jsonClone(pv);
    if (hasAnnotation(pv, ANN_BOUND_BY_CONTROLLER)) {
      delete clone.spec.claimRef;
      const ann = { ...(clone.metadata.annotations ?? {}) };
      delete ann[ANN_BOUND_BY_CONTROLLER];
      if (Object.keys(ann).length) clone.metadata.annotations = ann;
      else delete clone.metadata.annotations;
    } else {
      clone.spec.claimRef = { ...clone.spec.claimRef, uid: '' };
    }
    const updated = await this.updateVolume(clone);
    await this.updateVolumePhase(updated, 'Available');
  }

  /** Both storage-provisioner annotations on the claim, so the external provisioner picks it up. */
  async setClaimProvisioner(pvc: Obj, provisioner: string): Promise<Obj> {
    if (pvc.metadata.annotations?.[ANN_STORAGE_PROVISIONER] === provisioner) return pvc;
    const clone = jsonClone(pvc);
    clone.metadata.annotations = {
      ...(clone.metadata.annotations ?? {}),
      [ANN_BETA_STORAGE_PROVISIONER]: provisioner,
      [ANN_STORAGE_PROVISIONER]: provisioner,
    };
    return this.updateClaim(clone);
  }

  async getVolume(name: string): Promise<Obj> {
    return this.pvs.get(name, this.opts());
  }

  async getClaim(namespace: string, name: string): Promise<Obj> {
    return this.pvcs.namespace(namespace).get(name, this.opts());
  }

  async deleteVolume(pv: Obj): Promise<void> {
    await this.pvs.delete(pv.metadata.name!, {
      preconditions: { uid: pv.metadata.uid },
      signal: this.ctx.signal,
    });
  }
}
