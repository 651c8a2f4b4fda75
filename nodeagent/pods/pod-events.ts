// Events about a pod and its containers, recorded on the pod as the API knows
// it (a static pod's events go to its mirror pod's uid), with the container's
// fieldPath as the kubelet sets it.
import type { EventRecorder, ObjectReference } from '../../shared/events';
import type { MirrorPods } from './mirrors';
import type { PodRecord } from './records';
import type { ContainerKind } from './runtime';

export class PodEvents {
  constructor(
    private readonly recorder: EventRecorder,
    private readonly mirrors: MirrorPods,
  ) {}

  private ref(rec: PodRecord): ObjectReference {
    const md = rec.pod.metadata;
    const mirror = rec.source === 'api' ? undefined : this.mirrors.of(rec);
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: md.namespace,
      name: md.name,
      uid: mirror?.metadata.uid ?? md.uid,
    };
  }

  /** An event on the pod, or on container `c` of it when given. */
  emit(
    rec: PodRecord,
    c: any,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
    kind: ContainerKind = 'regular',
  ): void {
    const ref = this.ref(rec);
    if (c?.name)
      ref.fieldPath = kind === 'init' ? `spec.initContainers{${c.name}}` : `spec.containers{${c.name}}`;
    this.recorder.eventf(ref, null, type, reason, action, '%s', note);
  }
}
