// The kubelet's active deadline handler (pkg/kubelet/active_deadline.go): a
// pod whose spec.activeDeadlineSeconds has passed since its start time is
// evicted — phase Failed, reason DeadlineExceeded, its containers killed. The
// field is read from the pod as it is now, so an update made while the pod
// runs counts as much as the value it was created with.

/** Why the pod failed, in the kubelet's words. */
export const DEADLINE_EXCEEDED = {
  reason: 'DeadlineExceeded',
  message: 'Pod was active on the node longer than the specified deadline',
} as const;

/** When the pod's active deadline passes (ms since the epoch); undefined without one or without a start. */
export function activeDeadlineAt(pod: any, startTime: number | undefined): number | undefined {
  const seconds = pod.spec?.activeDeadlineSeconds;
  if (seconds === undefined || seconds === null || startTime === undefined) return undefined;
  return startTime + Number(seconds) * 1000;
}
