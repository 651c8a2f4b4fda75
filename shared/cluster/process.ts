// Running tkube's executables as child processes: logs to files, readiness
// polling, and stopping by PID (SIGTERM, then SIGKILL), also when the parent
// exits unexpectedly.
import { spawn, type ChildProcess } from 'node:child_process';
import {
  closeSync,
  createWriteStream,
  existsSync,
  fstatSync,
  mkdirSync,
  openSync,
  readFileSync,
  readSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';
import { Agent, request } from 'undici';
import { loadKubeconfig } from '../client/kubeconfig';

/** dist/ of this build (code runs from dist/shared/cluster). */
export const DIST = resolve(__dirname, '../..');

/** The first executable named bin in $PATH. */
export function findOnPath(bin: string): string | undefined {
  for (const d of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(':'))
    if (d && existsSync(join(d, bin))) return join(d, bin);
  return undefined;
}

const children = new Set<ChildProcess>();
process.on('exit', () => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

export interface Proc {
  name: string;
  child: ChildProcess;
  pid: number;
  logFile: string;
  exited: Promise<number | null>;
  /** Sends signal and waits for the exit, with SIGKILL after timeoutMs. */
  stop(signal?: NodeJS.Signals, timeoutMs?: number): Promise<number | null>;
}

export interface StartOptions {
  /** Name of the log file (default: the executable's name). */
  logName?: string;
  env?: NodeJS.ProcessEnv;
  /** Keep running when the parent exits (tkube up --detach). */
  detached?: boolean;
  /**
   * In a process group of its own: a Ctrl-C on the terminal (SIGINT to the foreground group)
   * reaches only the parent, which stops its children in order.
   */
  ownProcessGroup?: boolean;
}

/**
 * V8 flags an executable runs with. The apiserver's requests live for tens of milliseconds
 * (most of it waiting on the store), long enough to survive V8's default 16 MB young
 * semi-space once or twice: under a write load, scavenges took 12% of its main thread.
 * With 32 MB, 9-10%, and pod creates on etcd ran 5-30% faster. The young generation only
 * grows that far under such a load, and the idle-time collector gives it back.
 */
export const V8_FLAGS: Readonly<Record<string, readonly string[]>> = {
  apiserver: ['--max-semi-space-size=32'],
  etcd: ['--max-semi-space-size=1'],
};

/** `node <V8 flags> dist/cmd/<executable>.js`: the command line an executable is started with. */
export function executableArgs(executable: string, args: readonly string[]): string[] {
  return [...(V8_FLAGS[executable] ?? []), join(DIST, 'cmd', `${executable}.js`), ...args];
}

/** Starts `node <V8 flags> dist/cmd/<executable>.js args`, logging to <logDir>/<name>.log. */
export function startExecutable(
  executable: string,
  args: string[],
  logDir: string,
  o: StartOptions = {},
): Proc {
  mkdirSync(logDir, { recursive: true });
  const name = o.logName ?? executable;
  const logFile = join(logDir, `${name}.log`);
  const out = createWriteStream(logFile, { flags: 'a' });
  const child = spawn(process.execPath, executableArgs(executable, args), {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...(o.env ?? {}) },
    // Node's "detached" is setsid(): a new session and process group.
    detached: o.detached || o.ownProcessGroup,
  });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  return procOf(name, child, logFile, o.detached);
}

/**
 * A started child as a Proc: killed when this process exits unless detached
 * (then it is unref'd and outlives us), stopped by PID with SIGKILL after a timeout.
 */
export function procOf(name: string, child: ChildProcess, logFile: string, detached?: boolean): Proc {
  if (detached) child.unref();
  else children.add(child);
  const exited = new Promise<number | null>((r) =>
    child.on('exit', (code) => {
      children.delete(child);
      r(code);
    }),
  );
  return {
    name,
    child,
    pid: child.pid!,
    logFile,
    exited,
    async stop(signal = 'SIGTERM', timeoutMs = 15_000) {
      if (child.exitCode !== null || child.signalCode !== null) return child.exitCode;
      child.kill(signal);
      const t = setTimeout(() => child.kill('SIGKILL'), timeoutMs);
      const code = await exited;
      clearTimeout(t);
      return code;
    },
  };
}

/** Ports handed out by this process (never twice: two servers started together must not share one). */
const handedOut = new Set<number>();

let ephemeral: [number, number] | null | undefined;

/** The kernel's range of source ports for outgoing connections (null where it does not say). */
export function ephemeralPortRange(): [number, number] | null {
  if (ephemeral === undefined) {
    try {
      const [low, high] = readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')
        .trim()
        .split(/\s+/)
        .map(Number);
      ephemeral = [low, high];
    } catch {
      ephemeral = null;
    }
  }
  return ephemeral;
}

/**
 * The ports freePort draws from: below the ephemeral range. A port from that range (listen(0)
 * gives one) can be taken as the source port of any outgoing connection between the check and
 * the server's own bind, and a suite or a cluster makes thousands of them.
 */
function belowEphemeralRange(): [number, number] | undefined {
  const low = ephemeralPortRange()?.[0] ?? 0;
  return low > 12_000 ? [10_000, low - 1] : undefined;
}

/** A TCP port on 127.0.0.1 free right now, not handed out before by this process. */
export async function freePort(): Promise<number> {
  const range = belowEphemeralRange();
  for (let tries = 0; range && tries < 100; tries++) {
    const port = range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1));
    if (handedOut.has(port) || !(await portIsFree(port))) continue;
    handedOut.add(port);
    return port;
  }
  for (;;) {
    const port = await new Promise<number>((resolvePort, reject) => {
      const s = createServer();
      s.listen(0, '127.0.0.1', () => {
        const a = s.address();
        const p = typeof a === 'object' && a ? a.port : 0;
        s.close(() => resolvePort(p));
      });
      s.on('error', reject);
    });
    if (!handedOut.has(port)) {
      handedOut.add(port);
      return port;
    }
  }
}

