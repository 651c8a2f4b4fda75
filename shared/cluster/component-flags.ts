// The command lines of a local cluster's components: the flags that make them one
// cluster on one machine (as kubeadm would wire them), before the caller's extra flags.
import { join } from 'node:path';
import { NODE_PLACEHOLDER } from '../api/local-path';
import type { NodePorts } from './cluster-options';
import { SANDBOX_IMAGE } from './containerd';
import type { ClusterPaths } from './data-dir';
import { NODE_PREFIX, nodeName, SIMULATED_NODES } from './node-addresses';

export interface ApiserverFlags {
  paths: ClusterPaths;
  port: number;
  /**
   * Where pods reach the apiserver (the kubernetes Service's endpoint): then it listens on every
   * address, as kube-apiserver does by default. Unset: 127.0.0.1 only (no pod could reach it).
   */
  advertiseAddress?: string;
  serviceCIDR: string;
  etcdServers?: string[];
  /** The front proxy's flags (front-proxy.ts), for the aggregation layer. */
  aggregation: string[];
  extra?: string[];
}

export function apiserverFlags(o: ApiserverFlags): string[] {
  return [
    '--secure-port',
    String(o.port),
    ...(o.advertiseAddress
      ? ['--bind-address', '0.0.0.0', '--advertise-address', o.advertiseAddress]
      : ['--bind-address', '127.0.0.1']),
    '--data-dir',
    o.paths.apiserverData,
    '--cert-dir',
    o.paths.certDir,
    '--write-kubeconfig',
    o.paths.kubeconfig,
    // Node names of a local cluster do not resolve: reach node agents by their InternalIP first.
    '--kubelet-preferred-address-types',
    'InternalIP,Hostname,InternalDNS,ExternalDNS,ExternalIP',
    // As kubeadm sets it: node agents limited to their own node's objects, everyone else by RBAC
    // (the user's kubeconfig is in system:masters, bound to cluster-admin).
    '--authorization-mode',
    'Node,RBAC',
    '--service-cluster-ip-range',
    o.serviceCIDR,
    // Webhooks, conversion webhooks and APIServices at a ready endpoint, not their ClusterIP:
    // the service proxy runs only with containerd nodes as root (cluster-proxy.ts).
    '--enable-aggregator-routing=true',
    ...(o.etcdServers?.length ? ['--etcd-servers', o.etcdServers.join(',')] : []),
    ...o.aggregation,
    ...(o.extra ?? []),
  ];
}

export function controllerManagerFlags(paths: ClusterPaths, port: number, extra: string[] = []): string[] {
  const kubeconfig = paths.controllerManagerKubeconfig;
  return [
    '--kubeconfig',
    kubeconfig,
    // Each controller as its own service account, under its bootstrap role (kubeadm's setting).
    '--use-service-account-credentials',
    '--scheduler-kubeconfig',
    paths.schedulerKubeconfig,
    '--secure-port',
    String(port),
    '--bind-address',
    '127.0.0.1',
    // kubeadm's delegation: client certificates of the cluster CA, TokenReview and
    // SubjectAccessReview through its own credentials, for /metrics.
    '--client-ca-file',
    paths.caCert,
    '--authentication-kubeconfig',
    kubeconfig,
    '--authorization-kubeconfig',
    kubeconfig,
    '--root-ca-file',
    paths.caCert,
    '--cluster-signing-cert-file',
    paths.caCert,
    '--cluster-signing-key-file',
    paths.caKey,
    // The default StorageClass's provisioner: a directory per volume under its node's dir.
    '--local-path-base-dir',
    paths.nodeStorageDir(NODE_PLACEHOLDER),
    ...extra,
  ];
}

/**
 * The client rates of a simulator (--runtime fake): the binaries keep Kubernetes' defaults
 * (controllers 20/30, the scheduler 50/100), which would make a client-side limiter, not the
 * local apiserver, the bottleneck of thousands of simulated pods. Each controller's own limiter
 * (a create and its event per pod) and the scheduler's (a binding and its event) sit above what
 * one local apiserver serves, but not so far that one controller's startup sweep over thousands
 * of nodes floods it: the controller manager's lease renewals share that apiserver (a 1,000-node
 * run at 5000/10000 lost the lease while the nodes registered on a loaded host). The simulated
 * nodes keep kubelet's 50/100 per node: their agent's one client already has N nodes' worth.
 */
export const SIMULATOR_CLIENT_RATES = {
  controllers: { qps: 500, burst: 1000 },
  scheduler: { qps: 1000, burst: 2000 },
} as const;

/**
 * The controller manager's flags for a simulator: SIMULATOR_CLIENT_RATES, and the lease renewed
 * from a thread of its own (at 5,000 nodes and ~120,000 pods a 6 s turn of its main thread lost it).
 */
