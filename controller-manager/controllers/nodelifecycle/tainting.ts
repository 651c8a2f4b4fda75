// The node lifecycle controller's taints: NoSchedule ones follow the node's
// conditions at once; the NoExecute ones (not-ready, unreachable) lead to
// evictions, so they go through a rate-limited queue per zone whose rate the
// controller sets from the zone's health.
import type { ControllerContext } from '../../controller';
import type { KubeObject } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { getCondition, type Condition } from '../../app/controller-util';
import { TAINT_UNSCHEDULABLE, matchTaint, type Taint } from '../../../shared/api/taints';
import type { NodeLifecycleOptions } from './nodelifecycle';
import { RateLimitedTimedQueue } from './rate-limited-queue';
import {
  CONDITION_TAINTS,
  CONDITION_TAINT_KEYS,
  NOT_READY_NO_EXECUTE,
  UNREACHABLE_NO_EXECUTE,
  swapNodeTaints,
  taintExists,
  zoneKey,
} from './taints';

export class NodeTainter {
  private readonly tainters = new Map<string, RateLimitedTimedQueue>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly nodes: SharedIndexInformer,
    private readonly o: NodeLifecycleOptions,
  ) {}

  // ---- NoSchedule taints from conditions ----------------------------------

  async doNoScheduleTaintingPass(name: string): Promise<void> {
    const node = this.nodes.lister().get(name);
    if (!node) return;
    const want: Taint[] = [];
    for (const c of (node.status?.conditions ?? []) as Condition[]) {
      const key = CONDITION_TAINTS[c.type]?.[c.status];
      if (key) want.push({ key, effect: 'NoSchedule' });
    }
    if (node.spec?.unschedulable) want.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
    const have = ((node.spec?.taints ?? []) as Taint[]).filter(
      (t) => t.effect === 'NoSchedule' && (t.key === TAINT_UNSCHEDULABLE || CONDITION_TAINT_KEYS.has(t.key)),
    );
    const add = want.filter((t) => !have.some((h) => matchTaint(h, t)));
    const del = have.filter((h) => !want.some((t) => matchTaint(h, t)));
    if (!add.length && !del.length) return;
    if (!(await swapNodeTaints(this.ctx.client, node, add, del, this.ctx.now(), this.ctx.signal)))
      throw new Error(`failed to swap taints of node ${name}`);
  }

  // ---- NoExecute taints, rate limited per zone ----------------------------

  tainter(zone: string): RateLimitedTimedQueue {
    let q = this.tainters.get(zone);
    if (!q) {
      q = new RateLimitedTimedQueue(this.o.evictionRate, () => this.ctx.now());
      this.tainters.set(zone, q);
    }
    return q;
  }

  async doNoExecuteTaintingPass(): Promise<void> {
    for (const [zone, q] of this.tainters) {
      await q.tryEach(async (v) => {
        const node = this.nodes.lister().get(v.value);
        if (!node) return [true];
        const ready = getCondition<Condition>(node.status?.conditions, 'Ready');
        if (!ready) return [false, 50];
        let add: Taint;
        let opposite: Taint;
        if (ready.status === 'False') [add, opposite] = [NOT_READY_NO_EXECUTE, UNREACHABLE_NO_EXECUTE];
        else if (ready.status === 'Unknown') [add, opposite] = [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE];
        else return [true];
        const ok = await swapNodeTaints(
          this.ctx.client,
          node,
          [add],
          [opposite],
          this.ctx.now(),
          this.ctx.signal,
        );
        if (ok) this.ctx.log.v(2)?.info('tainted node', { node: v.value, taint: add.key, zone });
        return [ok, 0];
      });
    }
  }

  private markNodeForTainting(node: KubeObject, status: 'False' | 'Unknown'): boolean {
    const q = this.tainter(zoneKey(node));
    const taints = node.spec?.taints as Taint[] | undefined;
    if (status === 'False' && !taintExists(taints, NOT_READY_NO_EXECUTE)) q.remove(node.metadata.name!);
    if (status === 'Unknown' && !taintExists(taints, UNREACHABLE_NO_EXECUTE)) q.remove(node.metadata.name!);
    return q.add(node.metadata.name!, node.metadata.uid ?? '');
  }

  /** Removes both NoExecute taints and any queued tainting; true when taints were removed. */
  async markNodeAsReachable(node: KubeObject): Promise<boolean> {
    const taints = node.spec?.taints as Taint[] | undefined;
    const had = taintExists(taints, UNREACHABLE_NO_EXECUTE) || taintExists(taints, NOT_READY_NO_EXECUTE);
    if (had) {
      const ok = await swapNodeTaints(
        this.ctx.client,
        node,
        [],
        [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE],
        this.ctx.now(),
        this.ctx.signal,
      );
      if (!ok) throw new Error(`failed to remove taints from node ${node.metadata.name}`);
    }
    this.tainter(zoneKey(node)).remove(node.metadata.name!);
    return had;
  }

  async processTaintBaseEviction(node: KubeObject, observed: Condition): Promise<void> {
    const taints = node.spec?.taints as Taint[] | undefined;
    switch (observed.status) {
      case 'False':
        if (taintExists(taints, UNREACHABLE_NO_EXECUTE)) {
          if (
            !(await swapNodeTaints(
              this.ctx.client,
              node,
              [NOT_READY_NO_EXECUTE],
              [UNREACHABLE_NO_EXECUTE],
              this.ctx.now(),
              this.ctx.signal,
            ))
          )
            this.ctx.log.error(
              'Failed to instantly swap UnreachableTaint to NotReadyTaint. Will try again in the next cycle',
            );
        } else if (this.markNodeForTainting(node, 'False')) {
          this.ctx.log
            .v(2)
            ?.info('Node is NotReady. Adding it to the Taint queue', { node: node.metadata.name });
        }
        break;
      case 'Unknown':
        if (taintExists(taints, NOT_READY_NO_EXECUTE)) {
          if (
            !(await swapNodeTaints(
              this.ctx.client,
              node,
              [UNREACHABLE_NO_EXECUTE],
              [NOT_READY_NO_EXECUTE],
              this.ctx.now(),
              this.ctx.signal,
            ))
          )
            this.ctx.log.error(
              'Failed to instantly swap NotReadyTaint to UnreachableTaint. Will try again in the next cycle',
            );
        } else if (this.markNodeForTainting(node, 'Unknown')) {
          this.ctx.log
            .v(2)
            ?.info('Node is unresponsive. Adding it to the Taint queue', { node: node.metadata.name });
        }
        break;
      case 'True':
        try {
          if (await this.markNodeAsReachable(node))
            this.ctx.log
              .v(2)
              ?.info('Node is healthy again, removed all taints', { node: node.metadata.name });
        } catch (err) {
          this.ctx.log.error('Failed to remove taints from node. Will retry in next iteration', {
            node: node.metadata.name,
            err: String(err),
          });
        }
        break;
    }
  }
}
