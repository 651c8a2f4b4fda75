// Registration and node status: the kubelet's registerWithAPIServer (create
// the Node, or reconcile an existing one) and its status loop — every
// --node-status-update-frequency the status is computed, and patched when it
// changed or when nodeStatusReportFrequency (5 min) passed since the last
// report. Condition transitions are recorded as events, like the kubelet's.
// The agent never marks its own Node NotReady on the way out: that is the
// controller manager's job once the lease and status go stale.
import type { Client } from '../../shared/client/client';
import type { ResourceClient } from '../../shared/client/resource';
import { realClock, type Clock } from '../../shared/client/clock';
import { isAlreadyExists, isNotFound } from '../../shared/client/errors';
import type { KubeObject } from '../../shared/client/types';
import type { EventRecorder } from '../../shared/events';
import { logger } from '../../shared/log';
import type { NodeAgentConfig } from '../app/config';
import { PressureTracker } from './eviction';
import {
  conditionEventReason,
  initialNode,
  nodeConditions,
  nodeStatus,
  nodeStatusPatch,
  reconcileExisting,
  statusChanged,
  type NodeImage,
  type StatusFacts,
} from './node';
import { observationsOf, type MachineInfo, type Readings } from './sysinfo';

const log = logger('nodeagent/status');

export interface NodeStatusDeps {
  client: Client;
  config: NodeAgentConfig;
  machine: MachineInfo;
  nodeIPs: string[];
  runtimeVersion: string;
  /** Current machine readings (memory, filesystem, pids). */
  read(): Promise<Readings>;
  images(): NodeImage[];
  /** The volumes pods use that the kubelet reports in volumesInUse. */
  volumesInUse?(): string[];
  /** "" when the container runtime is ready, else kubelet's message for the Ready condition. */
  runtimeNotReady?(): string;
  recorder: EventRecorder;
  clock?: Clock;
  /** Called with the Node after registration and every status write. */
  onNode?(node: KubeObject): void;
}

/** client-go's wait.Backoff of the kubelet's registration: 100 ms doubling to 7 s. */
const REGISTER_BACKOFF = { initialMs: 100, maxMs: 7000 };

export class NodeStatusManager {
  readonly pressure: PressureTracker;
  private readonly nodes: ResourceClient;
  private readonly clock: Clock;
  private registered = false;
  private lastReport = 0;
  private lastReadings?: Readings;
  private node?: KubeObject;
  /** Condition statuses last recorded as events. */
  private readonly recorded = new Map<string, string>();
  private registeredWaiters: (() => void)[] = [];

  constructor(private readonly d: NodeStatusDeps) {
    this.clock = d.clock ?? realClock;
    this.nodes = d.client.resource('nodes');
    this.pressure = new PressureTracker(
      d.config.evictionHard,
      d.config.evictionPressureTransitionPeriodMs,
      this.clock,
    );
  }

  /** The last Node the agent wrote or read. */
  current(): KubeObject | undefined {
    return this.node;
  }

  readings(): Readings | undefined {
    return this.lastReadings;
  }

  isRegistered(): boolean {
    return this.registered;
  }

