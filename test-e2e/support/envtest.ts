// controller-runtime v0.24.1's envtest, emulated (Go is not available here): its tiny
// CAs and certificate files, the etcd and kube-apiserver command lines (sorted
// --key=value), the --help probes, health polls every 100 ms, the admin user with a
// client certificate, the wait for the default namespace (50 ms), and Stop by SIGTERM to
// each process group. Facts: ../shared/cluster-facts/envtest.md.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import {
  createWriteStream,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import https from 'node:https';
import http from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client, type ClientConfig } from '../../shared/client';
import { createCA, createClientCert, createServingCert, type KeyPair } from '../../shared/pki/certs';
import { freePort } from './processes';

const POLL_MS = 100;
/** envtest's default per process; KUBEBUILDER_CONTROLPLANE_START_TIMEOUT changes it. */
const START_TIMEOUT_MS = 20_000;
const STOP_TIMEOUT_MS = 20_000;

export interface EnvtestTimings {
  etcdHelpMs: number;
  etcdReadyMs: number;
  apiserverHelpMs: number;
  apiserverReadyMs: number;
  defaultNamespaceMs: number;
}

export interface EnvtestProcess {
  name: string;
  child: ChildProcess;
  /** The process group (envtest starts each asset with Setpgid). */
  pgid: number;
  /** The ports envtest handed it on its command line (addr.Suggest). */
  ports: number[];
  /** How it ended: by itself after SIGTERM, or killed once the stop timeout passed. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export interface Envtest {
  /** The admin user's config (system:masters, client certificate, the serving CA). */
  config: ClientConfig;
  client: Client;
  /** Adds a user as AddUser does: a client certificate from the client CA. */
  userConfig(name: string, groups: string[]): Promise<ClientConfig>;
  processes: EnvtestProcess[];
  timings: EnvtestTimings;
  /** ControlPlane.Stop: apiserver, then etcd, SIGTERM to the group; SIGKILL after the timeout. */
  stop(): Promise<void>;
}

/** Arguments.AsStrings: "--key=value", keys sorted. */
const asStrings = (args: Record<string, string>) =>
  Object.keys(args)
    .sort()
    .map((k) => `--${k}=${args[k]}`);

function writePem(dir: string, name: string, pem: string): void {
  writeFileSync(join(dir, name), pem, { mode: 0o640 });
}

