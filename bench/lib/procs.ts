// Processes the benchmark starts: the real apiserver (with node flags such as
// --cpu-prof), the bare TLS server and load workers. Every child is tracked and
// killed when this process exits, however it exits; /proc readers for RSS and CPU.
import { type ChildProcess, execFileSync, fork, spawn } from 'node:child_process';
import { closeSync, existsSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { loadKubeconfig } from '../../shared/client/kubeconfig';
import { executableArgs, freePort, logTail as tail } from '../../shared/cluster/process';
import { sleep } from './stats';

export { freePort };

/** The build folder this file runs from (dist/ or dist-bench/). */
export const DIST = resolve(__dirname, '..', '..');

const children = new Set<ChildProcess>();
let hooked = false;

function killAll(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
}

/** Kills every tracked child on exit, and on SIGINT/SIGTERM before exiting. */
function hook(): void {
  if (hooked) return;
  hooked = true;
  process.on('exit', killAll);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const)
    process.once(sig, () => {
      killAll();
      process.exit(130);
    });
}

export function track(c: ChildProcess): ChildProcess {
  hook();
  children.add(c);
  c.once('exit', () => children.delete(c));
  return c;
}

/** SIGTERM, SIGKILL after graceMs; resolves once the child has exited. */
export function terminate(c: ChildProcess, graceMs = 20_000): Promise<void> {
  if (c.exitCode !== null || c.signalCode !== null) return Promise.resolve();
  return new Promise((res) => {
    const t = setTimeout(() => c.kill('SIGKILL'), graceMs);
    c.once('exit', () => {
      clearTimeout(t);
      res();
    });
    c.kill('SIGTERM');
  });
}

export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), `tkube-${prefix}-`));
}

// ---- /proc ------------------------------------------------------------------

let clkTck = 0;

function ticksPerSecond(): number {
  if (!clkTck) {
    try {
      clkTck = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;
    } catch {
      clkTck = 100;
    }
  }
  return clkTck;
}

/** Resident set size in bytes (VmRSS), or NaN when the process is gone. */
export function rssBytes(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) * 1024 : NaN;
  } catch {
    return NaN;
  }
}

export interface MemDetail {
  /** VmRSS */
  rss: number;
  /** RssAnon: heap, stacks, malloc'd memory. */
  anon: number;
  /** RssFile: mapped files (the node binary, LMDB's memory map). */
  file: number;
}

