// The taint eviction controller (kube's taint manager): pods on a node with
// NoExecute taints they do not tolerate are deleted at once; pods tolerating
// them for tolerationSeconds are deleted when the shortest of those runs out
// (counted from when the eviction was first scheduled); pods tolerating them
// forever stay. A scheduled eviction is cancelled when the taints go away.
// Deleted pods first get the DisruptionTarget condition, like kube.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import { runWorkers, unwrapTombstone, type SharedIndexInformer } from '../../../shared/informers';
import { cachesSynced, getCondition, go, queueFor, type Condition } from '../../app/controller-util';
import { rfc3339 } from '../util/base';
import { stringifyJSONInt64 } from '../../../shared/codec/json-int64';
import { NODE_NAME_INDEX, podsByNode } from './nodelifecycle';
import { matchingTolerations, minTolerationSeconds } from './taints';
import type { Taint, Toleration } from '../../../shared/api/taints';

interface ScheduledEviction {
  createdAt: number;
  fireAt: number;
  timer: ReturnType<typeof setTimeout>;
}

const noExecute = (node: KubeObject | undefined): Taint[] =>
  ((node?.spec?.taints ?? []) as Taint[]).filter((t) => t.effect === 'NoExecute');

export class TaintEvictionController {
  private readonly nodes: SharedIndexInformer;
  private readonly pods: SharedIndexInformer;
  private readonly recorder: EventRecorderLike;
  private readonly scheduled = new Map<string, ScheduledEviction>();
  private readonly nodeQueue;
  private readonly podQueue;

  constructor(private readonly ctx: ControllerContext) {
    this.nodes = ctx.informers.forResource('nodes');
    this.pods = ctx.informers.forResource('pods', { indexers: podsByNode });
    this.recorder = ctx.recorder('taint-eviction-controller');
    this.nodeQueue = queueFor<string>(ctx, 'taint_eviction_nodes');
    this.podQueue = queueFor<string>(ctx, 'taint_eviction_pods');
    this.nodes.addEventHandler({
      onAdd: (n) => {
        if (noExecute(n).length) this.nodeQueue.add(n.metadata.name!);
      },
      onUpdate: (old, n) => {
        if (JSON.stringify(noExecute(old)) !== JSON.stringify(noExecute(n)))
          this.nodeQueue.add(n.metadata.name!);
      },
      onDelete: (o) => this.nodeQueue.add(unwrapTombstone(o).metadata.name!),
    });
    const podKey = (p: KubeObject) => `${p.metadata.namespace}/${p.metadata.name}`;
    this.pods.addEventHandler({
      onAdd: (p) => {
        if (p.spec?.nodeName) this.podQueue.add(podKey(p));
      },
      onUpdate: (old, p) => {
        const changed =
          old.spec?.nodeName !== p.spec?.nodeName ||
          stringifyJSONInt64(old.spec?.tolerations) !== stringifyJSONInt64(p.spec?.tolerations);
        if (p.spec?.nodeName && changed) this.podQueue.add(podKey(p));
      },
      onDelete: (o) => this.cancel(podKey(unwrapTombstone(o)), false),
    });
  }

  start(): void {
    this.ctx.signal.addEventListener('abort', () => {
      for (const s of this.scheduled.values()) clearTimeout(s.timer);
      this.scheduled.clear();
    });
    go(this.ctx, 'taint eviction controller', async () => {
      if (!(await cachesSynced(this.ctx, 'taint-eviction-controller', this.nodes, this.pods))) return;
      go(this.ctx, 'taint eviction pod workers', () =>
        runWorkers(this.podQueue, (k) => this.handlePod(k), { workers: 4, signal: this.ctx.signal }),
      );
      await runWorkers(this.nodeQueue, (n) => this.handleNode(n), { workers: 8, signal: this.ctx.signal });
    });
  }

  private podRef(key: string): KubeObject {
    const [namespace, name] = key.split('/');
    const pod = this.pods.lister().get(key);
    return pod ?? { apiVersion: 'v1', kind: 'Pod', metadata: { namespace, name } };
  }

  /** Cancels a scheduled eviction (with the kube event when asked). */
  private cancel(key: string, withEvent: boolean): void {
    const s = this.scheduled.get(key);
    if (!s) return;
    clearTimeout(s.timer);
    this.scheduled.delete(key);
    if (withEvent)
      this.recorder.event(
        this.podRef(key),
        'Normal',
        'TaintManagerEviction',
        'Cancelling',
        `Cancelling deletion of Pod ${key}`,
      );
  }

