// What a data dir has running or mounted on the host, found by path so that
// nothing of another data dir (a parallel test's containerd, another cluster)
// is ever touched: processes whose command line names a path under it
// (containerd's --config, a shim's -address, the components' flags), the
// processes of the containers those shims run, and mounts under it (rootfs, netns bind mounts, volumes). Stopping a cluster
// and starting one after a crash both use it.
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { basename } from 'node:path';

export type ProcessKind = 'containerd' | 'shim' | 'container' | 'component';

export interface HostProcess {
  pid: number;
  kind: ProcessKind;
  /** Start time in clock ticks since boot (/proc/<pid>/stat): a PID with another is a new process. */
  startTime: string;
  argv: string[];
}

interface ProcStat {
  ppid: number;
  state: string;
  startTime: string;
}

function procStat(pid: number): ProcStat | undefined {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // After the command name in parentheses (which may hold spaces): state, ppid, ... starttime (22nd).
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    return { state: f[0], ppid: Number(f[1]), startTime: f[19] };
  } catch {
    return undefined;
  }
}

function argvOf(pid: number): string[] {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').slice(0, -1);
  } catch {
    return [];
  }
}

const isUnder = (path: string, dir: string) => path === dir || path.startsWith(`${dir}/`);

/** An argument that names a path under one of dirs: /d/x, --flag=/d/x, unix:///d/x.sock. */
function namesPathUnder(arg: string, dirs: readonly string[]): boolean {
  const value = arg.replace(/^-{1,2}[\w-]+=/, '').replace(/^unix:\/\//, '');
  return dirs.some((d) => isUnder(value, d));
}

/**
 * What a process is, undefined when it is none of tkube's: someone's `tail -f` of a log under
 * the data dir names a path of it too, and is left alone.
 */
function kindOf(argv: string[]): ProcessKind | undefined {
  const exe = basename(argv[0] ?? '');
  if (exe.startsWith('containerd-shim')) return 'shim';
  if (exe === 'containerd') return 'containerd';
  if (exe === 'docker-registry') return 'component'; // the cluster's image registry
  // node [V8 flags] .../dist/cmd/<executable>.js ...
  if (argv.slice(0, 4).some((a) => /\/cmd\/[\w-]+\.js$/.test(a))) return 'component';
  return undefined;
}

/** This process and its ancestors: the launcher's own command line names its data dir. */
function selfAndAncestors(): Set<number> {
  const out = new Set<number>();
  for (let pid = process.pid; pid > 1 && !out.has(pid); pid = procStat(pid)?.ppid ?? 0) out.add(pid);
  return out;
}

/** Every live process of dir (or dirs): by its command line, and the containers under its shims. */
export function processesUnder(dir: string | readonly string[]): HostProcess[] {
  const dirs = typeof dir === 'string' ? [dir] : dir;
  const skip = selfAndAncestors();
  const all: { pid: number; stat: ProcStat }[] = [];
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    const stat = procStat(pid);
    // A zombie is gone already; its parent reaps it.
    if (stat && stat.state !== 'Z' && !skip.has(pid)) all.push({ pid, stat });
  }
  const found = new Map<number, HostProcess>();
  for (const { pid, stat } of all) {
    const argv = argvOf(pid);
    if (!argv.some((a) => namesPathUnder(a, dirs))) continue;
    const kind = kindOf(argv);
    if (kind) found.set(pid, { pid, kind, startTime: stat.startTime, argv });
  }
  // The containers' processes are the shims' descendants (a shim is their subreaper).
  let parents = new Set([...found.values()].filter((p) => p.kind === 'shim').map((p) => p.pid));
  while (parents.size) {
    const next = new Set<number>();
    for (const { pid, stat } of all)
      if (parents.has(stat.ppid) && !found.has(pid)) {
        found.set(pid, { pid, kind: 'container', startTime: stat.startTime, argv: argvOf(pid) });
        next.add(pid);
      }
    parents = next;
  }
  return [...found.values()];
}

/** Whether the same process (PID and start time) still runs. */
export function stillRunning(p: HostProcess): boolean {
  const s = procStat(p.pid);
  return !!s && s.state !== 'Z' && s.startTime === p.startTime;
}

function kill(ps: HostProcess[]): void {
  for (const p of ps)
    if (stillRunning(p))
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone
      }
}

async function gone(ps: HostProcess[], timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (ps.some(stillRunning) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
}

/**
 * SIGKILLs what runs of dir, in an order that leaves no orphan: the components and containerd
 * (nothing then starts pods again), the containers, then their shims. `only` limits it to some
 * kinds (a containerd's stop kills only its pods' processes).
 */
export async function killProcessesUnder(
  dir: string | readonly string[],
  only?: readonly ProcessKind[],
): Promise<HostProcess[]> {
  const all = processesUnder(dir).filter((p) => !only || only.includes(p.kind));
  const of = (...kinds: ProcessKind[]) => all.filter((p) => kinds.includes(p.kind));
  for (const step of [of('component', 'containerd'), of('container'), of('shim')]) {
    kill(step);
    await gone(step);
  }
  return all;
}

/** Every mount under dir, deepest first. */
export function mountsUnder(dir: string): string[] {
  try {
    return readFileSync('/proc/self/mounts', 'utf8')
      .split('\n')
      .map((l) => l.split(' ')[1]?.replace(/\\040/g, ' '))
      .filter((m): m is string => !!m && isUnder(m, dir))
      .sort((a, b) => b.length - a.length);
  } catch {
    return [];
  }
}

/** Unmounts everything under dir (volumes a killed node agent left mounted, pods' rootfs, netns ...). */
export function unmountUnder(dir: string): number {
  const mounts = mountsUnder(dir);
  for (const m of mounts)
    try {
      execFileSync('umount', ['-l', m], { stdio: 'ignore' });
    } catch {
      // already gone
    }
  return mounts.length;
}

/** The network namespace of a process ("net:[4026532...]"), undefined once it is gone. */
export function netnsOf(pid: number): string | undefined {
  try {
    return readlinkSync(`/proc/${pid}/ns/net`);
  } catch {
    return undefined;
  }
}
