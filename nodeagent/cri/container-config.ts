// A container's CRI ContainerConfig, as kubelet's generateContainerConfig
// builds it: command and args, the resolved env and mounts, the log path, stdin/tty, the cgroup resources of its requests and
// limits (CPU shares and CFS quota, memory limit, OOM score) and its security
// context (user, groups, capabilities, privileged, read-only root, masked
// /proc paths).
import { qosClass } from '../../shared/api/pod-resources';
import { milliValue, parseQuantity } from '../../shared/api/validation/quantity';
import type { ContainerConfig, ContainerKind } from '../pods/runtime';
import { ANNOTATION, containerLabels } from './labels';

/** kubelet's CFS period (100 ms) and the CPU shares bounds of the kernel. */
const CPU_PERIOD = 100_000;
const MIN_SHARES = 2;
const MAX_SHARES = 262_144;

/** The /proc paths runc masks or makes read-only for unprivileged containers (kubelet's defaults). */
export const DEFAULT_MASKED_PATHS = [
  '/proc/asound',
  '/proc/acpi',
  '/proc/kcore',
  '/proc/keys',
  '/proc/latency_stats',
  '/proc/timer_list',
  '/proc/timer_stats',
  '/proc/sched_debug',
  '/proc/scsi',
  '/sys/firmware',
  '/sys/devices/virtual/powercap',
];
export const DEFAULT_READONLY_PATHS = [
  '/proc/bus',
  '/proc/fs',
  '/proc/irq',
  '/proc/sys',
  '/proc/sysrq-trigger',
];

const quantity = (v: unknown) => (v === undefined || v === null ? undefined : parseQuantity(String(v)));
const milli = (v: unknown) => {
  const q = quantity(v);
  return q ? Number(milliValue(q)) : undefined;
};
/** A byte quantity rounded up to a whole byte. */
const bytes = (v: unknown) => {
  const m = milli(v);
  return m === undefined ? undefined : Math.ceil(m / 1000);
};

/** kubelet's LinuxContainerResources for a container of a pod of this QoS class. */
export function linuxResources(pod: any, container: any, memoryCapacityBytes: number): any {
  const req = container.resources?.requests ?? {};
  const lim = container.resources?.limits ?? {};
  const cpuReq = milli(req.cpu) ?? milli(lim.cpu);
  const cpuLim = milli(lim.cpu);
  const memReq = bytes(req.memory) ?? bytes(lim.memory);
  const memLim = bytes(lim.memory);
  const out: any = {
    cpuShares:
      cpuReq === undefined
        ? MIN_SHARES
        : Math.min(MAX_SHARES, Math.max(MIN_SHARES, Math.floor((cpuReq * 1024) / 1000))),
  };
  if (cpuLim !== undefined) {
    out.cpuPeriod = CPU_PERIOD;
    out.cpuQuota = Math.max(1000, Math.floor((cpuLim * CPU_PERIOD) / 1000));
  }
  if (memLim !== undefined) out.memoryLimitInBytes = memLim;
  // kubelet's GetContainerOOMScoreAdjust.
  const qos = qosClass(pod);
  if (qos === 'Guaranteed') out.oomScoreAdj = -997;
  else if (qos === 'BestEffort') out.oomScoreAdj = 1000;
  else {
    const adj = 1000 - Math.floor((1000 * (memReq ?? 0)) / Math.max(1, memoryCapacityBytes));
    out.oomScoreAdj = Math.min(999, Math.max(2, adj));
  }
  return out;
}

function capabilities(sc: any): any | undefined {
  const caps = sc?.capabilities;
  if (!caps) return undefined;
  return { addCapabilities: caps.add ?? [], dropCapabilities: caps.drop ?? [] };
}

/** The container's LinuxContainerSecurityContext: its own settings over the pod's. */
export function containerSecurityContext(pod: any, container: any): any {
  const spec = pod.spec ?? {};
  const psc = spec.securityContext ?? {};
  const sc = container.securityContext ?? {};
  const privileged = !!sc.privileged;
  const out: any = {
    privileged,
    readonlyRootfs: !!sc.readOnlyRootFilesystem,
    namespaceOptions: {
      network: spec.hostNetwork ? 'NODE' : 'POD',
      pid: spec.hostPID ? 'NODE' : spec.shareProcessNamespace ? 'POD' : 'CONTAINER',
      ipc: spec.hostIPC ? 'NODE' : 'POD',
    },
    noNewPrivs: sc.allowPrivilegeEscalation === false,
  };
  const user = sc.runAsUser ?? psc.runAsUser;
  const group = sc.runAsGroup ?? psc.runAsGroup;
  if (user !== undefined) out.runAsUser = { value: user };
  if (group !== undefined) out.runAsGroup = { value: group };
  const groups = [...(psc.supplementalGroups ?? [])];
  if (psc.fsGroup !== undefined) groups.unshift(psc.fsGroup);
  if (groups.length) out.supplementalGroups = groups;
  const caps = capabilities(sc);
  if (caps) out.capabilities = caps;
  if (!privileged && sc.procMount !== 'Unmasked') {
    out.maskedPaths = DEFAULT_MASKED_PATHS;
    out.readonlyPaths = DEFAULT_READONLY_PATHS;
  }
  return out;
}

export interface ContainerConfigInput {
  pod: any;
  container: any;
  kind: ContainerKind;
  attempt: number;
  /** The image to run: the pulled image's id, or its name. */
  image: string;
  /** Relative to the sandbox's log directory: <container>/<attempt>.log. */
  logPath: string;
  config?: ContainerConfig;
  memoryCapacityBytes: number;
}

export function criContainerConfig(i: ContainerConfigInput): any {
  const { pod, container: c } = i;
  const env = i.config?.env ?? [];
  return {
    metadata: { name: c.name, attempt: i.attempt },
    image: { image: i.image, userSpecifiedImage: c.image },
    // Already $(VAR)-expanded by the pod worker (env.ts), as kubelet hands them to the CRI.
    command: c.command ?? [],
    args: c.args ?? [],
    workingDir: c.workingDir ?? '',
    envs: env.map((e) => ({ key: e.name, value: e.value })),
    mounts: (i.config?.mounts ?? []).map((m) => ({
      containerPath: m.containerPath,
      hostPath: m.hostPath,
      readonly: m.readOnly,
      propagation: 'PROPAGATION_PRIVATE',
    })),
    labels: containerLabels(pod, c.name),
    annotations: {
      [ANNOTATION.restartCount]: String(i.attempt),
      [ANNOTATION.terminationMessagePath]: c.terminationMessagePath ?? '/dev/termination-log',
      [ANNOTATION.terminationMessagePolicy]: c.terminationMessagePolicy ?? 'File',
      [ANNOTATION.gracePeriod]: String(pod.spec?.terminationGracePeriodSeconds ?? 30),
      [ANNOTATION.kind]: i.kind,
      [ANNOTATION.image]: c.image,
    },
    logPath: i.logPath,
    stdin: !!c.stdin,
    stdinOnce: !!c.stdinOnce,
    tty: !!c.tty,
    linux: {
      resources: linuxResources(pod, c, i.memoryCapacityBytes),
      securityContext: containerSecurityContext(pod, c),
    },
  };
}
