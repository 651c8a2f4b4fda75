// One sync of one Job (syncJob): counts newly finished pods (uncounted first,
// then counted once their finalizer is gone), decides whether the Job is
// complete or failed, has its pods managed, and writes status and conditions.
import { rfc3339, type Obj } from '../util/base';
import { isPodActive, isPodReady } from '../util/pod';
import { updateStatus } from '../util/status';
import { pastActiveDeadline, pastBackoffLimitOnFailure, updateBackoff } from './backoff';
import { completionIndex, formatIndexes, parseIndexes } from './indexes';
import type { JobController } from './job';
import { deletePods, manageJob } from './pods';
import { hasFinalizer, isIndexed, isPodFailed, isSuspended } from './predicates';
import { jsonClone } from '../../../shared/api/json-value';

/** One sync of one Job (syncJob). */
export class JobSync {
  private status: any;
  readonly now: number;

  constructor(
    readonly c: JobController,
    readonly key: string,
    public job: Obj,
    private readonly pods: Obj[],
  ) {
    this.status = jsonClone(job.status ?? {});
    this.now = c.now();
  }

  async run(): Promise<void> {
    const { c, job, key } = this;
    const satisfied = c.expectations.satisfied(key);
    const activePods = this.pods.filter(isPodActive);
    const completions: number | undefined = job.spec?.completions ?? undefined;
    const uncounted = {
      succeeded: new Set<string>(this.status.uncountedTerminatedPods?.succeeded ?? []),
      failed: new Set<string>(this.status.uncountedTerminatedPods?.failed ?? []),
    };
    const pending = c.pendingFinalizerRemovals(key);
    const valid = (p: Obj) => {
      const uid = p.metadata.uid!;
      if (!hasFinalizer(p) || uncounted.succeeded.has(uid) || uncounted.failed.has(uid) || pending.has(uid))
        return false;
      if (isIndexed(job)) {
        const idx = completionIndex(p);
        if (idx < 0 || idx >= (completions ?? 0)) return false;
      }
      return true;
    };
    const newSucceeded = this.pods.filter((p) => valid(p) && p.status?.phase === 'Succeeded');
    const newFailed = this.pods.filter((p) => valid(p) && isPodFailed(p, job));
    updateBackoff(c, key, this.now, newSucceeded, newFailed);

    const succeededPods = (this.status.succeeded ?? 0) + uncounted.succeeded.size + newSucceeded.length;
    const failed = (this.status.failed ?? 0) + uncounted.failed.size + newFailed.length;
    let succeededIndexes: Set<number> | undefined;
    if (isIndexed(job)) {
      succeededIndexes = parseIndexes(this.status.completedIndexes, completions ?? 0);
      for (const p of this.pods) {
        if (p.status?.phase !== 'Succeeded') continue;
        const idx = completionIndex(p);
        if (
          idx >= 0 &&
          idx < (completions ?? 0) &&
          (uncounted.succeeded.has(p.metadata.uid!) || newSucceeded.includes(p))
        )
          succeededIndexes.add(idx);
      }
    }
    const succeeded = succeededIndexes ? succeededIndexes.size : succeededPods;
    let active = activePods.length;
    let ready = activePods.filter(isPodReady).length;

    if (!this.status.startTime && !isSuspended(job)) {
      this.status.startTime = rfc3339(this.now);
      const deadline = job.spec?.activeDeadlineSeconds;
      if (typeof deadline === 'number') c.enqueueAfter(key, deadline * 1000 + 10);
    }

    let finished: any;
    const backoffLimit: number = job.spec?.backoffLimit ?? 6;
    if (failed > backoffLimit || pastBackoffLimitOnFailure(this.job, activePods, backoffLimit)) {
      finished = this.condition(
        'Failed',
        'True',
        'BackoffLimitExceeded',
        'Job has reached the specified backoff limit',
      );
    } else if (pastActiveDeadline(this.job, this.status, this.now)) {
      finished = this.condition(
        'Failed',
        'True',
        'DeadlineExceeded',
        'Job was active longer than specified deadline',
      );
    }
    let manageErr: unknown;
    if (finished) {
      const deleted = await deletePods(this, activePods);
      if (deleted !== activePods.length || !satisfied) finished = undefined;
      active -= deleted;
      ready = 0;
    } else {
      if (satisfied && !job.metadata.deletionTimestamp) {
        try {
          active = await manageJob(this, activePods, succeeded, succeededIndexes);
        } catch (err) {
          manageErr = err;
        }
      }
      const complete =
        completions === undefined ? succeeded > 0 && active === 0 : succeeded >= completions && active === 0;
      if (complete)
        finished = this.condition(
          'Complete',
          'True',
          'CompletionsReached',
          'Reached expected number of succeeded pods',
        );
      else this.suspendConditions();
    }
    this.status.active = active;
    this.status.ready = Math.min(ready, active);
    if (succeededIndexes) this.status.completedIndexes = formatIndexes(succeededIndexes);

    // Record new finished pods as uncounted, then drop their finalizers and count them.
    for (const p of newSucceeded) uncounted.succeeded.add(p.metadata.uid!);
    for (const p of newFailed) uncounted.failed.add(p.metadata.uid!);
    this.status.uncountedTerminatedPods = uncountedOf(uncounted);
    if (newSucceeded.length || newFailed.length) await this.flush();

    const withFinalizer = new Map(this.pods.filter(hasFinalizer).map((p) => [p.metadata.uid!, p]));
    const toRemove = [...uncounted.succeeded, ...uncounted.failed]
      .map((uid) => withFinalizer.get(uid))
      .filter((p): p is Obj => !!p);
    const removed = await c.removeFinalizers(key, toRemove);
    for (const [set, field] of [
      [uncounted.succeeded, 'succeeded'],
      [uncounted.failed, 'failed'],
    ] as const) {
      for (const uid of [...set]) {
        if (withFinalizer.has(uid) && !removed.has(uid)) continue;
        set.delete(uid);
        this.status[field] = (this.status[field] ?? 0) + 1;
      }
    }
    this.status.uncountedTerminatedPods = uncountedOf(uncounted);
    if (this.status.succeeded === undefined) this.status.succeeded = 0;
    if (this.status.failed === undefined) this.status.failed = 0;

    // enactJobFinished: only once every finished pod is counted.
    let justFinished = false;
    if (finished && uncounted.succeeded.size + uncounted.failed.size === 0) {
      this.setCondition(finished);
      if (finished.type === 'Complete') this.status.completionTime = finished.lastTransitionTime;
      justFinished = true;
    }
    await this.flush();
    if (justFinished) {
      if (finished.type === 'Complete') {
        if (completions !== undefined && succeededPods > completions)
          c.api.recorder.event(
            job,
            'Warning',
            'TooManySucceededPods',
            'Sync',
            'Too many succeeded pods running after completion count reached',
          );
        c.api.recorder.event(job, 'Normal', 'Completed', 'Sync', 'Job completed');
      } else c.api.recorder.event(job, 'Warning', finished.reason, 'Sync', finished.message);
    } else if (finished) {
      // Pods still to be counted or deleted: look again soon.
      c.enqueueAfter(key, 100);
    }
    if (manageErr !== undefined) throw manageErr;
  }

