// A whole local cluster as processes: apiserver (embedded store or etcd),
// controller manager and node agents, each with its own credentials, in one
// data directory that a restart reuses — and, with the containerd runtime, a
// containerd per node (containerd.ts) started before its agent and stopped
// after it. Used by `tkube up` and the e2e tests.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { CriClient } from '../cri/client';
import {
  removeAllPods,
  removeLeftovers,
  SANDBOX_IMAGE,
  startContainerd,
  type RunningContainerd,
} from './containerd';
import { removeClusterLeftovers } from './cluster-leftovers';
import { DIST, startExecutable, getWithKubeconfig, waitForHTTP, waitUntil, type Proc } from './process';
import { writeComponentKubeconfig } from './credentials';
import { Client } from '../client/client';
import { loadKubeconfig } from '../client/kubeconfig';
import { frontProxyFlags } from './front-proxy';
import { ensureMetricsServerRBAC, METRICS_SERVER_USER } from './metrics-server-rbac';
import { SupervisedProc, type Restart, type SupervisorOptions } from './supervisor';
import { startRegistry } from './registry';
import { installUnreachableRoutes, removeUnreachableRoutes, type RouteResult } from './service-route';

export type Step = 'apiserver' | 'credentials' | 'controller-manager' | 'images' | 'nodes' | 'ready';

/** How the node agents run pods: without processes, or in containers through their own containerd. */
export type NodeRuntime = 'fake' | 'containerd';

export interface LocalClusterOptions {
  dataDir: string;
  /** Node agents to start (0 = none). */
  nodes?: number;
  /**
   * The nodes' runtime. "containerd": one node agent per node, each with a containerd of its
   * own; "fake": one node agent hosts every node as a simulated node (--simulated-nodes);
   * unset: one node agent per node on the agent's default runtime (fake).
   */
  runtime?: NodeRuntime;
  apiserverPort?: number;
  /** Ports for the controller manager (10257) and node i (10250/10255/10248 + 100·i) unless given. */
  controllerManagerPort?: number;
  nodePorts?: (i: number) => { port: number; readOnlyPort: number; healthzPort: number };
  etcdServers?: string[];
  controllerManager?: boolean;
  /** Extra flags per component. */
  apiserverArgs?: string[];
  controllerManagerArgs?: string[];
  /** Run metrics-server (kubectl top); default true when there are nodes. */
  metricsServer?: boolean;
  metricsServerArgs?: string[];
  nodeagentArgs?: (i: number) => string[];
  /** containerd: a k3s-style registries.yaml with registry mirrors for every node. */
  registriesFile?: string;
  /** containerd: the port of the cluster's registry on 127.0.0.1 (default 5000). */
  registryPort?: number;
  /**
   * containerd: let pulls the cluster's registry cannot serve go on to the upstream registries
   * (default false: nothing leaves the machine, as every test and benchmark needs).
   */
  upstreamRegistries?: boolean;
  /** Node i's pod CIDR; default 10.244.<i>.0/24. */
  podCIDR?: (i: number) => string;
  /** The apiserver's --service-cluster-ip-range; default 10.0.0.0/24 (its default). */
  serviceCIDR?: string;
  /**
   * Route the service CIDR unreachable on the host while the cluster runs (as root): there
   * is no service proxy, and the host would send ClusterIP traffic to its default gateway.
   * One host-wide route: `tkube up` sets it, tests that run clusters side by side do not.
   */
  unreachableServiceRoute?: boolean;
  /** Keep the processes running after this process exits (then nothing supervises them). */
  detached?: boolean;
  /** Restart a component that exits, with back-off (default: unless detached). */
  supervise?: boolean;
  /** A component exited and will be started again after r.delayMs. */
  onRestart?(r: Restart): void;
  /** What an earlier run left on the host (after a crash) was removed before starting: what it was. */
  onLeftovers?(removed: string): void;
  timeoutMs?: number;
  progress?(step: Step, state: 'start' | 'done', detail?: string): void;
}

export interface ClusterState {
  pids: { name: string; pid: number }[];
  /** The nodes' containerds (their pods are removed through the CRI before they stop). */
  containerds?: { pid: number; endpoint: string; dataDir: string }[];
  kubeconfig: string;
  server: string;
  /** Service CIDRs routed unreachable while the cluster runs (removed when it stops). */
  unreachableRoutes?: string[];
}

const NODE_PREFIX = 'tkube-node';
export const nodeName = (i: number) => `${NODE_PREFIX}-${i + 1}`;
/** The node agent process that hosts simulated nodes. */
export const SIMULATED_NODES = 'simulated-nodes';

