// A whole local cluster as processes: apiserver (embedded store or etcd),
// controller manager and node agents, each with its own credentials, in one
// data directory that a restart reuses — and, with the containerd runtime, a
// containerd per node (containerd.ts) started before its agent and stopped
// after it. Used by `tkube up` and the e2e tests. This class keeps the order of
// up and down; the command lines are in component-flags.ts, the credentials in
// cluster-credentials.ts, the record for `tkube down` in cluster-state.ts.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Client } from '../client/client';
import { loadKubeconfig } from '../client/kubeconfig';
import { writeClusterCredentials, writeMetricsServerCredentials } from './cluster-credentials';
import { removeClusterLeftovers } from './cluster-leftovers';
import { ClusterLayout } from './cluster-layout';
import type { ClusterNames } from './cluster-names';
import type { LocalClusterOptions, NodePorts } from './cluster-options';
import { writeClusterState } from './cluster-state';
import {
  apiserverFlags,
  containerdRuntimeFlags,
  controllerManagerFlags,
  metricsServerFlags,
  nodeAgentFlags,
  simulatedNodesFlags,
} from './component-flags';
import { startContainerd, type RunningContainerd } from './containerd';
import { clusterPaths, type ClusterPaths } from './data-dir';
import { frontProxyFlags } from './front-proxy';
import { autoImport, moveBuiltImages } from './images';
import { ensureMetricsServerRBAC } from './metrics-server-rbac';
import { SIMULATED_NODES } from './node-addresses';
import {
  DIST,
  getWithKubeconfig,
  startExecutable,
  unverifiedStatus,
  waitForHTTP,
  waitUntil,
  type Proc,
} from './process';
import { startRegistry } from './registry';
import { claimClusterName, releaseClusterName } from './running-clusters';
import { installUnreachableRoutes, removeUnreachableRoutes, type RouteResult } from './service-route';
import { SupervisedProc, type SupervisorOptions } from './supervisor';

// Where the benchmarks and e2e tests have always imported these from.
export type { LocalClusterOptions, NodeRuntime, Step } from './cluster-options';
export { nodeIP, nodeName, nodePodCIDR, SIMULATED_NODES } from './node-addresses';

export class LocalCluster {
  readonly procs: Proc[] = [];
  readonly containerds: RunningContainerd[] = [];
  readonly dataDir: string;
  readonly kubeconfig: string;
  readonly logDir: string;
  readonly certDir: string;
  private readonly o: LocalClusterOptions;
  private readonly paths: ClusterPaths;
  private isUp = false;
  /** What up() did about the service CIDR's unreachable route (undefined: not asked to). */
  serviceRoute: RouteResult | undefined;
  private stopping = false;
  private layout: ClusterLayout;
  private claimed = false;
  private registryHost: string | undefined;

  constructor(o: LocalClusterOptions) {
    this.o = o;
    this.dataDir = resolve(o.dataDir);
    this.paths = clusterPaths(this.dataDir);
    this.kubeconfig = this.paths.kubeconfig;
    this.logDir = this.paths.logDir;
    this.certDir = this.paths.certDir;
    this.layout = new ClusterLayout(o);
  }

  /**
   * What clusterName derived (ports, blocks, node names, the proxy's tables) once up() claimed
   * the name; undefined for a cluster without a name (tests, benchmarks).
   */
  get names(): ClusterNames | undefined {
    return this.layout.names;
  }

  private podCIDR(i: number): string {
    return this.layout.podCIDR(i);
  }

  private ports(i: number): NodePorts {
    return this.layout.nodePorts(i);
  }

  /** Node i's name (tkube-node-<i+1> by default). */
  nodeName(i: number): string {
    return this.layout.nodeName(i);
  }

  get apiserverPort(): number {
    return this.layout.apiserverPort;
  }

