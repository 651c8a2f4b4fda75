// The CronJob controller (pkg/controller/cronjob, v2): creates the Job of each
// scheduled time (named <cronjob>-<scheduled time in minutes>, so a time is
// never run twice), honours concurrencyPolicy Allow / Forbid / Replace,
// startingDeadlineSeconds, suspend and the time zone (spec.timeZone when the
// CronJobTimeZone gate allows, or CRON_TZ= in the schedule), keeps
// status.active / lastScheduleTime / lastSuccessfulTime, and deletes finished
// Jobs beyond the history limits. Time comes from ctx.now, so tests move it.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isAlreadyExists, isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { featureGates } from '../../../shared/options/feature-gates';
import {
  QueueController,
  errMessage,
  getLatest,
  intOption,
  keyOf,
  parseTime,
  rfc3339,
  unwrap,
  type Obj,
} from '../util/base';
import { controllerRef, getControllerOf, resolveControllerRef } from '../util/controller-ref';
import { CONTROLLER_UID_INDEX, informerWithOwnerIndex } from '../util/informers';
import { updateStatus, deleteWith } from '../util/status';
import { checkTimeZone, formatInZone, localTimeZone, parseSchedule, type Schedule } from './cron';
import { jsonClone } from '../../../shared/api/json-value';

export const SCHEDULED_TIMESTAMP_ANNOTATION = 'batch.kubernetes.io/cronjob-scheduled-timestamp';
/** nextScheduleDelta: wake up a little after the scheduled time. */
const NEXT_SCHEDULE_DELTA_MS = 100;

function finishedType(job: Obj): string | undefined {
  return (job.status?.conditions ?? []).find(
    (c: any) => (c.type === 'Complete' || c.type === 'Failed') && c.status === 'True',
  )?.type;
}

/** getJobName: <cronjob>-<scheduled time in minutes since the epoch>. */
export function jobName(cj: Obj, scheduledMs: number): string {
  return `${cj.metadata.name}-${Math.floor(scheduledMs / 60_000)}`;
}

/**
 * mostRecentScheduleTime: the latest missed activation up to now (if any), and
 * whether too many were missed to count.
 */
export function mostRecentScheduleTime(
  cj: Obj,
  now: number,
  sched: Schedule,
  includeStartingDeadline: boolean,
): { earliest: number; mostRecent?: number; manyMissed: boolean } {
  let earliest = parseTime(cj.status?.lastScheduleTime) ?? parseTime(cj.metadata.creationTimestamp) ?? now;
  const deadline = cj.spec?.startingDeadlineSeconds;
  if (includeStartingDeadline && typeof deadline === 'number') {
    const schedulingDeadline = now - deadline * 1000;
    if (schedulingDeadline > earliest) earliest = schedulingDeadline;
  }
  const t1 = sched.next(earliest);
  if (t1 === undefined || now < t1) return { earliest, manyMissed: false };
  const t2 = sched.next(t1);
  if (t2 === undefined || now < t2) return { earliest, mostRecent: t1, manyMissed: false };
  const between = Math.round((t2 - t1) / 1000);
  if (between < 1) throw new Error('time difference between two schedules is less than 1 second');
  const elapsed = Math.floor((now - t1) / 1000);
  const missed = Math.floor(elapsed / between) + 1;
  let mostRecent: number | undefined;
  const potentialEarliest = t1 + (missed - 2) * between * 1000;
  for (let t = sched.next(potentialEarliest); t !== undefined && t <= now; t = sched.next(t)) mostRecent = t;
  return { earliest, mostRecent, manyMissed: missed > 100 };
}