/** The default pod CIDR of node i (the containerd bridge and the agent's --pod-cidr). */
export const nodePodCIDR = (i: number) => `10.244.${i}.0/24`;

/**
 * Node i's address (its InternalIP, where its agent serves): a loopback
 * address of its own, never 127.0.0.1, so "localhost" and the node's IP are
 * distinct host IPs for host ports, as on a real node (Kubernetes' hostPort
 * predicate spec publishes one port on both).
 */
export const nodeIP = (i: number) => `127.0.0.${i + 2}`;

export class LocalCluster {
  readonly procs: Proc[] = [];
  readonly containerds: RunningContainerd[] = [];
  readonly dataDir: string;
  readonly kubeconfig: string;
  readonly logDir: string;
  readonly certDir: string;
  private readonly o: LocalClusterOptions;
  private isUp = false;
  /** What up() did about the service CIDR's unreachable route (undefined: not asked to). */
  serviceRoute: RouteResult | undefined;
  private stopping = false;

  constructor(o: LocalClusterOptions) {
    this.o = o;
    this.dataDir = resolve(o.dataDir);
    this.kubeconfig = join(this.dataDir, 'kubeconfig');
    this.logDir = join(this.dataDir, 'logs');
    this.certDir = join(this.dataDir, 'apiserver', 'certs');
  }

  private podCIDR(i: number): string {
    return this.o.podCIDR?.(i) ?? nodePodCIDR(i);
  }

  get apiserverPort(): number {
    return this.o.apiserverPort ?? 6443;
  }

  get serviceCIDR(): string {
    return this.o.serviceCIDR ?? '10.0.0.0/24';
  }

  get server(): string {
    return `https://127.0.0.1:${this.apiserverPort}`;
  }

  private start(executable: string, args: string[], logName: string): Proc {
    // down() began while up() was still starting: nothing more starts (down() would miss it).
    if (this.stopping) throw new Error('the cluster is stopping');
    const launch = () =>
      startExecutable(executable, args, this.logDir, {
        logName,
        detached: this.o.detached,
        // A Ctrl-C reaches only the launcher, which stops the cluster in order (down()).
        ownProcessGroup: true,
      });
    const supervision = this.supervision();
    const p = supervision ? new SupervisedProc(launch, supervision) : launch();
    this.procs.push(p);
    return p;
  }

  /** How the cluster's processes are supervised, or undefined when they are not. */
  private supervision(): SupervisorOptions | undefined {
    if (!(this.o.supervise ?? !this.o.detached)) return undefined;
    return {
      onRestart: (r) => this.o.onRestart?.(r),
      // The recorded PIDs follow restarts, for `tkube down`.
      onRestarted: () => this.isUp && this.saveState(),
    };
  }

