// kube-scheduler's cache: what each node already carries (requests, pod count,
// host ports, pods per controller), kept up to date from pod events and from
// the bindings the scheduler assumed but has not seen confirmed yet. A
// scheduling decision then reads one summary per node instead of walking every
// pod of the cluster, which is what makes 1,000 nodes schedulable.
import type { Obj } from '../util/base';
import { getControllerOf } from '../util/controller-ref';
import { isPodTerminal } from '../util/pod';
import { hostPortsOf, podRequests, toMilli, type Resources } from '../../../shared/api/scheduling';

/** Requests assumed for scoring when a container states none (DefaultMilliCPURequest, DefaultMemoryRequest). */
const DEFAULT_MILLI_CPU = 100;
const DEFAULT_MEMORY = 200 * 1024 * 1024;

/** What one pod adds to its node. */
interface PodShare {
  node: string;
  /** Assumed by the scheduler, not yet seen bound. */
  assumed: boolean;
  requested: Resources;
  nonZeroCpu: number;
  nonZeroMem: number;
  hostPorts: string[];
  owner?: string;
}

/** What a node carries. */
export interface NodeUsage {
  requested: Resources;
  /** Requests with the non-zero defaults (scoring). */
  nonZeroCpu: number;
  nonZeroMem: number;
  pods: number;
  /** Host ports in use ("TCP/0.0.0.0/80") and how many pods use each. */
  hostPorts: Map<string, number>;
  /** Pods per controller uid (spreading). */
  owners: Map<string, number>;
}

function emptyUsage(): NodeUsage {
  return {
    requested: new Map(),
    nonZeroCpu: 0,
    nonZeroMem: 0,
    pods: 0,
    hostPorts: new Map(),
    owners: new Map(),
  };
}

/** What a node without pods carries (shared: never modified). */
const EMPTY: NodeUsage = emptyUsage();

/** A pod's requests with the scheduler's non-zero defaults (kube's GetNonzeroRequests). */
export function nonZeroRequests(pod: Obj): { cpu: number; mem: number } {
  let cpu = 0;
  let mem = 0;
  for (const c of pod.spec?.containers ?? []) {
    const r = toMilli(c.resources?.requests);
    cpu += r.get('cpu') ?? DEFAULT_MILLI_CPU;
    mem += (r.get('memory') ?? DEFAULT_MEMORY * 1000) / 1000;
  }
  return { cpu, mem };
}

function shareOf(pod: Obj, node: string, assumed: boolean): PodShare {
  const nz = nonZeroRequests(pod);
  return {
    node,
    assumed,
    requested: podRequests(pod),
    nonZeroCpu: nz.cpu,
    nonZeroMem: nz.mem,
    hostPorts: hostPortsOf(pod),
    owner: getControllerOf(pod)?.uid,
  };
}

function bump(m: Map<string, number>, k: string, by: number): void {
  const n = (m.get(k) ?? 0) + by;
  if (n) m.set(k, n);
  else m.delete(k);
}

export class SchedulerCache {
  private readonly nodes = new Map<string, NodeUsage>();
  private readonly shares = new Map<string, PodShare>();

  /** What node carries now (bound pods and assumed bindings). */
  usage(node: string): NodeUsage {
    return this.nodes.get(node) ?? EMPTY;
  }

  /** A pod as the informer sees it: bound and running pods count on their node, others do not. */
  podSeen(key: string, pod: Obj): void {
    const node: string | undefined = pod.spec?.nodeName;
    if (node && !isPodTerminal(pod)) {
      // Recomputed on every update: an in-place resize changes a bound pod's requests.
      this.set(key, shareOf(pod, node, false));
    } else if (node || !this.shares.get(key)?.assumed) {
      // Finished, or unbound and not assumed: it holds nothing.
      this.remove(key);
    }
  }

  podGone(key: string): void {
    this.remove(key);
  }

  /** The scheduler chose node for the pod: it counts there until the informer confirms or forget() drops it. */
  assume(key: string, pod: Obj, node: string): void {
    if (this.shares.get(key)?.assumed === false) return;
    this.set(key, shareOf(pod, node, true));
  }

  /** A binding that failed or was never confirmed. */
  forget(key: string): void {
    if (this.shares.get(key)?.assumed) this.remove(key);
  }

  private set(key: string, s: PodShare): void {
    this.remove(key);
    this.shares.set(key, s);
    let u = this.nodes.get(s.node);
    if (!u) this.nodes.set(s.node, (u = emptyUsage()));
    this.apply(u, s, 1);
  }

  private remove(key: string): void {
    const s = this.shares.get(key);
    if (!s) return;
    this.shares.delete(key);
    const u = this.nodes.get(s.node)!;
    this.apply(u, s, -1);
    if (u.pods === 0) this.nodes.delete(s.node);
  }

  private apply(u: NodeUsage, s: PodShare, sign: 1 | -1): void {
    u.pods += sign;
    u.nonZeroCpu += sign * s.nonZeroCpu;
    u.nonZeroMem += sign * s.nonZeroMem;
    for (const [k, v] of s.requested) bump(u.requested, k, sign * v);
    for (const hp of s.hostPorts) bump(u.hostPorts, hp, sign);
    if (s.owner) bump(u.owners, s.owner, sign);
  }
}
