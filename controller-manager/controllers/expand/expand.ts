// The persistentvolume-expander (pkg/controller/volume/expand, with the
// resize flow of RecoverVolumeExpansionFailure, GA 1.34): a bound claim whose
// storage request grew past its capacity is resized. tkube's volumes are
// hostPath and local directories, which have no size to grow and need no
// node step, so a resize goes as a controller-only expansion does: the claim
// is marked in progress (Resizing condition, allocatedResources and
// allocatedResourceStatuses ControllerResizeInProgress), the PV's capacity
// set, then the claim's capacity, the condition and the status cleared
// (VolumeResizeSuccessful). Any other volume type is an external resizer's
// (ExternalExpanding), as Kubernetes does for a volume no in-tree plugin
// expands. The PersistentVolumeClaimResize admission plugin decides which
// claims may grow (allowVolumeExpansion).
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isConflict, isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { compareQuantity, parseQuantity } from '../../../shared/api/validation/quantity';
import { jsonClone } from '../../../shared/api/json-value';
import { QueueController, keyOf, rfc3339, type Obj } from '../util/base';

const RESIZE_IN_PROGRESS = 'ControllerResizeInProgress';
const RESIZE_CONDITIONS = new Set(['Resizing', 'FileSystemResizePending']);

const storage = (list: any): string | undefined => list?.storage;

/** a > b as quantities (an absent b is smaller than anything). */
function greater(a: string | undefined, b: string | undefined): boolean {
  if (a === undefined) return false;
  if (b === undefined) return true;
  return compareQuantity(parseQuantity(String(a)), parseQuantity(String(b))) > 0;
}

export class ExpandController extends QueueController {
  private readonly claims: SharedIndexInformer<Obj>;
  private readonly volumes: SharedIndexInformer<Obj>;
  private readonly pvcClient: ResourceClient<Obj>;
  private readonly pvClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;
  /** "<uid>/<size>" of claims already told an external resizer must act (one event per request). */
  private readonly external = new Set<string>();

  constructor(ctx: ControllerContext) {
    super(ctx, { name: 'volume_expand', workers: 1 });
    this.claims = ctx.informers.forResource<Obj>('persistentvolumeclaims');
    this.volumes = ctx.informers.forResource<Obj>('persistentvolumes');
    this.pvcClient = ctx.client.resource<Obj>('persistentvolumeclaims');
    this.pvClient = ctx.client.resource<Obj>('persistentvolumes');
    this.recorder = ctx.recorder('volume_expand');
    this.waitFor(this.claims, this.volumes);
    const claimChanged = (pvc: Obj) => {
      if (this.needsResize(pvc)) this.enqueue(keyOf(pvc));
    };
    this.claims.addEventHandler({ onAdd: claimChanged, onUpdate: (_o, pvc) => claimChanged(pvc) });
  }

  /** Bound, and asking for more than it has. */
  private needsResize(pvc: Obj): boolean {
    if (pvc.status?.phase !== 'Bound' || !pvc.spec?.volumeName) return false;
    return greater(storage(pvc.spec?.resources?.requests), storage(pvc.status?.capacity));
  }

  protected async sync(key: string): Promise<void> {
    const pvc = this.claims.lister().get(key);
    if (!pvc || !this.needsResize(pvc)) return;
    const pv = this.volumes.lister().get(pvc.spec!.volumeName);
    if (!pv || pv.spec?.claimRef?.uid !== pvc.metadata.uid) return;
    const size = storage(pvc.spec!.resources.requests)!;
    if (!pv.spec.hostPath && !pv.spec.local) {
      const once = `${pvc.metadata.uid}/${size}`;
      if (!this.external.has(once)) {
        this.external.add(once);
        this.event(
          pvc,
          'Normal',
          'ExternalExpanding',
          'waiting for an external controller to expand this PVC',
        );
      }
      return;
    }
    try {
      const marked = await this.markResizeInProgress(pvc, size);
      if (greater(size, storage(pv.spec.capacity))) {
        const grown = jsonClone(pv);
        grown.spec.capacity = { ...(grown.spec.capacity ?? {}), storage: size };
        await this.pvClient.update(grown);
      }
      await this.markResizeFinished(marked, size);
    } catch (err) {
      // A newer copy is on its way through the informer; its sync does the work.
      if (isConflict(err) || isNotFound(err)) return;
      this.event(
        pvc,
        'Warning',
        'VolumeResizeFailed',
        `resize volume ${pv.metadata.name} failed: ${String(err)}`,
      );
      throw err;
    }
    this.event(
      pvc,
      'Normal',
      'VolumeResizeSuccessful',
      `ExpandVolume succeeded for volume ${pvc.metadata.namespace}/${pvc.metadata.name}`,
    );
  }

  /** The Resizing condition, allocatedResources and ControllerResizeInProgress. */
  private async markResizeInProgress(pvc: Obj, size: string): Promise<Obj> {
    const status = jsonClone(pvc.status ?? {});
    status.allocatedResources = { ...(status.allocatedResources ?? {}), storage: size };
    status.allocatedResourceStatuses = {
      ...(status.allocatedResourceStatuses ?? {}),
      storage: RESIZE_IN_PROGRESS,
    };
    const others = (status.conditions ?? []).filter((c: any) => c.type !== 'Resizing');
    status.conditions = [
      ...others,
      { type: 'Resizing', status: 'True', lastProbeTime: null, lastTransitionTime: rfc3339(this.ctx.now()) },
    ];
    return this.pvcClient
      .namespace(pvc.metadata.namespace!)
      .updateStatus({ ...jsonClone(pvc), status } as Obj);
  }

  /** The new capacity, the resize conditions and the storage's resize status gone. */
  private async markResizeFinished(pvc: Obj, size: string): Promise<void> {
    const status = jsonClone(pvc.status ?? {});
    status.capacity = { ...(status.capacity ?? {}), storage: size };
    const conditions = (status.conditions ?? []).filter((c: any) => !RESIZE_CONDITIONS.has(c.type));
    if (conditions.length) status.conditions = conditions;
    else delete status.conditions;
    const statuses = { ...(status.allocatedResourceStatuses ?? {}) };
    delete statuses.storage;
    if (Object.keys(statuses).length) status.allocatedResourceStatuses = statuses;
    else delete status.allocatedResourceStatuses;
    await this.pvcClient
      .namespace(pvc.metadata.namespace!)
      .updateStatus({ ...jsonClone(pvc), status } as Obj);
  }

  private event(o: Obj, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.recorder.event(o, type, reason, reason, note);
  }
}

export const expandController: ControllerDescriptor = {
  name: 'persistentvolume-expander',
  aliases: ['persistentvolume-expander-controller'],
  start(ctx) {
    void new ExpandController(ctx).run();
  },
};
