// Which nodes a DaemonSet's pods belong on (NodeShouldRunDaemonPod: nodeName,
// node selector and affinity, taints against the pod's tolerations plus the
// ones every daemon pod gets), and how a pod is tied to its node.
import { type Obj } from '../util/base';
import { findUntoleratedTaint, podMatchesNodeSelectorAndAffinity } from '../../../shared/api/scheduling';
import {
  TAINT_DISK_PRESSURE,
  TAINT_MEMORY_PRESSURE,
  TAINT_NETWORK_UNAVAILABLE,
  TAINT_NOT_READY,
  TAINT_PID_PRESSURE,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  type Taint,
  type Toleration,
} from '../../../shared/api/taints';
import { jsonClone } from '../../../shared/api/json-value';

/** The tolerations every daemon pod gets (AddOrUpdateDaemonPodTolerations). */
export function daemonPodTolerations(spec: any): Toleration[] {
  const out: Toleration[] = [
    { key: TAINT_NOT_READY, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_UNREACHABLE, operator: 'Exists', effect: 'NoExecute' },
    { key: TAINT_DISK_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_MEMORY_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_PID_PRESSURE, operator: 'Exists', effect: 'NoSchedule' },
    { key: TAINT_UNSCHEDULABLE, operator: 'Exists', effect: 'NoSchedule' },
  ];
  if (spec?.hostNetwork)
    out.push({ key: TAINT_NETWORK_UNAVAILABLE, operator: 'Exists', effect: 'NoSchedule' });
  return out;
}

export function withDaemonTolerations(spec: any): any {
  const tolerations: Toleration[] = [...(spec?.tolerations ?? [])];
  for (const t of daemonPodTolerations(spec)) {
    const i = tolerations.findIndex(
      (x) => x.key === t.key && x.effect === t.effect && (x.operator ?? 'Equal') === t.operator,
    );
    if (i >= 0) tolerations[i] = t;
    else tolerations.push(t);
  }
  return { ...spec, tolerations };
}

/** NodeShouldRunDaemonPod: should a daemon pod be started there, and may a running one stay. */
export function nodeShouldRunDaemonPod(
  node: Obj,
  ds: Obj,
): { shouldRun: boolean; shouldContinueRunning: boolean } {
  const spec = withDaemonTolerations(ds.spec?.template?.spec ?? {});
  if (spec.nodeName && spec.nodeName !== node.metadata.name)
    return { shouldRun: false, shouldContinueRunning: false };
  if (!podMatchesNodeSelectorAndAffinity(spec, node))
    return { shouldRun: false, shouldContinueRunning: false };
  const taints: Taint[] = node.spec?.taints ?? [];
  if (findUntoleratedTaint(taints, spec.tolerations, ['NoSchedule', 'NoExecute'])) {
    // Running daemon pods stay unless a NoExecute taint evicts them.
    return {
      shouldRun: false,
      shouldContinueRunning: !findUntoleratedTaint(taints, spec.tolerations, ['NoExecute']),
    };
  }
  return { shouldRun: true, shouldContinueRunning: true };
}

/** ReplaceDaemonSetPodNodeNameNodeAffinity: require exactly this node. */
export function pinToNode(affinity: any, nodeName: string): any {
  const selector = {
    nodeSelectorTerms: [{ matchFields: [{ key: 'metadata.name', operator: 'In', values: [nodeName] }] }],
  };
  const a = jsonClone(affinity ?? {});
  a.nodeAffinity = { ...(a.nodeAffinity ?? {}), requiredDuringSchedulingIgnoredDuringExecution: selector };
  return a;
}

/** GetTargetNodeName: spec.nodeName, or the node the affinity pins the pod to. */
export function targetNodeName(pod: Obj): string | undefined {
  if (pod.spec?.nodeName) return pod.spec.nodeName;
  const terms =
    pod.spec?.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.nodeSelectorTerms ?? [];
  for (const t of terms)
    for (const f of t.matchFields ?? [])
      if (f.key === 'metadata.name' && f.operator === 'In' && f.values?.length === 1) return f.values[0];
  return undefined;
}
