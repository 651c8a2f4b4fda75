// What the node agent reports about resource use: /stats/summary (the
// kubelet's stats/v1alpha1 Summary: node and per-pod), /spec (cAdvisor's
// MachineInfo), and the Prometheus texts of /metrics/cadvisor and
// /metrics/resource. Containers' CPU and memory are the runtime's measurements
// (CRI stats); the fake runtime's containers use none. Logs are real files
// and are counted.
import { statSync } from 'node:fs';
import { MetricsRegistry } from '../../shared/metrics/registry';
import type { MachineInfo, Readings } from '../status/sysinfo';
import type { ServedPod } from '../pods/records';
import type { ContainerUsage } from '../pods/runtime';
import { rfc3339 } from '../status/node';

export interface StatsSources {
  nodeName: string;
  machine: MachineInfo;
  readings(): Readings | undefined;
  pods(): ServedPod[];
  startTime: number;
  currentVersion: string;
  /** A container's measured use (the runtime's); undefined: none measured. */
  usage?(containerID: string): ContainerUsage | undefined;
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

interface ContainerUse {
  name: string;
  startedAt?: number;
  logBytes: number;
  running: boolean;
  usage?: ContainerUsage;
}

function containersOf(src: StatsSources, r: ServedPod): ContainerUse[] {
  const out: ContainerUse[] = [];
  for (const [name, s] of r.containers) {
    const cur = s.current;
    if (!cur) continue;
    let logBytes = fileSize(cur.logPath);
    if (s.last) logBytes += fileSize(s.last.logPath);
    const running = cur.state === 'running';
    out.push({
      name,
      startedAt: cur.startedAt,
      logBytes,
      running,
      usage: running ? src.usage?.(cur.id) : undefined,
    });
  }
  return out;
}

/** A container's (or the sum of a pod's containers') CPU and memory in the Summary's shape. */
function measured(time: string, uses: (ContainerUsage | undefined)[]): { cpu: any; memory: any } {
  const sum = (f: (u: ContainerUsage) => number) => uses.reduce((a, u) => a + (u ? f(u) : 0), 0);
  return {
    cpu: {
      time,
      usageNanoCores: sum((u) => u.cpuNanoCores),
      usageCoreNanoSeconds: sum((u) => u.cpuCoreNanoSeconds),
    },
    memory: {
      time,
      usageBytes: sum((u) => u.memoryUsageBytes),
      workingSetBytes: sum((u) => u.memoryWorkingSetBytes),
      rssBytes: sum((u) => u.memoryRSSBytes),
      pageFaults: 0,
      majorPageFaults: 0,
    },
  };
}

/** GET /stats/summary (only_cpu_and_memory=true leaves out filesystems, network, rlimit). */
export function summary(src: StatsSources, onlyCpuAndMemory = false): any {
  const r = src.readings();
  const now = rfc3339(r?.time ?? Date.now());
  const cpu = {
    time: now,
    usageNanoCores: r?.cpu.usageNanoCores ?? 0,
    usageCoreNanoSeconds: r?.cpu.usageCoreNanoSeconds ?? 0,
  };
  const memory = {
    time: now,
    availableBytes: r?.memory.available ?? 0,
    usageBytes: r?.memory.used ?? 0,
    workingSetBytes: r?.memory.used ?? 0,
    rssBytes: r?.memory.rss ?? 0,
    pageFaults: 0,
    majorPageFaults: 0,
  };
  const fs = r
    ? {
        time: now,
        availableBytes: r.fs.available,
        capacityBytes: r.fs.capacity,
        usedBytes: r.fs.used,
        ...(r.fs.inodes
          ? {
              inodesFree: r.fs.inodesFree,
              inodes: r.fs.inodes,
              inodesUsed: r.fs.inodes - (r.fs.inodesFree ?? 0),
            }
          : {}),
      }
    : undefined;
  const node: any = {
    nodeName: src.nodeName,
    systemContainers: [
      {
        name: 'kubelet',
        startTime: rfc3339(src.startTime),
        cpu: {
          time: now,
          usageNanoCores: 0,
          usageCoreNanoSeconds: Math.round(process.cpuUsage().user * 1000),
        },
        memory: {
          time: now,
          workingSetBytes: process.memoryUsage().rss,
          usageBytes: process.memoryUsage().rss,
        },
      },
      {
        name: 'pods',
        startTime: rfc3339(src.startTime),
        cpu: idleCpu(now),
        memory: { time: now, availableBytes: r?.memory.available ?? 0, usageBytes: 0, workingSetBytes: 0 },
      },
    ],
    startTime: rfc3339(src.startTime),
    cpu,
    memory,
  };
  if (!onlyCpuAndMemory) {
    node.network = { time: now, interfaces: [] };
    if (fs) {
      node.fs = fs;
      node.runtime = { imageFs: { ...fs, usedBytes: 0 }, containerFs: { ...fs, usedBytes: 0 } };
    }
    if (r) node.rlimit = { time: now, maxpid: r.pids.max, curproc: r.pids.running };
  }
  const pods = src.pods().map((p) => {
    const md = p.pod.metadata;
    const uses = containersOf(src, p);
    const containers = uses.map((c) => ({
      name: c.name,
      startTime: rfc3339(c.startedAt ?? p.startTime ?? Date.now()),
      ...measured(now, [c.usage]),
      ...(onlyCpuAndMemory
        ? {}
        : { rootfs: fsUsage(now, fs, c.usage?.rootfsUsedBytes ?? 0), logs: fsUsage(now, fs, c.logBytes) }),
    }));
    const logBytes = containers.reduce((a, c: any) => a + (c.logs?.usedBytes ?? 0), 0);
    return {
      podRef: { name: md.name, namespace: md.namespace, uid: p.uid },
      startTime: rfc3339(p.startTime ?? Date.now()),
      containers,
      ...measured(
        now,
        uses.map((c) => c.usage),
      ),
      ...(onlyCpuAndMemory
        ? {}
        : {
            network: { time: now, interfaces: [] },
            'ephemeral-storage': fsUsage(now, fs, logBytes),
            process_stats: { process_count: 0 },
          }),
    };
  });
  return { node, pods };
}

/** GET /spec: cAdvisor's MachineInfo, the fields kubectl and tools read. */
export function machineSpec(src: StatsSources): any {
  const r = src.readings();
  return {
    timestamp: new Date().toISOString(),
    num_cores: src.machine.cores,
    num_physical_cores: src.machine.cores,
    num_sockets: 1,
    cpu_frequency_khz: 0,
    memory_capacity: src.machine.memoryCapacity,
    swap_capacity: 0,
    machine_id: src.machine.machineID,
    system_uuid: src.machine.systemUUID,
    boot_id: src.machine.bootID,
    filesystems: r
      ? [
          {
            device: r.fs.device || r.fs.mountpoint,
            capacity: r.fs.capacity,
            type: 'vfs',
            inodes: r.fs.inodes ?? 0,
            has_inodes: !!r.fs.inodes,
          },
        ]
      : [],
    disk_map: {},
    network_devices: [],
    topology: [],
    cloud_provider: 'Unknown',
    instance_type: 'Unknown',
    instance_id: 'None',
  };
}

function podLabels(p: ServedPod) {
  return { namespace: p.pod.metadata.namespace ?? '', pod: p.pod.metadata.name ?? '' };
}

/** GET /metrics/cadvisor: machine facts and per-container series (zeros for CPU and memory). */
export function cadvisorMetrics(src: StatsSources): string {
  const reg = new MetricsRegistry({ currentVersion: src.currentVersion });
  reg
    .gauge({ name: 'machine_cpu_cores', help: 'Number of logical CPU cores.' })
    .set(undefined, src.machine.cores);
  reg
    .gauge({ name: 'machine_memory_bytes', help: 'Amount of memory installed on the machine.' })
    .set(undefined, src.machine.memoryCapacity);
  const labels = ['container', 'id', 'image', 'name', 'namespace', 'pod'];
  const start = reg.gauge({
    name: 'container_start_time_seconds',
    help: 'Start time of the container since unix epoch in seconds.',
    labels,
  });
  const cpu = reg.counter({
    name: 'container_cpu_usage_seconds_total',
    help: 'Cumulative cpu time consumed in seconds.',
    labels: [...labels, 'cpu'],
  });
  const mem = reg.gauge({
    name: 'container_memory_working_set_bytes',
    help: 'Current working set in bytes.',
    labels,
  });
  for (const p of src.pods()) {
    for (const [name, s] of p.containers) {
      const c = s.current;
      if (!c || c.state !== 'running') continue;
      const l = {
        ...podLabels(p),
        container: name,
        id: c.id,
        image: c.image,
        name: c.id.replace(/^[a-z]+:\/\//, ''),
      };
      const u = src.usage?.(c.id);
      start.set(l, (c.startedAt ?? 0) / 1000);
      cpu.inc({ ...l, cpu: 'total' }, (u?.cpuCoreNanoSeconds ?? 0) / 1e9);
      mem.set(l, u?.memoryWorkingSetBytes ?? 0);
    }
  }
  return reg.expose();
}

/**
 * GET /metrics/resource: what metrics-server scrapes. As kubelet's resource metrics collector: each
 * CPU and memory sample carries the time it was read (the node's reading, the runtime's container
 * stats), from which metrics-server takes its rates; what was not measured is left out, not zero.
 */
export function resourceMetrics(src: StatsSources): string {
  const r = src.readings();
  const reg = new MetricsRegistry({ currentVersion: src.currentVersion });
  const stable = (name: string, help: string, labels?: string[]) =>
    ({ name, help, labels, stability: 'STABLE' }) as const;
  const ncpu = reg.counter(
    stable('node_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the node in core-seconds'),
  );
  const nmem = reg.gauge(stable('node_memory_working_set_bytes', 'Current working set of the node in bytes'));
  if (r) {
    ncpu.inc(undefined, r.cpu.usageCoreNanoSeconds / 1e9, r.time);
    nmem.set(undefined, r.memory.used, r.time);
  }
  const cl = ['container', 'namespace', 'pod'];
  const ccpu = reg.counter(
    stable(
      'container_cpu_usage_seconds_total',
      'Cumulative cpu time consumed by the container in core-seconds',
      cl,
    ),
  );
  const cmem = reg.gauge(
    stable('container_memory_working_set_bytes', 'Current working set of the container in bytes', cl),
  );
  const cstart = reg.gauge(
    stable('container_start_time_seconds', 'Start time of the container since unix epoch in seconds', cl),
  );
  const pl = ['namespace', 'pod'];
  const pcpu = reg.counter(
    stable('pod_cpu_usage_seconds_total', 'Cumulative cpu time consumed by the pod in core-seconds', pl),
  );
  const pmem = reg.gauge(
    stable('pod_memory_working_set_bytes', 'Current working set of the pod in bytes', pl),
  );
  for (const p of src.pods()) {
    const pod = podLabels(p);
    let podCPU = 0;
    let podMem = 0;
    let podTime: number | undefined;
    for (const [name, s] of p.containers) {
      const c = s.current;
      if (!c || c.state !== 'running') continue;
      const l = { ...pod, container: name };
      if (c.startedAt) cstart.set(l, c.startedAt / 1000);
      const u = src.usage?.(c.id);
      if (!u) continue;
      ccpu.inc(l, u.cpuCoreNanoSeconds / 1e9, u.time);
      cmem.set(l, u.memoryWorkingSetBytes, u.time);
      podCPU += u.cpuCoreNanoSeconds;
      podMem += u.memoryWorkingSetBytes;
      podTime = Math.max(podTime ?? 0, u.time);
    }
    if (podTime === undefined) continue;
    pcpu.inc(pod, podCPU / 1e9, podTime);
    pmem.set(pod, podMem, podTime);
  }
  const scrapeErrorHelp = '1 if there was an error while getting container metrics, 0 otherwise';
  // Deprecated in 1.29 for resource_scrape_error: hidden by the registry's rules, as in kubelet.
  reg.gauge({ name: 'scrape_error', help: scrapeErrorHelp, deprecatedVersion: '1.29' }).set(undefined, 0);
  reg.gauge(stable('resource_scrape_error', scrapeErrorHelp)).set(undefined, 0);
  return reg.expose();
}

// What no container uses (the "pods" system container's CPU).
const idleCpu = (time: string) => ({ time, usageNanoCores: 0, usageCoreNanoSeconds: 0 });

const fsUsage = (
  time: string,
  fs: { availableBytes: number; capacityBytes: number } | undefined,
  usedBytes: number,
) => ({ time, availableBytes: fs?.availableBytes ?? 0, capacityBytes: fs?.capacityBytes ?? 0, usedBytes });
