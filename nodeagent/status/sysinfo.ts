// What the node agent knows of its machine, read from the /proc, /sys and /etc
// files the kubelet reads through cAdvisor (meminfo, mounts, os-release,
// machine-id, the DMI product UUID): static facts for Node.status.nodeInfo and
// capacity, and readings for the eviction signals and /stats/summary. No
// library: a general one (systeminformation) made ~0.7 MB of source resident
// and ran `df` at every reading.
import { readFile, statfs } from 'node:fs/promises';
import { cpus, freemem, networkInterfaces, release, totalmem } from 'node:os';
import { realpathSync } from 'node:fs';
import type { Observations } from './eviction';

export interface MachineInfo {
  /** Logical CPUs. */
  cores: number;
  memoryCapacity: number;
  kernelVersion: string;
  osImage: string;
  operatingSystem: string;
  architecture: string;
  machineID: string;
  systemUUID: string;
  bootID: string;
  cpuModel: string;
}

export interface FsReading {
  /** The filesystem's device and mount point. */
  device: string;
  mountpoint: string;
  capacity: number;
  available: number;
  used: number;
  inodes?: number;
  inodesFree?: number;
}

export interface Readings {
  time: number;
  memory: { capacity: number; available: number; used: number; rss?: number };
  fs: FsReading;
  pids: { max: number; running: number };
  /** Cumulative CPU time of the machine in nanoseconds, and the cores in use over the last interval. */
  cpu: { usageCoreNanoSeconds: number; usageNanoCores: number };
}

const goArch = (a: string) => (a === 'x64' ? 'amd64' : a === 'ia32' ? '386' : a === 'arm' ? 'arm' : a);

async function readTrim(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return '';
  }
}

