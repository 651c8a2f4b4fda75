// The node lifecycle controller (kube's nodelifecycle.Controller with
// taint-based eviction):
// - every --node-monitor-period, each node's health is judged from its
//   Ready condition heartbeats and its Lease in kube-node-lease; after
//   --node-monitor-grace-period (--node-startup-grace-period for a node that
//   never posted status) without either, its Ready, MemoryPressure,
//   DiskPressure and PIDPressure conditions become Unknown ("Kubelet stopped
//   posting node status.") and its pods get Ready=False;
// - not-ready / unreachable nodes get the matching NoExecute taint through a
//   per-zone rate-limited queue (--node-eviction-rate; in an unhealthy zone
//   --secondary-node-eviction-rate, or 0 up to --large-cluster-size-threshold
//   nodes; all zones fully disrupted stops tainting altogether); healthy nodes
//   lose it; the taint eviction controller then evicts intolerant pods;
// - conditions map to NoSchedule taints (not-ready, unreachable, pressure,
//   unschedulable) on every node change.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import { isNotFound, type KubeObject } from '../../../shared/client';
import { runWorkers, type SharedIndexInformer } from '../../../shared/informers';
import { cachesSynced, every, getCondition, go, queueFor, type Condition } from '../../app/controller-util';
import { parseTime, rfc3339 } from '../util/base';
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
import { TAINT_UNSCHEDULABLE, matchTaint, type Taint } from '../../../shared/api/taints';
import { NODE_LEASE_NAMESPACE } from '../../../shared/api/nodes';

export const NODE_NAME_INDEX = 'spec.nodeName';
export const podsByNode = {
  [NODE_NAME_INDEX]: (p: KubeObject) => (p.spec?.nodeName ? [p.spec.nodeName as string] : []),
};

const EXCLUDE_DISRUPTION_LABEL = 'node.kubernetes.io/exclude-disruption';
/** kube's scheduler.NodeEvictionPeriod: how often the NoExecute tainting queues are worked. */
const TAINTING_PERIOD_MS = 100;
const NODE_UPDATE_WORKERS = 8;

type ZoneState = 'Initial' | 'Normal' | 'FullDisruption' | 'PartialDisruption';

interface NodeHealth {
  /** The Ready condition last seen. */
  ready?: Condition;
  probeTimestamp: number;
  readyTransitionTimestamp: number;
  leaseRenewTime?: number;
}

export interface NodeLifecycleOptions {
  monitorPeriodMs: number;
  monitorGracePeriodMs: number;
  startupGracePeriodMs: number;
  evictionRate: number;
  secondaryEvictionRate: number;
  largeClusterThreshold: number;
  unhealthyZoneThreshold: number;
}

export function nodeLifecycleOptions(o: Record<string, any>): NodeLifecycleOptions {
  return {
    monitorPeriodMs: o.nodeMonitorPeriod ?? 5_000,
    monitorGracePeriodMs: o.nodeMonitorGracePeriod ?? 40_000,
    startupGracePeriodMs: o.nodeStartupGracePeriod ?? 60_000,
    evictionRate: o.nodeEvictionRate ?? 0.1,
    secondaryEvictionRate: o.secondaryNodeEvictionRate ?? 0.01,
    largeClusterThreshold: o.largeClusterSizeThreshold ?? 50,
    unhealthyZoneThreshold: o.unhealthyZoneThreshold ?? 0.55,
  };
}

