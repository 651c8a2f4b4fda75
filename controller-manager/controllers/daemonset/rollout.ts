// Rolling updates of a DaemonSet over ControllerRevisions: which pods are of
// the current revision, how many may be unavailable or surged at once, which
// old pods go (and which nodes get a new pod first), and old revisions pruned
// to revisionHistoryLimit.
import { isNotFound, type ResourceClient } from '../../../shared/client';
import { featureGates } from '../../../shared/options/feature-gates';
import type { Obj } from '../util/base';
import { CONTROLLER_REVISION_HASH, REVISION_HASH_LABEL, sortRevisions } from '../util/history';
import { scaledValue } from '../util/intstr';
import { isPodAvailable } from '../util/pod';
import { nodeShouldRunDaemonPod } from './node-selection';
import type { DaemonPods } from './pods';

export const TEMPLATE_GENERATION_LABEL = 'pod-template-generation';
const TEMPLATE_GENERATION_ANNOTATION = 'deprecated.daemonset.template.generation';

export function templateGeneration(ds: Obj): string | undefined {
  return ds.metadata.annotations?.[TEMPLATE_GENERATION_ANNOTATION];
}

export function isPodUpdated(pod: Obj, hash: string, generation: string | undefined): boolean {
  const labels = pod.metadata.labels ?? {};
  return (
    (!!hash && labels[CONTROLLER_REVISION_HASH] === hash) ||
    (!!generation && labels[TEMPLATE_GENERATION_LABEL] === generation)
  );
}

export function maxSurgeAndUnavailable(ds: Obj, nodes: Obj[]): { surge: number; unavailable: number } {
  let desired = 0;
  for (const n of nodes) if (nodeShouldRunDaemonPod(n, ds).shouldRun) desired++;
  const ru = ds.spec?.updateStrategy?.rollingUpdate ?? {};
  const unavailable0 = scaledValue(ru.maxUnavailable ?? 1, desired, true);
  const surge = featureGates.enabled('DaemonSetUpdateSurge')
    ? scaledValue(ru.maxSurge ?? 0, desired, true)
    : 0;
  const unavailable = surge === 0 && unavailable0 === 0 ? 1 : unavailable0;
  return { surge, unavailable };
}

/** findUpdatedPodsOnNode: at most one updated and one old pod (ok=false otherwise). */
function podsOnNode(
  pods: Obj[],
  hash: string,
  gen: string | undefined,
): { newPod?: Obj; oldPod?: Obj; ok: boolean } {
  let newPod: Obj | undefined;
  let oldPod: Obj | undefined;
  for (const p of pods) {
    if (p.metadata.deletionTimestamp) continue;
    if (isPodUpdated(p, hash, gen)) {
      if (newPod) return { ok: false };
      newPod = p;
    } else {
      if (oldPod) return { ok: false };
      oldPod = p;
    }
  }
  return { newPod, oldPod, ok: true };
}

export async function rollingUpdate(
  daemonPods: DaemonPods,
  ds: Obj,
  nodes: Obj[],
  byNode: Map<string, Obj[]>,
  hash: string,
  now: number,
): Promise<void> {
  const { surge, unavailable } = maxSurgeAndUnavailable(ds, nodes);
  const min = ds.spec?.minReadySeconds ?? 0;
  const gen = templateGeneration(ds);
  const available = (p: Obj) => isPodAvailable(p, min, now);
  if (surge === 0) {
    let numUnavailable = 0;
    const allowed: Obj[] = [];
    const candidates: Obj[] = [];
    for (const node of nodes) {
      const name = node.metadata.name!;
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun && !byNode.has(name)) continue;
      const { newPod, oldPod, ok } = podsOnNode(byNode.get(name) ?? [], hash, gen);
      if (!ok) {
        numUnavailable++;
        continue;
      }
      if (!oldPod) {
        if (!newPod || !available(newPod)) numUnavailable++;
      } else if (newPod) {
        if (!available(newPod)) numUnavailable++;
      } else if (!available(oldPod)) allowed.push(oldPod);
      else if (numUnavailable >= unavailable) continue;
      else candidates.push(oldPod);
    }
    let remaining = Math.max(0, unavailable - numUnavailable);
    remaining = Math.min(remaining, candidates.length);
    await daemonPods.syncNodes(ds, [...allowed, ...candidates.slice(0, remaining)], [], hash);
    return;
  }
  let numSurge = 0;
  const allowedNew: string[] = [];
  const candidateNew: string[] = [];
  const oldToDelete: Obj[] = [];
  for (const node of nodes) {
    const name = node.metadata.name!;
    const { newPod, oldPod, ok } = podsOnNode(byNode.get(name) ?? [], hash, gen);
    if (!ok || !oldPod) continue;
    if (!newPod) {
      if (!nodeShouldRunDaemonPod(node, ds).shouldRun) continue;
      if (!available(oldPod)) allowedNew.push(name);
      else if (numSurge >= surge) continue;
      else candidateNew.push(name);
    } else {
      if (!available(newPod)) {
        numSurge++;
        continue;
      }
      oldToDelete.push(oldPod);
    }
  }
  const remaining = Math.min(Math.max(0, surge - numSurge), candidateNew.length);
  await daemonPods.syncNodes(ds, oldToDelete, [...allowedNew, ...candidateNew.slice(0, remaining)], hash);
}

export async function cleanupHistory(
  revClient: ResourceClient<Obj>,
  ds: Obj,
  pods: Obj[],
  revisions: Obj[],
  current: Obj,
): Promise<void> {
  const live = new Set<string>([current.metadata.labels?.[REVISION_HASH_LABEL] ?? '']);
  for (const p of pods) live.add(p.metadata.labels?.[CONTROLLER_REVISION_HASH] ?? '');
  const history = sortRevisions(revisions).filter(
    (r) =>
      r.metadata.name !== current.metadata.name && !live.has(r.metadata.labels?.[REVISION_HASH_LABEL] ?? ''),
  );
  const excess = history.length - (ds.spec?.revisionHistoryLimit ?? 10);
  for (let i = 0; i < excess; i++) {
    try {
      await revClient.namespace(ds.metadata.namespace!).delete(history[i].metadata.name!);
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }
}
