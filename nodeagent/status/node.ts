// The Node object the agent registers and the status it reports, as the
// kubelet's node status setters compute them: default labels, capacity and
// allocatable (capacity minus the hard eviction thresholds), nodeInfo,
// addresses, daemon endpoints, images, and the four conditions with the
// kubelet's reasons and messages.
import type { KubeObject } from '../../shared/client/types';
import {
  KUBELET_LABELS,
  KUBELET_LABEL_NAMESPACES,
  isKubeletLabel,
  isKubernetesLabel,
} from '../../shared/api/nodes';
import { isExtendedResourceName } from '../../shared/api/resource-list';
import { TAINT_UNSCHEDULABLE } from '../../shared/api/taints';
import type { NodeAgentConfig, Taint } from '../app/config';
import { evictionReservation, type PressureCondition } from './eviction';
import type { MachineInfo } from './sysinfo';
import { compareKeys } from '../../shared/codec/protobuf-wire';

/** The kubelet release tkube's node agent reports (the apiserver's gitVersion in apiserver/server/app.ts). */
export const KUBELET_VERSION = 'v1.36.3';

/** --node-labels the kubelet refuses (kubernetes.io / k8s.io labels outside the allowed set). */
export function forbiddenNodeLabels(labels: Record<string, string>): string[] {
  return Object.keys(labels)
    .filter((key) => isKubernetesLabel(key) && !isKubeletLabel(key))
    .sort();
}

/** The error the kubelet stops with on forbidden --node-labels. */
export function validateNodeLabels(labels: Record<string, string>): void {
  const bad = forbiddenNodeLabels(labels);
  if (!bad.length) return;
  throw new Error(
    `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [${bad.join(' ')}]\n` +
      `--node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${KUBELET_LABEL_NAMESPACES.join(', ')}) or be in the specifically allowed set (${[...KUBELET_LABELS].sort().join(', ')})`,
  );
}

/** RFC 3339 with second precision (metav1.Time). */
export function rfc3339(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace('.000Z', 'Z');
}

/** A byte count as a Kubernetes binary quantity ("8145320Ki"), exact. */
export function formatBytes(n: number): string {
  let v = Math.max(0, Math.floor(n));
  if (v === 0) return '0';
  const suffixes = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
  let i = 0;
  while (i < suffixes.length - 1 && v % 1024 === 0) {
    v /= 1024;
    i++;
  }
  return `${v}${suffixes[i]}`;
}

/** The kubelet's default labels for this machine. */
export function defaultLabels(
  cfg: Pick<NodeAgentConfig, 'hostname'>,
  m: Pick<MachineInfo, 'operatingSystem' | 'architecture'>,
): Record<string, string> {
  return {
    'beta.kubernetes.io/arch': m.architecture,
    'beta.kubernetes.io/os': m.operatingSystem,
    'kubernetes.io/arch': m.architecture,
    'kubernetes.io/hostname': cfg.hostname,
    'kubernetes.io/os': m.operatingSystem,
  };
}

export interface ResourceFacts {
  cores: number;
  memory: number;
  ephemeralStorage: number;
  maxPods: number;
}

/** What the Node already reports, that the agent's status is computed over. */
export interface ReportedResources {
  capacity?: Record<string, string>;
  allocatable?: Record<string, string>;
  volumesInUse?: string[];
}

/**
 * kubelet's MachineInfo setter: the machine's capacity over whatever the Node
 * already advertises (a user's extended resources, patched into
 * status.capacity, stay), allocatable = capacity minus the reservations for
 * every one of them.
 */
export function capacityAndAllocatable(
  r: ResourceFacts,
  cfg: Pick<NodeAgentConfig, 'evictionHard'>,
  existing: ReportedResources = {},
): { capacity: Record<string, string>; allocatable: Record<string, string> } {
  const reserved = evictionReservation(cfg.evictionHard, {
    memory: r.memory,
    ephemeralStorage: r.ephemeralStorage,
  });
  const capacity: Record<string, string> = {
    ...existing.capacity,
    cpu: String(r.cores),
    'ephemeral-storage': formatBytes(r.ephemeralStorage),
    memory: formatBytes(r.memory),
    pods: String(r.maxPods),
  };
  // Only the agent's own resources have reservations: the others are allocatable as advertised.
  const allocatable: Record<string, string> = {
    ...capacity,
    'ephemeral-storage': formatBytes(r.ephemeralStorage - reserved.ephemeralStorage),
    memory: formatBytes(r.memory - reserved.memory),
  };
  return { capacity, allocatable };
}

export interface NodeImage {
  names: string[];
  sizeBytes: number;
}

export interface StatusFacts {
  config: NodeAgentConfig;
  machine: MachineInfo;
  nodeIPs: string[];
  resources: ResourceFacts;
  runtimeVersion: string;
  images: NodeImage[];
  /** The unique names of the device-mountable volumes mounted for pods (kubelet's volumesInUse). */
  volumesInUse?: string[];
}

