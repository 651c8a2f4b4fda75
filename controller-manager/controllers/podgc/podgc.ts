// The pod garbage collector (kube's podgc), every 20 s:
// - terminated pods (Succeeded/Failed) beyond --terminated-pod-gc-threshold
//   are deleted, oldest first (0 or less: never);
// - terminating pods on nodes that are not Ready and carry the
//   node.kubernetes.io/out-of-service taint are deleted at once;
// - pods bound to nodes that no longer exist (checked against the apiserver
//   after a 40 s quarantine) are marked Failed and deleted;
// - terminating pods that were never scheduled are deleted at once.
// Deletions here are forced (grace period 0).
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import { DelayingQueue, yielder, type SharedIndexInformer } from '../../../shared/informers';
import { cachesSynced, every, getCondition, go, type Condition } from '../../app/controller-util';
import { parseTime, rfc3339 } from '../util/base';
import { TAINT_OUT_OF_SERVICE, type Taint } from '../../../shared/api/taints';

export interface PodGCOptions {
  threshold: number;
  checkPeriodMs: number;
  quarantineMs: number;
}

const isTerminated = (p: KubeObject) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

const isOutOfService = (n: KubeObject) =>
  getCondition<Condition>(n.status?.conditions, 'Ready')?.status !== 'True' &&
  ((n.spec?.taints ?? []) as Taint[]).some((t) => t.key === TAINT_OUT_OF_SERVICE && t.effect === 'NoExecute');

interface PodsToCollect {
  terminated: KubeObject[];
  terminatingOutOfService: KubeObject[];
  /** Pods by the name of a node the cache does not hold. */
  onMissingNodes: Map<string, KubeObject[]>;
  unscheduledTerminating: KubeObject[];
}

/**
 * One pass over every pod sorts out what each collection needs. At 150,000 pods it takes 10-20 ms,
 * more with a large heap; past 20 ms it lets the event loop turn, so the lease renewal and the
 * other controllers are never held up by it.
 */
export async function podsToCollect(
  pods: KubeObject[],
  nodes: KubeObject[],
  pause = yielder(),
): Promise<PodsToCollect> {
  const existing = new Set<string>();
  const outOfService = new Set<string>();
  for (const n of nodes) {
    existing.add(n.metadata.name!);
    if (isOutOfService(n)) outOfService.add(n.metadata.name!);
  }
  const found: PodsToCollect = {
    terminated: [],
    terminatingOutOfService: [],
    onMissingNodes: new Map(),
    unscheduledTerminating: [],
  };
  for (let i = 0; i < pods.length; i++) {
    if ((i & 1023) === 0) {
      const turn = pause();
      if (turn) await turn;
    }
    const p = pods[i];
    const node: string | undefined = p.spec?.nodeName;
    const terminating = !!p.metadata.deletionTimestamp;
    if (isTerminated(p)) found.terminated.push(p);
    if (terminating && !node) found.unscheduledTerminating.push(p);
    if (!node) continue;
    if (terminating && outOfService.has(node)) found.terminatingOutOfService.push(p);
    if (!existing.has(node)) {
      const onNode = found.onMissingNodes.get(node);
      if (onNode) onNode.push(p);
      else found.onMissingNodes.set(node, [p]);
    }
  }
  return found;
}

export class PodGCController {
  private readonly pods: SharedIndexInformer;
  private readonly nodes: SharedIndexInformer;
  private readonly nodeQueue = new DelayingQueue<string>({ name: 'orphaned_pods_nodes' });

  constructor(
    private readonly ctx: ControllerContext,
    private readonly o: PodGCOptions,
  ) {
    this.pods = ctx.informers.forResource('pods');
    this.nodes = ctx.informers.forResource('nodes');
  }

  start(): void {
    this.ctx.signal.addEventListener('abort', () => this.nodeQueue.shutDown(), { once: true });
    go(this.ctx, 'pod garbage collector', async () => {
      if (!(await cachesSynced(this.ctx, 'GC', this.pods, this.nodes))) return;
      every(this.ctx, this.o.checkPeriodMs, 'pod gc', () => this.gc());
    });
  }

  async gc(): Promise<void> {
    const nodes = this.nodes.lister().list();
    const found = await podsToCollect(this.pods.lister().list(), nodes);
    if (this.o.threshold > 0) await this.gcTerminated(found.terminated);
    await this.deleteAll(found.terminatingOutOfService, 'terminating pod on an out-of-service node');
    await this.gcOrphaned(found.onMissingNodes);
    await this.deleteAll(found.unscheduledTerminating, 'terminating pod that was never scheduled');
  }