function startAsset(
  name: string,
  path: string,
  args: string[],
  ports: number[],
  logDir: string,
): EnvtestProcess {
  const out = createWriteStream(join(logDir, `${name}.log`));
  const child = spawn(path, args, { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  child.stdout!.pipe(out);
  child.stderr!.pipe(out);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((r) =>
    child.on('exit', (code, signal) => r({ code, signal })),
  );
  return { name, child, pgid: child.pid!, ports, exited };
}

/** addr.Suggest's reservations: a file per port, for two minutes, seen by every process. */
const PORT_RESERVATIONS = join(tmpdir(), 'tkube-envtest-ports');
const PORT_RESERVATION_MS = 120_000;

/**
 * addr.Suggest: a free port no environment (of this process or another) was handed in the last
 * two minutes. A port the kernel gave one environment, closed again for its process to bind,
 * can come back from the next listen(0): with two dozen environments starting at once, to
 * another one.
 */
async function suggestPort(): Promise<number> {
  mkdirSync(PORT_RESERVATIONS, { recursive: true });
  for (let attempt = 0; ; attempt++) {
    const port = await freePort();
    const file = join(PORT_RESERVATIONS, `port-${port}`);
    try {
      writeFileSync(file, String(process.pid), { flag: 'wx' });
      return port;
    } catch {
      // Reserved: taken again only once the reservation is over (or after envtest's 100 tries).
      let stale = true;
      try {
        stale = Date.now() - statSync(file).mtimeMs >= PORT_RESERVATION_MS;
      } catch {
        // gone meanwhile
      }
      if (stale || attempt >= 100) {
        writeFileSync(file, String(process.pid));
        return port;
      }
    }
  }
}

/** GET url until 200, every 100 ms, as envtest's health poller (HTTP/1.1, no verification, no client cert). */
async function pollHealth(p: EnvtestProcess, url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void p.exited.then(() => (exited = true));
  for (;;) {
    const status = await new Promise<number>((resolve) => {
      const u = new URL(url);
      const get = u.protocol === 'https:' ? https.get : http.get;
      const req = get(url, { rejectUnauthorized: false, agent: false, timeout: 1000 }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', () => resolve(0));
      req.on('timeout', () => req.destroy());
    });
    if (status === 200) return;
    if (exited) throw new Error(`timeout waiting for process ${p.name} to start successfully`);
    if (Date.now() > deadline) throw new Error(`timeout waiting for process ${p.name} to start`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}

function timed<T>(f: () => T): [T, number] {
  const t0 = performance.now();
  const v = f();
  return [v, performance.now() - t0];
}

async function stopProcess(p: EnvtestProcess): Promise<void> {
  if (p.child.exitCode !== null || p.child.signalCode !== null) return;
  process.kill(-p.pgid, 'SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const killed = new Promise<void>((r) => {
    timer = setTimeout(() => {
      try {
        process.kill(-p.pgid, 'SIGKILL');
      } catch {
        // already gone
      }
      r();
    }, STOP_TIMEOUT_MS);
  });
  await Promise.race([p.exited.then(() => {}), killed]);
  clearTimeout(timer);
}

/** Environment.Start with the assets in dir (KUBEBUILDER_ASSETS). */
export async function startEnvtest(
  assetsDir: string,
  logDir: string,
  opts: { startTimeoutMs?: number } = {},
): Promise<Envtest> {
  const startTimeoutMs = opts.startTimeoutMs ?? START_TIMEOUT_MS;
  mkdirSync(logDir, { recursive: true });
  const certDir = mkdtempSync(join(tmpdir(), 'k8s_test_framework_'));
  const dataDir = mkdtempSync(join(tmpdir(), 'k8s_test_framework_'));
  const processes: EnvtestProcess[] = [];
  const cleanup = async () => {
    for (const p of [...processes].reverse()) await stopProcess(p);
    rmSync(certDir, { recursive: true, force: true });
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    // Four tiny CAs: serving (kept in memory), service accounts, client auth; webhooks are the test's.
    const servingCA = await createCA('envtest-environment');
    const serving = await createServingCert(servingCA, 'localhost', {
      dnsNames: ['localhost'],
      ips: ['127.0.0.1', '::1'],
    });
    writePem(certDir, 'apiserver.crt', serving.certPem);
    writePem(certDir, 'apiserver.key', serving.keyPem);
    const saCA = await createCA('envtest-environment');
    writePem(certDir, 'sa-signer.crt', saCA.certPem);
    writePem(certDir, 'sa-signer.key', saCA.keyPem);
    const clientCA: KeyPair = await createCA('envtest-environment');
    writePem(certDir, 'client-cert-auth-ca.crt', clientCA.certPem);

    const [etcdHelp, etcdHelpMs] = timed(() =>
      spawnSync(join(assetsDir, 'etcd'), ['--help'], { encoding: 'utf8' }),
    );
    const noFsync = /^\s*--unsafe-no-fsync\b/m.test(`${etcdHelp.stdout}${etcdHelp.stderr}`);
    const [clientPort, peerPort] = [await suggestPort(), await suggestPort()];
    const etcdURL = `http://127.0.0.1:${clientPort}`;
    const t0 = performance.now();
    const etcd = startAsset(
      'etcd',
      join(assetsDir, 'etcd'),
      asStrings({
        'advertise-client-urls': etcdURL,
        'data-dir': dataDir,
        'listen-client-urls': etcdURL,
        'listen-peer-urls': `http://127.0.0.1:${peerPort}`,
        ...(noFsync ? { 'unsafe-no-fsync': 'true' } : {}),
      }),
      [clientPort, peerPort],
      logDir,
    );
    processes.push(etcd);
    await pollHealth(etcd, `${etcdURL}/health`, startTimeoutMs);
    const etcdReadyMs = performance.now() - t0;

    const [help, apiserverHelpMs] = timed(() =>
      spawnSync(join(assetsDir, 'kube-apiserver'), ['--help'], { encoding: 'utf8' }),
    );
    if (help.status !== 0)
      throw new Error(`unable to run command "kube-apiserver --help" to check for flag: ${help.stderr}`);
    const insecurePort = /^\s*--insecure-port\b/m.test(`${help.stdout}${help.stderr}`);
    const port = await suggestPort();
    const t1 = performance.now();
    const apiserver = startAsset(
      'kube-apiserver',
      join(assetsDir, 'kube-apiserver'),
      asStrings({
        'allow-privileged': 'true',
        'authorization-mode': 'RBAC',
        'bind-address': '127.0.0.1',
        'cert-dir': certDir,
        'client-ca-file': join(certDir, 'client-cert-auth-ca.crt'),
        'disable-admission-plugins': 'ServiceAccount',
        'etcd-servers': etcdURL,
        ...(insecurePort ? { 'insecure-port': '0' } : {}),
        'secure-port': String(port),
        'service-account-issuer': `https://127.0.0.1:${port}/`,
        'service-account-key-file': join(certDir, 'sa-signer.crt'),
        'service-account-signing-key-file': join(certDir, 'sa-signer.key'),
        'service-cluster-ip-range': '10.0.0.0/24',
      }),
      [port],
      logDir,
    );
    processes.push(apiserver);
    await pollHealth(apiserver, `https://127.0.0.1:${port}/healthz`, startTimeoutMs);
    const apiserverReadyMs = performance.now() - t1;

    const userConfig = async (name: string, groups: string[]): Promise<ClientConfig> => {
      const cert = await createClientCert(clientCA, { commonName: name, organizations: groups });
      return {
        server: `https://127.0.0.1:${port}`,
        caPem: servingCA.certPem,
        certPem: cert.certPem,
        keyPem: cert.keyPem,
      };
    };
    await userConfig('default', ['system:masters']);
    const config = await userConfig('admin', ['system:masters']);
    const client = Client.create(config, { qps: 1000, burst: 2000, http2: false });
    const t2 = performance.now();
    for (const deadline = Date.now() + 5000; ;) {
      try {
        await client.resource('namespaces').get('default');
        break;
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    const defaultNamespaceMs = performance.now() - t2;
    return {
      config,
      client,
      userConfig,
      processes,
      timings: { etcdHelpMs, etcdReadyMs, apiserverHelpMs, apiserverReadyMs, defaultNamespaceMs },
      async stop() {
        await client.close();
        await cleanup();
      },
    };
  } catch (err) {
    await cleanup();
    throw err;
  }
}

/** True while any process of the group is alive. */
export function groupAlive(pgid: number): boolean {
  try {
    process.kill(-pgid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The TCP ports a process listens on (IPv4 and IPv6), from /proc: its socket inodes in net/tcp*. */
export function listeningPorts(pid: number): number[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]);
    } catch {
      // closed meanwhile
    }
  }
  const ports = new Set<number>();
  for (const table of ['tcp', 'tcp6']) {
    for (const line of readFileSync(`/proc/${pid}/net/${table}`, 'utf8').split('\n').slice(1)) {
      const f = line.trim().split(/\s+/);
      // local_address is addr:PORT in hex; st 0A is LISTEN; the inode is the tenth field.
      if (f.length > 9 && f[3] === '0A' && inodes.has(f[9])) ports.add(parseInt(f[1].split(':')[1], 16));
    }
  }
  return [...ports].sort((a, b) => a - b);
}
