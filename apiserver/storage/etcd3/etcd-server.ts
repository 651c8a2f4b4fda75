// Starts a real etcd (Debian's etcd-server package, /usr/bin/etcd) for tests and
// benchmarks: 127.0.0.1 only, free client and peer ports, a temp data dir, and
// stopped by PID. Robust against a dying test process: an 'exit' hook kills
// what is left, and a tiny watchdog (sh reading our pipe) kills etcd when this
// process disappears without running hooks (SIGKILL, crash).
import { type ChildProcess, spawn } from 'node:child_process';
import { accessSync, closeSync, constants, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import * as http from 'node:http';
import * as https from 'node:https';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';

export interface EtcdTls {
  certFile: string;
  keyFile: string;
  /** Trusted CA for client certificates; with clientCertAuth, clients must present one. */
  caFile?: string;
  clientCertAuth?: boolean;
  /** The certificate the readiness probe presents under clientCertAuth; default certFile/keyFile. */
  clientCertFile?: string;
  clientKeyFile?: string;
}

export interface StartEtcdOptions {
  /** Reuse this data dir (e.g. to restart a stopped etcd); default: a fresh temp dir. */
  dataDir?: string;
  /** Fixed ports (e.g. to restart on the same endpoint); default: free ones. */
  clientPort?: number;
  peerPort?: number;
  /** Serve clients over TLS (https:// endpoint). */
  tls?: EtcdTls;
  /** How long to wait for /health; default 30 s. */
  readyTimeoutMs?: number;
  /** More etcd flags. */
  extraArgs?: string[];
  /** The program and its first arguments, for an etcd stand-in that takes etcd's flags (default: etcdBinary()). */
  command?: readonly string[];
}

export interface EtcdServer {
  /** Client URL, e.g. http://127.0.0.1:41234. */
  endpoint: string;
  pid: number;
  dataDir: string;
  clientPort: number;
  peerPort: number;
  /** etcd's own log (stdout and stderr). */
  logFile: string;
  /** SIGTERM, then SIGKILL after a grace period; removes the data dir unless keepDataDir. */
  stop(opts?: { keepDataDir?: boolean }): Promise<void>;
}

const MEMBER_NAME = 'tkube';

/** The etcd binary: $ETCD_BIN, or `etcd` on PATH (Debian installs /usr/bin/etcd). */
export function etcdBinary(): string | undefined {
  const candidates = [
    process.env.ETCD_BIN,
    ...(process.env.PATH ?? '').split(path.delimiter).map((d) => d && path.join(d, 'etcd')),
    '/usr/bin/etcd',
  ];
  for (const c of candidates) {
    if (!c) continue;
    try {
      accessSync(c, constants.X_OK);
      return c;
    } catch {
      // not here
    }
  }
  return undefined;
}

export function etcdAvailable(): boolean {
  return etcdBinary() !== undefined;
}

interface Running {
  pid: number;
  watchdogPid: number | undefined;
  /** Removed when this process exits without stopping etcd. */
  cleanup: string | undefined;
}

const running = new Map<number, Running>();
/** Temp roots this module created; their data dirs are ours to delete. */
const ownedRoots = new Set<string>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const r of running.values()) {
      for (const pid of [r.watchdogPid, r.pid]) {
        try {
          if (pid) process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
      if (r.cleanup) rmSync(r.cleanup, { recursive: true, force: true });
    }
  });
}