  async up(): Promise<void> {
    const o = this.o;
    const timeout = o.timeoutMs ?? 60_000;
    mkdirSync(this.dataDir, { recursive: true });
    await this.removeLeftovers();
    const progress = o.progress ?? (() => {});

    // Before anything could dial a ClusterIP; a stale route (after a crash) is replaced.
    if (o.unreachableServiceRoute) {
      this.serviceRoute = installUnreachableRoutes(this.serviceCIDR);
      this.saveState();
    }
    progress('apiserver', 'start');
    const aggregation = await frontProxyFlags(join(this.dataDir, 'front-proxy'));
    const api = this.start(
      'apiserver',
      [
        '--secure-port',
        String(this.apiserverPort),
        '--bind-address',
        '127.0.0.1',
        '--data-dir',
        join(this.dataDir, 'apiserver', 'data'),
        '--cert-dir',
        this.certDir,
        '--write-kubeconfig',
        this.kubeconfig,
        // Node names of a local cluster do not resolve: reach node agents by their InternalIP first.
        '--kubelet-preferred-address-types',
        'InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP',
        // As kubeadm sets it: node agents limited to their own node's objects, everyone else by RBAC
        // (the user's kubeconfig is in system:masters, bound to cluster-admin).
        '--authorization-mode',
        'Node,RBAC',
        '--service-cluster-ip-range',
        this.serviceCIDR,
        // No service proxy runs: webhooks, conversion webhooks and APIServices at a ready endpoint.
        '--enable-aggregator-routing=true',
        ...(o.etcdServers?.length ? ['--etcd-servers', o.etcdServers.join(',')] : []),
        ...aggregation,
        ...(o.apiserverArgs ?? []),
      ],
      'apiserver',
    );
    await waitForHTTP(this.kubeconfig, '/readyz', timeout, api.exited);
    progress('apiserver', 'done', this.server);

    const nodes = o.nodes ?? 1;
    const simulated = o.runtime === 'fake';
    progress('credentials', 'start');
    const cmKubeconfig = join(this.dataDir, 'controller-manager', 'kubeconfig');
    // The scheduler runs inside the controller manager, but as kube-scheduler's own user.
    const schedulerKubeconfig = join(this.dataDir, 'controller-manager', 'scheduler.kubeconfig');
    if (o.controllerManager !== false) {
      await writeComponentKubeconfig({
        certDir: this.certDir,
        server: this.server,
        subject: { commonName: 'system:kube-controller-manager' },
        kubeconfig: cmKubeconfig,
      });
      await writeComponentKubeconfig({
        certDir: this.certDir,
        server: this.server,
        subject: { commonName: 'system:kube-scheduler' },
        kubeconfig: schedulerKubeconfig,
      });
    }
    if (simulated && nodes > 0) {
      // One process acts for every simulated node, which the Node authorizer would not allow a
      // node's identity: like kwok, the simulator is an administrator.
      await writeComponentKubeconfig({
        certDir: this.certDir,
        server: this.server,
        subject: { commonName: 'tkube:simulated-nodes', organizations: ['system:masters'] },
        kubeconfig: join(this.dataDir, 'nodes', SIMULATED_NODES, 'kubeconfig'),
      });
    } else {
      for (let i = 0; i < nodes; i++) {
        await writeComponentKubeconfig({
          certDir: this.certDir,
          server: this.server,
          subject: { commonName: `system:node:${nodeName(i)}`, organizations: ['system:nodes'] },
          kubeconfig: join(this.dataDir, 'nodes', nodeName(i), 'kubeconfig'),
        });
      }
    }
    progress('credentials', 'done');

    if (o.controllerManager !== false) {
      progress('controller-manager', 'start');
      const port = o.controllerManagerPort ?? 10257;
      const cm = this.start(
        'controller-manager',
        [
          '--kubeconfig',
          cmKubeconfig,
          // Each controller as its own service account, under its bootstrap role (kubeadm's setting).
          '--use-service-account-credentials',
          '--scheduler-kubeconfig',
          schedulerKubeconfig,
          '--secure-port',
          String(port),
          '--bind-address',
          '127.0.0.1',
          // kubeadm's delegation: client certificates of the cluster CA, TokenReview and
          // SubjectAccessReview through its own credentials, for /metrics.
          '--client-ca-file',
          join(this.certDir, 'ca.crt'),
          '--authentication-kubeconfig',
          cmKubeconfig,
          '--authorization-kubeconfig',
          cmKubeconfig,
          '--root-ca-file',
          join(this.certDir, 'ca.crt'),
          '--cluster-signing-cert-file',
          join(this.certDir, 'ca.crt'),
          '--cluster-signing-key-file',
          join(this.certDir, 'ca.key'),
          ...(o.controllerManagerArgs ?? []),
        ],
        'controller-manager',
      );
      await waitUntil(
        async () => (await insecureGet(`https://127.0.0.1:${port}/healthz`)) === 200,
        timeout,
        'controller-manager /healthz',
        cm.exited,
      );
      progress('controller-manager', 'done');
    }

    const runtimeArgs =
      nodes > 0 && o.runtime === 'containerd' ? await this.startContainerds(nodes) : undefined;
    if (nodes > 0) {
      progress('nodes', 'start', `${nodes}${simulated ? ' simulated' : ''}`);
      if (simulated) await this.startSimulatedNodes(nodes, timeout);
      else await this.startNodeAgents(nodes, timeout, runtimeArgs);
      progress('nodes', 'done', `${nodes}${simulated ? ' simulated' : ''}`);
      if (o.metricsServer !== false) await this.startMetricsServer(timeout);
    }
    this.saveState();
    this.isUp = true;
    progress('ready', 'done');
  }

  /** The offline images built once, then a containerd per node with them imported; the agents' runtime flags. */
  private async startContainerds(nodes: number): Promise<string[][]> {
    const progress = this.o.progress ?? (() => {});
    progress('images', 'start');
    const imagesDir = join(this.dataDir, 'images');
    execFileSync('bash', [join(DIST, '..', 'scripts', 'build-images.sh'), imagesDir], { stdio: 'pipe' });
    const registry = await startRegistry({
      dataDir: join(this.dataDir, 'registry'),
      port: this.o.registryPort ?? 5000,
      imagesDir,
      detached: this.o.detached,
    });
    this.procs.push(registry.proc);
    const mirror = { endpoint: registry.endpoint, mirrorOnly: !this.o.upstreamRegistries };
    const args: string[][] = [];
    for (let i = 0; i < nodes; i++) {
      const ctd = await startContainerd({
        dataDir: join(this.dataDir, 'nodes', nodeName(i), 'containerd'),
        podCIDR: this.podCIDR(i),
        imagesDir,
        registriesFile: this.o.registriesFile,
        mirror,
        detached: this.o.detached,
        supervise: this.supervision(),
      });
      this.containerds.push(ctd);
      args.push([
        '--runtime',
        'remote',
        '--container-runtime-endpoint',
        ctd.endpoint,
        '--pod-infra-container-image',
        SANDBOX_IMAGE,
        '--registry-mirror',
        registry.endpoint,
        '--cgroup-root',
        `/tkube/${nodeName(i)}`,
      ]);
    }
    progress(
      'images',
      'done',
      `busybox and pause on ${nodes} node(s) and in the registry on ${registry.host}`,
    );
    return args;
  }

