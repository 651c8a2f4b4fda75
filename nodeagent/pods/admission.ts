// Pod admission (the kubelet's HandlePodAdditions): pods from the apiserver
// wait until every source has listed once, then are admitted oldest first;
// static pods never wait (they may be what brings the apiserver up). Like the
// kubelet's predicate admit handler, a pod that cannot run beside the pods
// already admitted is rejected (phase Failed, so its controller makes another)
// rather than run: beyond --max-pods or the Node's allocatable (OutOfpods,
// OutOfcpu ...), or asking for a host port one of them holds (NodePorts).
// Node affinity and taints are left to the scheduler: the Node the agent knows
// may be older than the labels a pod was scheduled by.
import { hostPortsConflict, hostPortsOf, podRequests, toMilli } from '../../shared/api/scheduling';
import { isExtendedResourceName } from '../../shared/api/resource-list';
import type { KubeObject } from '../../shared/client/types';
import { logger } from '../../shared/log';
import type { PodEvents } from './pod-events';
import { isTerminalPhase, type PodRecord, type PodRecords } from './records';
import type { ContainerRuntime } from './runtime';
import { podFullName } from './status';
import { compareKeys } from '../../shared/codec/protobuf-wire';

const log = logger('nodeagent/pods');

/** Why a pod is rejected: kubelet's PodAdmitResult reason and message. */
interface Rejection {
  reason: string;
  message: string;
}

/** The scheduler's NodePorts plugin, as the kubelet reports it. */
const NODE_PORTS: Rejection = {
  reason: 'NodePorts',
  message: "Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
};

/** The order NodeResourcesFit checks resources in (extended ones follow, by name). */
const NATIVE_RESOURCES = ['cpu', 'memory', 'ephemeral-storage'];

/**
 * NodeResourcesFit's first insufficient resource (InsufficientResourceError):
 * pods, then what the pod requests beyond the Node's allocatable less what the
 * admitted pods request. Extended resources the Node does not have are not
 * checked (kubelet's removeMissingExtendedResources: cluster-level ones).
 */
function insufficientResource(
  pod: KubeObject,
  others: KubeObject[],
  maxPods: number,
  allocatable: Record<string, string> | undefined,
): Rejection | undefined {
  const insufficient = (name: string, requested: number, used: number, capacity: number): Rejection => ({
    reason: `OutOf${name}`,
    message: `Node didn't have enough resource: ${name}, requested: ${requested}, used: ${used}, capacity: ${capacity}`,
  });
  if (others.length + 1 > maxPods) return insufficient('pods', 1, others.length, maxPods);
  if (!allocatable) return undefined;
  const have = toMilli(allocatable);
  const want = podRequests(pod);
  const names = [
    ...NATIVE_RESOURCES,
    ...[...want.keys()].filter((n) => !NATIVE_RESOURCES.includes(n) && n !== 'pods').sort(),
  ];
  let used: Map<string, number> | undefined;
  for (const name of names) {
    const amount = want.get(name) ?? 0;
    if (amount <= 0) continue;
    if (isExtendedResourceName(name) && !have.has(name)) continue;
    used ??= sumRequests(others);
    const capacity = have.get(name) ?? 0;
    const inUse = used.get(name) ?? 0;
    if (amount <= capacity - inUse) continue;
    // The message counts millicores for cpu, whole units for the rest (Quantity.Value()).
    const units = (milli: number) => (name === 'cpu' ? milli : Math.ceil(milli / 1000));
    return insufficient(name, units(amount), units(inUse), units(capacity));
  }
  return undefined;
}

function sumRequests(pods: KubeObject[]): Map<string, number> {
  const sum = new Map<string, number>();
  for (const p of pods) for (const [k, v] of podRequests(p)) sum.set(k, (sum.get(k) ?? 0) + v);
  return sum;
}

export class PodAdmission {
  private synced = false;
  private readonly pending: PodRecord[] = [];

  constructor(
    private readonly d: {
      records: PodRecords;
      maxPods: number;
      /** The Node as last read (its allocatable), undefined when not known (standalone). */
      node?(): KubeObject | undefined;
      runtime: ContainerRuntime;
      events: PodEvents;
      /** The first sync of an admitted pod. */
      requestSync(uid: string): void;
    },
  ) {}

  /** Every source has listed once. */
  get isSynced(): boolean {
    return this.synced;
  }

  /** A pod new to this node: admitted now, or held until the sources are synced. */
  add(rec: PodRecord): void {
    if (this.synced || rec.source !== 'api') this.admit(rec);
    else this.pending.push(rec);
  }

  /** The sources are synced: the pods held until now, oldest first (undefined if already synced). */
  markSynced(): PodRecord[] | undefined {
    if (this.synced) return undefined;
    this.synced = true;
    const waiting = this.pending.splice(0);
    waiting.sort((a, b) =>
      compareKeys(
        String(a.pod.metadata.creationTimestamp ?? ''),
        String(b.pod.metadata.creationTimestamp ?? ''),
      ),
    );
    return waiting;
  }

  /** The predicates (resources, host ports), then the first sync. */
  admit(rec: PodRecord): void {
    if (rec.removed) {
      this.d.records.delete(rec.uid);
      return;
    }
    const deleting = !!rec.pod.metadata.deletionTimestamp;
    if (!isTerminalPhase(rec.pod.status?.phase) && !deleting) {
      const rejection = this.check(rec);
      if (rejection) {
        rec.rejected = rejection;
        this.d.events.emit(rec, undefined, 'Warning', rejection.reason, 'Admit', rejection.message);
        log.info('pod rejected', { pod: podFullName(rec.pod), reason: rejection.reason });
      }
    }
    rec.admitted = true;
    this.d.requestSync(rec.uid);
  }

  /** kubelet's generalFilter over the admitted pods: the first predicate that fails. */
  private check(rec: PodRecord): Rejection | undefined {
    const others = this.activePods(rec);
    const resources = insufficientResource(
      rec.pod,
      others,
      this.d.maxPods,
      this.d.node?.()?.status?.allocatable,
    );
    if (resources) return resources;
    const ports = hostPortsOf(rec.pod);
    if (ports.length && hostPortsConflict(ports, others.flatMap(hostPortsOf))) return NODE_PORTS;
    return undefined;
  }

  /** The pods that hold the node's resources: admitted, not rejected, and not finished. */
  private activePods(except: PodRecord): KubeObject[] {
    const out: KubeObject[] = [];
    for (const r of this.d.records.values()) {
      if (r === except || !r.admitted || r.rejected || r.terminal || r.removed) continue;
      if (isTerminalPhase(r.pod.status?.phase) && !this.d.runtime.containers(r.uid).length) continue;
      out.push(r.pod);
    }
    return out;
  }
}
