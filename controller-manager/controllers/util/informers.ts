// Shared informers with the indexes the workload controllers look things up by.
import type { ControllerContext } from '../../controller';
import type { SharedIndexInformer } from '../../../shared/informers';
import type { Obj } from './base';
import { getControllerOf } from './controller-ref';

/** Objects by the uid of their controller (ownerReference with controller=true). */
export const CONTROLLER_UID_INDEX = 'workloads/controllerUID';
/** Pods by spec.nodeName ("" for unscheduled pods). */
export const NODE_NAME_INDEX = 'workloads/nodeName';

const controllerUID = (o: Obj): string[] => {
  const ref = getControllerOf(o);
  return ref ? [ref.uid] : [];
};

/** The shared informer of a resource with the controller-uid index. */
export function informerWithOwnerIndex(ctx: ControllerContext, resource: string): SharedIndexInformer<Obj> {
  return ctx.informers.forResource<Obj>(resource, { indexers: { [CONTROLLER_UID_INDEX]: controllerUID } });
}

/** The pods informer, indexed by controller uid and node name. */
export function podInformer(ctx: ControllerContext): SharedIndexInformer<Obj> {
  return ctx.informers.forResource<Obj>('pods', {
    indexers: {
      [CONTROLLER_UID_INDEX]: controllerUID,
      [NODE_NAME_INDEX]: (p: Obj) => [p.spec?.nodeName ?? ''],
    },
  });
}

/** Objects controlled by the object with this uid. */
export function ownedBy(inf: SharedIndexInformer<Obj>, uid: string | undefined): Obj[] {
  if (!uid) return [];
  return inf.indexer.byIndex(CONTROLLER_UID_INDEX, uid);
}
