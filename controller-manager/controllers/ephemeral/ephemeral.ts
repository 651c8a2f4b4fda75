// The ephemeral-volume controller (pkg/controller/volume/ephemeral): each
// `ephemeral` volume of a pod gets the claim `<pod>-<volume>` made from its
// volumeClaimTemplate (labels, annotations, spec) and controlled by the pod,
// so the garbage collector deletes it with the pod. A claim of that name the
// pod does not control is left alone: the pod cannot start, an event says why.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import type { KubeObject } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { QueueController, errMessage, intOption, keyOf, unwrap, type Obj } from '../util/base';
import { controllerRef, getControllerOf, isControlledBy } from '../util/controller-ref';

export class EphemeralVolumeController extends QueueController {
  private readonly pods: SharedIndexInformer<Obj>;
  private readonly pvcs: SharedIndexInformer<Obj>;
  private readonly recorder;

  constructor(ctx: ControllerContext) {
    super(ctx, { name: 'ephemeral_volume', workers: intOption(ctx, 'concurrentEphemeralvolumeSyncs', 5) });
    this.recorder = ctx.recorder('ephemeral_volume');
    this.pods = ctx.informers.forResource<Obj>('pods');
    this.pvcs = ctx.informers.forResource<Obj>('persistentvolumeclaims');
    const podAdded = (pod: KubeObject) => {
      if (!pod.metadata.deletionTimestamp && (pod.spec?.volumes ?? []).some((v: any) => v.ephemeral))
        this.enqueue(keyOf(pod));
    };
    this.pods.addEventHandler({ onAdd: podAdded, onUpdate: (_o, pod) => podAdded(pod) });
    // A claim deleted while its pod lives is made again.
    this.pvcs.addEventHandler({
      onDelete: (o) => {
        const pvc = unwrap(o);
        const owner = getControllerOf(pvc);
        if (owner?.kind === 'Pod') this.enqueue(`${pvc.metadata.namespace}/${owner.name}`);
      },
    });
    this.waitFor(this.pods, this.pvcs);
  }

  protected async sync(key: string): Promise<void> {
    const pod = this.pods.lister().get(key);
    if (!pod || pod.metadata.deletionTimestamp) return;
    for (const v of pod.spec?.volumes ?? []) {
      if (!v.ephemeral) continue;
      try {
        await this.handleVolume(pod, v);
      } catch (err) {
        this.recorder.event(
          pod,
          'Warning',
          'FailedBinding',
          'FailedBinding',
          `ephemeral volume ${v.name}: ${errMessage(err)}`,
        );
        throw new Error(`pod ${key}, ephemeral volume ${v.name}: ${errMessage(err)}`, { cause: err });
      }
    }
  }

  private async handleVolume(pod: Obj, v: any): Promise<void> {
    const name = `${pod.metadata.name}-${v.name}`;
    const ns = pod.metadata.namespace!;
    const existing = this.pvcs.lister().get(`${ns}/${name}`);
    if (existing) {
      if (!isControlledBy(existing, pod))
        throw new Error(
          `PVC ${ns}/${name} was not created for pod ${ns}/${pod.metadata.name} (pod is not owner)`,
        );
      return;
    }
    const template = v.ephemeral.volumeClaimTemplate ?? {};
    const pvc = {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: {
        name,
        namespace: ns,
        ownerReferences: [controllerRef(pod, 'v1', 'Pod')],
        ...(template.metadata?.annotations ? { annotations: template.metadata.annotations } : {}),
        ...(template.metadata?.labels ? { labels: template.metadata.labels } : {}),
      },
      spec: template.spec,
    };
    try {
      await this.ctx.client
        .resource('persistentvolumeclaims')
        .namespace(ns)
        .create(pvc, { signal: this.ctx.signal });
    } catch (err) {
      throw new Error(`create PVC ${name}: ${errMessage(err)}`, { cause: err });
    }
  }
}

export const ephemeralVolumeController: ControllerDescriptor = {
  name: 'ephemeral-volume',
  aliases: ['ephemeral-volume-controller'],
  start: (ctx) => void new EphemeralVolumeController(ctx).run(),
};
