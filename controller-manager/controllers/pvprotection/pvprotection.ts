// The pv-protection controller (pkg/controller/volume/pvprotection): a PV
// keeps the kubernetes.io/pv-protection finalizer while it is Bound; once it
// is being deleted and no longer Bound the finalizer goes. A PV without the
// finalizer (made before the admission plugin ran) gets it.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { QueueController, unwrap, type Obj } from '../util/base';
import { PV_PROTECTION_FINALIZER } from '../util/volumes';

export class PVProtectionController extends QueueController {
  private readonly pvs: SharedIndexInformer<Obj>;

  constructor(ctx: ControllerContext) {
    super(ctx, { name: 'pvprotection', workers: 1 });
    this.pvs = ctx.informers.forResource<Obj>('persistentvolumes');
    const add = (pv: KubeObject) => this.enqueue(pv.metadata.name!);
    this.pvs.addEventHandler({ onAdd: add, onUpdate: (_o, pv) => add(pv), onDelete: (o) => add(unwrap(o)) });
    this.waitFor(this.pvs);
  }

  protected async sync(name: string): Promise<void> {
    const pv = this.pvs.lister().get(name);
    if (!pv) return;
    const has = (pv.metadata.finalizers ?? []).includes(PV_PROTECTION_FINALIZER);
    if (pv.metadata.deletionTimestamp) {
      if (has && pv.status?.phase !== 'Bound') await this.setFinalizer(pv, false);
    } else if (!has) await this.setFinalizer(pv, true);
  }

  private async setFinalizer(pv: Obj, on: boolean): Promise<void> {
    const rest = (pv.metadata.finalizers ?? []).filter((f) => f !== PV_PROTECTION_FINALIZER);
    const finalizers = on ? [...rest, PV_PROTECTION_FINALIZER] : rest;
    try {
      await this.ctx.client
        .resource('persistentvolumes')
        .update({ ...pv, metadata: { ...pv.metadata, finalizers } }, { signal: this.ctx.signal });
      this.log.v(3)?.info(on ? 'Added protection finalizer to PV' : 'Removed protection finalizer from PV', {
        PV: pv.metadata.name,
      });
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}

export const pvProtectionController: ControllerDescriptor = {
  name: 'pv-protection',
  aliases: ['persistentvolume-protection-controller'],
  start: (ctx) => void new PVProtectionController(ctx).run(),
};
