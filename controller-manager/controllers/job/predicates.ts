// What the Job controller asks of a Job and its pods: tracked by the
// finalizer, Indexed, suspended, failed, finished.
import type { Obj } from '../util/base';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';

export const hasFinalizer = (p: Obj) => (p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
export const isIndexed = (job: Obj) => job.spec?.completionMode === 'Indexed';
export const isSuspended = (job: Obj) => job.spec?.suspend === true;

/** isPodFailed: Failed, or deleted before it succeeded. */
export function isPodFailed(p: Obj, job: Obj): boolean {
  if (p.status?.phase === 'Failed') return true;
  if (job.spec?.podFailurePolicy) return false;
  return !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded';
}

export function isJobFinished(job: Obj): { type: string } | undefined {
  return (job.status?.conditions ?? []).find(
    (c: any) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}