export class NodeLifecycleController {
  private readonly nodes: SharedIndexInformer;
  private readonly pods: SharedIndexInformer;
  private readonly leases: SharedIndexInformer;
  private readonly health = new Map<string, NodeHealth>();
  private readonly known = new Map<string, KubeObject>();
  private readonly zoneStates = new Map<string, ZoneState>();
  private readonly tainters = new Map<string, RateLimitedTimedQueue>();
  private readonly nodesToRetry = new Set<string>();
  private readonly recorder: EventRecorderLike;
  private readonly nodeUpdates;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly o: NodeLifecycleOptions,
  ) {
    this.nodes = ctx.informers.forResource('nodes');
    this.pods = ctx.informers.forResource('pods', { indexers: podsByNode });
    this.leases = ctx.informers.forResource('leases.coordination.k8s.io', {
      namespace: NODE_LEASE_NAMESPACE,
    });
    this.recorder = ctx.recorder('node-controller');
    this.nodeUpdates = queueFor<string>(ctx, 'node_lifecycle_controller');
    this.nodes.addEventHandler({
      onAdd: (n) => this.nodeUpdates.add(n.metadata.name!),
      onUpdate: (_old, n) => this.nodeUpdates.add(n.metadata.name!),
    });
  }

  private now(): number {
    return this.ctx.now();
  }

  start(): void {
    go(this.ctx, 'node lifecycle controller', async () => {
      if (!(await cachesSynced(this.ctx, 'taint', this.leases, this.nodes, this.pods))) return;
      this.ctx.log.info('Starting node controller');
      go(this.ctx, 'node taint workers', () =>
        runWorkers(this.nodeUpdates, (name) => this.doNoScheduleTaintingPass(name), {
          workers: NODE_UPDATE_WORKERS,
          signal: this.ctx.signal,
        }),
      );
      every(this.ctx, TAINTING_PERIOD_MS, 'NoExecute tainting pass', () => this.doNoExecuteTaintingPass());
      every(this.ctx, this.o.monitorPeriodMs, 'monitor node health', () => this.monitorNodeHealth());
    });
  }

  private event(node: KubeObject, type: 'Normal' | 'Warning', reason: string, note: string): void {
    this.recorder.event(
      { apiVersion: 'v1', kind: 'Node', name: node.metadata.name, uid: node.metadata.uid },
      type,
      reason,
      'NodeLifecycle',
      note,
    );
  }

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
    if (!(await swapNodeTaints(this.ctx.client, node, add, del, this.now(), this.ctx.signal)))
      throw new Error(`failed to swap taints of node ${name}`);
  }

  // ---- NoExecute taints, rate limited per zone ----------------------------

  private tainter(zone: string): RateLimitedTimedQueue {
    let q = this.tainters.get(zone);
    if (!q) {
      q = new RateLimitedTimedQueue(this.o.evictionRate, () => this.now());
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
          this.now(),
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
  private async markNodeAsReachable(node: KubeObject): Promise<boolean> {
    const taints = node.spec?.taints as Taint[] | undefined;
    const had = taintExists(taints, UNREACHABLE_NO_EXECUTE) || taintExists(taints, NOT_READY_NO_EXECUTE);
    if (had) {
      const ok = await swapNodeTaints(
        this.ctx.client,
        node,
        [],
        [UNREACHABLE_NO_EXECUTE, NOT_READY_NO_EXECUTE],
        this.now(),
        this.ctx.signal,
      );
      if (!ok) throw new Error(`failed to remove taints from node ${node.metadata.name}`);
    }
    this.tainter(zoneKey(node)).remove(node.metadata.name!);
    return had;
  }

  private async processTaintBaseEviction(node: KubeObject, observed: Condition): Promise<void> {
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
              this.now(),
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
              this.now(),
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

  // ---- health ---------------------------------------------------------------

  /**
   * Judges one node; returns [observed Ready condition (before any change of
   * ours), current Ready condition (after)]. Marks the node's conditions
   * Unknown when its heartbeats are overdue.
   */
  async tryUpdateNodeHealth(node: KubeObject): Promise<[Condition, Condition | undefined]> {
    const name = node.metadata.name!;
    const created = parseTime(node.metadata.creationTimestamp) ?? this.now();
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
    const now = this.now();
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

  /** MarkPodsNotReady: the pods' Ready condition becomes False. */
  private async markPodsNotReady(pods: KubeObject[], nodeName: string): Promise<void> {
    const errs: string[] = [];
    for (const p of pods) {
      if (p.spec?.nodeName !== nodeName) continue;
      const conds: Condition[] = (p.status?.conditions ?? []).map((c: Condition) => ({ ...c }));
      const ready = getCondition(conds, 'Ready');
      if (!ready || ready.status === 'False') continue;
      ready.status = 'False';
      ready.lastTransitionTime = rfc3339(this.now());
      this.ctx.log.v(2)?.info('Updating ready status of pod to false', {
        pod: `${p.metadata.namespace}/${p.metadata.name}`,
      });
      try {
        await this.ctx.client
          .resource('pods')
          .namespace(p.metadata.namespace!)
          .updateStatus({ ...p, status: { ...p.status, conditions: conds } }, { signal: this.ctx.signal });
      } catch (err) {
        if (isNotFound(err)) continue;
        errs.push(String(err));
        continue;
      }
      this.recorder.event(p, 'Warning', 'NodeNotReady', 'NodeNotReady', 'Node is not ready');
    }
    if (errs.length) throw new Error(errs.join('; '));
  }

  async monitorNodeHealth(): Promise<void> {
    const nodes = this.nodes.lister().list();
    const seen = new Set<string>();
    for (const node of nodes) {
      const name = node.metadata.name!;
      seen.add(name);
      if (this.known.has(name)) continue;
      this.ctx.log.v(1)?.info('Controller observed a new Node', { node: name });
      this.event(node, 'Normal', 'RegisteredNode', `Registered Node ${name} in Controller`);
      this.known.set(name, node);
      const zone = zoneKey(node);
      if (!this.zoneStates.has(zone)) this.zoneStates.set(zone, 'Initial');
      this.tainter(zone);
      try {
        await this.markNodeAsReachable(node);
      } catch (err) {
        this.ctx.log.warn('failed to remove taints from a new node', { node: name, err: String(err) });
      }
    }
    for (const [name, node] of this.known) {
      if (seen.has(name)) continue;
      this.ctx.log.v(1)?.info('Controller observed a Node deletion', { node: name });
      this.event(node, 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      this.known.delete(name);
      this.health.delete(name);
    }

    const zoneConditions = new Map<string, (Condition | undefined)[]>();
    let next = 0;
    const worker = async () => {
      while (next < nodes.length) {
        await this.updateNode(nodes[next++], zoneConditions);
      }
    };
    await Promise.all(Array.from({ length: Math.min(NODE_UPDATE_WORKERS, nodes.length) }, worker));
    await this.handleDisruption(zoneConditions, nodes);
  }

  private async updateNode(
    cached: KubeObject,
    zoneConditions: Map<string, (Condition | undefined)[]>,
  ): Promise<void> {
    let node = cached;
    let observed: Condition | undefined;
    let current: Condition | undefined;
    for (let attempt = 1; ; attempt++) {
      try {
        [observed, current] = await this.tryUpdateNodeHealth(node);
        break;
      } catch (err) {
        if (attempt >= 5 || this.ctx.signal.aborted) {
          this.ctx.log.error(
            'Update health of Node from Controller error, Skipping - no pods will be evicted',
            {
              node: cached.metadata.name,
              err: String(err),
            },
          );
          return;
        }
        try {
          node = await this.ctx.client
            .resource('nodes')
            .get(cached.metadata.name!, { signal: this.ctx.signal });
        } catch {
          this.ctx.log.error(
            'Failed while getting a Node to retry updating node health. Probably Node was deleted',
            {
              node: cached.metadata.name,
            },
          );
          return;
        }
      }
    }
    const name = node.metadata.name!;
    if (!node.metadata.labels?.[EXCLUDE_DISRUPTION_LABEL]) {
      const zone = zoneKey(node);
      const list = zoneConditions.get(zone) ?? [];
      list.push(current);
      zoneConditions.set(zone, list);
    }
    if (!current) {
      this.nodesToRetry.delete(name);
      return;
    }
    const pods = this.pods.lister().byIndex(NODE_NAME_INDEX, name);
    await this.processTaintBaseEviction(node, observed!);
    const needsRetry = this.nodesToRetry.has(name);
    const becameNotReady = current.status !== 'True' && observed!.status === 'True';
    if (becameNotReady)
      this.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
    if (becameNotReady || (needsRetry && observed!.status !== 'True')) {
      try {
        await this.markPodsNotReady(pods, name);
      } catch (err) {
        this.ctx.log.warn('unable to mark all pods NotReady on node; queuing for retry', {
          node: name,
          err: String(err),
        });
        this.nodesToRetry.add(name);
        return;
      }
    }
    this.nodesToRetry.delete(name);
  }

  // ---- zones ----------------------------------------------------------------

  /** ComputeZoneState: how many nodes are not ready, and what that makes the zone. */
  computeZoneState(conds: (Condition | undefined)[]): [number, ZoneState] {
    let ready = 0;
    let notReady = 0;
    for (const c of conds) {
      if (c?.status === 'True') ready++;
      else notReady++;
    }
    if (ready === 0 && notReady > 0) return [notReady, 'FullDisruption'];
    if (notReady > 2 && notReady / (notReady + ready) >= this.o.unhealthyZoneThreshold)
      return [notReady, 'PartialDisruption'];
    return [notReady, 'Normal'];
  }

  private setLimiterInZone(zone: string, zoneSize: number, state: ZoneState): void {
    const q = this.tainter(zone);
    switch (state) {
      case 'Normal':
        q.swapLimiter(this.o.evictionRate);
        break;
      case 'PartialDisruption':
        q.swapLimiter(zoneSize > this.o.largeClusterThreshold ? this.o.secondaryEvictionRate : 0);
        break;
      case 'FullDisruption':
        q.swapLimiter(this.o.evictionRate);
        break;
    }
  }

  private async handleDisruption(
    zoneConditions: Map<string, (Condition | undefined)[]>,
    nodes: KubeObject[],
  ): Promise<void> {
    const newStates = new Map<string, ZoneState>();
    let allAreFullyDisrupted = true;
    for (const [zone, conds] of zoneConditions) {
      const [, state] = this.computeZoneState(conds);
      if (state !== 'FullDisruption') allAreFullyDisrupted = false;
      newStates.set(zone, state);
      if (!this.zoneStates.has(zone)) {
        this.ctx.log.error('Setting initial state for unseen zone', { zone });
        this.zoneStates.set(zone, 'Initial');
      }
    }
    let allWereFullyDisrupted = true;
    for (const [zone, state] of [...this.zoneStates]) {
      if (!zoneConditions.has(zone)) {
        this.zoneStates.delete(zone);
        continue;
      }
      if (state !== 'FullDisruption') {
        allWereFullyDisrupted = false;
        break;
      }
    }
    if (allAreFullyDisrupted && allWereFullyDisrupted) return;
    if (allAreFullyDisrupted) {
      this.ctx.log.info('Controller detected that all Nodes are not-Ready. Entering master disruption mode');
      for (const node of nodes) {
        try {
          await this.markNodeAsReachable(node);
        } catch {
          this.ctx.log.error('Failed to remove taints from Node', { node: node.metadata.name });
        }
      }
      for (const zone of this.zoneStates.keys()) {
        this.tainter(zone).swapLimiter(0);
        this.zoneStates.set(zone, 'FullDisruption');
      }
      return;
    }
    if (allWereFullyDisrupted) {
      this.ctx.log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
      const now = this.now();
      for (const node of nodes) {
        const h = this.health.get(node.metadata.name!);
        if (h) {
          h.probeTimestamp = now;
          h.readyTransitionTimestamp = now;
        }
      }
      for (const zone of [...this.zoneStates.keys()]) {
        const state = newStates.get(zone) ?? 'Normal';
        this.setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, state);
        this.zoneStates.set(zone, state);
      }
      return;
    }
    for (const [zone, old] of [...this.zoneStates]) {
      const state = newStates.get(zone);
      if (!state || state === old) continue;
      this.ctx.log.info('Controller detected that zone is now in new state', { zone, newState: state });
      this.setLimiterInZone(zone, zoneConditions.get(zone)?.length ?? 0, state);
      this.zoneStates.set(zone, state);
    }
  }

  zoneState(zone = ''): ZoneState | undefined {
    return this.zoneStates.get(zone);
  }
}

export function startNodeLifecycleController(ctx: ControllerContext): NodeLifecycleController {
  const c = new NodeLifecycleController(ctx, nodeLifecycleOptions(ctx.options));
  c.start();
  return c;
}

export const nodeLifecycleController: ControllerDescriptor = {
  name: 'nodelifecycle',
  aliases: ['node-lifecycle-controller'],
  start: (ctx) => void startNodeLifecycleController(ctx),
};