  private async flush(): Promise<void> {
    const updated = await updateStatus(this.c.api.jobs, this.job, this.status);
    if (updated) this.job = updated;
  }

  private condition(type: string, status: string, reason: string, message: string): any {
    const t = rfc3339(this.now);
    return { type, status, lastProbeTime: t, lastTransitionTime: t, reason, message };
  }

  /** ensureJobConditionStatus. */
  private setCondition(cond: any): boolean {
    const list: any[] = this.status.conditions ?? [];
    const cur = list.find((c) => c.type === cond.type);
    if (cur) {
      if (cur.status === cond.status && cur.reason === cond.reason && cur.message === cond.message)
        return false;
      Object.assign(cur, cond);
      this.status.conditions = list;
      return true;
    }
    if (cond.status === 'False') return false;
    this.status.conditions = [...list, cond];
    return true;
  }

  private suspendConditions(): void {
    const { job, c } = this;
    if (isSuspended(job)) {
      if (this.setCondition(this.condition('Suspended', 'True', 'JobSuspended', 'Job suspended'))) {
        c.api.recorder.event(job, 'Normal', 'Suspended', 'Sync', 'Job suspended');
      }
      return;
    }
    const cur = (this.status.conditions ?? []).find((x: any) => x.type === 'Suspended');
    if (cur?.status === 'True') {
      this.setCondition(this.condition('Suspended', 'False', 'JobResumed', 'Job resumed'));
      // A resumed Job's active deadline counts from now.
      this.status.startTime = rfc3339(this.now);
      const deadline = job.spec?.activeDeadlineSeconds;
      if (typeof deadline === 'number') c.enqueueAfter(this.key, deadline * 1000 + 10);
      c.api.recorder.event(job, 'Normal', 'Resumed', 'Sync', 'Job resumed');
    }
  }
}

function uncountedOf(u: { succeeded: Set<string>; failed: Set<string> }): any {
  const out: any = {};
  if (u.succeeded.size) out.succeeded = [...u.succeeded];
  if (u.failed.size) out.failed = [...u.failed];
  return out;
}
