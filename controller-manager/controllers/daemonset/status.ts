// DaemonSet status: per eligible node whether its (oldest) pod is scheduled,
// ready, available and updated, and pods on nodes that should not run one.
import type { Obj } from '../util/base';
import { isPodAvailable, isPodReady } from '../util/pod';
import { nodeShouldRunDaemonPod } from './node-selection';
import { byCreation } from './pods';
import { isPodUpdated, templateGeneration } from './rollout';

export function daemonSetStatus(
  ds: Obj,
  nodes: Obj[],
  byNode: Map<string, Obj[]>,
  hash: string,
  now: number,
): { status: any; ready: number; available: number } {
  const min = ds.spec?.minReadySeconds ?? 0;
  const gen = templateGeneration(ds);
  let desired = 0;
  let current = 0;
  let misscheduled = 0;
  let ready = 0;
  let available = 0;
  let updated = 0;
  for (const node of nodes) {
    const { shouldRun } = nodeShouldRunDaemonPod(node, ds);
    const pods = byNode.get(node.metadata.name!) ?? [];
    const scheduled = pods.length > 0;
    if (shouldRun) {
      desired++;
      if (!scheduled) continue;
      current++;
      const pod = [...pods].sort(byCreation)[0];
      if (isPodReady(pod)) {
        ready++;
        if (isPodAvailable(pod, min, now)) available++;
      }
      if (isPodUpdated(pod, hash, gen)) updated++;
    } else if (scheduled) misscheduled++;
  }
  const status: any = {
    ...(ds.status ?? {}),
    desiredNumberScheduled: desired,
    currentNumberScheduled: current,
    numberMisscheduled: misscheduled,
    numberReady: ready,
    updatedNumberScheduled: updated,
    numberAvailable: available,
    numberUnavailable: desired - available,
    observedGeneration: ds.metadata.generation,
  };
  if (!status.numberAvailable) delete status.numberAvailable;
  if (!status.numberUnavailable) delete status.numberUnavailable;
  if (!status.updatedNumberScheduled) delete status.updatedNumberScheduled;
  return { status, ready, available };
}