  /** metrics-server with the RBAC it needs, registered through the aggregation layer as v1beta1.metrics.k8s.io. */
  private async startMetricsServer(timeout: number): Promise<void> {
    const kubeconfig = join(this.dataDir, 'metrics-server', 'kubeconfig');
    await writeComponentKubeconfig({
      certDir: this.certDir,
      server: this.server,
      subject: { commonName: METRICS_SERVER_USER },
      kubeconfig,
    });
    const admin = Client.create(loadKubeconfig(this.kubeconfig), { http2: false });
    try {
      await ensureMetricsServerRBAC(admin);
    } finally {
      await admin.close();
    }
    const ms = this.start(
      'metrics-server',
      ['--kubeconfig', kubeconfig, '--secure-port', '0', ...(this.o.metricsServerArgs ?? [])],
      'metrics-server',
    );
    await waitUntil(
      async () =>
        (
          await getWithKubeconfig(
            this.kubeconfig,
            '/apis/apiregistration.k8s.io/v1/apiservices/v1beta1.metrics.k8s.io',
          )
        ).status === 200,
      timeout,
      'metrics-server registered',
      ms.exited,
    );
  }

  private ports(i: number) {
    return (
      this.o.nodePorts?.(i) ?? {
        port: 10250 + 100 * i,
        readOnlyPort: 10255 + 100 * i,
        healthzPort: 10248 + 100 * i,
      }
    );
  }

  /** One node agent per node, each with its own credentials, ports and pod CIDR; waits for Ready nodes. */
  private async startNodeAgents(nodes: number, timeout: number, runtimeArgs?: string[][]): Promise<void> {
    const o = this.o;
    const started: Proc[] = [];
    for (let i = 0; i < nodes; i++) {
      const ports = this.ports(i);
      const dir = join(this.dataDir, 'nodes', nodeName(i));
      started.push(
        this.start(
          'nodeagent',
          [
            '--kubeconfig',
            join(dir, 'kubeconfig'),
            '--hostname-override',
            nodeName(i),
            '--node-ip',
            nodeIP(i),
            '--address',
            nodeIP(i),
            '--port',
            String(ports.port),
            '--read-only-port',
            String(ports.readOnlyPort),
            '--healthz-port',
            String(ports.healthzPort),
            '--root-dir',
            dir,
            '--cert-dir',
            join(dir, 'pki'),
            '--pod-cidr',
            this.podCIDR(i),
            ...(runtimeArgs?.[i] ?? []),
            ...(o.nodeagentArgs?.(i) ?? []),
          ],
          nodeName(i),
        ),
      );
    }
    for (let i = 0; i < nodes; i++) {
      await waitUntil(
        () => this.nodeReady(nodeName(i)),
        timeout,
        `node ${nodeName(i)} Ready`,
        started[i].exited,
      );
    }
  }

  /** One node agent hosting every node (--simulated-nodes); waits until all of them are Ready. */
  private async startSimulatedNodes(nodes: number, timeout: number): Promise<void> {
    const ports = this.ports(0);
    const dir = join(this.dataDir, 'nodes', SIMULATED_NODES);
    const p = this.start(
      'nodeagent',
      [
        '--kubeconfig',
        join(dir, 'kubeconfig'),
        '--simulated-nodes',
        String(nodes),
        '--runtime',
        'fake',
        '--hostname-override',
        NODE_PREFIX,
        '--node-ip',
        '127.0.0.1',
        '--address',
        '127.0.0.1',
        '--read-only-port',
        String(ports.readOnlyPort),
        '--healthz-port',
        String(ports.healthzPort),
        '--root-dir',
        dir,
        ...(this.o.nodeagentArgs?.(0) ?? []),
      ],
      SIMULATED_NODES,
    );
    // Generous: a thousand registrations take a while on a loaded machine.
    await waitUntil(
      async () => (await this.readyNodes()) >= nodes,
      Math.max(timeout, nodes * 200),
      `${nodes} simulated nodes Ready`,
      p.exited,
    );
  }