/** VmRSS split into anonymous and file-backed pages, in bytes (NaN when the process is gone). */
export function memDetail(pid: number): MemDetail {
  try {
    const s = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+)\\s+kB`, 'm').exec(s);
      return m ? Number(m[1]) * 1024 : NaN;
    };
    return { rss: kb('VmRSS'), anon: kb('RssAnon'), file: kb('RssFile') };
  } catch {
    return { rss: NaN, anon: NaN, file: NaN };
  }
}

/** User + system CPU seconds the process has used so far. */
export function cpuSeconds(pid: number): number {
  try {
    const s = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = s.slice(s.lastIndexOf(')') + 2).split(' ');
    // Fields after "(comm)": state is [0], so utime (14th overall) is [11] and stime [12].
    return (Number(f[11]) + Number(f[12])) / ticksPerSecond();
  } catch {
    return NaN;
  }
}

/** CPU use of a set of processes between two points in time. */
export class CpuMeter {
  private readonly t0 = performance.now();
  private readonly c0: number[];

  constructor(private readonly pids: number[]) {
    this.c0 = pids.map(cpuSeconds);
  }

  /** Per pid: CPU seconds used / wall seconds elapsed (1.0 = one core busy). */
  read(): { wallS: number; cores: number[] } {
    const wallS = (performance.now() - this.t0) / 1000;
    return { wallS, cores: this.pids.map((p, i) => (cpuSeconds(p) - this.c0[i]) / wallS) };
  }
}

// ---- the apiserver ------------------------------------------------------------

export interface Creds {
  ca?: string;
  cert?: string;
  key?: string;
}

export interface Target extends Creds {
  origin: string;
}

export interface ApiserverOptions {
  /** Folder for the kubeconfig and the log; the caller removes it. */
  dir: string;
  dataDir: string;
  certDir: string;
  /** More apiserver flags (e.g. --etcd-servers). */
  args?: string[];
  /** Node flags before the script (e.g. --cpu-prof). */
  nodeArgs?: string[];
  readyTimeoutMs?: number;
  label?: string;
  /** Another path probed alongside /readyz; the time of its first 200 is `alsoMs`. */
  alsoProbe?: string;
  /**
   * When `alsoProbe` answered 200 but /readyz still fails 5 s later (or at the timeout), return
   * with readyMs NaN and the reason instead of failing.
   */
  tolerateNotReady?: boolean;
}

export interface Apiserver {
  pid: number;
  port: number;
  target: Target;
  logFile: string;
  /** Spawn to the first /readyz 200, in ms; NaN when it never came (tolerateNotReady). */
  readyMs: number;
  /** Spawn to the first 200 of alsoProbe. */
  alsoMs?: number;
  /** Why /readyz did not pass (verbose body and failed hooks from the log). */
  notReady?: string;
  child: ChildProcess;
  stop(): Promise<void>;
}

function credsFromCertDir(certDir: string): Creds | undefined {
  const f = (n: string) => join(certDir, n);
  if (![f('ca.crt'), f('admin.crt'), f('admin.key')].every((p) => existsSync(p))) return undefined;
  return {
    ca: readFileSync(f('ca.crt'), 'utf8'),
    cert: readFileSync(f('admin.crt'), 'utf8'),
    key: readFileSync(f('admin.key'), 'utf8'),
  };
}

/**
 * Starts `node [nodeArgs] <V8 flags> dist/cmd/apiserver.js` on a free port and waits for
 * /readyz 200, polling every few ms so the start time is not rounded up.
 * With a cert dir that already holds the CA and admin credentials the probe
 * starts at once; otherwise it waits for the kubeconfig the server writes.
 */
export async function startApiserver(o: ApiserverOptions): Promise<Apiserver> {
  const port = await freePort();
  const kubeconfig = join(o.dir, `kubeconfig-${port}`);
  const logFile = join(o.dir, `${o.label ?? 'apiserver'}-${port}.log`);
  const fd = openSync(logFile, 'a');
  // The command line tkube's launcher gives the apiserver (its V8 flags included), profiling flags first.
  const args = [
    ...(o.nodeArgs ?? []),
    ...executableArgs('apiserver', [
      '--secure-port',
      String(port),
      '--bind-address',
      '127.0.0.1',
      '--data-dir',
      o.dataDir,
      '--cert-dir',
      o.certDir,
      '--write-kubeconfig',
      kubeconfig,
      ...(o.args ?? []),
    ]),
  ];
  const t0 = performance.now();
  const child = track(spawn(process.execPath, args, { stdio: ['ignore', fd, fd] }));
  closeSync(fd);
  let exited = false;
  child.once('exit', () => (exited = true));
  const origin = `https://127.0.0.1:${port}`;
  let deadline = Date.now() + (o.readyTimeoutMs ?? 120_000);
  let creds = credsFromCertDir(o.certDir);
  while (!creds) {
    if (exited) throw new Error(`apiserver exited before it was ready:\n${tail(logFile)}`);
    if (Date.now() > deadline) throw new Error(`apiserver wrote no kubeconfig in time:\n${tail(logFile)}`);
    if (existsSync(kubeconfig)) {
      try {
        const c = loadKubeconfig(kubeconfig);
        creds = { ca: c.caPem, cert: c.certPem, key: c.keyPem };
      } catch {
        // half-written; try again
      }
    }
    await sleep(2);
  }
  const agent = new Agent({ connect: { ...creds, timeout: 1000 } });
  const probe = async (path: string): Promise<{ ok: boolean; text: string }> => {
    try {
      const r = await request(`${origin}${path}`, {
        dispatcher: agent,
        headersTimeout: 2000,
        bodyTimeout: 2000,
      });
      const body = await r.body.text();
      return { ok: r.statusCode === 200, text: `${r.statusCode} ${body.slice(0, 2000)}` };
    } catch (err) {
      return { ok: false, text: String(err) };
    }
  };
  let readyMs = NaN;
  let alsoMs: number | undefined;
  let notReady: string | undefined;
  try {
    for (;;) {
      if (exited) throw new Error(`apiserver exited before it was ready:\n${tail(logFile)}`);
      const r = await probe('/readyz');
      if (r.ok) {
        readyMs = performance.now() - t0;
        break;
      }
      if (o.alsoProbe && alsoMs === undefined && (await probe(o.alsoProbe)).ok) {
        alsoMs = performance.now() - t0;
        // Everything else is ready: the excluded check gets a grace period, not the whole timeout.
        if (o.tolerateNotReady) deadline = Math.min(deadline, Date.now() + 5000);
      }
      if (Date.now() > deadline) {
        if (o.tolerateNotReady && alsoMs !== undefined) {
          const failed = tail(logFile, 20_000)
            .split('\n')
            .filter((l) => l.includes('hook failed'));
          notReady = `${(await probe('/readyz?verbose')).text.replace(/\n/g, ' ')} ${failed.join(' ')}`;
          break;
        }
        throw new Error(`apiserver not ready in time (${r.text}):\n${tail(logFile)}`);
      }
      await sleep(5);
    }
  } catch (err) {
    await terminate(child, 5000);
    throw err;
  } finally {
    await agent.close();
  }
  return {
    pid: child.pid!,
    port,
    target: { origin, ...creds },
    logFile,
    readyMs,
    ...(alsoMs !== undefined ? { alsoMs } : {}),
    ...(notReady ? { notReady } : {}),
    child,
    stop: () => terminate(child),
  };
}