export function nodeInfo(f: StatusFacts): Record<string, string> {
  return {
    machineID: f.machine.machineID,
    systemUUID: f.machine.systemUUID,
    bootID: f.machine.bootID,
    kernelVersion: f.machine.kernelVersion,
    osImage: f.machine.osImage,
    containerRuntimeVersion: f.runtimeVersion,
    kubeletVersion: KUBELET_VERSION,
    // Not omitempty in Go: Kubernetes writes it empty, and clients (the Python one) require it.
    kubeProxyVersion: '',
    operatingSystem: f.machine.operatingSystem,
    architecture: f.machine.architecture,
  };
}

export function addresses(f: Pick<StatusFacts, 'nodeIPs' | 'config'>): { type: string; address: string }[] {
  return [
    ...f.nodeIPs.map((ip) => ({ type: 'InternalIP', address: ip })),
    { type: 'Hostname', address: f.config.hostname },
  ];
}

/** The images to report: largest first, capped at nodeStatusMaxImages (-1: no cap). */
export function reportedImages(images: NodeImage[], max: number): NodeImage[] {
  const sorted = [...images].sort((a, b) => b.sizeBytes - a.sizeBytes);
  return max < 0 ? sorted : sorted.slice(0, max);
}

export interface ConditionInput {
  ready: { ok: boolean; message?: string };
  pressure: Record<PressureCondition, boolean>;
}

interface ConditionText {
  status: 'True' | 'False';
  reason: string;
  message: string;
}

const PRESSURE_TEXT: Record<PressureCondition, { on: [string, string]; off: [string, string] }> = {
  MemoryPressure: {
    on: ['KubeletHasInsufficientMemory', 'kubelet has insufficient memory available'],
    off: ['KubeletHasSufficientMemory', 'kubelet has sufficient memory available'],
  },
  DiskPressure: {
    on: ['KubeletHasDiskPressure', 'kubelet has disk pressure'],
    off: ['KubeletHasNoDiskPressure', 'kubelet has no disk pressure'],
  },
  PIDPressure: {
    on: ['KubeletHasInsufficientPID', 'kubelet has insufficient PID available'],
    off: ['KubeletHasSufficientPID', 'kubelet has sufficient PID available'],
  },
};

/** The event reason the kubelet records when a condition takes a status. */
export function conditionEventReason(type: string, status: string): string {
  switch (type) {
    case 'MemoryPressure':
      return status === 'True' ? 'NodeHasInsufficientMemory' : 'NodeHasSufficientMemory';
    case 'DiskPressure':
      return status === 'True' ? 'NodeHasDiskPressure' : 'NodeHasNoDiskPressure';
    case 'PIDPressure':
      return status === 'True' ? 'NodeHasInsufficientPID' : 'NodeHasSufficientPID';
    default:
      return status === 'True' ? 'NodeReady' : 'NodeNotReady';
  }
}

function conditionTexts(input: ConditionInput): [string, ConditionText][] {
  const out: [string, ConditionText][] = [];
  for (const type of ['MemoryPressure', 'DiskPressure', 'PIDPressure'] as PressureCondition[]) {
    const on = input.pressure[type];
    const [reason, message] = on ? PRESSURE_TEXT[type].on : PRESSURE_TEXT[type].off;
    out.push([type, { status: on ? 'True' : 'False', reason, message }]);
  }
  out.push([
    'Ready',
    input.ready.ok
      ? { status: 'True', reason: 'KubeletReady', message: 'kubelet is posting ready status' }
      : {
          status: 'False',
          reason: 'KubeletNotReady',
          message: input.ready.message ?? 'kubelet is not ready',
        },
  ]);
  return out;
}

/**
 * The node conditions now: heartbeat at `now`, transition time kept while the
 * status stays the same. Conditions the kubelet does not own (NetworkUnavailable
 * ...) are left to whoever set them.
 */
export function nodeConditions(previous: any[] | undefined, input: ConditionInput, now: number): any[] {
  const prev = new Map<string, any>((previous ?? []).map((c) => [c.type, c]));
  return conditionTexts(input).map(([type, t]) => {
    const old = prev.get(type);
    const transition =
      old && old.status === t.status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(now);
    return {
      type,
      status: t.status,
      lastHeartbeatTime: rfc3339(now),
      lastTransitionTime: transition,
      reason: t.reason,
      message: t.message,
    };
  });
}

/**
 * The status the agent reports (conditions computed separately), over the
 * Node's current status when there is one.
 */
