// kube-scheduler's job, as controller "scheduler": binds pending pods of the
// default-scheduler to nodes through pods/binding. Filters like the default
// plugins (NodeUnschedulable, TaintToleration, NodeAffinity, NodePorts,
// NodeResourcesFit with the node's allocatable pods as --max-pods) and scores
// (least allocated, balanced allocation, spreading a controller's pods, preferred
// affinity, PreferNoSchedule taints); "0/3 nodes are available: ..." when
// nothing fits, with the PodScheduled=False condition and a retry with backoff.
// Like kube-scheduler on large clusters, it stops filtering once it found
// enough feasible nodes (percentageOfNodesToScore, adaptive), starting each
// search where the previous one stopped, and reads each node's load from its
// cache (cache.ts).
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isConflict, isNotFound, type ResourceClient } from '../../../shared/client';
import {
  ItemExponentialFailureRateLimiter,
  RateLimitingQueue,
  runWorkers,
  type SharedIndexInformer,
} from '../../../shared/informers';
import { errMessage, intOption, keyOf, rfc3339, unwrap, type Obj } from '../util/base';
import { getControllerOf } from '../util/controller-ref';
import { podInformer } from '../util/informers';
import { isPodTerminal } from '../util/pod';
import {
  findUntoleratedTaint,
  hostPortsConflict,
  hostPortsOf,
  nodeSelectorTermMatches,
  podMatchesNodeSelectorAndAffinity,
  podRequests,
  toMilli,
  type Resources,
} from '../../../shared/api/scheduling';
import { nonZeroRequests, SchedulerCache, type NodeUsage } from './cache';
import {
  TAINT_NOT_READY,
  TAINT_UNREACHABLE,
  TAINT_UNSCHEDULABLE,
  tolerationsTolerateTaint,
  type Taint,
} from '../../../shared/api/taints';
import type { Logger } from '../../../shared/log';
import type { Counter } from '../../../shared/metrics/registry';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';

export const DEFAULT_SCHEDULER_NAME = 'default-scheduler';
/** podInitialBackoffSeconds / podMaxBackoffSeconds. */
const INITIAL_BACKOFF_MS = 1000;
const MAX_BACKOFF_MS = 10_000;
/** An assumed binding the informer never confirmed is dropped after this. */
const ASSUME_TTL_MS = 30_000;
/** kube-scheduler's minFeasibleNodesToFind and minFeasibleNodesPercentageToFind. */
const MIN_FEASIBLE_NODES = 100;
const MIN_FEASIBLE_PERCENTAGE = 5;

const NOT_HELPFUL = 'Preemption is not helpful for scheduling';
const NO_VICTIMS = 'No preemption victims found for incoming pod';

interface Assumed {
  node: string;
  pod: Obj;
  at: number;
}

/** One filter failure on one node: reasons and whether preemption could help. */
interface Failure {
  reasons: string[];
  resolvable: boolean;
}

export function responsibleFor(pod: Obj): boolean {
  return (pod.spec?.schedulerName ?? DEFAULT_SCHEDULER_NAME) === DEFAULT_SCHEDULER_NAME;
}

/** A pod waiting for this scheduler. */
export function needsScheduling(pod: Obj): boolean {
  return (
    !pod.spec?.nodeName &&
    !pod.metadata.deletionTimestamp &&
    !isPodTerminal(pod) &&
    responsibleFor(pod) &&
    !(pod.spec?.schedulingGates?.length > 0)
  );
}

/**
 * How many feasible nodes are enough (kube's numFeasibleNodesToFind with
 * percentageOfNodesToScore unset): every node up to 100, then 50% less one
 * point per 125 nodes, at least 5% and at least 100 nodes.
 */
export function numFeasibleNodesToFind(numNodes: number): number {
  if (numNodes < MIN_FEASIBLE_NODES) return numNodes;
  const percentage = Math.max(MIN_FEASIBLE_PERCENTAGE, 50 - Math.trunc(numNodes / 125));
  return Math.max(MIN_FEASIBLE_NODES, Math.trunc((numNodes * percentage) / 100));
}

/** The taints the scheduler sees: the node's, plus not-ready/unreachable when its Ready condition says so. */
export function effectiveTaints(node: Obj): Taint[] {
  let taints = taintsOf.get(node);
  if (!taints) taintsOf.set(node, (taints = computeTaints(node)));
  return taints;
}

