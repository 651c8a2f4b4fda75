// A containerd of a node's own (as k3s embeds one): its config, socket, state,
// CNI network (a bridge and host-local addresses from the node's pod CIDR,
// written before containerd starts), registry mirrors (a k3s-style
// registries.yaml and the cluster's registry), and the offline images
// imported at start. Stopped in the safe order: pods removed through the CRI
// first (stopping containerd leaves the shims running), then containerd by
// PID, then whatever shim or container process of its data dir survived,
// runc's state of them, the bridge and any mount left under the data dir.
// The launcher and the runtime tests use it.
import { execFileSync, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  closeSync,
  existsSync,
  openSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { parse as parseYAML } from 'yaml';
import { CriClient } from '../cri/client';
import { killProcessesUnder, unmountUnder, type HostProcess } from './leftovers';
import { findOnPath, procOf, type Proc } from './process';
import { removeIdlePortmapChains } from './portmap';
import { podCIDRGateway } from './node-addresses';
import { SupervisedProc, type SupervisorOptions } from './supervisor';

export const SANDBOX_IMAGE = 'registry.k8s.io/pause:3.10';
export const CNI_BIN_DIR = '/usr/lib/cni';

/** What must be installed: containerd, its runc shim, runc, ctr and the CNI plugins. */
export function containerdMissing(): string | undefined {
  const need = ['/usr/bin/containerd', '/usr/bin/containerd-shim-runc-v2', '/usr/bin/ctr'];
  for (const f of need) if (!existsSync(f)) return `${f} is not installed`;
  if (!findOnPath('runc')) return 'runc is not installed';
  for (const p of ['bridge', 'host-local', 'loopback'])
    if (!existsSync(join(CNI_BIN_DIR, p))) return `the CNI plugin ${p} is not in ${CNI_BIN_DIR}`;
  if (process.getuid?.() !== 0) return 'containerd needs root';
  return undefined;
}

export interface ContainerdOptions {
  /** Everything of this containerd lives here (root, state, socket, CNI conf and state, logs). */
  dataDir: string;
  /** The node's pod CIDR: the bridge takes its first address, pods the rest. */
  podCIDR: string;
  /**
   * What pods reach through the host besides their own CIDR (the other nodes' pod CIDRs, the
   * Service CIDR): routes via the gateway, and no default route, so nothing else is routed.
   */
  routes?: string[];
  sandboxImage?: string;
  /** OCI archives (*.tar) imported into the k8s.io namespace at start. */
  imagesDir?: string;
  /** A k3s-style registries.yaml (mirrors: {host: {endpoint: [url...]}}). */
  registriesFile?: string;
  /** The cluster's registry, mirroring the public registries. */
  mirror?: ClusterMirror;
  /** Keep running when this process exits (tkube up --detach). */
  detached?: boolean;
  /** Start containerd again when it exits on its own (the launcher's supervision). */
  supervise?: SupervisorOptions;
}

export interface RunningContainerd {
  /** unix:///.../containerd.sock — the node agent's --container-runtime-endpoint. */
  endpoint: string;
  /** The current run's PID (it changes when a supervised containerd is restarted). */
  readonly pid: number;
  dataDir: string;
  bridge: string;
  logFile: string;
  /** Ends the supervision without a signal: an exit from now on is not restarted (the launcher is stopping). */
  endSupervision(): void;
  /**
   * Removes every pod through the CRI, stops containerd by PID, kills the shims and container
   * processes that survived, deletes the bridge and leftover mounts.
   */
  stop(o?: { keepPods?: boolean }): Promise<void>;
}

/** The bridge of a data dir: short (interface names stop at 15) and distinct per node. */
export function bridgeName(dataDir: string): string {
  return `tk${createHash('sha256').update(dataDir).digest('hex').slice(0, 10)}`;
}

function toml(s: string): string {
  return JSON.stringify(s);
}

function config(o: ContainerdOptions, d: string): string {
  return `version = 2
root = ${toml(join(d, 'root'))}
state = ${toml(join(d, 'state'))}
[grpc]
  address = ${toml(join(d, 'containerd.sock'))}
[ttrpc]
  address = ${toml(join(d, 'containerd.sock.ttrpc'))}
[plugins."io.containerd.internal.v1.opt"]
  path = ${toml(join(d, 'opt'))}
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = ${toml(o.sandboxImage ?? SANDBOX_IMAGE)}
  # Root without CAP_SYS_RESOURCE cannot lower OOM scores: every sandbox would fail.
  restrict_oom_score_adj = true
  stream_server_address = "127.0.0.1"
  stream_server_port = "0"
  netns_mounts_under_state_dir = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
        Root = ${toml(join(d, 'runc'))}
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = ${toml(CNI_BIN_DIR)}
    conf_dir = ${toml(join(d, 'cni', 'net.d'))}
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = ${toml(join(d, 'certs.d'))}
`;
}

function cniConfig(o: ContainerdOptions, d: string, bridge: string): string {
  return JSON.stringify(
    {
      cniVersion: '0.4.0',
      name: bridge,
      plugins: [
        {
          type: 'bridge',
          bridge,
          isGateway: true,
          // No masquerading: pods reach the node and each other, nothing beyond.
          ipMasq: false,
          hairpinMode: true,
          ipam: {
            type: 'host-local',
            ranges: [[{ subnet: o.podCIDR }]],
            routes: (o.routes ?? []).map((dst) => ({ dst })),
            dataDir: join(d, 'cni', 'ipam'),
          },
        },
        // Host ports (the sandbox's port mappings), each on its own host IP; only pods with one touch the host's rules.
        { type: 'portmap', capabilities: { portMappings: true } },
      ],
    },
    null,
    2,
  );
}

/** docker.io's real endpoint, as containerd's hosts.toml names the upstream of a mirrored host. */
const upstream = (host: string) =>
  host === 'docker.io' ? 'https://registry-1.docker.io' : `https://${host}`;

/** The registries the cluster's own registry mirrors (the public ones manifests name). */
export const MIRRORED_REGISTRIES = [
  'docker.io',
  'registry.k8s.io',
  'k8s.gcr.io',
  'gcr.io',
  'ghcr.io',
  'quay.io',
];

/** The cluster's registry as every node's first mirror. */
export interface ClusterMirror {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  /**
   * No fallback to the upstream (k3s' --disable-default-registry-endpoint): a pull the mirror
   * cannot serve fails at once, naming the mirror, and nothing leaves the machine.
   */
  mirrorOnly: boolean;
}

/**
 * registries.yaml mirrors and the cluster's mirror → containerd's certs.d/<host>/hosts.toml
 * files: the user's endpoints first, then the cluster's registry, then the upstream (unless
 * mirror-only: then the cluster's registry is the `server` too, so nothing else is tried).
 */
export function writeMirrors(
  registriesFile: string | undefined,
  certsDir: string,
  mirror?: ClusterMirror,
): void {
  mkdirSync(certsDir, { recursive: true });
  const doc = registriesFile ? (parseYAML(readFileSync(registriesFile, 'utf8')) ?? {}) : {};
  const hosts = new Map<string, string[]>();
  for (const [host, m] of Object.entries<any>(doc.mirrors ?? {}))
    hosts.set(host, (m?.endpoint ?? []).map(String));
  if (mirror)
    for (const host of MIRRORED_REGISTRIES) hosts.set(host, [...(hosts.get(host) ?? []), mirror.endpoint]);
  for (const [host, endpoints] of hosts) {
    const dir = join(certsDir, host === '*' ? '_default' : host);
    mkdirSync(dir, { recursive: true });
    const server =
      mirror?.mirrorOnly && MIRRORED_REGISTRIES.includes(host) ? mirror.endpoint : upstream(host);
    let text = host === '*' ? '' : `server = ${toml(server)}\n`;
    for (const ep of endpoints) {
      text += `\n[host.${toml(ep)}]\n  capabilities = ["pull", "resolve"]\n`;
      if (ep.startsWith('https:') && doc.configs?.[new URL(ep).host]?.tls?.insecure_skip_verify)
        text += '  skip_verify = true\n';
    }
    writeFileSync(join(dir, 'hosts.toml'), text);
  }
}

function quietly(file: string, args: string[]): void {
  try {
    execFileSync(file, args, { stdio: 'ignore' });
  } catch {
    // already gone
  }
}

/**
 * The node's bridge with its gateway address, up: the CNI bridge plugin would make it only at
 * the first pod, but the node agent serves on that address (the node's InternalIP) from the
 * start. The plugin takes an existing bridge that has the gateway address as it is.
 */
function createBridge(bridge: string, podCIDR: string): void {
  const prefix = podCIDR.split('/')[1];
  if (!existsSync(`/sys/class/net/${bridge}`)) execFileSync('ip', ['link', 'add', bridge, 'type', 'bridge']);
  execFileSync('ip', ['addr', 'replace', `${podCIDRGateway(podCIDR)}/${prefix}`, 'dev', bridge]);
  execFileSync('ip', ['link', 'set', bridge, 'up']);
}

export async function startContainerd(o: ContainerdOptions): Promise<RunningContainerd> {
  const d = o.dataDir;
  const bridge = bridgeName(d);
  createBridge(bridge, o.podCIDR);
  mkdirSync(join(d, 'cni', 'net.d'), { recursive: true });
  // The CNI conf must be there before containerd starts (a conf added later is picked up unreliably).
  writeFileSync(join(d, 'cni', 'net.d', '10-tkube.conflist'), cniConfig(o, d, bridge));
  writeMirrors(o.registriesFile, join(d, 'certs.d'), o.mirror);
  const configFile = join(d, 'config.toml');
  writeFileSync(configFile, config(o, d));
  const logFile = join(d, 'containerd.log');
  const launch = (): Proc => {
    // The log file itself as stdout/stderr: a detached containerd outlives this process and its pipes.
    const out = openSync(logFile, 'a');
    const child = spawn('/usr/bin/containerd', ['--config', configFile], {
      stdio: ['ignore', out, out],
      env: { ...process.env, PATH: process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin' },
      // Always a process group of its own: a Ctrl-C meant for its owner must not stop it before
      // its pods are removed (the shims would outlive it).
      detached: true,
    });
    closeSync(out);
    return procOf('containerd', child, logFile, o.detached);
  };
  const proc: Proc = o.supervise ? new SupervisedProc(launch, o.supervise) : launch();
  const socket = join(d, 'containerd.sock');
  const endpoint = `unix://${socket}`;
  const client = new CriClient({ runtimeEndpoint: endpoint, requestTimeoutMs: 2000 });
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      if (proc.child.exitCode !== null) throw new Error(`containerd exited at start; see ${logFile}`);
      try {
        await client.call('Version', {});
        break;
      } catch (err) {
        if (Date.now() > deadline)
          throw new Error(`containerd did not answer on ${socket}: ${String(err)}`, { cause: err });
        await new Promise((r) => setTimeout(r, 50));
      }
    }
    // Sandboxes it remembers from an earlier run are stale (their processes were stopped or
    // killed): removed through the CRI, so that CNI gives their addresses back.
    await removeAllPods(client);
    for (const f of o.imagesDir && existsSync(o.imagesDir) ? readdirSync(o.imagesDir).sort() : [])
      if (f.endsWith('.tar'))
        execFileSync(
          '/usr/bin/ctr',
          ['-a', socket, '-n', 'k8s.io', 'images', 'import', join(o.imagesDir!, f)],
          {
            stdio: 'pipe',
          },
        );
  } catch (err) {
    client.close();
    await proc.stop('SIGKILL');
    throw err;
  }
  let stopped = false;
  return {
    endpoint,
    get pid() {
      return proc.pid;
    },
    dataDir: d,
    bridge,
    logFile,
    endSupervision() {
      if (proc instanceof SupervisedProc) proc.endSupervision();
    },
    async stop(so = {}) {
      if (stopped) return;
      stopped = true;
      try {
        if (!so.keepPods && proc.child.exitCode === null && proc.child.signalCode === null)
          await removeAllPods(client);
      } finally {
        client.close();
        await proc.stop('SIGTERM', 10_000);
        if (!so.keepPods) await removeLeftovers(d);
      }
    },
  };
}