export class CronJobController extends QueueController {
  private readonly cjInformer: SharedIndexInformer<Obj>;
  private readonly jobInformer: SharedIndexInformer<Obj>;
  private readonly cjClient: ResourceClient<Obj>;
  private readonly jobClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentCronJobSyncs', 5)) {
    super(ctx, { name: 'cronjob', workers });
    this.cjInformer = ctx.informers.forResource<Obj>('cronjobs.batch');
    this.jobInformer = informerWithOwnerIndex(ctx, 'jobs.batch');
    this.cjClient = ctx.client.resource<Obj>('cronjobs.batch');
    this.jobClient = ctx.client.resource<Obj>('jobs.batch');
    this.recorder = ctx.recorder('cronjob-controller');
    this.waitFor(this.cjInformer, this.jobInformer);

    this.cjInformer.addEventHandler({
      onAdd: (cj) => this.enqueue(keyOf(cj)),
      onUpdate: (_o, cj) => this.enqueue(keyOf(cj)),
    });
    const jobEvent = (job: Obj) => {
      const cj = resolveControllerRef(this.cjInformer, 'CronJob', job);
      if (cj) this.enqueue(keyOf(cj));
    };
    this.jobInformer.addEventHandler({
      onAdd: jobEvent,
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        if (getControllerOf(old)?.uid !== getControllerOf(cur)?.uid) jobEvent(old);
        jobEvent(cur);
      },
      onDelete: (obj) => jobEvent(unwrap(obj)),
    });
  }

  private timeZoneOf(cj: Obj): string {
    const tz = cj.spec?.timeZone;
    if (tz && featureGates.enabled('CronJobTimeZone')) return tz;
    return localTimeZone();
  }

  protected async sync(key: string): Promise<void> {
    const cached = this.cjInformer.indexer.getByKey(key);
    if (!cached) return;
    const cj = jsonClone(cached);
    const jobs = this.jobInformer.indexer.byIndex(CONTROLLER_UID_INDEX, cj.metadata.uid!);
    const status: any = jsonClone(cj.status ?? {});
    const now = this.ctx.now();
    let requeueAfter: number | undefined;
    let err: unknown;
    try {
      requeueAfter = await this.syncCronJob(cj, status, jobs, now);
    } catch (e) {
      err = e;
    }
    if (!cj.metadata.deletionTimestamp) await this.cleanupFinishedJobs(cj, status, jobs);
    if (status.active && !status.active.length) delete status.active;
    await updateStatus(this.cjClient, cached, status);
    if (err !== undefined) throw err;
    if (requeueAfter !== undefined) this.enqueueAfter(key, Math.max(requeueAfter, 0));
  }

  private jobRef(job: Obj): any {
    return {
      kind: 'Job',
      namespace: job.metadata.namespace,
      name: job.metadata.name,
      uid: job.metadata.uid,
      apiVersion: 'batch/v1',
      resourceVersion: job.metadata.resourceVersion,
    };
  }

  private inActive(status: any, uid: string): boolean {
    return (status.active ?? []).some((r: any) => r.uid === uid);
  }

  private removeActive(status: any, uid: string): void {
    status.active = (status.active ?? []).filter((r: any) => r.uid !== uid);
  }

  /** syncCronJob: returns when to look again (ms), if ever. */
  private async syncCronJob(cj: Obj, status: any, jobs: Obj[], now: number): Promise<number | undefined> {
    const byUid = new Map(jobs.map((j) => [j.metadata.uid!, j]));
    for (const j of jobs) {
      const found = this.inActive(status, j.metadata.uid!);
      const fin = finishedType(j);
      if (!found && !fin) {
        // The cache may be behind our own status write: ask the apiserver before complaining.
        const fresh = (await getLatest(this.cjClient, cj))?.status;
        if (fresh && (fresh.active ?? []).some((r: any) => r.uid === j.metadata.uid)) {
          Object.assign(status, jsonClone(fresh));
          continue;
        }
        this.recorder.event(
          cj,
          'Warning',
          'UnexpectedJob',
          'Sync',
          `Saw a job that the controller did not create or forgot: ${j.metadata.name}`,
        );
      } else if (found && fin) {
        this.removeActive(status, j.metadata.uid!);
        this.recorder.event(
          cj,
          'Normal',
          'SawCompletedJob',
          'Sync',
          `Saw completed job: ${j.metadata.name}, status: ${fin}`,
        );
      }
      if (fin === 'Complete') {
        const done = parseTime(j.status?.completionTime);
        const last = parseTime(status.lastSuccessfulTime);
        if (done !== undefined && (last === undefined || done > last))
          status.lastSuccessfulTime = j.status.completionTime;
      }
    }
    for (const ref of [...(status.active ?? [])]) {
      if (byUid.has(ref.uid)) continue;
      try {
        await this.jobClient.namespace(ref.namespace ?? cj.metadata.namespace).get(ref.name);
      } catch (e) {
        if (!isNotFound(e)) throw e;
        this.recorder.event(cj, 'Normal', 'MissingJob', 'Sync', `Active job went missing: ${ref.name}`);
        this.removeActive(status, ref.uid);
      }
    }
    if (cj.metadata.deletionTimestamp) return undefined;

    const tz = this.timeZoneOf(cj);
    try {
      checkTimeZone(tz);
    } catch (e) {
      this.recorder.event(
        cj,
        'Warning',
        'UnknownTimeZone',
        'Sync',
        `invalid timeZone: "${tz}": ${errMessage(e)}`,
      );
      return undefined;
    }
    if (cj.spec?.suspend) return undefined;
    const spec: string = cj.spec?.schedule ?? '';
    if (cj.spec?.timeZone && /(CRON_TZ|TZ)=/.test(spec)) {
      this.recorder.event(
        cj,
        'Warning',
        'UnsupportedSchedule',
        'Sync',
        `CRON_TZ or TZ used in schedule "${spec}" is not officially supported, see https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/ for more details`,
      );
    }
    let sched: Schedule;
    try {
      sched = parseSchedule(spec, tz);
    } catch (e) {
      this.recorder.event(
        cj,
        'Warning',
        'UnparseableSchedule',
        'Sync',
        `unparseable schedule: "${spec}" : ${errMessage(e)}`,
      );
      return undefined;
    }
    const nextIn = (): number | undefined => {
      const cur = { ...cj, status };
      const r = mostRecentScheduleTime(cur, now, sched, false);
      const from = r.mostRecent ?? r.earliest;
      const t = sched.next(from);
      return t === undefined ? undefined : t + NEXT_SCHEDULE_DELTA_MS - now;
    };
    let recent: { mostRecent?: number; manyMissed: boolean };
    try {
      recent = mostRecentScheduleTime({ ...cj, status }, now, sched, true);
    } catch (e) {
      this.recorder.event(
        cj,
        'Warning',
        'InvalidSchedule',
        'Sync',
        `invalid schedule: ${spec} : ${errMessage(e)}`,
      );
      return undefined;
    }
    if (recent.manyMissed) {
      this.recorder.event(
        cj,
        'Warning',
        'TooManyMissedTimes',
        'Sync',
        'too many missed start times. Set or decrease .spec.startingDeadlineSeconds or check clock skew',
      );
    }
    const scheduled = recent.mostRecent;
    if (scheduled === undefined) return nextIn();
    const deadline = cj.spec?.startingDeadlineSeconds;
    if (typeof deadline === 'number' && scheduled + deadline * 1000 < now) {
      this.recorder.event(
        cj,
        'Warning',
        'MissSchedule',
        'Sync',
        `Missed scheduled time to start a job: ${new Date(scheduled).toUTCString().replace('GMT', '+0000')}`,
      );
      return nextIn();
    }
    const name = jobName(cj, scheduled);
    if ((status.active ?? []).some((r: any) => r.name === name)) return nextIn();
    const policy = cj.spec?.concurrencyPolicy ?? 'Allow';
    if (policy === 'Forbid' && (status.active ?? []).length > 0) {
      this.recorder.event(
        cj,
        'Normal',
        'JobAlreadyActive',
        'Sync',
        'Not starting job because prior execution is running and concurrency policy is Forbid',
      );
      return nextIn();
    }
    if (policy === 'Replace') {
      for (const ref of [...(status.active ?? [])]) {
        await this.deleteJob(cj, status, ref.name, ref.uid);
      }
    }
    const job = this.jobFromTemplate(cj, scheduled, tz);
    try {
      const created = await this.jobClient.namespace(cj.metadata.namespace!).create(job);
      this.recorder.event(cj, 'Normal', 'SuccessfulCreate', 'Create', `Created job ${created.metadata.name}`);
      status.active = [...(status.active ?? []), this.jobRef(created)];
      status.lastScheduleTime = rfc3339(scheduled);
    } catch (e) {
      if (isAlreadyExists(e)) {
        // Ours, from a sync whose status write was lost: it is the active run of this time.
        const existing = jobs.find((j) => j.metadata.name === job.metadata.name);
        if (existing && !finishedType(existing) && !this.inActive(status, existing.metadata.uid!)) {
          status.active = [...(status.active ?? []), this.jobRef(existing)];
          status.lastScheduleTime = rfc3339(scheduled);
        }
        return nextIn();
      }
      this.recorder.event(cj, 'Warning', 'FailedCreate', 'Create', `Error creating job: ${errMessage(e)}`);
      throw e;
    }
    return nextIn();
  }

  /** getJobFromTemplate2. */
  private jobFromTemplate(cj: Obj, scheduled: number, tz: string): Obj {
    const t = jsonClone(cj.spec?.jobTemplate ?? {});
    return {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: {
        name: jobName(cj, scheduled),
        namespace: cj.metadata.namespace,
        labels: { ...(t.metadata?.labels ?? {}) },
        annotations: {
          ...(t.metadata?.annotations ?? {}),
          [SCHEDULED_TIMESTAMP_ANNOTATION]: formatInZone(scheduled, tz),
        },
        ownerReferences: [controllerRef(cj, 'batch/v1', 'CronJob')],
      },
      spec: t.spec ?? {},
    };
  }

  private async deleteJob(cj: Obj, status: any, name: string, uid: string): Promise<void> {
    try {
      await deleteWith(this.jobClient.namespace(cj.metadata.namespace!), name, {
        propagationPolicy: 'Background',
      });
    } catch (e) {
      if (!isNotFound(e)) {
        this.recorder.event(cj, 'Warning', 'FailedDelete', 'Delete', `Deleted job: ${errMessage(e)}`);
        throw e;
      }
    }
    this.removeActive(status, uid);
    this.recorder.event(cj, 'Normal', 'SuccessfulDelete', 'Delete', `Deleted job ${name}`);
  }

  /** cleanupFinishedJobs: successful and failed Jobs beyond their history limits, oldest first. */
  private async cleanupFinishedJobs(cj: Obj, status: any, jobs: Obj[]): Promise<void> {
    const succeededLimit = cj.spec?.successfulJobsHistoryLimit;
    const failedLimit = cj.spec?.failedJobsHistoryLimit;
    if (succeededLimit == null && failedLimit == null) return;
    const byStart = (a: Obj, b: Obj) => {
      const ta = parseTime(a.status?.startTime);
      const tb = parseTime(b.status?.startTime);
      if (ta === undefined && tb !== undefined) return 1;
      if (tb === undefined && ta !== undefined) return -1;
      if (ta !== tb) return (ta ?? 0) - (tb ?? 0);
      return (a.metadata.name ?? '') < (b.metadata.name ?? '') ? -1 : 1;
    };
    for (const [type, limit] of [
      ['Complete', succeededLimit],
      ['Failed', failedLimit],
    ] as const) {
      if (limit == null) continue;
      const finished = jobs
        .filter((j) => finishedType(j) === type && !j.metadata.deletionTimestamp)
        .sort(byStart);
      const excess = finished.length - limit;
      for (let i = 0; i < excess; i++)
        await this.deleteJob(cj, status, finished[i].metadata.name!, finished[i].metadata.uid!);
    }
  }
}

export const cronJobController: ControllerDescriptor = {
  name: 'cronjob',
  start(ctx) {
    void new CronJobController(ctx).run();
  },
};
