// Simulated nodes (what kwok does): one node-agent process stands in for N
// nodes. Each registers its Node (as the kubelet's initialNode builds it, with
// simulated machine facts), renews its Lease in kube-node-lease, reports its
// status every --node-status-update-frequency when it changed or once per
// report period, and runs the pods bound to it through the fake lifecycle
// (simulated/pods.ts). Nothing runs; each node serves the kubelet API on a
// port of its own with synthetic figures and logs (simulated/kubelet-api.ts).
import { randomUUID } from 'node:crypto';
import type { Client } from '../../shared/client/client';
import { isAlreadyExists, isNotFound } from '../../shared/client';
import { logger } from '../../shared/log';
import { NodeLeaseController } from '../lease/lease';
import { initialNode, nodeConditions, nodeStatus, nodeStatusPatch, type StatusFacts } from '../status/node';
import type { MachineInfo } from '../status/sysinfo';
import type { NodeAgentConfig } from '../app/config';

const log = logger('simulated-nodes');

/** What every simulated node says it has (kwok's defaults: 32 CPUs, 256 GiB). */
export const SIMULATED_CAPACITY = { cores: 32, memory: 256 * 1024 ** 3, ephemeralStorage: 1024 ** 4 };
/** What a simulated node's own system (OS, kubelet, runtime) uses beside its pods, in its figures. */
export const SIMULATED_SYSTEM_USAGE = { milliCPU: 50, memoryBytes: 256 * 1024 ** 2 };
/** Marks the Nodes a simulator hosts (kwok: kwok.x-k8s.io/node=fake). */
export const SIMULATED_ANNOTATION = 'node.tkube.io/simulated';

/** The name of simulated node i (0-based): <--hostname-override>-<i+1>. */
export function simulatedNodeName(base: string, i: number): string {
  return `${base}-${i + 1}`;
}

/** A pod CIDR per node, 10.128.0.0/9 cut in /24s: node i gets 10.(128 + i/256).(i%256).0/24. */
export function simulatedPodCIDR(i: number): string {
  return `10.${128 + Math.floor(i / 256)}.${i % 256}.0/24`;
}

function machine(name: string): MachineInfo {
  const id = randomUUID().replace(/-/g, '');
  return {
    cores: SIMULATED_CAPACITY.cores,
    memoryCapacity: SIMULATED_CAPACITY.memory,
    kernelVersion: 'simulated',
    osImage: 'tkube simulated node',
    operatingSystem: 'linux',
    architecture: process.arch === 'x64' ? 'amd64' : process.arch,
    machineID: id,
    systemUUID: id,
    bootID: randomUUID(),
    cpuModel: `simulated (${name})`,
  };
}

/** One simulated node: its config, its facts, the Node as last written, its lease. */
export class SimulatedNode {
  readonly config: NodeAgentConfig;
  private readonly facts: StatusFacts;
  private node?: any;
  private lastReport = 0;
  /** The apiserver's Node says other than what we last reported: report at the next turn. */
  private stale = false;
  readonly lease: NodeLeaseController;
  private readonly nodes;

  constructor(
    base: NodeAgentConfig,
    readonly index: number,
    private readonly client: Client,
  ) {
    const name = simulatedNodeName(base.nodeName, index);
    this.config = { ...base, nodeName: name, hostname: name, podCIDR: simulatedPodCIDR(index) };
    this.facts = {
      config: this.config,
      machine: machine(name),
      nodeIPs: base.nodeIPs.length ? base.nodeIPs : ['127.0.0.1'],
      resources: { ...SIMULATED_CAPACITY, maxPods: base.maxPods },
      runtimeVersion: 'fake://simulated',
      images: [],
    };
    this.nodes = client.resource('nodes');
    this.lease = new NodeLeaseController({
      client,
      nodeName: name,
      leaseDurationSeconds: base.nodeLeaseDurationSeconds,
      nodeUID: () => this.node?.metadata?.uid,
    });
  }

  get name(): string {
    return this.config.nodeName;
  }

  get machine(): MachineInfo {
    return this.facts.machine;
  }

  /** The port of its kubelet API, published in status.daemonEndpoints (set before it registers). */
  set kubeletPort(port: number) {
    this.config.port = port;
  }

  get uid(): string | undefined {
    return this.node?.metadata?.uid;
  }

  private conditions(now: number): any[] {
    return nodeConditions(
      this.node?.status?.conditions,
      { ready: { ok: true }, pressure: { MemoryPressure: false, DiskPressure: false, PIDPressure: false } },
      now,
    );
  }

  /** Creates the Node, or takes the existing one over (a restarted simulator). */
  async register(signal?: AbortSignal): Promise<void> {
    const want = initialNode(this.facts, this.conditions(Date.now()));
    want.metadata.annotations = { ...want.metadata.annotations, [SIMULATED_ANNOTATION]: 'true' };
    try {
      this.node = await this.nodes.create(want, { signal });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
      this.node = await this.nodes.get(this.name, { signal });
      await this.report(signal, true);
    }
    this.lastReport = Date.now();
  }

  /**
   * The conditions the apiserver's Node now has. When they say other than Ready (the node
   * lifecycle controller marks a node Unknown once its Lease looked late), they become what
   * the next report starts from, and that report is not skipped: the kubelet compares its
   * status with the Node it reads, not with what it last wrote, so it puts Ready back.
   */
  observed(conditions: any[] | undefined): void {
    if (!this.node || !conditions) return;
    if (conditions.find((c) => c.type === 'Ready')?.status === 'True') return;
    this.node = { ...this.node, status: { ...this.node.status, conditions } };
    this.stale = true;
  }

  /**
   * The kubelet's status loop: patch the status when it changed, or when the report
   * frequency passed since the last report (the heartbeat is in the conditions).
   */
  async report(signal?: AbortSignal, force = false): Promise<void> {
    const now = Date.now();
    if (!force && !this.stale && now - this.lastReport < this.config.nodeStatusReportFrequencyMs) return;
    this.stale = false;
    const status = nodeStatus(this.facts, this.conditions(now), this.node?.status);
    try {
      this.node = await this.nodes.patch(this.name, nodeStatusPatch(status, this.node?.status), 'strategic', {
        subresource: 'status',
        signal,
      });
      this.lastReport = now;
    } catch (err) {
      if (isNotFound(err)) {
        log.info('Node was deleted, registering it again', { node: this.name });
        this.node = undefined;
        await this.register(signal);
        return;
      }
      throw err;
    }
  }
}