  /** How many Nodes say Ready. */
  async readyNodes(): Promise<number> {
    const r = await getWithKubeconfig(this.kubeconfig, '/api/v1/nodes', 10_000);
    if (r.status !== 200) return 0;
    return (JSON.parse(r.body).items ?? []).filter((n: any) =>
      (n.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True'),
    ).length;
  }

  async nodeReady(name: string): Promise<boolean> {
    const r = await getWithKubeconfig(this.kubeconfig, `/api/v1/nodes/${name}`);
    if (r.status !== 200) return false;
    const node = JSON.parse(r.body);
    return (node.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');
  }

  private stateFile(): string {
    return join(this.dataDir, 'cluster.json');
  }

  private saveState(): void {
    const state: ClusterState = {
      pids: this.procs.map((p) => ({ name: p.name, pid: p.pid })),
      containerds: this.containerds.map((c) => ({ pid: c.pid, endpoint: c.endpoint, dataDir: c.dataDir })),
      kubeconfig: this.kubeconfig,
      server: this.server,
      unreachableRoutes: this.serviceRoute?.installed,
    };
    writeFileSync(this.stateFile(), JSON.stringify(state, null, 2));
  }

  /** Every supervised process: ending their supervision comes before any signal when stopping. */
  private endSupervision(): void {
    this.isUp = false;
    this.stopping = true;
    for (const p of this.procs) if (p instanceof SupervisedProc) p.endSupervision();
    for (const c of this.containerds) c.endSupervision();
  }

  /**
   * Stops node agents first, the apiserver last (each by PID, SIGTERM then SIGKILL), then each
   * node's containerd once its pods are removed through the CRI, then whatever of the data dir
   * still runs or is mounted. No exit during the stop is restarted.
   */
  async down(): Promise<void> {
    this.endSupervision();
    for (const p of [...this.procs].reverse()) await p.stop('SIGTERM', 20_000);
    this.procs.length = 0;
    await Promise.all(this.containerds.map((c) => c.stop()));
    this.containerds.length = 0;
    await this.removeLeftovers(false);
    this.removeServiceRoute();
    rmSync(this.stateFile(), { force: true });
  }

  /** The second Ctrl-C: no waiting for anything, everything of the data dir SIGKILLed and cleaned up. */
  async kill(): Promise<void> {
    this.endSupervision();
    await this.removeLeftovers(false);
    this.removeServiceRoute();
    this.procs.length = 0;
    this.containerds.length = 0;
    rmSync(this.stateFile(), { force: true });
  }

  private removeServiceRoute(): void {
    for (const cidr of this.serviceRoute?.installed ?? []) removeUnreachableRoutes(cidr);
    this.serviceRoute = undefined;
  }

  /** What runs or is mounted for this data dir, removed; before up() that is a crashed run's, reported. */
  private async removeLeftovers(report = true): Promise<void> {
    const removed = await removeClusterLeftovers(this.dataDir);
    if (report && removed) this.o.onLeftovers?.(removed);
  }
}

/** `tkube down` for a cluster started detached: signals the recorded PIDs. */
export async function stopRecordedCluster(dataDir: string): Promise<string[]> {
  const file = join(resolve(dataDir), 'cluster.json');
  if (!existsSync(file)) return [];
  const state = JSON.parse(readFileSync(file, 'utf8')) as ClusterState;
  const stopped: string[] = [];
  for (const { name, pid } of [...state.pids].reverse()) {
    if (!alive(pid)) continue;
    stopped.push(name);
    await stopPid(pid);
  }
  for (const c of state.containerds ?? []) {
    const client = new CriClient({ runtimeEndpoint: c.endpoint, requestTimeoutMs: 10_000 });
    await removeAllPods(client).catch(() => {});
    client.close();
    await stopPid(c.pid);
    await removeLeftovers(c.dataDir);
    stopped.push('containerd');
  }
  for (const cidr of state.unreachableRoutes ?? []) removeUnreachableRoutes(cidr);
  rmSync(file, { force: true });
  return stopped;
}

async function stopPid(pid: number): Promise<void> {
  try {
    process.kill(pid, 'SIGTERM');
    for (let i = 0; i < 200 && alive(pid); i++) await new Promise((r) => setTimeout(r, 100));
    if (alive(pid)) process.kill(pid, 'SIGKILL');
  } catch {
    // already gone
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function insecureGet(url: string): Promise<number> {
  const { Agent, request } = await import('undici');
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
