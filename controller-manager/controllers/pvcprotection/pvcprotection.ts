// The pvc-protection controller (pkg/controller/volume/pvcprotection): a
// claim being deleted keeps the kubernetes.io/pvc-protection finalizer while
// a scheduled pod uses it — by a persistentVolumeClaim volume (whatever the
// pod's phase: the pod object must be gone), or by an ephemeral volume whose
// claim is this one, until that pod is shut down (deleted with grace 0). The
// informer's pods are asked first, then a live list, as the cache may lag.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { QueueController, keyOf, unwrap, type Obj } from '../util/base';
import { isControlledBy } from '../util/controller-ref';
import { POD_PVC_INDEX, PVC_PROTECTION_FINALIZER, podClaimKeys } from '../util/volumes';

const podIsShutDown = (pod: Obj) =>
  !!pod.metadata.deletionTimestamp && pod.metadata.deletionGracePeriodSeconds === 0;

/** podUsesPVC: only scheduled pods count (the node agent does not start a pod whose claim is being deleted). */
export function podUsesClaim(pod: Obj, pvc: Obj): boolean {
  if (!pod.spec?.nodeName) return false;
  for (const v of pod.spec.volumes ?? []) {
    if (v.persistentVolumeClaim?.claimName === pvc.metadata.name) return true;
    if (
      v.ephemeral &&
      !podIsShutDown(pod) &&
      `${pod.metadata.name}-${v.name}` === pvc.metadata.name &&
      isControlledBy(pvc, pod)
    )
      return true;
  }
  return false;
}

export class PVCProtectionController extends QueueController {
  private readonly pvcs: SharedIndexInformer<Obj>;
  private readonly pods: SharedIndexInformer<Obj>;

  constructor(ctx: ControllerContext) {
    super(ctx, { name: 'pvcprotection', workers: 1 });
    this.pvcs = ctx.informers.forResource<Obj>('persistentvolumeclaims');
    this.pods = ctx.informers.forResource<Obj>('pods', { indexers: { [POD_PVC_INDEX]: podClaimKeys } });
    const add = (pvc: KubeObject) => this.enqueue(keyOf(pvc));
    this.pvcs.addEventHandler({ onAdd: add, onUpdate: (_o, pvc) => add(pvc) });
    // A pod that goes (or changes) may free the claims it references.
    const podChanged = (pod: KubeObject) => {
      for (const key of podClaimKeys(pod))
        if (this.pvcs.lister().get(key)?.metadata.deletionTimestamp) this.enqueue(key);
    };
    this.pods.addEventHandler({
      onAdd: podChanged,
      onUpdate: (_o, pod) => podChanged(pod),
      onDelete: (o) => podChanged(unwrap(o)),
    });
    this.waitFor(this.pvcs, this.pods);
  }

  protected async sync(key: string): Promise<void> {
    const pvc = this.pvcs.lister().get(key);
    if (!pvc) return;
    const has = (pvc.metadata.finalizers ?? []).includes(PVC_PROTECTION_FINALIZER);
    if (!pvc.metadata.deletionTimestamp) {
      if (!has) await this.setFinalizer(pvc, true);
      return;
    }
    if (!has || (await this.isBeingUsed(pvc))) return;
    await this.setFinalizer(pvc, false);
  }

  private async isBeingUsed(pvc: Obj): Promise<boolean> {
    if (this.pods.indexer.byIndex(POD_PVC_INDEX, keyOf(pvc)).some((p) => podUsesClaim(p, pvc))) return true;
    const live = await this.ctx.client
      .resource('pods')
      .namespace(pvc.metadata.namespace!)
      .list({ signal: this.ctx.signal });
    return live.items.some((p) => podUsesClaim(p, pvc));
  }

  private async setFinalizer(pvc: Obj, on: boolean): Promise<void> {
    const rest = (pvc.metadata.finalizers ?? []).filter((f) => f !== PVC_PROTECTION_FINALIZER);
    const finalizers = on ? [...rest, PVC_PROTECTION_FINALIZER] : rest;
    try {
      await this.ctx.client
        .resource('persistentvolumeclaims')
        .namespace(pvc.metadata.namespace!)
        .update({ ...pvc, metadata: { ...pvc.metadata, finalizers } }, { signal: this.ctx.signal });
      this.log
        .v(3)
        ?.info(on ? 'Added protection finalizer to PVC' : 'Removed protection finalizer from PVC', {
          PVC: keyOf(pvc),
        });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

export const pvcProtectionController: ControllerDescriptor = {
  name: 'pvc-protection',
  aliases: ['persistentvolumeclaim-protection-controller'],
  start: (ctx) => void new PVCProtectionController(ctx).run(),
};
