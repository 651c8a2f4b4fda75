// The Job controller (pkg/controller/job): runs pods until spec.completions
// succeed (or one does, without completions), parallelism at a time, NonIndexed
// or Indexed (completion index annotation and label, hostname, env); counts
// finished pods through the batch.kubernetes.io/job-tracking finalizer and
// status.uncountedTerminatedPods so no pod is counted twice or lost; waits an
// exponential backoff after failures, fails the Job past backoffLimit or
// activeDeadlineSeconds, and handles suspend.
//
// The controller keeps what outlives a sync (expectations, finalizer removals
// in flight, backoff records); one sync is a JobSync (sync.ts).
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import {
  QueueController,
  errMessage,
  getLatest,
  intOption,
  keyOf,
  parseTime,
  unwrap,
  type Obj,
} from '../util/base';
import { UIDTrackingExpectations } from '../util/expectations';
import { claimObjects, getControllerOf, resolveControllerRef, selectorOf } from '../util/controller-ref';
import { CONTROLLER_UID_INDEX, claimCandidates, podInformer } from '../util/informers';
import { PodControl } from '../util/pod';
import { DEFAULT_BACKOFF_MS, MAX_BACKOFF_MS, type BackoffRecord } from './backoff';
import { JOB_TRACKING_FINALIZER, hasFinalizer, isJobFinished } from './predicates';
import { JobSync } from './sync';
import { jsonClone } from '../../../shared/api/json-value';

export { DEFAULT_BACKOFF_MS, MAX_BACKOFF_MS } from './backoff';
export { JOB_TRACKING_FINALIZER, isJobFinished } from './predicates';

export interface JobControllerOptions {
  workers?: number;
  /** Base of the pod failure backoff (tests shorten it). */
  backoffMs?: number;
  maxBackoffMs?: number;
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
    const job = jsonClone(cached);
    const sel = selectorOf(job);
    if (!sel || sel.empty) return;
    const pods = await claimObjects(claimCandidates(this.podInformer, job), {
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