/**
 * What a stopped (or killed) containerd of dataDir left: shims and their containers' processes
 * (they outlive containerd), runc's state of its containers, the bridge, mounts. Returns the
 * processes it killed.
 */
export async function removeLeftovers(dataDir: string): Promise<HostProcess[]> {
  const killed = await killProcessesUnder(dataDir, ['shim', 'container']);
  deleteRuncContainers(join(dataDir, 'runc'));
  cleanUpHost(dataDir);
  return killed;
}

/** runc's containers under root/<namespace> (the config's runc Root), force-deleted: their cgroups go too. */
function deleteRuncContainers(root: string): void {
  const namespaces = existsSync(root) ? readdirSync(root) : [];
  for (const ns of namespaces.map((n) => join(root, n))) {
    let list: { id: string }[] | null;
    try {
      list = JSON.parse(
        execFileSync('runc', ['--root', ns, 'list', '--format', 'json'], { stdio: 'pipe' }).toString(),
      );
    } catch {
      continue;
    }
    for (const c of list ?? []) quietly('runc', ['--root', ns, 'delete', '--force', c.id]);
  }
}

/** Whether dataDir's bridge exists. */
export function bridgeExists(dataDir: string): boolean {
  return existsSync(`/sys/class/net/${bridgeName(dataDir)}`);
}

/** What a stopped containerd leaves on the host: its bridge, mounts under its data dir, idle portmap chains. */
export function cleanUpHost(dataDir: string): void {
  quietly('ip', ['link', 'delete', bridgeName(dataDir)]);
  unmountUnder(dataDir);
  removeIdlePortmapChains();
}

export { unmountUnder };

/** Every sandbox stopped and removed (their containers with them). */
export async function removeAllPods(client: CriClient): Promise<void> {
  const list = await client.call('ListPodSandbox', {}, 30_000);
  for (const s of list.items) {
    await client.call('StopPodSandbox', { podSandboxId: s.id }, 60_000).catch(() => {});
    await client.call('RemovePodSandbox', { podSandboxId: s.id }, 60_000).catch(() => {});
  }
}

/** Deletes a stopped containerd's data dir (after stop()). */
export function removeContainerdData(dataDir: string): void {
  cleanUpHost(dataDir);
  rmSync(dataDir, { recursive: true, force: true });
}
