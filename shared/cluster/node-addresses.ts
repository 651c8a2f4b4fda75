// Names and host addresses of a local cluster's nodes: every node lives on this
// machine, so each gets its own address, pod CIDR and ports.
import type { NodePorts } from './cluster-options';

/** The node names' prefix; the simulated nodes' agent takes it as --hostname-override. */
export const NODE_PREFIX = 'tkube-node';
export const nodeName = (i: number, prefix = NODE_PREFIX) => `${prefix}-${i + 1}`;
/** The node agent process that hosts simulated nodes. */
export const SIMULATED_NODES = 'simulated-nodes';

/** The default pod CIDR of node i (the containerd bridge and the agent's --pod-cidr). */
export const nodePodCIDR = (i: number) => `10.244.${i}.0/24`;

/**
 * Simulated (and fake-runtime) node i's address (its InternalIP, where its agent
 * serves): a loopback address of its own, never 127.0.0.1, so "localhost" and the
 * node's IP are distinct host IPs for host ports, as on a real node (Kubernetes'
 * hostPort predicate spec publishes one port on both).
 */
export const nodeIP = (i: number) => `127.0.0.${i + 2}`;

/**
 * Node i's InternalIP: a containerd node's is its bridge gateway (podCIDRGateway), the one
 * host address its pods reach (NodePorts, host ports, the apiserver's endpoint); no pod
 * reaches a loopback address. Other nodes keep their loopback address (nodeIP(i), or a
 * named cluster's own).
 */
export const nodeAddress = (podCIDR: string, containerd: boolean, loopback: string) =>
  containerd ? podCIDRGateway(podCIDR) : loopback;

/** Node i's default ports: the kubelet's (10250/10255/10248), 100 apart per node. */
export const defaultNodePorts = (i: number): NodePorts => ({
  port: 10250 + 100 * i,
  readOnlyPort: 10255 + 100 * i,
  healthzPort: 10248 + 100 * i,
});

/** The index-th address of an IPv4 CIDR (kubeadm's GetIndexedIP): 1 its first host, 10 kube-dns's. */
export function indexedIP(cidr: string, index: number): string {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const n = base.split('.').reduce((v, o) => v * 256 + Number(o), 0);
  const ip = n - (n % size) + index;
  return [24, 16, 8, 0].map((s) => Math.floor(ip / 2 ** s) % 256).join('.');
}

/**
 * The host's address on a pod CIDR's bridge (the CNI bridge plugin's gateway: the
 * CIDR's first address), where the node's pods reach the host.
 */
export function podCIDRGateway(cidr: string): string {
  return indexedIP(cidr, 1);
}
