// Pod helpers of pkg/api/v1/pod and pkg/controller: readiness, availability,
// which pods count as active, pods made from templates, the order in which
// a controller scaling down deletes pods (ActivePodsWithRanks), and pod writes
// that leave events on their controller (RealPodControl).
import type { EventRecorderLike } from '../../controller';
import { featureGates } from '../../../shared/options/feature-gates';
import { isNotFound, type OwnerReference, type ResourceClient } from '../../../shared/client';
import { errMessage, parseTime, type Obj } from './base';
import { jsonClone } from '../../../shared/api/json-value';

export const POD_DELETION_COST = 'controller.kubernetes.io/pod-deletion-cost';

export function podCondition(pod: Obj, type: string): any {
  return (pod.status?.conditions ?? []).find((c: any) => c.type === type);
}

export function isPodReady(pod: Obj): boolean {
  return podCondition(pod, 'Ready')?.status === 'True';
}

/** When the pod last became Ready (undefined when not ready). */
export function podReadyTime(pod: Obj): number | undefined {
  const c = podCondition(pod, 'Ready');
  if (c?.status !== 'True') return undefined;
  return parseTime(c.lastTransitionTime);
}

/** Ready for at least minReadySeconds at now. */
export function isPodAvailable(pod: Obj, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (!minReadySeconds) return true;
  const since = podReadyTime(pod);
  return since !== undefined && since + minReadySeconds * 1000 <= now;
}

export function isPodTerminal(pod: Obj): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

/** controller.IsPodActive: not finished and not being deleted. */
export function isPodActive(pod: Obj): boolean {
  return !isPodTerminal(pod) && !pod.metadata.deletionTimestamp;
}

export function isPodTerminating(pod: Obj): boolean {
  return !isPodTerminal(pod) && !!pod.metadata.deletionTimestamp;
}

/** GetPodFromTemplate: a pod (to create with generateName) from a controller's template. */
export function podFromTemplate(
  template: any,
  parentName: string,
  ownerRef: OwnerReference | undefined,
): Obj {
  const t = jsonClone(template ?? {});
  const meta = t.metadata ?? {};
  const pod: Obj = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      generateName: `${parentName}-`,
      labels: { ...(meta.labels ?? {}) },
      annotations: { ...(meta.annotations ?? {}) },
    },
    spec: t.spec ?? {},
  };
  if (meta.finalizers?.length) pod.metadata.finalizers = [...meta.finalizers];
  if (ownerRef) pod.metadata.ownerReferences = [ownerRef];
  if (!Object.keys(pod.metadata.annotations!).length) delete pod.metadata.annotations;
  return pod;
}

function maxContainerRestarts(pod: Obj): number {
  let max = 0;
  for (const s of pod.status?.containerStatuses ?? []) max = Math.max(max, s.restartCount ?? 0);
  return max;
}

function deletionCost(pod: Obj): number {
  const v = pod.metadata.annotations?.[POD_DELETION_COST];
  if (v === undefined || !/^[-+]?\d+$/.test(v)) return 0;
  return Number(v);
}

const PHASE_ORDINAL: Record<string, number> = { Pending: 0, Unknown: 1, Running: 2 };

function logRank(t: number, now: number): number {
  const d = (now - t) * 1e6; // nanoseconds, like Go's Duration
  return d > 0 ? Math.floor(Math.log2(d)) : -1;
}

/** afterOrZero: t1 is zero, or after t2. */
function afterOrZero(t1: number | undefined, t2: number | undefined): boolean {
  if (t1 === undefined || t2 === undefined) return t1 === undefined;
  return t1 > t2;
}

/**
 * ActivePodsWithRanks.Less: true when a should be deleted before b.
 * rank = how many related pods share the pod's node (doubled-up pods go first).
 */
