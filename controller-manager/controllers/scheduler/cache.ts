// kube-scheduler's cache and snapshot in one: a NodeInfo per node, updated
// incrementally from node and pod informer events and from the bindings the
// scheduler assumed but has not seen confirmed yet — what the node offers
// (allocatable, taints, images) and what it already carries (requests, pods,
// host ports, pods per controller). A scheduling cycle reads one NodeInfo per
// node it looks at and never walks the cluster's pods: no rebuild per pod.
import type { Obj } from '../util/base';
import { getControllerOf } from '../util/controller-ref';
import { isPodTerminal } from '../util/pod';
import { hostPortsOf, podRequests, toMilli, type Resources } from '../../../shared/api/scheduling';
import { TAINT_NOT_READY, TAINT_UNREACHABLE, type Taint } from '../../../shared/api/taints';

/** Requests assumed for scoring when a container states none (DefaultMilliCPURequest, DefaultMemoryRequest). */
const DEFAULT_MILLI_CPU = 100;
const DEFAULT_MEMORY = 200 * 1024 * 1024;

/** What one pod adds to its node. */
export interface PodShare {
  node: string;
  /** Assumed by the scheduler, not yet seen bound. */
  assumed: boolean;
  pod: Obj;
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
  /** The pods themselves, by key (affinity and user topology constraints match their labels). */
  podObjs: Map<string, Obj>;
}

/** One node as the scheduler sees it. */
export interface NodeInfo {
  name: string;
  node: Obj;
  allocatable: Resources;
  /** The node's taints, plus not-ready/unreachable when its Ready condition says so. */
  taints: Taint[];
  /** Image name -> size in bytes (status.images), names normalized. */
  images: Map<string, number>;
  usage: NodeUsage;
}

function emptyUsage(): NodeUsage {
  return {
    requested: new Map(),
    nonZeroCpu: 0,
    nonZeroMem: 0,
    pods: 0,
    hostPorts: new Map(),
    owners: new Map(),
    podObjs: new Map(),
  };
}

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

/** An image reference as the node lists it: a tag ":latest" when none is given (normalizedImageName). */
export function normalizedImageName(name: string): string {
  const lastSlash = name.lastIndexOf('/');
  const tail = name.slice(lastSlash + 1);
  return name.includes('@') || tail.includes(':') ? name : `${name}:latest`;
}

function effectiveTaints(node: Obj): Taint[] {
  const taints: Taint[] = [...(node.spec?.taints ?? [])];
  const ready = (node.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
  if (ready?.status !== 'True') {
    const key = ready?.status === 'Unknown' ? TAINT_UNREACHABLE : TAINT_NOT_READY;
    if (!taints.some((t) => t.key === key && t.effect === 'NoSchedule'))
      taints.push({ key, effect: 'NoSchedule' });
  }
  return taints;
}

function imagesOf(node: Obj): Map<string, number> {
  const out = new Map<string, number>();
  for (const img of node.status?.images ?? [])
    for (const n of img.names ?? []) out.set(normalizedImageName(n), Number(img.sizeBytes ?? 0));
  return out;
}

function shareOf(pod: Obj, node: string, assumed: boolean): PodShare {
  const nz = nonZeroRequests(pod);
  return {
    node,
    assumed,
    pod,
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

const hasRequiredAntiAffinity = (pod: Obj): boolean =>
  (pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution?.length ?? 0) > 0;

const hasAffinityTerms = (pod: Obj): boolean =>
  !!(pod.spec?.affinity?.podAffinity || pod.spec?.affinity?.podAntiAffinity);

export class SchedulerCache {
  /** Usage of every node name pods were seen on, whether the Node exists or not. */
  private readonly usages = new Map<string, NodeUsage>();
  private readonly infos = new Map<string, NodeInfo>();
  /** The existing nodes, in a stable order (a node leaves by swap-remove). */
  private readonly nodeList: NodeInfo[] = [];
  private readonly position = new Map<string, number>();
  private readonly shares = new Map<string, PodShare>();
  /** How many nodes list each image (ImageLocality's spread). */
  readonly imageNodes = new Map<string, number>();
  /** Placed pods with pod (anti-)affinity terms, by key: what InterPodAffinity must consider. */
  readonly podsWithAffinity = new Map<string, PodShare>();
  /** Of those, how many have required anti-affinity (the incoming pod is checked against them). */
  requiredAntiAffinityPods = 0;

  nodes(): readonly NodeInfo[] {
    return this.nodeList;
  }

  node(name: string): NodeInfo | undefined {
    return this.infos.get(name);
  }

  /** What node carries now (bound pods and assumed bindings). */
  usage(node: string): NodeUsage {
    let u = this.usages.get(node);
    if (!u) this.usages.set(node, (u = emptyUsage()));
    return u;
  }

  /** A Node added or changed (informer objects are replaced on change, never mutated). */
  nodeSet(node: Obj): void {
    const name = node.metadata.name!;
    const old = this.infos.get(name);
    if (old) this.countImages(old.images, -1);
    const info: NodeInfo = {
      name,
      node,
      allocatable: toMilli(node.status?.allocatable),
      taints: effectiveTaints(node),
      images: imagesOf(node),
      usage: this.usage(name),
    };
    this.countImages(info.images, 1);
    this.infos.set(name, info);
    const at = this.position.get(name);
    if (at === undefined) {
      this.position.set(name, this.nodeList.length);
      this.nodeList.push(info);
    } else this.nodeList[at] = info;
  }

  nodeGone(name: string): void {
    const info = this.infos.get(name);
    if (!info) return;
    this.countImages(info.images, -1);
    this.infos.delete(name);
    const at = this.position.get(name)!;
    const last = this.nodeList.pop()!;
    if (last !== info) {
      this.nodeList[at] = last;
      this.position.set(last.name, at);
    }
    this.position.delete(name);
  }

  private countImages(images: Map<string, number>, by: number): void {
    for (const img of images.keys()) bump(this.imageNodes, img, by);
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

  /** The node a pod holds a place on (bound or assumed). */
  nodeOf(key: string): string | undefined {
    return this.shares.get(key)?.node;
  }

  private set(key: string, s: PodShare): void {
    this.remove(key);
    this.shares.set(key, s);
    this.apply(this.usage(s.node), key, s, 1);
    if (hasAffinityTerms(s.pod)) {
      this.podsWithAffinity.set(key, s);
      if (hasRequiredAntiAffinity(s.pod)) this.requiredAntiAffinityPods++;
    }
  }

  private remove(key: string): void {
    const s = this.shares.get(key);
    if (!s) return;
    this.shares.delete(key);
    const u = this.usage(s.node);
    this.apply(u, key, s, -1);
    if (u.pods === 0 && !this.infos.has(s.node)) this.usages.delete(s.node);
    if (this.podsWithAffinity.delete(key) && hasRequiredAntiAffinity(s.pod)) this.requiredAntiAffinityPods--;
  }

  private apply(u: NodeUsage, key: string, s: PodShare, sign: 1 | -1): void {
    u.pods += sign;
    u.nonZeroCpu += sign * s.nonZeroCpu;
    u.nonZeroMem += sign * s.nonZeroMem;
    for (const [k, v] of s.requested) bump(u.requested, k, sign * v);
    for (const hp of s.hostPorts) bump(u.hostPorts, hp, sign);
    if (s.owner) bump(u.owners, s.owner, sign);
    if (sign > 0) u.podObjs.set(key, s.pod);
    else u.podObjs.delete(key);
  }
}
