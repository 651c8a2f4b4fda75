// Node health as the node lifecycle controller judges it: when each node last
// gave a sign of life (a Ready heartbeat or a renewed Lease); past the grace
// period its conditions become Unknown, and its pods are marked not ready.
import type { ControllerContext, EventRecorderLike } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { getCondition, type Condition } from '../../app/controller-util';
import { NODE_LEASE_NAMESPACE } from '../../../shared/api/nodes';
import { parseTime, rfc3339 } from '../util/base';
import type { NodeLifecycleOptions } from './nodelifecycle';

interface NodeHealth {
  /** The Ready condition last seen. */
  ready?: Condition;
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  leaseRenewTime?: number;
}

/** What the controller last saw of each node, and when. */
export class NodeHealthTracker {
  private readonly health = new Map<string, NodeHealth>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly leases: SharedIndexInformer,
    private readonly o: NodeLifecycleOptions,
  ) {}

  forget(name: string): void {
    this.health.delete(name);
  }

  /** On leaving full disruption every node's grace period starts over, so none is judged on the outage. */
  resetProbes(nodes: KubeObject[], now: number): void {
    for (const node of nodes) {
      const h = this.health.get(node.metadata.name!);
      if (h) {
        h.probeTimestamp = now;
        h.readyTransitionTimestamp = now;
      }
    }
  }

  /**
   * Judges one node; returns [observed Ready condition (before any change of
   * ours), current Ready condition (after)]. Marks the node's conditions
   * Unknown when its heartbeats are overdue.
   */
  async tryUpdateNodeHealth(node: KubeObject): Promise<[Condition, Condition | undefined]> {
    const name = node.metadata.name!;
    const created = parseTime(node.metadata.creationTimestamp) ?? this.ctx.now();
    let health = this.health.get(name);
    const conditions: Condition[] = (node.status?.conditions ?? []).map((c: Condition) => ({ ...c }));
    let current = getCondition(conditions, 'Ready');
    let observed: Condition;
    let grace: number;
    if (!current) {
      // Never posted: a fake Unknown condition dated at creation.
      observed = {
        type: 'Ready',
        status: 'Unknown',
        lastHeartbeatTime: node.metadata.creationTimestamp,
        lastTransitionTime: node.metadata.creationTimestamp,
      };
      grace = this.o.startupGracePeriodMs;
      if (health) health.ready = undefined;
      else health = { probeTimestamp: created, readyTransitionTimestamp: created };
    } else {
      observed = { ...current };
      grace = this.o.monitorGracePeriodMs;
    }
    const saved = health?.ready;
    const now = this.ctx.now();
    if (!health) {
      this.ctx.log.info('Missing timestamp for Node. Assuming now as a timestamp', { node: name });
      health = { ready: current, probeTimestamp: now, readyTransitionTimestamp: now };
    } else if (!saved && current) {
      this.ctx.log.v(1)?.info('Creating timestamp entry for newly observed Node', { node: name });
      health = {
        ready: current,
        probeTimestamp: now,
        readyTransitionTimestamp: now,
        leaseRenewTime: health.leaseRenewTime,
      };
    } else if (saved && !current) {
      this.ctx.log.error('ReadyCondition was removed from Status of Node', { node: name });
      health = { probeTimestamp: now, readyTransitionTimestamp: now, leaseRenewTime: health.leaseRenewTime };
    } else if (saved && current && saved.lastHeartbeatTime !== current.lastHeartbeatTime) {
      const transition =
        saved.lastTransitionTime !== current.lastTransitionTime ? now : health.readyTransitionTimestamp;
      health = {
        ready: current,
        probeTimestamp: now,
        readyTransitionTimestamp: transition,
        leaseRenewTime: health.leaseRenewTime,
      };
    }
    // A renewed Lease is a heartbeat too.
    const lease = this.leases.lister().get(`${NODE_LEASE_NAMESPACE}/${name}`);
    const renew = parseTime(lease?.spec?.renewTime);
    if (
      lease &&
      renew !== undefined &&
      (health.leaseRenewTime === undefined || health.leaseRenewTime < renew)
    ) {
      health.leaseRenewTime = renew;
      health.probeTimestamp = now;
    }
    this.health.set(name, health);

    if (now > health.probeTimestamp + grace) {
      const ts = rfc3339(now);
      for (const type of ['Ready', 'MemoryPressure', 'DiskPressure', 'PIDPressure']) {
        const c = getCondition(conditions, type);
        if (!c) {
          this.ctx.log
            .v(2)
            ?.info('Condition of node was never updated by kubelet', { node: name, nodeConditionType: type });
          conditions.push({
            type,
            status: 'Unknown',
            reason: 'NodeStatusNeverUpdated',
            message: 'Kubelet never posted node status.',
            lastHeartbeatTime: node.metadata.creationTimestamp,
            lastTransitionTime: ts,
          });
        } else if (c.status !== 'Unknown') {
          this.ctx.log.v(2)?.info("Node hasn't been updated", {
            node: name,
            nodeConditionType: type,
            durationMs: now - health.probeTimestamp,
          });
          c.status = 'Unknown';
          c.reason = 'NodeStatusUnknown';
          c.message = 'Kubelet stopped posting node status.';
          c.lastTransitionTime = ts;
        }
      }
      current = getCondition(conditions, 'Ready');
      if (JSON.stringify(current) !== JSON.stringify(observed)) {
        await this.ctx.client
          .resource('nodes')
          .updateStatus({ ...node, status: { ...node.status, conditions } }, { signal: this.ctx.signal });
        this.health.set(name, {
          ready: current,
          probeTimestamp: health.probeTimestamp,
          readyTransitionTimestamp: now,
          leaseRenewTime: health.leaseRenewTime,
        });
      }
    }
    return [observed, current];
  }
}

/** MarkPodsNotReady: the pods' Ready condition becomes False. */
export async function markPodsNotReady(
  ctx: ControllerContext,
  recorder: EventRecorderLike,
  pods: KubeObject[],
  nodeName: string,
): Promise<void> {
  const errs: string[] = [];
  for (const p of pods) {
    if (p.spec?.nodeName !== nodeName) continue;
    const conds: Condition[] = (p.status?.conditions ?? []).map((c: Condition) => ({ ...c }));
    const ready = getCondition(conds, 'Ready');
    if (!ready || ready.status === 'False') continue;
    ready.status = 'False';
    ready.lastTransitionTime = rfc3339(ctx.now());
    ctx.log.v(2)?.info('Updating ready status of pod to false', {
      pod: `${p.metadata.namespace}/${p.metadata.name}`,
    });
    try {
      await ctx.client
        .resource('pods')
        .namespace(p.metadata.namespace!)
        .updateStatus({ ...p, status: { ...p.status, conditions: conds } }, { signal: ctx.signal });
    } catch (err) {
      if (isNotFound(err)) continue;
      errs.push(String(err));
      continue;
    }
    recorder.event(p, 'Warning', 'NodeNotReady', 'NodeNotReady', 'Node is not ready');
  }
  if (errs.length) throw new Error(errs.join('; '));
}
