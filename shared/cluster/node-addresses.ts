// Names and host addresses of a local cluster's nodes: every node lives on this
// machine, so each gets its own loopback IP, pod CIDR and ports.
import type { NodePorts } from './cluster-options';

/** The node names' prefix; the simulated nodes' agent takes it as --hostname-override. */
export const NODE_PREFIX = 'tkube-node';
export const nodeName = (i: number, prefix = NODE_PREFIX) => `${prefix}-${i + 1}`;
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

/** Node i's default ports: the kubelet's (10250/10255/10248), 100 apart per node. */
export const defaultNodePorts = (i: number): NodePorts => ({
  port: 10250 + 100 * i,
  readOnlyPort: 10255 + 100 * i,
  healthzPort: 10248 + 100 * i,
});

/**
 * The host's address on a pod CIDR's bridge (the CNI bridge plugin's gateway: the
 * CIDR's first address), where the node's pods reach the host.
 */
export function podCIDRGateway(cidr: string): string {
  const [base] = cidr.split('/');
  const n = base.split('.').reduce((v, o) => v * 256 + Number(o), 0) + 1;
  return [24, 16, 8, 0].map((s) => Math.floor(n / 2 ** s) % 256).join('.');
}
