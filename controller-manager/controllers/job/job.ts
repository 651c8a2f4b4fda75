// The Job controller (pkg/controller/job): runs pods until spec.completions
// succeed (or one does, without completions), parallelism at a time, NonIndexed
// or Indexed (completion index annotation and label, hostname, env); counts
// finished pods through the batch.kubernetes.io/job-tracking finalizer and
// status.uncountedTerminatedPods so no pod is counted twice or lost; waits an
// exponential backoff after failures, fails the Job past backoffLimit or
// activeDeadlineSeconds, and handles suspend.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import {
  QueueController,
  clone,
  errMessage,
  getLatest,
  intOption,
  keyOf,
  parseTime,
  rfc3339,
  slowStartBatch,
  splitKey,
  unwrap,
  type Obj,
} from '../util/base';
import { UIDTrackingExpectations } from '../util/expectations';
import {
  claimObjects,
  controllerRef,
  getControllerOf,
  resolveControllerRef,
  selectorOf,
} from '../util/controller-ref';
import { CONTROLLER_UID_INDEX, podInformer } from '../util/informers';
import { PodControl, isPodActive, isPodReady, podFromTemplate, podsToDelete } from '../util/pod';
import { updateStatus } from '../util/status';
import { COMPLETION_INDEX, completionIndex, formatIndexes, parseIndexes } from './indexes';

export const JOB_TRACKING_FINALIZER = 'batch.kubernetes.io/job-tracking';
/** DefaultJobPodFailureBackOff / MaxJobPodFailureBackOff. */
export const DEFAULT_BACKOFF_MS = 10_000;
export const MAX_BACKOFF_MS = 360_000;
const MAX_PODS_PER_SYNC = 500;

export interface JobControllerOptions {
  workers?: number;
  /** Base of the pod failure backoff (tests shorten it). */
  backoffMs?: number;
  maxBackoffMs?: number;
}

interface BackoffRecord {
  failuresAfterLastSuccess: number;
  lastFailureTime?: number;
}

const hasFinalizer = (p: Obj) => (p.metadata.finalizers ?? []).includes(JOB_TRACKING_FINALIZER);
const isIndexed = (job: Obj) => job.spec?.completionMode === 'Indexed';
const isSuspended = (job: Obj) => job.spec?.suspend === true;

