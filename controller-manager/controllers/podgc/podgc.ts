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
import { DelayingQueue, type SharedIndexInformer } from '../../../shared/informers';
import { cachesSynced, every, getCondition, go, type Condition } from '../../app/controller-util';
import { parseTime, rfc3339 } from '../util/base';
import { TAINT_OUT_OF_SERVICE, type Taint } from '../../../shared/api/taints';

export interface PodGCOptions {
  threshold: number;
  checkPeriodMs: number;
  quarantineMs: number;
}

const isTerminated = (p: KubeObject) => p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed';

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
    const pods = this.pods.lister().list();
    const nodes = this.nodes.lister().list();
    if (this.o.threshold > 0) await this.gcTerminated(pods);
    await this.gcTerminating(pods, nodes);
    await this.gcOrphaned(pods, nodes);
    await this.gcUnscheduledTerminating(pods);
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

  private async gcTerminated(pods: KubeObject[]): Promise<void> {
    const terminated = pods.filter(isTerminated);
    const deleteCount = terminated.length - this.o.threshold;
    if (deleteCount <= 0) return;
    this.ctx.log.info('Garbage collecting pods', { numPods: deleteCount });
    // Evicted pods first, then the oldest.
    const evicted = (p: KubeObject) => (p.status?.reason === 'Evicted' ? 0 : 1);
    terminated.sort(
      (a, b) =>
        evicted(a) - evicted(b) ||
        (parseTime(a.metadata.creationTimestamp) ?? 0) - (parseTime(b.metadata.creationTimestamp) ?? 0) ||
        String(a.metadata.name).localeCompare(String(b.metadata.name)),
    );
    await Promise.all(
      terminated.slice(0, deleteCount).map((p) => this.forceDelete(p, 'terminated pod threshold exceeded')),
    );
  }

  private async gcTerminating(pods: KubeObject[], nodes: KubeObject[]): Promise<void> {
    const outOfService = new Set(
      nodes
        .filter((n) => getCondition<Condition>(n.status?.conditions, 'Ready')?.status !== 'True')
        .filter((n) =>
          ((n.spec?.taints ?? []) as Taint[]).some(
            (t) => t.key === TAINT_OUT_OF_SERVICE && t.effect === 'NoExecute',
          ),
        )
        .map((n) => n.metadata.name!),
    );
    if (!outOfService.size) return;
    const victims = pods.filter((p) => p.metadata.deletionTimestamp && outOfService.has(p.spec?.nodeName));
    await Promise.all(victims.map((p) => this.forceDelete(p, 'terminating pod on an out-of-service node')));
  }

  private async gcOrphaned(pods: KubeObject[], nodes: KubeObject[]): Promise<void> {
    const existing = new Set(nodes.map((n) => n.metadata.name!));
    // Nodes referenced by pods but missing from the cache wait out a quarantine before a check with the apiserver.
    for (const p of pods) {
      const node = p.spec?.nodeName;
      if (node && !existing.has(node)) this.nodeQueue.addAfter(node, this.o.quarantineMs);
    }
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
    if (!deleted.size) return;
    for (const p of pods) {
      if (!deleted.has(p.spec?.nodeName)) continue;
      await this.forceDelete(p, 'orphaned (bound to a node that no longer exists)', {
        reason: 'DeletionByPodGC',
        message: 'PodGC: node no longer exists',
      });
    }
  }

  private async gcUnscheduledTerminating(pods: KubeObject[]): Promise<void> {
    const victims = pods.filter((p) => p.metadata.deletionTimestamp && !p.spec?.nodeName);
    await Promise.all(victims.map((p) => this.forceDelete(p, 'terminating pod that was never scheduled')));
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
