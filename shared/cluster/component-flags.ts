// The command lines of a local cluster's components: the flags that make them one
// cluster on one machine (as kubeadm would wire them), before the caller's extra flags.
import { join } from 'node:path';
import type { NodePorts } from './cluster-options';
import { SANDBOX_IMAGE } from './containerd';
import type { ClusterPaths } from './data-dir';
import { NODE_PREFIX, nodeIP, nodeName, SIMULATED_NODES } from './node-addresses';

export interface ApiserverFlags {
  paths: ClusterPaths;
  port: number;
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
    '--bind-address',
    '127.0.0.1',
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
    // No service proxy runs: webhooks, conversion webhooks and APIServices at a ready endpoint.
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
    ...extra,
  ];
}

export interface NodeAgentFlags {
  paths: ClusterPaths;
  ports: NodePorts;
  podCIDR: string;
  /** The node's name and address (default nodeName(i), nodeIP(i)); a named cluster's own. */
  name?: string;
  ip?: string;
  /** The runtime's flags (containerdRuntimeFlags), or none for the agent's default runtime. */
  runtime?: string[];
  extra?: string[];
}

/** Node i's agent: its own name, loopback IP, ports, root dir and pod CIDR. */
export function nodeAgentFlags(i: number, o: NodeAgentFlags): string[] {
  const name = o.name ?? nodeName(i);
  const ip = o.ip ?? nodeIP(i);
  const dir = o.paths.nodeDir(name);
  return [
    '--kubeconfig',
    o.paths.nodeKubeconfig(name),
    '--hostname-override',
    name,
    '--node-ip',
    ip,
    '--address',
    ip,
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