export function simulatorControllerManagerFlags(): string[] {
  const { controllers, scheduler } = SIMULATOR_CLIENT_RATES;
  return [
    `--kube-api-qps=${controllers.qps}`,
    `--kube-api-burst=${controllers.burst}`,
    `--scheduler-kube-api-qps=${scheduler.qps}`,
    `--scheduler-kube-api-burst=${scheduler.burst}`,
    '--leader-elect-thread',
  ];
}

/**
 * How often the simulator's apiserver compacts its store (kube-apiserver's default is 5m). Each
 * interval of history is kept twice over (every revision holds its value and the previous one),
 * so at 5,000 nodes × 30 pods, ~800 writes a second, 5m kept up to ~700 MB of the embedded
 * store's file resident in the apiserver; 1m keeps ~260 MB. Watches are served from the watch
 * cache's own window (75 s or more), so no watcher starts from a compacted revision.
 */
export const SIMULATOR_COMPACTION_INTERVAL = '1m';

/** The apiserver's flags for a simulator: SIMULATOR_COMPACTION_INTERVAL. */
export function simulatorApiserverFlags(): string[] {
  return [`--etcd-compaction-interval=${SIMULATOR_COMPACTION_INTERVAL}`];
}

/** What `tkube up` says it set. */
export function simulatorRatesLine(nodes: number): string {
  const { controllers, scheduler } = SIMULATOR_CLIENT_RATES;
  return (
    `Client rates for the simulator: each controller QPS ${controllers.qps} burst ${controllers.burst}, ` +
    `the scheduler QPS ${scheduler.qps} burst ${scheduler.burst}, the ${nodes} simulated node(s) kubelet's QPS 50 burst 100 each; ` +
    `the controller manager renews its lease from a thread of its own; ` +
    `the apiserver compacts its store every ${SIMULATOR_COMPACTION_INTERVAL} (--etcd-compaction-interval)`
  );
}

export interface NodeAgentFlags {
  paths: ClusterPaths;
  /** Its InternalIP and the address it serves on (nodeAddress in node-addresses.ts). */
  address: string;
  ports: NodePorts;
  podCIDR: string;
  /** The node's name (default nodeName(i)); a named cluster's own. */
  name?: string;
  /** The runtime's flags (containerdRuntimeFlags), or none for the agent's default runtime. */
  runtime?: string[];
  extra?: string[];
}

/** Node i's agent: its own name, address, ports, root dir and pod CIDR. */
export function nodeAgentFlags(i: number, o: NodeAgentFlags): string[] {
  const name = o.name ?? nodeName(i);
  const dir = o.paths.nodeDir(name);
  return [
    '--kubeconfig',
    o.paths.nodeKubeconfig(name),
    '--hostname-override',
    name,
    '--node-ip',
    o.address,
    '--address',
    o.address,
    '--port',
    String(o.ports.port),
    '--read-only-port',
    String(o.ports.readOnlyPort),
    '--healthz-port',
    String(o.ports.healthzPort),
    '--root-dir',
    dir,
    '--cert-dir',
    join(dir, 'pki'),
    '--pod-cidr',
    o.podCIDR,
    ...(o.runtime ?? []),
    ...(o.extra ?? []),
  ];
}

/** The one agent that hosts `nodes` simulated nodes on the fake runtime. */
export function simulatedNodesFlags(
  paths: ClusterPaths,
  nodes: number,
  ports: NodePorts,
  extra: string[] = [],
  nodePrefix = NODE_PREFIX,
) {
  return [
    '--kubeconfig',
    paths.nodeKubeconfig(SIMULATED_NODES),
    '--simulated-nodes',
    String(nodes),
    '--runtime',
    'fake',
    '--hostname-override',
    nodePrefix,
    '--node-ip',
    '127.0.0.1',
    '--address',
    '127.0.0.1',
    '--read-only-port',
    String(ports.readOnlyPort),
    '--healthz-port',
    String(ports.healthzPort),
    '--root-dir',
    paths.nodeDir(SIMULATED_NODES),
    ...extra,
  ];
}

/** A node's agent on its own containerd, pulling through the cluster's registry. */
export function containerdRuntimeFlags(node: string, endpoint: string, registryEndpoint: string): string[] {
  return [
    '--runtime',
    'remote',
    '--container-runtime-endpoint',
    endpoint,
    '--pod-infra-container-image',
    SANDBOX_IMAGE,
    '--registry-mirror',
    registryEndpoint,
    '--cgroup-root',
    `/tkube/${node}`,
  ];
}

export function metricsServerFlags(paths: ClusterPaths, extra: string[] = []): string[] {
  return ['--kubeconfig', paths.metricsServerKubeconfig, '--secure-port', '0', ...extra];
}