/** This process and every child it tracks (for telling our CPU use from the machine's). */
export function ourPids(extra: number[] = []): number[] {
  return [process.pid, ...[...children].map((c) => c.pid!).filter(Boolean), ...extra];
}

function machineBusySeconds(): number {
  const f = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal: busy = all - idle - iowait
  const all = f.slice(0, 8).reduce((x, y) => x + y, 0);
  return (all - f[3] - f[4]) / ticksPerSecond();
}

/**
 * CPU the rest of the machine used during a measurement (other users' builds
 * and tests): machine busy time minus our processes' time, in cores.
 */
export class NoiseMeter {
  private readonly t0 = performance.now();
  private readonly busy0 = machineBusySeconds();
  private readonly ours0: Map<number, number>;

  constructor(private readonly extraPids: number[] = []) {
    this.ours0 = new Map(ourPids(extraPids).map((p) => [p, cpuSeconds(p)]));
  }

  /** Cores used by processes that are not ours (0 = a quiet machine). */
  read(): number {
    const wall = (performance.now() - this.t0) / 1000;
    const busy = machineBusySeconds() - this.busy0;
    let ours = 0;
    for (const [pid, c0] of this.ours0) {
      const c = cpuSeconds(pid);
      if (Number.isFinite(c)) ours += c - c0;
    }
    return Math.max(0, (busy - ours) / wall);
  }
}

// ---- forked helpers -------------------------------------------------------------

/** Forks a compiled bench script (e.g. worker.js) with structured-clone IPC. */
export function forkScript(name: string, args: string[] = []): ChildProcess {
  return track(
    fork(join(DIST, 'bench', name), args, {
      serialization: 'advanced',
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    }),
  );
}

export function removeDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true });
}