  get serviceCIDR(): string {
    return this.layout.serviceCIDR;
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
    const nodes = o.nodes ?? 1;
    if (o.clusterName !== undefined) {
      // First of all: a second `up` of a running name stops here, before it touches anything.
      claimClusterName(o.clusterName, this.dataDir, !!o.detached);
      this.claimed = true;
      this.layout = await ClusterLayout.derived(o, this.dataDir);
    }
    mkdirSync(this.dataDir, { recursive: true });
    // What this cluster holds, before anything starts: another `up` reads it.
    this.saveState();
    await this.removeLeftovers();
    const progress = o.progress ?? (() => {});

    // Before anything could dial a ClusterIP; a stale route (after a crash) is replaced.
    if (o.unreachableServiceRoute) {
      this.serviceRoute = installUnreachableRoutes(this.serviceCIDR);
      this.saveState();
    }
    progress('apiserver', 'start');
    const api = this.start(
      'apiserver',
      apiserverFlags({
        paths: this.paths,
        port: this.apiserverPort,
        serviceCIDR: this.serviceCIDR,
        etcdServers: o.etcdServers,
        aggregation: await frontProxyFlags(this.paths.frontProxy),
        extra: o.apiserverArgs,
      }),
      'apiserver',
    );
    await waitForHTTP(this.kubeconfig, '/readyz', timeout, api.exited);
    progress('apiserver', 'done', this.server);

    const simulated = o.runtime === 'fake';
    const controllerManager = o.controllerManager !== false;
    progress('credentials', 'start');
    await writeClusterCredentials({
      paths: this.paths,
      server: this.server,
      nodes,
      simulated,
      controllerManager,
      nodeName: (i) => this.nodeName(i),
    });
    progress('credentials', 'done');

    if (controllerManager) {
      progress('controller-manager', 'start');
      const port = this.layout.controllerManagerPort;
      const cm = this.start(
        'controller-manager',
        controllerManagerFlags(this.paths, port, o.controllerManagerArgs),
        'controller-manager',
      );
      await waitUntil(
        async () => (await unverifiedStatus(`https://127.0.0.1:${port}/healthz`)) === 200,
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
    const imagesDir = this.paths.offlineImages;
    moveBuiltImages(this.paths.images, imagesDir);
    execFileSync('bash', [join(DIST, '..', 'scripts', 'build-images.sh'), imagesDir], { stdio: 'pipe' });
    const registry = await startRegistry({
      dataDir: this.paths.registry,
      port: this.layout.registryPort,
      imagesDir,
      detached: this.o.detached,
    });
    this.procs.push(registry.proc);
    this.registryHost = registry.host;
    const mirror = { endpoint: registry.endpoint, mirrorOnly: !this.o.upstreamRegistries };
    const args: string[][] = [];
    for (let i = 0; i < nodes; i++) {
      const ctd = await startContainerd({
        dataDir: join(this.paths.nodeDir(this.nodeName(i)), 'containerd'),
        podCIDR: this.podCIDR(i),
        imagesDir,
        registriesFile: this.o.registriesFile,
        mirror,
        detached: this.o.detached,
        supervise: this.supervision(),
      });
      this.containerds.push(ctd);
      args.push(containerdRuntimeFlags(this.nodeName(i), ctd.endpoint, registry.endpoint));
    }
    // The user's images (k3s' auto-import folder), before the agents first report the nodes' images.
    const own = autoImport(this.paths.images, {
      nodes: this.containerds.map((c, i) => ({ node: this.nodeName(i), endpoint: c.endpoint })),
      registry: registry.host,
    });
    progress(
      'images',
      'done',
      `busybox, pause${own} on ${nodes} node(s) and in the registry on ${registry.host}`,
    );
    return args;
  }

  /** metrics-server with the RBAC it needs, registered through the aggregation layer as v1beta1.metrics.k8s.io. */
  private async startMetricsServer(timeout: number): Promise<void> {
    await writeMetricsServerCredentials(this.paths, this.server);
    const admin = Client.create(loadKubeconfig(this.kubeconfig), { http2: false });
    try {
      await ensureMetricsServerRBAC(admin);
    } finally {
      await admin.close();
    }
    const ms = this.start(
      'metrics-server',
      metricsServerFlags(this.paths, this.o.metricsServerArgs),
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

  /** One node agent per node, each with its own credentials, ports and pod CIDR; waits for Ready nodes. */
  private async startNodeAgents(nodes: number, timeout: number, runtimeArgs?: string[][]): Promise<void> {
    const started: Proc[] = [];
    for (let i = 0; i < nodes; i++) {
      const flags = nodeAgentFlags(i, {
        name: this.nodeName(i),
        ip: this.layout.nodeIP(i),
        paths: this.paths,
        ports: this.ports(i),
        podCIDR: this.podCIDR(i),
        runtime: runtimeArgs?.[i],
        extra: this.o.nodeagentArgs?.(i),
      });
      started.push(this.start('nodeagent', flags, this.nodeName(i)));
    }
    for (let i = 0; i < nodes; i++) {
      await waitUntil(
        () => this.nodeReady(this.nodeName(i)),
        timeout,
        `node ${this.nodeName(i)} Ready`,
        started[i].exited,
      );
    }
  }

  /** One node agent hosting every node (--simulated-nodes); waits until all of them are Ready. */
  private async startSimulatedNodes(nodes: number, timeout: number): Promise<void> {
    const flags = simulatedNodesFlags(
      this.paths,
      nodes,
      this.ports(0),
      this.o.nodeagentArgs?.(0),
      this.names?.nodePrefix,
    );
    const p = this.start('nodeagent', flags, SIMULATED_NODES);
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

  private saveState(): void {
    writeClusterState(this.paths.stateFile, {
      ...this.layout.recorded(),
      pids: this.procs.map((p) => ({ name: p.name, pid: p.pid })),
      containerds: this.containerds.map((c, i) => ({
        pid: c.pid,
        endpoint: c.endpoint,
        dataDir: c.dataDir,
        node: this.nodeName(i),
      })),
      kubeconfig: this.kubeconfig,
      server: this.server,
      registry: this.registryHost,
      unreachableRoutes: this.serviceRoute?.installed,
    });
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
    // Refused at its start (the name runs elsewhere): nothing of it to stop.
    if (this.o.clusterName !== undefined && !this.claimed) return;
    this.endSupervision();
    for (const p of [...this.procs].reverse()) await p.stop('SIGTERM', 20_000);
    this.procs.length = 0;
    await Promise.all(this.containerds.map((c) => c.stop()));
    this.containerds.length = 0;
    await this.removeLeftovers(false);
    this.removeServiceRoute();
    rmSync(this.paths.stateFile, { force: true });
    this.releaseName();
  }

  /** The second Ctrl-C: no waiting for anything, everything of the data dir SIGKILLed and cleaned up. */
  async kill(): Promise<void> {
    if (this.o.clusterName !== undefined && !this.claimed) return;
    this.endSupervision();
    await this.removeLeftovers(false);
    this.removeServiceRoute();
    this.procs.length = 0;
    this.containerds.length = 0;
    rmSync(this.paths.stateFile, { force: true });
    this.releaseName();
  }

  private releaseName(): void {
    if (this.claimed) releaseClusterName(this.o.clusterName!, this.dataDir);
    this.claimed = false;
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