  private async deleteAll(pods: KubeObject[], why: string): Promise<void> {
    await Promise.all(pods.map((p) => this.forceDelete(p, why)));
  }

  private async forceDelete(
    pod: KubeObject,
    why: string,
    markFailed?: { reason: string; message: string },
  ): Promise<void> {
    const pods = this.ctx.client.resource('pods').namespace(pod.metadata.namespace!);
    this.ctx.log.info(`PodGC is force deleting Pod: ${why}`, {
      pod: `${pod.metadata.namespace}/${pod.metadata.name}`,
    });
    try {
      if (markFailed && !isTerminated(pod)) {
        // The pod ends Failed with a DisruptionTarget condition saying why.
        const conds: Condition[] = [...(pod.status?.conditions ?? [])].filter(
          (c) => c.type !== 'DisruptionTarget',
        );
        conds.push({
          type: 'DisruptionTarget',
          status: 'True',
          reason: markFailed.reason,
          message: markFailed.message,
          lastTransitionTime: rfc3339(this.ctx.now()),
        });
        await pods.updateStatus(
          { ...pod, status: { ...pod.status, phase: 'Failed', conditions: conds } },
          { signal: this.ctx.signal },
        );
      }
      await pods.delete(pod.metadata.name!, {
        gracePeriodSeconds: 0,
        preconditions: { uid: pod.metadata.uid },
        signal: this.ctx.signal,
      });
    } catch (err) {
      if (!isNotFound(err))
        this.ctx.log.warn('failed to delete pod', { pod: pod.metadata.name, err: String(err) });
    }
  }

  private async gcTerminated(terminated: KubeObject[]): Promise<void> {
    const deleteCount = terminated.length - this.o.threshold;
    if (deleteCount <= 0) return;
    this.ctx.log.info('Garbage collecting pods', { numPods: deleteCount });
    // Evicted pods first, then the oldest.
    const order = new Map<KubeObject, [number, number]>();
    for (const p of terminated)
      order.set(p, [p.status?.reason === 'Evicted' ? 0 : 1, parseTime(p.metadata.creationTimestamp) ?? 0]);
    terminated.sort((a, b) => {
      const [ea, ta] = order.get(a)!;
      const [eb, tb] = order.get(b)!;
      return ea - eb || ta - tb || String(a.metadata.name).localeCompare(String(b.metadata.name));
    });
    await this.deleteAll(terminated.slice(0, deleteCount), 'terminated pod threshold exceeded');
  }

  /** Pods bound to nodes missing from the cache; a node counts as deleted once the apiserver says so after the quarantine. */
  private async gcOrphaned(onMissingNodes: Map<string, KubeObject[]>): Promise<void> {
    for (const node of onMissingNodes.keys()) this.nodeQueue.addAfter(node, this.o.quarantineMs);
    const deleted = new Set<string>();
    while (this.nodeQueue.len() > 0) {
      const r = await this.nodeQueue.get();
      if (r.shutdown) return;
      const name = r.item;
      this.nodeQueue.done(name);
      if (this.nodes.lister().get(name)) continue;
      try {
        await this.ctx.client.resource('nodes').get(name, { signal: this.ctx.signal });
      } catch (err) {
        if (isNotFound(err)) deleted.add(name);
        else this.ctx.log.warn('failed to check node existence', { node: name, err: String(err) });
      }
    }
    for (const name of deleted) {
      for (const p of onMissingNodes.get(name) ?? []) {
        await this.forceDelete(p, 'orphaned (bound to a node that no longer exists)', {
          reason: 'DeletionByPodGC',
          message: 'PodGC: node no longer exists',
        });
      }
    }
  }
}

export function startPodGCController(
  ctx: ControllerContext,
  overrides: Partial<PodGCOptions> = {},
): PodGCController {
  const c = new PodGCController(ctx, {
    threshold: ctx.options.terminatedPodGcThreshold ?? 12500,
    checkPeriodMs: 20_000,
    quarantineMs: 40_000,
    ...overrides,
  });
  c.start();
  return c;
}

export const podGCController: ControllerDescriptor = {
  name: 'podgc',
  aliases: ['pod-garbage-collector-controller'],
  start: (ctx) => void startPodGCController(ctx),
};