  /** Resolves once the Node is known (registered, or read when --register-node=false), or signal aborts. */
  whenRegistered(signal?: AbortSignal): Promise<void> {
    if (this.node || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      this.registeredWaiters.push(resolve);
      signal?.addEventListener('abort', () => resolve(), { once: true });
    });
  }

  private setNode(node: KubeObject): void {
    this.node = node;
    const ws = this.registeredWaiters;
    this.registeredWaiters = [];
    for (const w of ws) w();
    this.d.onNode?.(node);
  }

  private nodeRef() {
    // The kubelet refers to its Node with the node name as uid (kubectl describe node looks for that).
    return { apiVersion: 'v1', kind: 'Node', name: this.d.config.nodeName, uid: this.d.config.nodeName };
  }

  private async facts(): Promise<StatusFacts> {
    const r = await this.d.read();
    this.lastReadings = r;
    this.pressure.observe(observationsOf(r));
    return {
      config: this.d.config,
      machine: this.d.machine,
      nodeIPs: this.d.nodeIPs,
      runtimeVersion: this.d.runtimeVersion,
      images: this.d.images(),
      volumesInUse: this.d.volumesInUse?.(),
      resources: {
        cores: this.d.machine.cores,
        memory: this.d.machine.memoryCapacity,
        ephemeralStorage: r.fs.capacity,
        maxPods: this.d.config.maxPods,
      },
    };
  }

  private readiness(): { ok: boolean; message?: string } {
    const why = this.d.runtimeNotReady?.() ?? '';
    return why ? { ok: false, message: why } : { ok: true };
  }

  private conditions(previous: any[] | undefined): any[] {
    return nodeConditions(
      previous,
      {
        ready: this.readiness(),
        pressure: {
          MemoryPressure: this.pressure.underPressure('MemoryPressure'),
          DiskPressure: this.pressure.underPressure('DiskPressure'),
          PIDPressure: this.pressure.underPressure('PIDPressure'),
        },
      },
      this.clock.now(),
    );
  }

  private recordTransitions(conditions: any[]): void {
    for (const c of conditions) {
      if (this.recorded.get(c.type) === c.status) continue;
      this.recorded.set(c.type, c.status);
      const reason = conditionEventReason(c.type, c.status);
      this.d.recorder.eventf(
        this.nodeRef(),
        null,
        'Normal',
        reason,
        'NodeStatusUpdate',
        'Node %s status is now: %s',
        this.d.config.nodeName,
        reason,
      );
    }
  }

  /** One registration attempt (kubelet's tryRegisterWithAPIServer); true when the Node is there. */
  async tryRegister(): Promise<boolean> {
    const f = await this.facts();
    const conditions = this.conditions(undefined);
    const node = initialNode(f, conditions);
    try {
      const created = await this.nodes.create(node);
      log.info('successfully registered node', { node: this.d.config.nodeName });
      this.recordTransitions(conditions);
      this.lastReport = this.clock.now();
      this.setNode(created);
      return true;
    } catch (err) {
      if (!isAlreadyExists(err)) {
        log.error('unable to register node with API server', {
          node: this.d.config.nodeName,
          err: String(err),
        });
        return false;
      }
    }
    try {
      const existing = await this.nodes.get(this.d.config.nodeName);
      const patch = reconcileExisting(existing, f);
      const node = patch ? await this.nodes.patch(this.d.config.nodeName, patch, 'strategic') : existing;
      log.info('node was previously registered', { node: this.d.config.nodeName });
      this.setNode(node);
      return true;
    } catch (err) {
      log.error('unable to reconcile the registered node', {
        node: this.d.config.nodeName,
        err: String(err),
      });
      return false;
    }
  }

  /** Registers, retrying with the kubelet's backoff until it works or signal aborts. */
  async register(signal?: AbortSignal): Promise<boolean> {
    let delay = REGISTER_BACKOFF.initialMs;
    while (!signal?.aborted) {
      if (await this.tryRegister()) {
        this.registered = true;
        return true;
      }
      await this.clock.sleep(delay, signal);
      delay = Math.min(delay * 2, REGISTER_BACKOFF.maxMs);
    }
    return false;
  }

  /**
   * One status update: compute, and patch when it changed or the report
   * frequency passed. Returns whether a patch was sent.
   */
  async sync(): Promise<boolean> {
    const f = await this.facts();
    let current: KubeObject;
    try {
      current = await this.nodes.get(this.d.config.nodeName, {
        resourceVersion: this.node ? '0' : undefined,
      });
    } catch (err) {
      if (isNotFound(err) && this.d.config.registerNode) {
        // Deleted under us: register again (the kubelet does the same on its next sync).
        log.warn('node object is gone; registering again', { node: this.d.config.nodeName });
        this.registered = false;
        if (await this.tryRegister()) this.registered = true;
        return this.registered;
      }
      throw err;
    }
    const conditions = this.conditions(current.status?.conditions);
    const status = nodeStatus(f, conditions, current.status);
    const now = this.clock.now();
    const due = now - this.lastReport >= this.d.config.nodeStatusReportFrequencyMs;
    if (!due && !statusChanged(current.status, status)) {
      if (!this.node) this.setNode(current);
      else this.node = current;
      return false;
    }
    const patch = nodeStatusPatch(status, current.status);
    const written = await this.nodes.patch(this.d.config.nodeName, patch, 'strategic', {
      subresource: 'status',
    });
    this.lastReport = now;
    this.recordTransitions(conditions);
    this.setNode(written);
    return true;
  }

  /** Registers (when --register-node) and then keeps the status up to date until signal aborts. */
  async run(signal: AbortSignal): Promise<void> {
    if (this.d.config.registerNode) {
      if (!(await this.register(signal))) return;
    } else {
      this.registered = true;
    }
    while (!signal.aborted) {
      try {
        await this.sync();
      } catch (err) {
        log.error('error updating node status, will retry', {
          node: this.d.config.nodeName,
          err: String(err),
        });
      }
      await this.clock.sleep(this.d.config.nodeStatusUpdateFrequencyMs, signal);
    }
  }
}