function osReleasePrettyName(text: string): string | undefined {
  const m = /^PRETTY_NAME=(.*)$/m.exec(text);
  return m ? m[1].replace(/^["']|["']$/g, '') : undefined;
}

/** A machine ID in UUID form (for machines that report no SMBIOS UUID). */
function uuidFrom(hex: string): string {
  const h = hex
    .replace(/[^0-9a-f]/gi, '')
    .padEnd(32, '0')
    .slice(0, 32)
    .toUpperCase();
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20)}`;
}

/** MemTotal and MemAvailable of /proc/meminfo in bytes (the kernel's estimate, as cAdvisor reads it). */
async function readMemory(): Promise<{ total: number; available: number }> {
  const text = await readTrim('/proc/meminfo');
  const kB = (name: string) => {
    const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
    return m ? Number(m[1]) * 1024 : undefined;
  };
  const total = kB('MemTotal');
  if (total === undefined) return { total: totalmem(), available: freemem() };
  const available = kB('MemAvailable') ?? (kB('MemFree') ?? 0) + (kB('Buffers') ?? 0) + (kB('Cached') ?? 0);
  return { total, available };
}

/** The machine's facts (read once at start). */
export async function readMachineInfo(): Promise<MachineInfo> {
  const [mem, osRelease, etcMachineID, dbusMachineID, bootID, productUUID] = await Promise.all([
    readMemory(),
    readTrim('/etc/os-release'),
    readTrim('/etc/machine-id'),
    readTrim('/var/lib/dbus/machine-id'),
    readTrim('/proc/sys/kernel/random/boot_id'),
    readTrim('/sys/class/dmi/id/product_uuid'),
  ]);
  const cpuList = cpus();
  const machineID = etcMachineID || dbusMachineID;
  return {
    cores: cpuList.length || 1,
    memoryCapacity: mem.total,
    kernelVersion: release(),
    osImage: osReleasePrettyName(osRelease) ?? 'Linux',
    operatingSystem: process.platform === 'win32' ? 'windows' : process.platform,
    architecture: goArch(process.arch),
    machineID,
    systemUUID: productUUID || (machineID ? uuidFrom(machineID) : ''),
    bootID,
    cpuModel: cpuList[0]?.model.trim() ?? '',
  };
}

/** /proc/mounts writes a space, tab, newline or backslash in a field as an octal escape. */
const unescapeMountField = (f: string) =>
  f.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));

/** The mount holding path: the longest mount point that is a prefix of it (the last one mounted there). */
async function mountOf(path: string): Promise<{ device: string; mountpoint: string } | undefined> {
  let best: { device: string; mountpoint: string } | undefined;
  for (const line of (await readTrim('/proc/self/mounts')).split('\n')) {
    const [device, mountpoint] = line.split(' ').map(unescapeMountField);
    if (!mountpoint) continue;
    const prefix = mountpoint.endsWith('/') ? mountpoint : `${mountpoint}/`;
    if (
      (path === mountpoint || path.startsWith(prefix)) &&
      mountpoint.length >= (best?.mountpoint.length ?? 0)
    )
      best = { device, mountpoint };
  }
  return best;
}

/** The filesystem holding path: its mount (device and mount point) and statfs's sizes, as df gives them. */
export async function readFilesystem(path: string): Promise<FsReading> {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // not created yet: use the path as given
  }
  const mount = await mountOf(real);
  const at = { device: mount?.device ?? '', mountpoint: mount?.mountpoint ?? real };
  try {
    const s = await statfs(real);
    return {
      ...at,
      capacity: s.blocks * s.bsize,
      available: s.bavail * s.bsize,
      used: (s.blocks - s.bfree) * s.bsize,
      ...(s.files > 0 ? { inodes: s.files, inodesFree: s.ffree } : {}),
    };
  } catch {
    return { ...at, capacity: 0, available: 0, used: 0 };
  }
}

/** Threads in the system and the kernel's pid limit (pid.available = max - running). */
async function readPids(): Promise<{ max: number; running: number }> {
  const max = Number(await readTrim('/proc/sys/kernel/pid_max')) || 32768;
  const m = /\s\d+\/(\d+)\s/.exec(await readTrim('/proc/loadavg'));
  return { max, running: m ? Number(m[1]) : 0 };
}

/** Reads the machine's current usage; `rootDir` selects the filesystem (nodefs). */
export class SystemReader {
  private lastCpu?: { at: number; total: number };

  constructor(private readonly rootDir: string) {}

  private async cpuTime(): Promise<number> {
    // /proc/stat's first line: user nice system idle iowait irq softirq steal (in USER_HZ, 100/s).
    const stat = await readTrim('/proc/stat');
    const first = stat.split('\n')[0] ?? '';
    const f = first.trim().split(/\s+/).slice(1).map(Number);
    if (f.length < 4) return 0;
    const busy = f.reduce((a, b, i) => (i === 3 || i === 4 ? a : a + (b || 0)), 0);
    return busy * 10_000_000; // 1/100 s in ns
  }

  async read(now = Date.now()): Promise<Readings> {
    const [mem, fs, pids, cpuNs] = await Promise.all([
      readMemory(),
      readFilesystem(this.rootDir),
      readPids(),
      this.cpuTime(),
    ]);
    let usageNanoCores = 0;
    if (this.lastCpu && now > this.lastCpu.at) {
      usageNanoCores = Math.max(
        0,
        Math.round(((cpuNs - this.lastCpu.total) / ((now - this.lastCpu.at) * 1e6)) * 1e9),
      );
    }
    this.lastCpu = { at: now, total: cpuNs };
    return {
      time: now,
      memory: { capacity: mem.total, available: mem.available, used: mem.total - mem.available },
      fs,
      pids,
      cpu: { usageCoreNanoSeconds: cpuNs, usageNanoCores },
    };
  }
}

/** The eviction signals of a reading (imagefs is the node filesystem: no separate image store). */
export function observationsOf(r: Readings): Observations {
  const obs: Observations = {
    'memory.available': { available: r.memory.available, capacity: r.memory.capacity },
    'nodefs.available': { available: r.fs.available, capacity: r.fs.capacity },
    'imagefs.available': { available: r.fs.available, capacity: r.fs.capacity },
    'pid.available': { available: Math.max(0, r.pids.max - r.pids.running), capacity: r.pids.max },
  };
  if (r.fs.inodes) {
    obs['nodefs.inodesFree'] = { available: r.fs.inodesFree ?? 0, capacity: r.fs.inodes };
    obs['imagefs.inodesFree'] = { available: r.fs.inodesFree ?? 0, capacity: r.fs.inodes };
  }
  return obs;
}

/** The first non-loopback IPv4 address of the machine (InternalIP when --node-ip is not given). */
export function defaultNodeIP(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const a of list ?? []) if (!a.internal && a.family === 'IPv4') return a.address;
  }
  return '127.0.0.1';
}
