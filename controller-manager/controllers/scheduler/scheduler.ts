// kube-scheduler's job, as controller "scheduler": binds pending pods of the
// default-scheduler to nodes through pods/binding. The scheduling cycle runs
// the default profile's plugins (plugins/default-profile.ts) through
// algorithm.ts over the cache's node snapshot (cache.ts), kept up to date
// from informer events; the pod is then assumed on its node in the cache and
// bound asynchronously (PreBind, then the binding), so the next pod is
// scheduled at once and already sees this one's place; a failed binding is
// forgotten and the pod requeued. "0/3 nodes are available: ..." when nothing
// fits, with the PodScheduled=False condition and a retry with backoff, or at
// once when the cluster changes.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isConflict, isNotFound, type ResourceClient } from '../../../shared/client';
import {
  ItemExponentialFailureRateLimiter,
  RateLimitingQueue,
  runWorkers,
  type SharedIndexInformer,
} from '../../../shared/informers';
import { errMessage, intOption, keyOf, rfc3339, unwrap, type Obj } from '../util/base';
import { podInformer } from '../util/informers';
import { isPodTerminal } from '../util/pod';
import type { Logger } from '../../../shared/log';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';
import { SchedulerCache } from './cache';
import { Algorithm } from './algorithm';
import { CycleState, type Plugin } from './framework';
import { SchedulerMetrics, type AttemptResult } from './metrics';
import { defaultPlugins } from './plugins/default-profile';

export { fitErrorMessage } from './framework';
export { numFeasibleNodesToFind } from './algorithm';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/** podInitialBackoffSeconds / podMaxBackoffSeconds. */
const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 10_000;
/** A binding that finished but the informer never confirmed is dropped after this. */
const ASSUME_TTL_MS = 30_000;

interface Assumed {
  node: string;
  /** When the binding call finished (undefined while it is in flight: never expired then). */
  finishedAt?: number;
}

export function responsibleFor(pod: Obj): boolean {
  return (pod.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME) === DEFAULT_SCHEDULER_NAME;
}

const isGated = (pod: Obj) => (pod.spec?.schedulingGates?.length ?? 0) > 0;

/** A pod waiting for this scheduler. */
export function needsScheduling(pod: Obj): boolean {
  return (
    !pod.spec?.nodeName &&
    !pod.metadata.deletionTimestamp &&
    !isPodTerminal(pod) &&
    responsibleFor(pod) &&
    !isGated(pod)
  );
}

class UnschedulableError extends Error {}

const readyStatus = (node: Obj) =>
  (node.status?.conditions ?? []).find((c: any) => c.type === 'Ready')?.status;

/** What the plugins read of a Node changed (kube's NodeUpdate event hints: spec, labels, allocatable, readiness, images). */
function schedulingFactsChanged(old: Obj, cur: Obj): boolean {
  const same = (a: unknown, b: unknown) => stringifyJSONInt64(a) === stringifyJSONInt64(b);
  return (
    readyStatus(old) !== readyStatus(cur) ||
    !same(old.spec, cur.spec) ||
    !same(old.metadata.labels, cur.metadata.labels) ||
    !same(old.status?.allocatable, cur.status?.allocatable) ||
    !same(old.status?.images, cur.status?.images)
  );
}

export class Scheduler {
  readonly queue: RateLimitingQueue<string>;
  readonly cache = new SchedulerCache();
  private readonly pods: SharedIndexInformer<Obj>;
  private readonly nodes: SharedIndexInformer<Obj>;
  /** Their labels, for pod (anti-)affinity terms with a namespaceSelector. */
  private readonly namespaces: SharedIndexInformer<Obj>;
  private readonly podClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;
  private readonly log: Logger;
  private readonly algorithm: Algorithm;
  private readonly plugins: Plugin[];
  private readonly metrics: SchedulerMetrics;
  private readonly assumed = new Map<string, Assumed>();
  /** Pods that did not fit: retried after backoff or on a cluster event. */
  private readonly unschedulable = new Set<string>();
  /** Pods whose binding failed, waiting for their retry. */
  private readonly backoff = new Set<string>();
  /** Pods held back by schedulingGates. */
  private readonly gated = new Set<string>();
  private running?: Promise<void>;