function lessForDeletion(a: Obj, b: Obj, rankA: number, rankB: number, now: number): boolean {
  const na = a.spec?.nodeName ?? '';
  const nb = b.spec?.nodeName ?? '';
  // 1. Unassigned < assigned
  if (na !== nb && (!na || !nb)) return !na;
  // 2. Pending < Unknown < Running
  const pa = PHASE_ORDINAL[a.status?.phase] ?? 0;
  const pb = PHASE_ORDINAL[b.status?.phase] ?? 0;
  if (pa !== pb) return pa < pb;
  // 3. Not ready < ready
  const ra = isPodReady(a);
  const rb = isPodReady(b);
  if (ra !== rb) return !ra;
  // 4. Lower deletion cost < higher
  if (featureGates.enabled('PodDeletionCost')) {
    const ca = deletionCost(a);
    const cb = deletionCost(b);
    if (ca !== cb) return ca < cb;
  }
  // 5. Doubled up < not doubled up
  if (rankA !== rankB) return rankA > rankB;
  const logScale = featureGates.enabled('LogarithmicScaleDown');
  // 6. Been ready for less time < more time
  if (ra && rb) {
    const ta = podReadyTime(a);
    const tb = podReadyTime(b);
    if (ta !== tb) {
      if (!logScale || ta === undefined || tb === undefined) return afterOrZero(ta, tb);
      const diff = logRank(ta, now) - logRank(tb, now);
      if (diff === 0) return (a.metadata.uid ?? '') < (b.metadata.uid ?? '');
      return diff < 0;
    }
  }
  // 7. Higher restart count < lower
  const rsa = maxContainerRestarts(a);
  const rsb = maxContainerRestarts(b);
  if (rsa !== rsb) return rsa > rsb;
  // 8. Newer < older
  const cta = parseTime(a.metadata.creationTimestamp);
  const ctb = parseTime(b.metadata.creationTimestamp);
  if (cta !== ctb) {
    if (!logScale || cta === undefined || ctb === undefined) return afterOrZero(cta, ctb);
    const diff = logRank(cta, now) - logRank(ctb, now);
    if (diff === 0) return (a.metadata.uid ?? '') < (b.metadata.uid ?? '');
    return diff < 0;
  }
  return false;
}

/**
 * getPodsToDelete: the `diff` pods to delete first, ranked by how many of
 * relatedPods share their node.
 */
export function podsToDelete(pods: Obj[], relatedPods: Obj[], diff: number, now: number): Obj[] {
  if (diff >= pods.length) return pods.slice();
  const perNode = new Map<string, number>();
  for (const p of relatedPods) {
    if (!isPodActive(p)) continue;
    const n = p.spec?.nodeName ?? '';
    if (n) perNode.set(n, (perNode.get(n) ?? 0) + 1);
  }
  const ranked = pods.map((p) => ({ p, rank: p.spec?.nodeName ? (perNode.get(p.spec.nodeName) ?? 0) : 0 }));
  ranked.sort((x, y) =>
    lessForDeletion(x.p, y.p, x.rank, y.rank, now)
      ? -1
      : lessForDeletion(y.p, x.p, y.rank, x.rank, now)
        ? 1
        : 0,
  );
  return ranked.slice(0, diff).map((r) => r.p);
}

/** RealPodControl: creates and deletes a controller's pods, recording the outcome as events on the controller. */
export class PodControl {
  constructor(
    private readonly pods: ResourceClient<Obj>,
    private readonly recorder: EventRecorderLike,
  ) {}

  async createPod(owner: Obj, pod: Obj): Promise<Obj> {
    try {
      const created = await this.pods.namespace(owner.metadata.namespace!).create(pod);
      this.recorder.event(
        owner,
        'Normal',
        'SuccessfulCreate',
        'Create',
        `Created pod: ${created.metadata.name}`,
      );
      return created;
    } catch (err) {
      this.recorder.event(owner, 'Warning', 'FailedCreate', 'Create', `Error creating: ${errMessage(err)}`);
      throw err;
    }
  }

  /** Deletes the pod; a NotFound is thrown without an event (the pod is gone anyway). */
  async deletePod(owner: Obj, pod: Obj): Promise<void> {
    try {
      await this.pods.namespace(pod.metadata.namespace!).delete(pod.metadata.name!);
      this.recorder.event(owner, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted pod: ${pod.metadata.name}`);
    } catch (err) {
      if (!isNotFound(err))
        this.recorder.event(owner, 'Warning', 'FailedDelete', 'Delete', `Error deleting: ${errMessage(err)}`);
      throw err;
    }
  }
}
