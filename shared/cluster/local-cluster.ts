// A whole local cluster as processes: apiserver (embedded store or etcd),
// controller manager and node agents, each with its own credentials, in one
// data directory that a restart reuses — and, with the containerd runtime, a
// containerd per node (containerd.ts) started before its agent and stopped
// after it, a service proxy per node (cluster-proxy.ts) and the cluster DNS
// (cluster-dns.ts). Used by `tkube up` and the e2e tests. This class keeps the
// order of up and down; the node agents start in cluster-node-agents.ts, the
// command lines are in component-flags.ts, the credentials in
// cluster-credentials.ts, the record for `tkube down` in cluster-state.ts.
import { mkdirSync, rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { withAdmin } from './bootstrap-objects';
import { startNodeContainerds } from './cluster-containerds';
import { writeClusterCredentials, writeProxyCredentials } from './cluster-credentials';
import { startClusterDNS } from './cluster-dns';
import { startMetricsServer } from './cluster-metrics-server';
import { ClusterLayout } from './cluster-layout';
import { startNodeAgents, startSimulatedNodes, type NodeAgentsOptions } from './cluster-node-agents';
import { removeClusterLeftovers } from './cluster-leftovers';
import { ClusterServiceProxies, type ServiceProxyStatus } from './cluster-proxy';
import type { ClusterNames } from './cluster-names';
import type { LocalClusterOptions } from './cluster-options';
import { writeClusterState } from './cluster-state';
import {
  apiserverFlags,
  controllerManagerFlags,
  simulatorApiserverFlags,
  simulatorControllerManagerFlags,
} from './component-flags';
import type { RunningContainerd } from './containerd';
import { clusterPaths, type ClusterPaths } from './data-dir';
import { frontProxyFlags } from './front-proxy';
import { restoreHostSettings } from './host-forwarding';
import { ensureLocalPathStorage } from './local-path-storage';
import { nodeAddress, podCIDRGateway } from './node-addresses';
import { nodeIsReady, readyNodeCount } from './node-readiness';
import { startExecutable, unverifiedStatus, waitForHTTP, waitUntil, type Proc } from './process';
import {
  claimClusterName,
  hostSettingsHeirs,
  releaseClusterName,
  withClusterAllocation,
} from './running-clusters';
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
  /** The service proxy: the mode its proxies chose, or why none runs (undefined: not asked for). */
  get serviceProxy(): ServiceProxyStatus | undefined {
    return this.proxies?.status;
  }
  /** The service proxies, when asked for with containerd nodes. */
  private proxies: ClusterServiceProxies | undefined;
  /** What up() changed on the host for pods' forwarding (undone by down()). */
  hostChanges: string[] = [];
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
    this.proxies = this.serviceProxies();
  }

  /** The service proxies, when asked for with containerd nodes (made again once the layout is derived). */
  private serviceProxies(): ClusterServiceProxies | undefined {
    const o = this.o;
    if (!o.serviceProxy || this.containerdNodes === 0) return undefined;
    const names = this.names;
    return new ClusterServiceProxies({
      paths: this.paths,
      nodes: this.containerdNodes,
      nodeName: (i) => this.nodeName(i),
      nodeIP: (i) => this.nodeAddress(i),
      podCIDR: (i) => this.podCIDR(i),
      serviceCIDR: this.serviceCIDR,
      rules: o.proxyRules ?? (names && { table: names.nftTable, chainPrefix: names.iptablesPrefix }),
      extra: o.proxyArgs,
      start: (executable, args, logName) => this.start(executable, args, logName),
    });
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

  /** Node i's name (tkube-node-<i+1> by default). */
  nodeName(i: number): string {
    return this.layout.nodeName(i);
  }

  private get containerdNodes(): number {
    return this.o.runtime === 'containerd' ? (this.o.nodes ?? 1) : 0;
  }

  /** Node i's InternalIP: a containerd node's bridge gateway, else a loopback address of its own. */
  nodeAddress(i: number): string {
    return nodeAddress(this.podCIDR(i), this.o.runtime === 'containerd', this.layout.nodeIP(i));
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
    if (o.clusterName !== undefined)
      await withClusterAllocation(async () => {
        // First of all: a second `up` of a running name stops here, before it touches anything.
        claimClusterName(o.clusterName!, this.dataDir, !!o.detached);
        this.claimed = true;
        this.layout = await ClusterLayout.derived(o, this.dataDir);
        this.proxies = this.serviceProxies();
        this.recordHoldings();
      });
    else this.recordHoldings();
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
        // Pods reach the host at their bridge's gateway: the first node's is the API's endpoint.
        advertiseAddress: this.containerdNodes > 0 ? podCIDRGateway(this.podCIDR(0)) : undefined,
        serviceCIDR: this.serviceCIDR,
        etcdServers: o.etcdServers,
        aggregation: await frontProxyFlags(this.paths.frontProxy),
        // The caller's flags after the simulator's, so they can set them otherwise.
        extra: [...(o.runtime === 'fake' ? simulatorApiserverFlags() : []), ...(o.apiserverArgs ?? [])],
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
    if (this.proxies) await writeProxyCredentials(this.paths, this.server);
    progress('credentials', 'done');

    if (controllerManager) {
      await withAdmin(this.kubeconfig, ensureLocalPathStorage);
      progress('controller-manager', 'start');
      const port = this.layout.controllerManagerPort;
      const cm = this.start(
        'controller-manager',
        controllerManagerFlags(this.paths, port, [
          ...(simulated ? simulatorControllerManagerFlags() : []),
          ...(o.controllerManagerArgs ?? []),
        ]),
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
    if (runtimeArgs && o.clusterDNS !== false) await this.startClusterDNS(timeout);
    if (nodes > 0) {
      progress('nodes', 'start', `${nodes}${simulated ? ' simulated' : ''}`);
      if (simulated) await startSimulatedNodes(this.nodeAgents(timeout), nodes);
      else await startNodeAgents(this.nodeAgents(timeout), nodes, runtimeArgs);
      progress('nodes', 'done', `${nodes}${simulated ? ' simulated' : ''}`);
      if (this.proxies) await this.startServiceProxies(timeout);
      if (o.metricsServer !== false)
        await startMetricsServer({
          paths: this.paths,
          server: this.server,
          start: (args) => this.start('metrics-server', args, 'metrics-server'),
          timeoutMs: timeout,
          extra: o.metricsServerArgs,
        });
    }
    this.saveState();
    this.isUp = true;
    progress('ready', 'done');
  }

  /** The offline images, the registry and a containerd per node (cluster-containerds.ts); the agents' runtime flags. */
  private async startContainerds(nodes: number): Promise<string[][]> {
    const progress = this.o.progress ?? (() => {});
    progress('images', 'start');
    const r = await startNodeContainerds({
      paths: this.paths,
      dataDir: this.dataDir,
      nodes,
      nodeName: (i) => this.nodeName(i),
      podCIDR: (i) => this.podCIDR(i),
      serviceCIDR: this.serviceCIDR,
      registryPort: this.layout.registryPort,
      registriesFile: this.o.registriesFile,
      upstreamRegistries: this.o.upstreamRegistries,
      detached: this.o.detached,
      supervise: this.supervision(),
      started: (p) => ('endpoint' in p ? this.containerds.push(p) : this.procs.push(p)),
    });
    this.hostChanges = r.hostChanges;
    this.registryHost = r.registryHost;
    progress(
      'images',
      'done',
      `busybox, pause${r.userImages} on ${nodes} node(s) and in the registry on ${r.registryHost}`,
    );
    return r.runtimeArgs;
  }

  /** The DNS server on node 0's bridge behind kube-system/kube-dns, before any pod could ask it. */
  private async startClusterDNS(timeoutMs: number): Promise<void> {
    const progress = this.o.progress ?? (() => {});
    progress('dns', 'start');
    const dns = await startClusterDNS({
      paths: this.paths,
      server: this.server,
      serviceCIDR: this.serviceCIDR,
      podCIDR: this.podCIDR(0),
      start: (args) => this.start('dns', args, 'dns'),
      timeoutMs,
      extra: this.o.dnsArgs,
    });
    progress('dns', 'done', `kube-system/kube-dns ${dns.clusterIP}, served on ${dns.address}:53`);
  }

  /**
   * A service proxy per containerd node (cluster-proxy.ts), once they programmed the kernel the
   * Service CIDR routed through the first node's bridge (ClusterIPs work from the host too).
   */
  private async startServiceProxies(timeout: number): Promise<void> {
    const progress = this.o.progress ?? (() => {});
    progress('service-proxy', 'start', `${this.containerdNodes} node(s)`);
    const status = await this.proxies!.start(
      timeout,
      this.serviceRoute?.installed ?? [],
      this.containerds[0].bridge,
    );
    this.saveState();
    progress('service-proxy', 'done', 'mode' in status ? status.mode : `none: ${status.why}`);
  }

  /** The node agents' start (cluster-node-agents.ts) with this cluster's layout and supervision. */
  private nodeAgents(timeoutMs: number): NodeAgentsOptions {
    return {
      paths: this.paths,
      layout: this.layout,
      serviceCIDR: this.serviceCIDR,
      nodeAddress: (i) => this.nodeAddress(i),
      extra: this.o.nodeagentArgs,
      start: (executable, args, logName) => this.start(executable, args, logName),
      timeoutMs,
    };
  }

  /** How many Nodes say Ready. */
  readyNodes(): Promise<number> {
    return readyNodeCount(this.kubeconfig);
  }

  nodeReady(name: string): Promise<boolean> {
    return nodeIsReady(this.kubeconfig, name);
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
      unreachableRoutes: this.serviceRoute?.installed,
      serviceRouteBridge: this.proxies?.routedThrough,
      proxyRules: this.proxies?.rules,
      hostSettings: this.paths.hostSettings,
      registry: this.registryHost,
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
    this.proxies?.unroute(this.serviceRoute?.installed ?? []);
    for (const p of [...this.procs].reverse()) await p.stop('SIGTERM', 20_000);
    this.procs.length = 0;
    // Before the containerds: the last one removes portmap's chains and an iptables nat table
    // left empty, which the iptables mode's chains would keep.
    this.proxies?.removeRules();
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
    this.proxies?.unroute(this.serviceRoute?.installed ?? []);
    try {
      await this.removeLeftovers(false, true);
    } finally {
      // Whatever failed above, the host routes no ClusterIP of a cluster that is gone.
      this.removeServiceRoute();
      this.procs.length = 0;
      this.containerds.length = 0;
      rmSync(this.paths.stateFile, { force: true });
      this.releaseName();
    }
  }

  /** What this cluster holds, before anything starts: another `up` reads it. */
  private recordHoldings(): void {
    mkdirSync(this.dataDir, { recursive: true });
    this.saveState();
  }

  private releaseName(): void {
    if (this.claimed) releaseClusterName(this.o.clusterName!, this.dataDir);
    this.claimed = false;
  }

  private removeServiceRoute(): void {
    const installed = this.serviceRoute?.installed ?? [];
    // Should the first unroute have failed, a bridge that outlived its containerd keeps the route.
    this.proxies?.unroute(installed);
    for (const cidr of installed) removeUnreachableRoutes(cidr);
    this.serviceRoute = undefined;
  }

  /** What runs or is mounted for this data dir, removed; before up() that is a crashed run's, reported. */
  private async removeLeftovers(report = true, proxyRules = report): Promise<void> {
    const removed = await removeClusterLeftovers(this.dataDir);
    // A crashed run's or a kill's rules (down() removes its own first), now that no proxy runs.
    if (proxyRules) this.proxies?.removeRules();
    const hostSettings = restoreHostSettings(this.paths.hostSettings, hostSettingsHeirs(this.dataDir));
    if (report && (removed || hostSettings))
      this.o.onLeftovers?.([removed, hostSettings].filter(Boolean).join(', '));
  }
}
