// What the node agent knows of its machine, read with systeminformation (and
// a few /proc and /etc files the kubelet reads through cAdvisor): static facts
// for Node.status.nodeInfo and capacity, and readings for the eviction
// signals and /stats/summary.
import { readFile, statfs } from 'node:fs/promises';
import { networkInterfaces } from 'node:os';
import { realpathSync } from 'node:fs';
import * as si from 'systeminformation';
import type { Systeminformation } from 'systeminformation';
import { logger } from '../../shared/log';
import type { Observations } from './eviction';

const log = logger('nodeagent/status');

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

/** The machine's facts (read once at start). */
export async function readMachineInfo(): Promise<MachineInfo> {
  const [cpu, mem, os, sys, uuid, osRelease, machineIdFile, bootID, productUUID] = await Promise.all([
    si.cpu(),
    si.mem(),
    si.osInfo(),
    si.system(),
    si.uuid(),
    readTrim('/etc/os-release'),
    readTrim('/etc/machine-id'),
    readTrim('/proc/sys/kernel/random/boot_id'),
    readTrim('/sys/class/dmi/id/product_uuid'),
  ]);
  const machineID = machineIdFile || uuid.os || '';
  return {
    cores: cpu.cores || 1,
    memoryCapacity: mem.total,
    kernelVersion: os.kernel,
    osImage:
      osReleasePrettyName(osRelease) ??
      [os.distro, os.release, os.codename ? `(${os.codename})` : ''].filter(Boolean).join(' '),
    operatingSystem: process.platform === 'win32' ? 'windows' : process.platform,
    architecture: goArch(process.arch),
    machineID,
    systemUUID: productUUID || sys.uuid || uuid.hardware || (machineID ? uuidFrom(machineID) : ''),
    bootID,
    cpuModel: cpu.brand,
  };
}

/** The filesystem holding path: the mount with the longest matching prefix. */
export async function readFilesystem(path: string): Promise<FsReading> {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // not created yet: use the path as given
  }
  let best: Systeminformation.FsSizeData | undefined;
  try {
    for (const f of await si.fsSize()) {
      const m = f.mount.endsWith('/') ? f.mount : `${f.mount}/`;
      if (
        (real === f.mount || real.startsWith(m) || f.mount === '/') &&
        (!best || f.mount.length > best.mount.length)
      )
        best = f;
    }
  } catch (err) {
    log.v(2)?.info('systeminformation fsSize failed, using statfs', { err: String(err) });
  }
  let st:
    | { blocks: number; bsize: number; bavail: number; bfree: number; files: number; ffree: number }
    | undefined;
  try {
    const s = await statfs(real);
    st = {
      blocks: s.blocks,
      bsize: s.bsize,
      bavail: s.bavail,
      bfree: s.bfree,
      files: s.files,
      ffree: s.ffree,
    };
  } catch {
    st = undefined;
  }
  if (best && best.size > 0) {
    return {
      device: best.fs,
      mountpoint: best.mount,
      capacity: best.size,
      available: best.available,
      used: best.used,
      ...(st && st.files > 0 ? { inodes: st.files, inodesFree: st.ffree } : {}),
    };
  }
  if (st) {
    return {
      device: '',
      mountpoint: real,
      capacity: st.blocks * st.bsize,
      available: st.bavail * st.bsize,
      used: (st.blocks - st.bfree) * st.bsize,
      ...(st.files > 0 ? { inodes: st.files, inodesFree: st.ffree } : {}),
    };
  }
  return { device: '', mountpoint: real, capacity: 0, available: 0, used: 0 };
}

/** Threads in the system and the kernel's pid limit (pid.available = max - running). */
async function readPids(): Promise<{ max: number; running: number }> {
  const max = Number(await readTrim('/proc/sys/kernel/pid_max')) || 32768;
  const loadavg = await readTrim('/proc/loadavg');
  const m = /\s\d+\/(\d+)\s/.exec(loadavg);
  if (m) return { max, running: Number(m[1]) };
  try {
    const p = await si.processes();
    return { max, running: p.all };
  } catch {
    return { max, running: 0 };
  }
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
      si.mem(),
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