/** The end of a process's log file (at most maxBytes of it; '' when it cannot be read). */
export function logTail(file: string, maxBytes = 3000): string {
  let fd: number | undefined;
  try {
    fd = openSync(file, 'r');
    const size = fstatSync(fd).size;
    const len = Math.min(size, maxBytes);
    const buf = Buffer.alloc(len);
    readSync(fd, buf, 0, len, size - len);
    return buf.toString('utf8');
  } catch {
    return '';
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

export async function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((r) => {
    const s = createServer();
    s.once('error', () => r(false));
    s.listen(port, host, () => s.close(() => r(true)));
  });
}

/** GETs a path with a kubeconfig's credentials; resolves with status and body. */
export async function getWithKubeconfig(
  kubeconfig: string,
  path: string,
  timeoutMs = 2000,
): Promise<{ status: number; body: string }> {
  const c = loadKubeconfig(kubeconfig);
  const dispatcher = new Agent({ connect: { ca: c.caPem, cert: c.certPem, key: c.keyPem } });
  try {
    const r = await request(c.server + path, {
      dispatcher,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      headers: c.token ? { authorization: `Bearer ${c.token}` } : {},
    });
    return { status: r.statusCode, body: await r.body.text() };
  } finally {
    await dispatcher.close();
  }
}

/**
 * The HTTP status of a GET that does not verify the server's certificate (0 when nothing
 * answers): for a component's /healthz before the launcher holds credentials it trusts.
 */
export async function unverifiedStatus(url: string): Promise<number> {
  const dispatcher = new Agent({ connect: { rejectUnauthorized: false } });
  try {
    const r = await request(url, { dispatcher, headersTimeout: 2000 });
    await r.body.text();
    return r.statusCode;
  } catch {
    return 0;
  } finally {
    await dispatcher.close();
  }
}

/** Polls until fn resolves truthy; throws with the last failure after timeoutMs (tests use it too). */
export async function waitUntil<T>(
  fn: () => Promise<T | false | undefined | null>,
  timeoutMs = 20_000,
  what = 'condition',
  exited?: Promise<unknown>,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  let dead = false;
  void exited?.then(() => (dead = true));
  while (Date.now() < deadline) {
    if (dead) throw new Error(`${what}: the process exited`);
    try {
      const v = await fn();
      if (v) return v;
    } catch (err) {
      last = String(err);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
  throw new Error(`timed out waiting for ${what}${last ? `: ${last}` : ''}`);
}

/** Waits for an HTTPS path to answer 200 with the kubeconfig's credentials. */
export function waitForHTTP(
  kubeconfig: string,
  path: string,
  timeoutMs: number,
  exited?: Promise<unknown>,
): Promise<true> {
  return waitUntil(
    async () => existsSync(kubeconfig) && (await getWithKubeconfig(kubeconfig, path)).status === 200,
    timeoutMs,
    path,
    exited,
  ) as Promise<true>;
}
