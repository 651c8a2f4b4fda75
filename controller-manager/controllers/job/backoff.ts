// When failed pods hold a Job back or fail it: the exponential backoff before
// new pods after failures, backoffLimit counted in container restarts for
// OnFailure pods, and activeDeadlineSeconds.
import { parseTime, type Obj } from '../util/base';
import type { JobController } from './job';
import { isSuspended } from './predicates';

/** DefaultJobPodFailureBackOff / MaxJobPodFailureBackOff. */
export const DEFAULT_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 360_000;

export interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureTime?: number;
}

/** When the pod finished: its last container end, else its deletion, else undefined. */
function finishTime(p: Obj): number | undefined {
  let t: number | undefined;
  for (const s of [...(p.status?.containerStatuses ?? []), ...(p.status?.initContainerStatuses ?? [])]) {
    const f = parseTime(s.state?.terminated?.finishedAt);
    if (f !== undefined && (t === undefined || f > t)) t = f;
  }
  return t ?? parseTime(p.metadata.deletionTimestamp);
}

export function pastActiveDeadline(job: Obj, status: any, now: number): boolean {
  const deadline = job.spec?.activeDeadlineSeconds;
  const start = parseTime(status.startTime);
  if (typeof deadline !== 'number' || start === undefined || isSuspended(job)) return false;
  return now - start >= deadline * 1000;
}

/** pastBackoffLimitOnFailure: restarts of OnFailure pods count against backoffLimit. */
export function pastBackoffLimitOnFailure(job: Obj, active: Obj[], limit: number): boolean {
  if (job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
  let restarts = 0;
  for (const p of active) {
    if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
    for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])])
      restarts += s.restartCount ?? 0;
  }
  return limit === 0 ? restarts > 0 : restarts >= limit;
}

/** newBackoffRecord: failures since the last success and when the last one happened. */
export function updateBackoff(
  c: JobController,
  key: string,
  now: number,
  succeeded: Obj[],
  failed: Obj[],
): void {
  const old = c.backoffRecord(key);
  if (!succeeded.length && !failed.length) return;
  const t = (p: Obj) => finishTime(p) ?? now;
  if (!succeeded.length) {
    const last = Math.max(...failed.map(t));
    c.setBackoffRecord(key, {
      failuresAfterLastSuccess: old.failuresAfterLastSuccess + failed.length,
      lastFailureTime: Math.max(last, old.lastFailureTime ?? 0),
    });
    return;
  }
  const lastSuccess = Math.max(...succeeded.map(t));
  const after = failed.filter((p) => t(p) > lastSuccess);
  c.setBackoffRecord(key, {
    failuresAfterLastSuccess: after.length,
    lastFailureTime: after.length ? Math.max(...after.map(t)) : old.lastFailureTime,
  });
}
