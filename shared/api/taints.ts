// Node taints and pod tolerations (v1.Taint, v1.Toleration and their
// methods), and the taint keys Kubernetes itself puts on nodes
// (k8s.io/api/core/v1 well_known_taints.go).

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute' | string;
  timeAdded?: string;
}

export interface Toleration {
  key?: string;
  operator?: 'Exists' | 'Equal' | string;
  value?: string;
  effect?: string;
  tolerationSeconds?: number | bigint | null;
}

export const TAINT_NOT_READY = 'node.kubernetes.io/not-ready';
export const TAINT_UNREACHABLE = 'node.kubernetes.io/unreachable';
export const TAINT_UNSCHEDULABLE = 'node.kubernetes.io/unschedulable';
export const TAINT_OUT_OF_SERVICE = 'node.kubernetes.io/out-of-service';
export const TAINT_MEMORY_PRESSURE = 'node.kubernetes.io/memory-pressure';
export const TAINT_DISK_PRESSURE = 'node.kubernetes.io/disk-pressure';
export const TAINT_NETWORK_UNAVAILABLE = 'node.kubernetes.io/network-unavailable';
export const TAINT_PID_PRESSURE = 'node.kubernetes.io/pid-pressure';

/** Taint.MatchTaint: the same key and effect (the value does not matter). */
export const matchTaint = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;

/** Toleration.ToleratesTaint. */
export function toleratesTaint(t: Toleration, taint: Taint): boolean {
  if (t.effect && t.effect !== taint.effect) return false;
  // An empty key with Exists tolerates every taint.
  if (t.key && t.key !== taint.key) return false;
  switch (t.operator ?? 'Equal') {
    case 'Exists':
      return true;
    case 'Equal':
    case '':
      return (t.value ?? '') === (taint.value ?? '');
    default:
      return false;
  }
}

/** v1helper.TolerationsTolerateTaint: any of the tolerations tolerates the taint. */
export function tolerationsTolerateTaint(tolerations: Toleration[] | undefined, taint: Taint): boolean {
  return (tolerations ?? []).some((t) => toleratesTaint(t, taint));
}