export function nodeStatus(
  f: StatusFacts,
  conditions: any[],
  existing?: ReportedResources,
): Record<string, unknown> {
  const { capacity, allocatable } = capacityAndAllocatable(f.resources, f.config, existing);
  const images = reportedImages(f.images, f.config.nodeStatusMaxImages);
  const inUse = f.volumesInUse ?? [];
  return {
    capacity,
    allocatable,
    conditions,
    addresses: addresses(f),
    daemonEndpoints: { kubeletEndpoint: { Port: f.config.port } },
    nodeInfo: nodeInfo(f),
    ...(images.length ? { images } : {}),
    // Omitted when empty, as the kubelet does; null drops what an earlier report listed.
    ...(inUse.length
      ? { volumesInUse: inUse }
      : existing?.volumesInUse?.length
        ? { volumesInUse: null }
        : {}),
  };
}

/**
 * The status patch (strategic merge): the status, and null for each extended
 * resource allocatable still lists that capacity no longer has (a merge
 * never drops a map key by itself).
 */
export function nodeStatusPatch(
  status: Record<string, unknown>,
  existing: ReportedResources | undefined,
): Record<string, unknown> {
  const capacity = status.capacity as Record<string, string>;
  const removed = Object.keys(existing?.allocatable ?? {}).filter(
    (k) => !(k in capacity) && isExtendedResourceName(k),
  );
  if (!removed.length) return { status };
  const allocatable: Record<string, string | null> = { ...(status.allocatable as Record<string, string>) };
  for (const k of removed) allocatable[k] = null;
  return { status: { ...status, allocatable } };
}

function taintObjects(taints: Taint[], registerSchedulable: boolean): any[] {
  const out: any[] = taints.map((t) => ({
    key: t.key,
    ...(t.value ? { value: t.value } : {}),
    effect: t.effect,
  }));
  if (!registerSchedulable && !out.some((t) => t.key === TAINT_UNSCHEDULABLE))
    out.push({ key: TAINT_UNSCHEDULABLE, effect: 'NoSchedule' });
  return out;
}

/** The Node the agent registers (kubelet's initialNode). */
export function initialNode(f: StatusFacts, conditions: any[]): KubeObject {
  const c = f.config;
  const spec: Record<string, unknown> = {};
  if (c.podCIDR) {
    spec.podCIDR = c.podCIDR;
    spec.podCIDRs = [c.podCIDR];
  }
  const taints = taintObjects(c.registerWithTaints, c.registerSchedulable);
  if (taints.length) spec.taints = taints;
  if (!c.registerSchedulable) spec.unschedulable = true;
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: c.nodeName,
      labels: { ...defaultLabels(c, f.machine), ...c.nodeLabels },
      annotations: { 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' },
    },
    spec,
    status: nodeStatus(f, conditions),
  };
}

/**
 * What an existing Node needs so it matches this agent (kubelet's
 * reconciliation on re-registration): the default labels and the
 * controller-managed-attach-detach annotation. Undefined when nothing changes.
 */
export function reconcileExisting(
  existing: KubeObject,
  f: Pick<StatusFacts, 'config' | 'machine'>,
): Record<string, unknown> | undefined {
  const want = defaultLabels(f.config, f.machine);
  const have = existing.metadata.labels ?? {};
  const labels: Record<string, string> = {};
  for (const [k, v] of Object.entries(want)) if (have[k] !== v) labels[k] = v;
  const annotations: Record<string, string> = {};
  if (existing.metadata.annotations?.['volumes.kubernetes.io/controller-managed-attach-detach'] !== 'true')
    annotations['volumes.kubernetes.io/controller-managed-attach-detach'] = 'true';
  if (!Object.keys(labels).length && !Object.keys(annotations).length) return undefined;
  return {
    metadata: {
      ...(Object.keys(labels).length ? { labels } : {}),
      ...(Object.keys(annotations).length ? { annotations } : {}),
    },
  };
}

/** JSON with sorted keys, for comparisons that must not depend on key order. */
export function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const keys = Object.keys(v as object)
      .filter((k) => (v as any)[k] !== undefined)
      .sort();
    return `{${keys.map((k) => `${JSON.stringify(k)}:${canonical((v as any)[k])}`).join(',')}}`;
  }
  return JSON.stringify(v ?? null);
}

/**
 * Whether the status to send differs from the Node's current one in what the
 * agent reports, heartbeat times aside (the kubelet's "needs update" test).
 */
export function statusChanged(current: any, next: any): boolean {
  const cur = current ?? {};
  for (const [k, v] of Object.entries(next ?? {})) {
    if (k === 'conditions') {
      const types = new Set((v as any[]).map((c) => c.type));
      const strip = (list: any[]) =>
        list
          .filter((c) => types.has(c.type))
          .map((c) => ({ ...c, lastHeartbeatTime: undefined }))
          .sort((a, b) => compareKeys(String(a.type), String(b.type)));
      if (canonical(strip(cur.conditions ?? [])) !== canonical(strip(v as any[]))) return true;
      continue;
    }
    if (canonical(cur[k]) !== canonical(v)) return true;
  }
  return false;
}