/** Per node object (informer objects are replaced on change, never mutated). */
const taintsOf = new WeakMap<Obj, Taint[]>();
const allocatableOf = new WeakMap<Obj, Resources>();

function allocatable(node: Obj): Resources {
  let a = allocatableOf.get(node);
  if (!a) allocatableOf.set(node, (a = toMilli(node.status?.allocatable)));
  return a;
}

function computeTaints(node: Obj): Taint[] {
  const taints: Taint[] = [...(node.spec?.taints ?? [])];
  const ready = (node.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
  if (ready?.status !== 'True') {
    const key = ready?.status === 'Unknown' ? TAINT_UNREACHABLE : TAINT_NOT_READY;
    if (!taints.some((t) => t.key === key && t.effect === 'NoSchedule'))
      taints.push({ key, effect: 'NoSchedule' });
  }
  return taints;
}

class UnschedulableError extends Error {}

export class Scheduler {
  readonly queue: RateLimitingQueue<string>;
  private readonly pods: SharedIndexInformer<Obj>;
  private readonly nodes: SharedIndexInformer<Obj>;
  private readonly podClient: ResourceClient<Obj>;
  private readonly recorder: EventRecorderLike;
  private readonly log: Logger;
  private readonly assumed = new Map<string, Assumed>();
  private readonly cache = new SchedulerCache();
  /** Where the next search for feasible nodes starts (kube's nextStartNodeIndex). */
  private nextStartNodeIndex = 0;
  private readonly unschedulable = new Set<string>();
  private running?: Promise<void>;
  /** kube-scheduler's scheduler_schedule_attempts_total: its rate of "scheduled" is the throughput (pods/s). */
  private readonly attempts?: Counter;

  constructor(private readonly ctx: ControllerContext) {
    this.attempts = ctx.metrics?.counter({
      name: 'scheduler_schedule_attempts_total',
      help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
      labels: ['result', 'profile'],
    });
    this.queue = new RateLimitingQueue<string>({
      name: 'scheduler',
      rateLimiter: new ItemExponentialFailureRateLimiter<string>(INITIAL_BACKOFF_MS, MAX_BACKOFF_MS),
    });
    this.log = ctx.log.child({ controller: 'scheduler' });
    this.pods = podInformer(ctx);
    this.nodes = ctx.informers.forResource<Obj>('nodes');
    this.podClient = ctx.client.resource<Obj>('pods');
    this.recorder = ctx.recorder(DEFAULT_SCHEDULER_NAME);

    this.pods.addEventHandler({
      onAdd: (pod) => this.podChanged(undefined, pod),
      onUpdate: (old, pod) => this.podChanged(old, pod),
      onDelete: (obj) => {
        const pod = unwrap(obj);
        const key = keyOf(pod);
        this.cache.podGone(key);
        this.assumed.delete(key);
        this.unschedulable.delete(key);
        if (pod.spec?.nodeName) this.moveUnschedulable();
      },
    });
    this.nodes.addEventHandler({
      onAdd: () => this.moveUnschedulable(),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion === cur.metadata.resourceVersion) return;
        this.moveUnschedulable();
      },
    });
  }

  private podChanged(old: Obj | undefined, pod: Obj): void {
    const key = keyOf(pod);
    this.cache.podSeen(key, pod);
    if (pod.spec?.nodeName) {
      this.assumed.delete(key);
      this.unschedulable.delete(key);
      // A bound pod that finished frees its node's resources.
      if (old && !isPodTerminal(old) && isPodTerminal(pod)) this.moveUnschedulable();
      return;
    }
    if (!needsScheduling(pod)) return;
    // Updates of a pod waiting for a retry (its own status condition) do not bypass its
    // backoff, unless what decides its placement changed.
    if (
      old &&
      this.unschedulable.has(key) &&
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
      for (const inf of [this.pods, this.nodes]) if (!(await inf.whenSynced(this.ctx.signal))) return;
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

  /** The filter plugins in kube's order; undefined when the pod fits. */
  private filter(pod: Obj, node: Obj, usage: NodeUsage): Failure | undefined {
    const tolerations = pod.spec?.tolerations ?? [];
    // NodeUnschedulable
    if (
      node.spec?.unschedulable &&
      !tolerationsTolerateTaint(tolerations, {
        key: TAINT_UNSCHEDULABLE,
        effect: 'NoSchedule',
      })
    )
      return { reasons: ['node(s) were unschedulable'], resolvable: false };
    // TaintToleration
    const taint = findUntoleratedTaint(effectiveTaints(node), tolerations, ['NoSchedule', 'NoExecute']);
    if (taint)
      return {
        reasons: [`node(s) had untolerated taint {${taint.key}: ${taint.value ?? ''}}`],
        resolvable: false,
      };
    // NodeAffinity
    if (!podMatchesNodeSelectorAndAffinity(pod.spec, node))
      return { reasons: ["node(s) didn't match Pod's node affinity/selector"], resolvable: false };
    // NodePorts
    if (hostPortsConflict(hostPortsOf(pod), usage.hostPorts.keys()))
      return { reasons: ["node(s) didn't have free ports for the requested pod ports"], resolvable: true };
    // NodeResourcesFit
    const alloc = allocatable(node);
    const reasons: string[] = [];
    const maxPods = (alloc.get('pods') ?? 110_000) / 1000;
    if (usage.pods + 1 > maxPods) reasons.push('Too many pods');
    const req = podRequests(pod);
    for (const [name, amount] of req) {
      if (amount === 0 || name === 'pods') continue;
      const have = alloc.get(name) ?? 0;
      const used = usage.requested.get(name) ?? 0;
      if (amount > have - used) reasons.push(`Insufficient ${name}`);
    }
    if (reasons.length) return { reasons, resolvable: true };
    return undefined;
  }

  /** Scores 0-100 per plugin, weighted like the default profile. */
  private score(pod: Obj, nodes: Obj[]): Map<string, number> {
    const scores = new Map<string, number>();
    const nz = nonZeroRequests(pod);
    const owner = getControllerOf(pod)?.uid;
    const sameOwner = new Map<string, number>();
    let maxSame = 0;
    const preferNo = new Map<string, number>();
    let maxPreferNo = 0;
    const affinity = new Map<string, number>();
    let maxAffinity = 0;
    const preferred: any[] =
      pod.spec?.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution ?? [];
    for (const node of nodes) {
      const name = node.metadata.name!;
      const u = this.cache.usage(name);
      const same = owner ? (u.owners.get(owner) ?? 0) : 0;
      sameOwner.set(name, same);
      maxSame = Math.max(maxSame, same);
      const pn = (node.spec?.taints ?? []).filter(
        (t: Taint) => t.effect === 'PreferNoSchedule' && !tolerationsTolerateTaint(pod.spec?.tolerations, t),
      ).length;
      preferNo.set(name, pn);
      maxPreferNo = Math.max(maxPreferNo, pn);
      let aff = 0;
      for (const term of preferred)
        if (nodeSelectorTermMatches(term.preference, node)) aff += term.weight ?? 0;
      affinity.set(name, aff);
      maxAffinity = Math.max(maxAffinity, aff);
    }
    for (const node of nodes) {
      const name = node.metadata.name!;
      const u = this.cache.usage(name);
      const alloc = allocatable(node);
      const cpuAlloc = alloc.get('cpu') ?? 0;
      const memAlloc = (alloc.get('memory') ?? 0) / 1000;
      const frac = (used: number, cap: number) => (cap > 0 ? Math.min(1, used / cap) : 1);
      const cpuF = frac(u.nonZeroCpu + nz.cpu, cpuAlloc);
      const memF = frac(u.nonZeroMem + nz.mem, memAlloc);
      // NodeResourcesFit LeastAllocated (weight 1)
      const least = ((1 - cpuF) * 100 + (1 - memF) * 100) / 2;
      // NodeResourcesBalancedAllocation (weight 1)
      const balanced = (1 - Math.abs(cpuF - memF) / 2) * 100;
      // Spreading a controller's pods across nodes (PodTopologySpread's system default, weight 2)
      const spread = maxSame > 0 ? ((maxSame - sameOwner.get(name)!) * 100) / maxSame : 100;
      // TaintToleration (weight 3): fewer untolerated PreferNoSchedule taints
      const taints = maxPreferNo > 0 ? ((maxPreferNo - preferNo.get(name)!) * 100) / maxPreferNo : 100;
      // NodeAffinity preferred terms (weight 2)
      const aff = maxAffinity > 0 ? (affinity.get(name)! * 100) / maxAffinity : 0;
      scores.set(name, least + balanced + 2 * spread + 3 * taints + 2 * aff);
    }
    return scores;
  }

  private async scheduleOne(key: string): Promise<void> {
    const pod = this.pods.indexer.getByKey(key);
    if (!pod || !needsScheduling(pod)) return;
    const a = this.assumed.get(key);
    if (a) {
      if (this.ctx.now() - a.at < ASSUME_TTL_MS) return;
      this.assumed.delete(key);
      this.cache.forget(key);
    }
    const nodes = this.nodes.lister().list();
    if (!nodes.length) {
      await this.unschedulableResult(pod, 'no nodes available to schedule pods');
      return;
    }
    const feasible: Obj[] = [];
    const failures: Failure[] = [];
    const enough = numFeasibleNodesToFind(nodes.length);
    const start = this.nextStartNodeIndex % nodes.length;
    let seen = 0;
    for (; seen < nodes.length && feasible.length < enough; seen++) {
      const node = nodes[(start + seen) % nodes.length];
      const f = this.filter(pod, node, this.cache.usage(node.metadata.name!));
      if (f) failures.push(f);
      else feasible.push(node);
    }
    this.nextStartNodeIndex = (start + seen) % nodes.length;
    if (!feasible.length) {
      await this.unschedulableResult(pod, fitErrorMessage(nodes.length, failures));
      return;
    }
    const scores = this.score(pod, feasible);
    let best: string[] = [];
    let bestScore = -Infinity;
    for (const [name, s] of scores) {
      if (s > bestScore + 1e-9) {
        bestScore = s;
        best = [name];
      } else if (Math.abs(s - bestScore) <= 1e-9) best.push(name);
    }
    const chosen = best[Math.floor(Math.random() * best.length)];
    this.assumed.set(key, { node: chosen, pod, at: this.ctx.now() });
    this.cache.assume(key, pod, chosen);
    this.unschedulable.delete(key);
    // Bind without holding the queue: the next pod already sees this one assumed.
    void this.bind(pod, chosen);
  }

  private async bind(pod: Obj, node: string): Promise<void> {
    const key = keyOf(pod);
    try {
      await this.podClient.namespace(pod.metadata.namespace!).bind(pod.metadata.name!, { name: node });
      this.attempts?.inc({ result: 'scheduled', profile: DEFAULT_SCHEDULER_NAME });
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
      if (isNotFound(err)) return;
      if (isConflict(err)) {
        // Already bound (by someone else) or being deleted: the informer will tell.
        return;
      }
      this.attempts?.inc({ result: 'error', profile: DEFAULT_SCHEDULER_NAME });
      this.log.warn('binding failed', { pod: key, node, err: errMessage(err) });
      this.queue.addRateLimited(key);
    }
  }

  /** FailedScheduling event, PodScheduled=False, and a retry after backoff (or a cluster change). */
  private async unschedulableResult(pod: Obj, message: string): Promise<void> {
    const key = keyOf(pod);
    this.attempts?.inc({ result: 'unschedulable', profile: DEFAULT_SCHEDULER_NAME });
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

/** FitError.Error(): "0/3 nodes are available: 1 Insufficient cpu, 2 .... preemption: ...". */
export function fitErrorMessage(numNodes: number, failures: Failure[]): string {
  const hist = new Map<string, number>();
  for (const f of failures) for (const r of f.reasons) hist.set(r, (hist.get(r) ?? 0) + 1);
  const parts = [...hist].map(([r, n]) => `${n} ${r}`).sort();
  let msg = `0/${numNodes} nodes are available: ${parts.join(', ')}.`;
  const pre = new Map<string, number>();
  for (const f of failures) {
    const r = f.resolvable ? NO_VICTIMS : NOT_HELPFUL;
    pre.set(r, (pre.get(r) ?? 0) + 1);
  }
  const preParts = [...pre].map(([r, n]) => `${n} ${r}`).sort();
  msg += ` preemption: 0/${numNodes} nodes are available: ${preParts.join(', ')}.`;
  return msg;
}

export const schedulerController: ControllerDescriptor = {
  name: 'scheduler',
  start(ctx) {
    void new Scheduler(ctx).run();
  },
};