/** isPodFailed: Failed, or deleted before it succeeded. */
function isPodFailed(p: Obj, job: Obj): boolean {
  if (p.status?.phase === 'Failed') return true;
  if (job.spec?.podFailurePolicy) return false;
  return !!p.metadata.deletionTimestamp && p.status?.phase !== 'Succeeded';
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

export function isJobFinished(job: Obj): { type: string } | undefined {
  return (job.status?.conditions ?? []).find(
    (c: any) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  );
}

export class JobController extends QueueController {
  readonly expectations = new UIDTrackingExpectations();
  /** Pod uids whose finalizer removal was sent but not yet seen, per job key. */
  private readonly rmFinalizers = new Map<string, Set<string>>();
  private readonly backoff = new Map<string, BackoffRecord>();
  private readonly jobInformer: SharedIndexInformer<Obj>;
  private readonly podInformer: SharedIndexInformer<Obj>;
  private readonly jobClient: ResourceClient<Obj>;
  private readonly podClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;
  private readonly backoffMs: number;
  private readonly maxBackoffMs: number;

  constructor(ctx: ControllerContext, o: JobControllerOptions = {}) {
    super(ctx, { name: 'job', workers: o.workers ?? intOption(ctx, 'concurrentJobSyncs', 5) });
    this.backoffMs = o.backoffMs ?? DEFAULT_BACKOFF_MS;
    this.maxBackoffMs = o.maxBackoffMs ?? MAX_BACKOFF_MS;
    this.jobInformer = ctx.informers.forResource<Obj>('jobs.batch');
    this.podInformer = podInformer(ctx);
    this.jobClient = ctx.client.resource<Obj>('jobs.batch');
    this.podClient = ctx.client.resource<Obj>('pods');
    this.recorder = ctx.recorder('job-controller');
    this.waitFor(this.jobInformer, this.podInformer);

    this.jobInformer.addEventHandler({
      onAdd: (job) => this.jobChanged(job),
      onUpdate: (_old, job) => this.jobChanged(job),
      onDelete: (obj) => {
        const job = unwrap(obj);
        const key = keyOf(job);
        this.expectations.delete(key);
        this.rmFinalizers.delete(key);
        this.backoff.delete(key);
        // Its pods must not keep the finalizer.
        for (const p of this.podInformer.indexer.byIndex(CONTROLLER_UID_INDEX, job.metadata.uid ?? ''))
          if (hasFinalizer(p)) this.enqueue(`pod:${keyOf(p)}`);
      },
    });
    this.podInformer.addEventHandler({
      onAdd: (pod) => {
        if (pod.metadata.deletionTimestamp) return this.podDeleted(pod, false);
        const job = this.resolve(pod);
        if (job) {
          this.expectations.creationObserved(keyOf(job));
          this.enqueue(keyOf(job));
        } else if (hasFinalizer(pod) && getControllerOf(pod)?.kind === 'Job')
          this.enqueue(`pod:${keyOf(pod)}`);
      },
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        const job = this.resolve(cur);
        if (job && hasFinalizer(old) && !hasFinalizer(cur))
          this.rmFinalizers.get(keyOf(job))?.delete(cur.metadata.uid!);
        if (cur.metadata.deletionTimestamp) return this.podDeleted(cur, false);
        if (job) this.enqueue(keyOf(job));
        else if (hasFinalizer(cur) && getControllerOf(cur)?.kind === 'Job') this.enqueue(`pod:${keyOf(cur)}`);
        const oldJob = this.resolve(old);
        if (oldJob && oldJob !== job) this.enqueue(keyOf(oldJob));
      },
      onDelete: (obj) => this.podDeleted(unwrap(obj), true),
    });
  }

  private jobChanged(job: Obj): void {
    const key = keyOf(job);
    this.enqueue(key);
    // Wake up at the active deadline.
    const start = parseTime(job.status?.startTime);
    const deadline = job.spec?.activeDeadlineSeconds;
    if (start !== undefined && typeof deadline === 'number' && !isJobFinished(job)) {
      this.enqueueAfter(key, Math.max(0, start + deadline * 1000 - this.ctx.now()) + 10);
    }
  }

  private resolve(pod: Obj): Obj | undefined {
    return resolveControllerRef(this.jobInformer, 'Job', pod);
  }

  private podDeleted(pod: Obj, gone: boolean): void {
    const job = this.resolve(pod);
    if (!job) {
      if (!gone && hasFinalizer(pod) && getControllerOf(pod)?.kind === 'Job')
        this.enqueue(`pod:${keyOf(pod)}`);
      return;
    }
    const key = keyOf(job);
    this.expectations.deletionObservedOf(key, keyOf(pod));
    if (gone) this.rmFinalizers.get(key)?.delete(pod.metadata.uid!);
    this.enqueue(key);
  }

  protected async sync(key: string): Promise<void> {
    if (key.startsWith('pod:')) return this.syncOrphanPod(key.slice(4));
    const cached = this.jobInformer.indexer.getByKey(key);
    if (!cached) {
      this.expectations.delete(key);
      this.rmFinalizers.delete(key);
      this.backoff.delete(key);
      return;
    }
    const job = clone(cached);
    const sel = selectorOf(job);
    if (!sel || sel.empty) return;
    const [ns] = splitKey(key);
    const pods = await claimObjects(this.podInformer.lister().namespace(ns).list(), {
      owner: job,
      apiVersion: 'batch/v1',
      kind: 'Job',
      matches: (p) => sel.matches(p.metadata.labels),
      client: this.podClient,
      fresh: () => getLatest(this.jobClient, job),
    });
    if (isJobFinished(job)) {
      // A finished Job keeps no finalizers on its pods.
      await this.removeFinalizers(key, pods.filter(hasFinalizer));
      return;
    }
    await new JobSync(this, key, job, pods).run();
  }

  /** A pod with the tracking finalizer whose Job is gone. */
  private async syncOrphanPod(podKey: string): Promise<void> {
    const pod = this.podInformer.indexer.getByKey(podKey);
    if (!pod || !hasFinalizer(pod)) return;
    if (this.resolve(pod)) return;
    await this.removeFinalizers('', [pod]);
  }

  // ---- what JobSync uses ---------------------------------------------------------

  /** Removes the tracking finalizer; returns the uids done (pods gone count as done). */
  async removeFinalizers(key: string, pods: Obj[]): Promise<Set<string>> {
    const done = new Set<string>();
    if (key) {
      let set = this.rmFinalizers.get(key);
      if (!set) this.rmFinalizers.set(key, (set = new Set()));
      for (const p of pods) set.add(p.metadata.uid!);
    }
    const errors: unknown[] = [];
    await Promise.all(
      pods.map(async (p) => {
        try {
          await this.podClient
            .namespace(p.metadata.namespace!)
            .patch(
              p.metadata.name!,
              { metadata: { [`$deleteFromPrimitiveList/finalizers`]: [JOB_TRACKING_FINALIZER] } },
              'strategic',
            );
          done.add(p.metadata.uid!);
        } catch (err) {
          if (key) this.rmFinalizers.get(key)?.delete(p.metadata.uid!);
          if (isNotFound(err)) done.add(p.metadata.uid!);
          else errors.push(err);
        }
      }),
    );
    if (errors.length)
      this.log.warn('removing tracking finalizers failed', { key, err: errMessage(errors[0]) });
    return done;
  }

  pendingFinalizerRemovals(key: string): Set<string> {
    return this.rmFinalizers.get(key) ?? new Set();
  }

  backoffRecord(key: string): BackoffRecord {
    return this.backoff.get(key) ?? { failuresAfterLastSuccess: 0 };
  }

  setBackoffRecord(key: string, r: BackoffRecord): void {
    this.backoff.set(key, r);
  }

  /** getRemainingTime of the backoff record. */
  backoffRemaining(r: BackoffRecord): number {
    if (r.failuresAfterLastSuccess === 0 || r.lastFailureTime === undefined) return 0;
    const d = Math.min(this.backoffMs * Math.pow(2, r.failuresAfterLastSuccess - 1), this.maxBackoffMs);
    const elapsed = this.ctx.now() - r.lastFailureTime;
    return d > elapsed ? d - elapsed : 0;
  }

  get api() {
    return {
      jobs: this.jobClient,
      pods: this.podClient,
      podControl: new PodControl(this.podClient, this.recorder),
      recorder: this.recorder,
    };
  }

  now(): number {
    return this.ctx.now();
  }
}