  private schedule(key: string, createdAt: number, fireAt: number): void {
    const delay = Math.max(0, fireAt - this.ctx.now());
    const timer = setTimeout(() => {
      if (this.scheduled.get(key)?.timer !== timer) return;
      this.scheduled.delete(key);
      this.evict(key).catch((err) =>
        this.ctx.log.warn('failed to evict pod', { pod: key, err: String(err) }),
      );
    }, delay);
    this.scheduled.set(key, { createdAt, fireAt, timer });
  }

  private processPodOnNode(key: string, tolerations: Toleration[], taints: Taint[]): void {
    const now = this.ctx.now();
    if (!taints.length) {
      this.cancel(key, true);
      return;
    }
    const [all, used] = matchingTolerations(taints, tolerations);
    if (!all) {
      this.ctx.log.v(2)?.info('Not all taints are tolerated after update for pod on node', { pod: key });
      this.cancel(key, true);
      this.schedule(key, now, now);
      return;
    }
    const min = minTolerationSeconds(used);
    if (min < 0) {
      this.ctx.log
        .v(4)
        ?.info('Current tolerations for pod tolerate forever, cancelling any scheduled deletion', {
          pod: key,
        });
      this.cancel(key, true);
      return;
    }
    let start = now;
    const trigger = now + min * 1000;
    const existing = this.scheduled.get(key);
    if (existing) {
      start = existing.createdAt;
      if (start + min * 1000 < trigger) return;
      this.cancel(key, true);
    }
    this.schedule(key, start, trigger);
  }

  async handleNode(name: string): Promise<void> {
    const node = this.nodes.lister().get(name);
    const taints = noExecute(node);
    const pods = this.pods.lister().byIndex(NODE_NAME_INDEX, name);
    for (const pod of pods) {
      const key = `${pod.metadata.namespace}/${pod.metadata.name}`;
      if (!taints.length) this.cancel(key, true);
      else this.processPodOnNode(key, pod.spec?.tolerations ?? [], taints);
    }
  }

  async handlePod(key: string): Promise<void> {
    const pod = this.pods.lister().get(key);
    if (!pod) {
      this.cancel(key, true);
      return;
    }
    const nodeName = pod.spec?.nodeName;
    if (!nodeName) return;
    const taints = noExecute(this.nodes.lister().get(nodeName));
    if (!taints.length) {
      this.cancel(key, true);
      return;
    }
    this.processPodOnNode(key, pod.spec?.tolerations ?? [], taints);
  }

  /** Marks the pod DisruptionTarget and deletes it (kube's addConditionAndDeletePod), with retries. */
  private async evict(key: string): Promise<void> {
    const [ns, name] = key.split('/');
    this.recorder.event(
      this.podRef(key),
      'Normal',
      'TaintManagerEviction',
      'Marking',
      `Marking for deletion Pod ${key}`,
    );
    const pods = this.ctx.client.resource('pods').namespace(ns);
    let lastErr: unknown;
    for (let attempt = 0; attempt < 5 && !this.ctx.signal.aborted; attempt++) {
      try {
        const pod = await pods.get(name, { signal: this.ctx.signal });
        const conds: Condition[] = [...(pod.status?.conditions ?? [])];
        if (getCondition(conds, 'DisruptionTarget')?.status !== 'True') {
          const i = conds.findIndex((c) => c.type === 'DisruptionTarget');
          const c: Condition = {
            type: 'DisruptionTarget',
            status: 'True',
            reason: 'DeletionByTaintManager',
            message: 'Taint manager: deleting due to NoExecute taint',
            lastTransitionTime: rfc3339(this.ctx.now()),
          };
          if (i >= 0) conds[i] = c;
          else conds.push(c);
          await pods.updateStatus(
            { ...pod, status: { ...pod.status, conditions: conds } },
            { signal: this.ctx.signal },
          );
        }
        await pods.delete(name, { signal: this.ctx.signal });
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        lastErr = err;
        await new Promise((r) => setTimeout(r, 10));
      }
    }
    if (lastErr) throw lastErr;
  }
}

export function startTaintEvictionController(ctx: ControllerContext): TaintEvictionController | undefined {
  if (ctx.options.enableTaintManager === false) {
    ctx.log.info('taint-based eviction is disabled (--enable-taint-manager=false)');
    return undefined;
  }
  const c = new TaintEvictionController(ctx);
  c.start();
  return c;
}

export const taintEvictionController: ControllerDescriptor = {
  name: 'taint-eviction-controller',
  start: (ctx) => void startTaintEvictionController(ctx),
};