/** A port the OS considers free right now (another process may still take it; callers retry). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address() as net.AddressInfo;
      srv.close(() => resolve(addr.port));
    });
  });
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function healthy(endpoint: string, tls: EtcdTls | undefined): Promise<boolean> {
  return new Promise((resolve) => {
    const url = `${endpoint}/health`;
    const done = (ok: boolean) => resolve(ok);
    const onRes = (res: http.IncomingMessage) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => done(res.statusCode === 200 && body.includes('"health":"true"')));
      res.on('error', () => done(false));
    };
    const req = tls
      ? https.get(
          url,
          {
            ca: tls.caFile ? readFileSync(tls.caFile) : undefined,
            cert: tls.clientCertAuth ? readFileSync(tls.clientCertFile ?? tls.certFile) : undefined,
            key: tls.clientCertAuth ? readFileSync(tls.clientKeyFile ?? tls.keyFile) : undefined,
            rejectUnauthorized: !!tls.caFile,
            timeout: 1000,
          },
          onRes,
        )
      : http.get(url, { timeout: 1000 }, onRes);
    req.on('error', () => done(false));
    req.on('timeout', () => req.destroy());
  });
}

function etcdArgs(dataDir: string, clientPort: number, peerPort: number, opts: StartEtcdOptions): string[] {
  const scheme = opts.tls ? 'https' : 'http';
  const client = `${scheme}://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const args = [
    `--name=${MEMBER_NAME}`,
    `--data-dir=${dataDir}`,
    `--listen-client-urls=${client}`,
    `--advertise-client-urls=${client}`,
    `--listen-peer-urls=${peer}`,
    `--initial-advertise-peer-urls=${peer}`,
    `--initial-cluster=${MEMBER_NAME}=${peer}`,
    `--initial-cluster-token=tkube-${peerPort}`,
    '--logger=zap',
    '--log-level=warn',
  ];
  if (opts.tls) {
    args.push(`--cert-file=${opts.tls.certFile}`, `--key-file=${opts.tls.keyFile}`);
    if (opts.tls.caFile) args.push(`--trusted-ca-file=${opts.tls.caFile}`);
    if (opts.tls.clientCertAuth) args.push('--client-cert-auth');
  }
  return [...args, ...(opts.extraArgs ?? [])];
}

function etcdEnv(): NodeJS.ProcessEnv {
  // ETCD_* variables of the caller's environment would silently reconfigure etcd.
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('ETCD_')) env[k] = v;
  const goArch: Record<string, string> = { arm: 'arm', ppc64: 'ppc64le', s390x: 's390x', ia32: '386' };
  if (goArch[process.arch]) env.ETCD_UNSUPPORTED_ARCH = goArch[process.arch];
  return env;
}

function tail(file: string, max = 2000): string {
  try {
    const s = readFileSync(file, 'utf8');
    return s.slice(-max);
  } catch {
    return '';
  }
}

/** Sends SIGTERM, then SIGKILL after graceMs; resolves once the process has exited. */
function terminate(child: ChildProcess, graceMs: number): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/** Starts one etcd; retries with other ports when a port turns out taken. */
export async function startEtcd(opts: StartEtcdOptions = {}): Promise<EtcdServer> {
  const bin = opts.command ? opts.command[0] : etcdBinary();
  if (!bin) throw new Error('etcd is not installed (apt-get install etcd-server, or set ETCD_BIN)');
  installExitHook();
  const fixedPorts = opts.clientPort !== undefined || opts.peerPort !== undefined;
  let lastErr: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    try {
      return await startOnce(bin, opts);
    } catch (err) {
      lastErr = err;
      if (!String(err).includes('address already in use')) throw err;
      // A fixed port may still be held by the previous etcd for a moment.
      if (fixedPorts) await sleep(200 * (attempt + 1));
    }
  }
  throw lastErr;
}

async function startOnce(bin: string, opts: StartEtcdOptions): Promise<EtcdServer> {
  const clientPort = opts.clientPort ?? (await freePort());
  let peerPort = opts.peerPort ?? (await freePort());
  while (peerPort === clientPort) peerPort = await freePort();

  let root: string;
  let dataDir: string;
  if (opts.dataDir) {
    dataDir = opts.dataDir;
    root = path.dirname(dataDir);
  } else {
    root = mkdtempSync(path.join(tmpdir(), 'tkube-etcd-'));
    ownedRoots.add(root);
    dataDir = path.join(root, 'data');
  }
  const owned = ownedRoots.has(root);
  const cleanupPath = owned ? root : dataDir;
  const logFile = path.join(owned ? root : tmpdir(), `etcd-${clientPort}.log`);
  const logFd = openSync(logFile, 'a');

  const child = spawn(
    bin,
    [...(opts.command?.slice(1) ?? []), ...etcdArgs(dataDir, clientPort, peerPort, opts)],
    {
      stdio: ['ignore', logFd, logFd],
      env: etcdEnv(),
    },
  );
  closeSync(logFd);
  child.unref();
  const pid = child.pid;
  if (pid === undefined) {
    await new Promise((r) => child.once('error', r));
    throw new Error(`could not start ${bin}`);
  }

  // The watchdog: when our end of its stdin closes (we died), it stops etcd.
  const watchdog = spawn(
    'sh',
    [
      '-c',
      'read _ ; kill -TERM "$1" 2>/dev/null; sleep 3; kill -KILL "$1" 2>/dev/null; [ -n "$2" ] && rm -rf "$2"',
      'tkube-etcd-watchdog',
      String(pid),
      owned ? root : '',
    ],
    { stdio: ['pipe', 'ignore', 'ignore'] },
  );
  watchdog.on('error', () => {});
  watchdog.unref();
  (watchdog.stdin as unknown as net.Socket | null)?.unref();
  const entry: Running = { pid, watchdogPid: watchdog.pid, cleanup: owned ? root : undefined };
  running.set(pid, entry);

  let exited = false;
  child.once('exit', () => {
    exited = true;
    running.delete(pid);
    if (watchdog.exitCode === null) watchdog.kill('SIGKILL');
  });

  const endpoint = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const stop = async (stopOpts: { keepDataDir?: boolean } = {}): Promise<void> => {
    if (watchdog.exitCode === null) watchdog.kill('SIGKILL');
    await terminate(child, 5_000);
    running.delete(pid);
    if (!stopOpts.keepDataDir) {
      rmSync(cleanupPath, { recursive: true, force: true });
      if (!owned) rmSync(logFile, { force: true });
      ownedRoots.delete(root);
    }
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 30_000);
  while (!(await healthy(endpoint, opts.tls))) {
    if (exited || Date.now() > deadline) {
      const why = exited
        ? `exited with ${child.exitCode ?? child.signalCode}`
        : 'did not become healthy in time';
      const log = tail(logFile);
      await stop({ keepDataDir: !!opts.dataDir });
      throw new Error(`etcd on ${endpoint} ${why}:\n${log}`);
    }
    await sleep(50);
  }
  return { endpoint, pid, dataDir, clientPort, peerPort, logFile, stop };
}
