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
//
// This file runs the passes and tracks zones; node-health.ts judges each node
// and tainting.ts puts the taints on.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import type { KubeObject } from '../../../shared/client';
import { forEachConcurrently, runWorkers, type SharedIndexInformer } from '../../../shared/informers';
import { cachesSynced, every, go, queueFor, type Condition } from '../../app/controller-util';
import { NODE_LEASE_NAMESPACE } from '../../../shared/api/nodes';
import { NodeHealthTracker, markPodsNotReady } from './node-health';
import { NodeTainter } from './tainting';
import { zoneKey } from './taints';

export const NODE_NAME_INDEX = 'spec.nodeName';
export const podsByNode = {
  [NODE_NAME_INDEX]: (p: KubeObject) => (p.spec?.nodeName ? [p.spec.nodeName as string] : []),
};

const EXCLUDE_DISRUPTION_LABEL = 'node.kubernetes.io/exclude-disruption';
/** kube's scheduler.NodeEvictionPeriod: how often the NoExecute tainting queues are worked. */
const TAINTING_PERIOD_MS = 100;
const NODE_UPDATE_WORKERS = 8;

type ZoneState = 'Initial' | 'Normal' | 'FullDisruption' | 'PartialDisruption';

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
  private readonly health: NodeHealthTracker;
  private readonly known = new Map<string, KubeObject>();
  private readonly zoneStates = new Map<string, ZoneState>();
  private readonly taints: NodeTainter;
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
    this.health = new NodeHealthTracker(ctx, this.leases, o);
    this.taints = new NodeTainter(ctx, this.nodes, o);
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
        runWorkers(this.nodeUpdates, (name) => this.taints.doNoScheduleTaintingPass(name), {
          workers: NODE_UPDATE_WORKERS,
          signal: this.ctx.signal,
        }),
      );
      every(this.ctx, TAINTING_PERIOD_MS, 'NoExecute tainting pass', () =>
        this.taints.doNoExecuteTaintingPass(),
      );
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

  // ---- health ---------------------------------------------------------------

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
      this.taints.tainter(zone);
      try {
        await this.taints.markNodeAsReachable(node);
      } catch (err) {
        this.ctx.log.warn('failed to remove taints from a new node', { node: name, err: String(err) });
      }
    }
    for (const [name, node] of this.known) {
      if (seen.has(name)) continue;
      this.ctx.log.v(1)?.info('Controller observed a Node deletion', { node: name });
      this.event(node, 'Normal', 'RemovingNode', `Removing Node ${name} from Controller`);
      this.known.delete(name);
      this.health.forget(name);
    }

    const zoneConditions = new Map<string, (Condition | undefined)[]>();
    // A healthy node's update is no I/O: 5,000 of them back to back held the event loop for
    // seconds (and the lease renewal's timer with it) without the turns this takes.
    await forEachConcurrently(nodes, NODE_UPDATE_WORKERS, (n) => this.updateNode(n, zoneConditions));
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
        [observed, current] = await this.health.tryUpdateNodeHealth(node);
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
    await this.taints.processTaintBaseEviction(node, observed!);
    const needsRetry = this.nodesToRetry.has(name);
    const becameNotReady = current.status !== 'True' && observed!.status === 'True';
    if (becameNotReady)
      this.event(node, 'Normal', 'NodeNotReady', `Node ${name} status is now: NodeNotReady`);
    if (becameNotReady || (needsRetry && observed!.status !== 'True')) {
      try {
        await markPodsNotReady(this.ctx, this.recorder, pods, name);
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
    const q = this.taints.tainter(zone);
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
          await this.taints.markNodeAsReachable(node);
        } catch {
          this.ctx.log.error('Failed to remove taints from Node', { node: node.metadata.name });
        }
      }
      for (const zone of this.zoneStates.keys()) {
        this.taints.tainter(zone).swapLimiter(0);
        this.zoneStates.set(zone, 'FullDisruption');
      }
      return;
    }
    if (allWereFullyDisrupted) {
      this.ctx.log.info('Controller detected that some Nodes are Ready. Exiting master disruption mode');
      this.health.resetProbes(nodes, this.now());
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
