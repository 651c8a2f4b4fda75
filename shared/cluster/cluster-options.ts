// What a caller (`tkube up`, the e2e tests, the benchmarks) can ask of a LocalCluster.
import type { Restart } from './supervisor';

/** The phases of LocalCluster.up(), reported through progress(). */
export type Step =
  'apiserver' | 'credentials' | 'controller-manager' | 'images' | 'dns' | 'nodes' | 'service-proxy' | 'ready';

/** How the node agents run pods: without processes, or in containers through their own containerd. */
export type NodeRuntime = 'fake' | 'containerd';

export interface LocalClusterOptions {
  dataDir: string;
  /**
   * The cluster's name on this host (`tkube up --name`): claimed at start (a second `up` of a
   * running name is refused), and what is not given here is derived from it so that clusters
   * run side by side (cluster-names.ts). Unset (tests, benchmarks): no claim, the defaults.
   */
  clusterName?: string;
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
  nodePorts?: (i: number) => NodePorts;
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
  /**
   * containerd: run the cluster DNS (cluster-dns.ts) and point the pods at it; default true.
   * The node agents are told --cluster-dns and --cluster-domain whatever the runtime.
   */
  clusterDNS?: boolean;
  /** Extra flags of the DNS server (e.g. --upstream none: no name is forwarded off the machine). */
  dnsArgs?: string[];
  /** Node i's pod CIDR; default 10.244.<i>.0/24. */
  podCIDR?: (i: number) => string;
  /** The apiserver's --service-cluster-ip-range; default 10.0.0.0/24 (its default). */
  serviceCIDR?: string;
  /**
   * containerd: run the service proxy, one per node, each in a table of its own (as root, with
   * nft or iptables). One Service CIDR per host: `tkube up` runs it, tests that run clusters side
   * by side do not (their ClusterIPs would be programmed by several clusters).
   */
  serviceProxy?: boolean;
  /** The proxies' nft table and iptables chain prefix; node i's are derived (default tkube-proxy, TKUBE). */
  proxyRules?: { table: string; chainPrefix: string };
  proxyArgs?: (i: number) => string[];
  /**
   * Route the service CIDR unreachable on the host while the cluster runs (as root), else the
   * host would send ClusterIP traffic to its default gateway; once the service proxy runs, it is
   * routed through the first node's bridge instead (service-route.ts).
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

/** A node agent's ports: its API, the read-only API and /healthz. */
export interface NodePorts {
  port: number;
  readOnlyPort: number;
  healthzPort: number;
}