/** One sync of one Job (syncJob). */
class JobSync {
  private status: any;
  private readonly now: number;

  constructor(
    private readonly c: JobController,
    private readonly key: string,
    private job: Obj,
    private readonly pods: Obj[],
  ) {
    this.status = clone(job.status ?? {});
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
    this.updateBackoff(newSucceeded, newFailed);

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
    if (failed > backoffLimit || this.pastBackoffLimitOnFailure(activePods, backoffLimit)) {
      finished = this.condition(
        'Failed',
        'True',
        'BackoffLimitExceeded',
        'Job has reached the specified backoff limit',
      );
    } else if (this.pastActiveDeadline()) {
      finished = this.condition(
        'Failed',
        'True',
        'DeadlineExceeded',
        'Job was active longer than specified deadline',
      );
    }
    let manageErr: unknown;
    if (finished) {
      const deleted = await this.deletePods(activePods);
      if (deleted !== activePods.length || !satisfied) finished = undefined;
      active -= deleted;
      ready = 0;
    } else {
      if (satisfied && !job.metadata.deletionTimestamp) {
        try {
          active = await this.manage(activePods, succeeded, succeededIndexes);
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

  private pastActiveDeadline(): boolean {
    const deadline = this.job.spec?.activeDeadlineSeconds;
    const start = parseTime(this.status.startTime);
    if (typeof deadline !== 'number' || start === undefined || isSuspended(this.job)) return false;
    return this.now - start >= deadline * 1000;
  }

  private pastBackoffLimitOnFailure(active: Obj[], limit: number): boolean {
    if (this.job.spec?.template?.spec?.restartPolicy !== 'OnFailure') return false;
    let restarts = 0;
    for (const p of active) {
      if (p.status?.phase !== 'Running' && p.status?.phase !== 'Pending') continue;
      for (const s of [...(p.status?.initContainerStatuses ?? []), ...(p.status?.containerStatuses ?? [])])
        restarts += s.restartCount ?? 0;
    }
    return limit === 0 ? restarts > 0 : restarts >= limit;
  }

  /** newBackoffRecord: failures since the last success and when the last one happened. */
  private updateBackoff(succeeded: Obj[], failed: Obj[]): void {
    const old = this.c.backoffRecord(this.key);
    if (!succeeded.length && !failed.length) return;
    const t = (p: Obj) => finishTime(p) ?? this.now;
    if (!succeeded.length) {
      const last = Math.max(...failed.map(t));
      this.c.setBackoffRecord(this.key, {
        failuresAfterLastSuccess: old.failuresAfterLastSuccess + failed.length,
        lastFailureTime: Math.max(last, old.lastFailureTime ?? 0),
      });
      return;
    }
    const lastSuccess = Math.max(...succeeded.map(t));
    const after = failed.filter((p) => t(p) > lastSuccess);
    this.c.setBackoffRecord(this.key, {
      failuresAfterLastSuccess: after.length,
      lastFailureTime: after.length ? Math.max(...after.map(t)) : old.lastFailureTime,
    });
  }

  /** deleteJobPods: drops the finalizer first, so pods the controller removes are not counted as failed. */
  private async deletePods(pods: Obj[]): Promise<number> {
    if (!pods.length) return 0;
    const { c, job, key } = this;
    c.expectations.expectDeletionsOf(key, pods.map(keyOf));
    let deleted = 0;
    await Promise.all(
      pods.map(async (p) => {
        try {
          if (hasFinalizer(p)) {
            const done = await c.removeFinalizers(key, [p]);
            if (!done.has(p.metadata.uid!))
              throw new Error(`removing the tracking finalizer of ${p.metadata.name} failed`);
          }
          await c.api.pods.namespace(p.metadata.namespace!).delete(p.metadata.name!);
          deleted++;
          c.api.recorder.event(
            job,
            'Normal',
            'SuccessfulDelete',
            'Delete',
            `Deleted pod: ${p.metadata.name}`,
          );
        } catch (err) {
          c.expectations.deletionObservedOf(key, keyOf(p));
          if (isNotFound(err)) {
            deleted++;
            return;
          }
          c.api.recorder.event(
            job,
            'Warning',
            'FailedDelete',
            'Delete',
            `Error deleting: ${errMessage(err)}`,
          );
        }
      }),
    );
    return deleted;
  }

  /** manageJob: creates or deletes pods towards the wanted number of active ones; returns active. */
  private async manage(
    activePods: Obj[],
    succeeded: number,
    succeededIndexes?: Set<number>,
  ): Promise<number> {
    const { c, job, key } = this;
    let active = activePods.length;
    if (isSuspended(job)) return active - (await this.deletePods(activePods));
    const parallelism: number = job.spec?.parallelism ?? 1;
    const completions: number | undefined = job.spec?.completions ?? undefined;
    let want: number;
    if (completions === undefined) want = succeeded > 0 ? active : parallelism;
    else want = Math.max(0, Math.min(completions - succeeded, parallelism));

    // Pods to remove: excess, and for Indexed Jobs repeated, finished or invalid indexes.
    const rm: Obj[] = [];
    let left = activePods;
    if (isIndexed(job)) {
      const seen = new Set<number>();
      left = [];
      for (const p of activePods) {
        const idx = completionIndex(p);
        if (idx < 0 || idx >= (completions ?? 0) || seen.has(idx) || succeededIndexes?.has(idx)) rm.push(p);
        else {
          seen.add(idx);
          left.push(p);
        }
      }
    }
    const rmAtLeast = Math.max(0, active - want);
    if (rm.length < rmAtLeast) rm.push(...podsToDelete(left, [], rmAtLeast - rm.length, this.now));
    if (rm.length) {
      return active - (await this.deletePods(rm.slice(0, MAX_PODS_PER_SYNC)));
    }
    let diff = want - active;
    if (diff <= 0) return active;
    const remaining = c.backoffRemaining(c.backoffRecord(key));
    if (remaining > 0) {
      c.enqueueAfter(key, remaining);
      return active;
    }
    diff = Math.min(diff, MAX_PODS_PER_SYNC);
    let indexes: number[] = [];
    if (isIndexed(job)) {
      const busy = new Set(left.map(completionIndex));
      for (let i = 0; i < (completions ?? 0) && indexes.length < diff; i++)
        if (!busy.has(i) && !succeededIndexes?.has(i)) indexes.push(i);
      diff = indexes.length;
      if (!diff) return active;
    }
    c.expectations.expectCreations(key, diff);
    const ref = controllerRef(job, 'batch/v1', 'Job');
    indexes = [...indexes];
    const { successes, error } = await slowStartBatch(diff, 1, async () => {
      const pod = podFromTemplate(job.spec.template, job.metadata.name!, ref);
      pod.metadata.finalizers = [...new Set([...(pod.metadata.finalizers ?? []), JOB_TRACKING_FINALIZER])];
      if (isIndexed(job)) {
        const idx = indexes.shift()!;
        pod.metadata.annotations = { ...(pod.metadata.annotations ?? {}), [COMPLETION_INDEX]: String(idx) };
        pod.metadata.labels = { ...(pod.metadata.labels ?? {}), [COMPLETION_INDEX]: String(idx) };
        pod.metadata.generateName = `${job.metadata.name}-${idx}-`;
        pod.spec.hostname = `${job.metadata.name}-${idx}`;
        addCompletionIndexEnv(pod.spec);
      }
      await c.api.podControl.createPod(job, pod);
    });
    for (let i = successes; i < diff; i++) c.expectations.creationObserved(key);
    active += successes;
    if (error !== undefined) throw error;
    return active;
  }
}

function uncountedOf(u: { succeeded: Set<string>; failed: Set<string> }): any {
  const out: any = {};
  if (u.succeeded.size) out.succeeded = [...u.succeeded];
  if (u.failed.size) out.failed = [...u.failed];
  return out;
}

/** addCompletionIndexEnvVariables: JOB_COMPLETION_INDEX from the pod's annotation. */
function addCompletionIndexEnv(spec: any): void {
  const env = {
    name: 'JOB_COMPLETION_INDEX',
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${COMPLETION_INDEX}']` } },
  };
  for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])]) {
    if ((c.env ?? []).some((e: any) => e.name === env.name)) continue;
    c.env = [...(c.env ?? []), clone(env)];
  }
}

/** A descriptor with options (tests shorten the backoff). */
export function jobControllerWith(o: JobControllerOptions = {}): ControllerDescriptor {
  return {
    name: 'job',
    start(ctx) {
      void new JobController(ctx, o).run();
    },
  };
}

export const jobController: ControllerDescriptor = jobControllerWith();