  constructor(private readonly ctx: ControllerContext) {
    this.queue = new RateLimitingQueue<string>({
      name: 'scheduler',
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(INITIAL_BACKOFF_MS, MAX_BACKOFF_MS),
    });
    this.log = ctx.log.child({ controller: 'scheduler' });
    this.pods = podInformer(ctx);
    this.nodes = ctx.informers.forResource<Obj>('nodes');
    const claims = ctx.informers.forResource<Obj>('persistentvolumeclaims');
    const volumes = ctx.informers.forResource<Obj>('persistentvolumes');
    const classes = ctx.informers.forResource<Obj>('storageclasses.storage.k8s.io');
    this.podClient = ctx.client.resource<Obj>('pods');
    this.recorder = ctx.recorder(DEFAULT_SCHEDULER_NAME);
    this.namespaces = ctx.informers.forResource<Obj>('namespaces');
    const namespaces = this.namespaces;
    this.plugins = defaultPlugins(
      {
        claims,
        volumes,
        classes,
        claimClient: ctx.client.resource<Obj>('persistentvolumeclaims'),
      },
      (ns) => namespaces.indexer.getByKey(ns)?.metadata.labels,
    );
    this.algorithm = new Algorithm(this.plugins);
    this.metrics = new SchedulerMetrics(DEFAULT_SCHEDULER_NAME, ctx.metrics, () => ({
      active: this.queue.len(),
      backoff: this.backoff.size,
      unschedulable: this.unschedulable.size,
      gated: this.gated.size,
    }));

    this.pods.addEventHandler({
      onAdd: (pod) => this.podChanged(undefined, pod),
      onUpdate: (old, pod) => this.podChanged(old, pod),
      onDelete: (obj) => {
        const pod = unwrap(obj);
        const key = keyOf(pod);
        const held = this.cache.nodeOf(key);
        this.cache.podGone(key);
        this.assumed.delete(key);
        this.unschedulable.delete(key);
        this.backoff.delete(key);
        this.gated.delete(key);
        if (held) this.moveUnschedulable();
      },
    });
    this.nodes.addEventHandler({
      onAdd: (node) => {
        this.cache.nodeSet(node);
        this.moveUnschedulable();
      },
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        this.cache.nodeSet(cur);
        // A heartbeat changes nothing a pod is placed by: no retry of every waiting pod for it.
        if (schedulingFactsChanged(old, cur)) this.moveUnschedulable();
      },
      onDelete: (obj) => this.cache.nodeGone(unwrap(obj).metadata.name!),
    });
    // Claims bound, volumes made Available, classes created: volume-bound pods may fit now.
    for (const inf of [claims, volumes, classes])
      inf.addEventHandler({
        onAdd: () => this.moveUnschedulable(),
        onUpdate: () => this.moveUnschedulable(),
      });
  }

  private podChanged(old: Obj | undefined, pod: Obj): void {
    const key = keyOf(pod);
    this.cache.podSeen(key, pod);
    if (pod.spec?.nodeName) {
      this.assumed.delete(key);
      this.unschedulable.delete(key);
      this.backoff.delete(key);
      this.gated.delete(key);
      // A bound pod that finished frees its node's resources.
      if (old && !isPodTerminal(old) && isPodTerminal(pod)) this.moveUnschedulable();
      return;
    }
    if (responsibleFor(pod) && isGated(pod) && !pod.metadata.deletionTimestamp) this.gated.add(key);
    else this.gated.delete(key);
    if (!needsScheduling(pod)) return;
    // Updates of a pod waiting for a retry (its own status condition) do not bypass its
    // backoff, unless what decides its placement changed.
    if (
      old &&
      (this.unschedulable.has(key) || this.backoff.has(key)) &&
      stringifyJSONInt64(old.spec) === stringifyJSONInt64(pod.spec) &&
      JSON.stringify(old.metadata.labels) === JSON.stringify(pod.metadata.labels)
    )
      return;
    this.unschedulable.delete(key);
    this.queue.add(key);
  }

  /** A cluster event that may make unschedulable pods fit: retry them now. */
  private moveUnschedulable(): void {
    for (const key of this.unschedulable) this.queue.add(key);
    this.unschedulable.clear();
  }

  run(): Promise<void> {
    if (this.running) return this.running;
    this.running = (async () => {
      for (const inf of [this.pods, this.nodes, this.namespaces])
        if (!(await inf.whenSynced(this.ctx.signal))) return;
      await runWorkers(this.queue, (key) => this.scheduleOne(key), {
        workers: Math.max(1, intOption(this.ctx, 'concurrentSchedulerSyncs', 1)),
        signal: this.ctx.signal,
        onError: (key, err) => {
          if (err instanceof UnschedulableError)
            this.log.v(3)?.info('pod is unschedulable', { key, reason: err.message });
          else this.log.warn('scheduling failed, retrying', { key, err: errMessage(err) });
        },
      });
    })();
    return this.running;
  }

  /**
   * One scheduling cycle: decide, assume, and start the binding. Nothing here awaits between
   * the decision and the assumption, so concurrent workers never see a node without the pods
   * just placed on it.
   */
  private async scheduleOne(key: string): Promise<void> {
    const started = performance.now();
    this.backoff.delete(key);
    const pod = this.pods.indexer.getByKey(key);
    if (!pod || !needsScheduling(pod)) return;
    const a = this.assumed.get(key);
    if (a) {
      // Binding in flight, or bound and not yet seen: never schedule a pod twice.
      if (a.finishedAt === undefined || this.ctx.now() - a.finishedAt < ASSUME_TTL_MS) return;
      this.assumed.delete(key);
      this.cache.forget(key);
    }
    const state = new CycleState(pod, this.cache);
    const decision = this.algorithm.schedule(state);
    if ('message' in decision) {
      await this.unschedulableResult(pod, decision.message, started);
      return;
    }
    this.assumed.set(key, { node: decision.node });
    this.cache.assume(key, pod, decision.node);
    this.unschedulable.delete(key);
    void this.bind(state, decision.node, started);
  }

  /** The binding cycle: PreBind plugins, then pods/binding; on failure forget the assumption and requeue. */
  private async bind(state: CycleState, node: string, started: number): Promise<void> {
    const pod = state.pod;
    const key = keyOf(pod);
    try {
      for (const p of this.plugins) await p.preBind?.(state, node, this.ctx.signal);
      await this.podClient.namespace(pod.metadata.namespace!).bind(pod.metadata.name!, { name: node });
      const a = this.assumed.get(key);
      if (a) a.finishedAt = this.ctx.now();
      this.attempted('scheduled', started);
      this.queue.forget(key);
      this.recorder.event(
        pod,
        'Normal',
        'Scheduled',
        'Binding',
        `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${node}`,
      );
    } catch (err) {
      this.assumed.delete(key);
      this.cache.forget(key);
      if (this.ctx.signal.aborted) return;
      // Gone, or already bound (by someone else) or being deleted: the informer will tell.
      if (isNotFound(err) || isConflict(err)) return;
      this.attempted('error', started);
      this.log.warn('binding failed', { pod: key, node, err: errMessage(err) });
      this.backoff.add(key);
      this.queue.addRateLimited(key);
    }
  }

  private attempted(result: AttemptResult, started: number): void {
    this.metrics.attempt(result, (performance.now() - started) / 1000);
  }

  /** FailedScheduling event, PodScheduled=False, and a retry after backoff (or a cluster change). */
  private async unschedulableResult(pod: Obj, message: string, started: number): Promise<void> {
    const key = keyOf(pod);
    this.attempted('unschedulable', started);
    this.recorder.event(pod, 'Warning', 'FailedScheduling', 'Scheduling', message);
    const cur = (pod.status?.conditions ?? []).find((c: any) => c.type === 'PodScheduled');
    if (!(cur?.status === 'False' && cur.reason === 'Unschedulable' && cur.message === message)) {
      const cond = {
        type: 'PodScheduled',
        status: 'False',
        lastProbeTime: null,
        lastTransitionTime:
          cur?.status === 'False' && cur.lastTransitionTime
            ? cur.lastTransitionTime
            : rfc3339(this.ctx.now()),
        reason: 'Unschedulable',
        message,
      };
      try {
        await this.podClient
          .namespace(pod.metadata.namespace!)
          .patch(pod.metadata.name!, { status: { conditions: [cond] } }, 'strategic', {
            subresource: 'status',
          });
      } catch (err) {
        if (!isNotFound(err))
          this.log.warn('could not update pod condition', { pod: key, err: errMessage(err) });
      }
    }
    this.unschedulable.add(key);
    // Retried with the queue's backoff (1 s doubling to 10 s), or at once on a cluster change.
    throw new UnschedulableError(message);
  }
}

export const schedulerController: ControllerDescriptor = {
  name: 'scheduler',
  start(ctx) {
    void new Scheduler(ctx).run();
  },
};
