// A LocalCluster's ports, addresses, node names and blocks: what its options
// give, else what its name derived (cluster-names.ts), else the defaults of a
// single cluster (a cluster without a name: tests and benchmarks). One place,
// so that the command lines, the credentials and the recorded state agree.
import { deriveClusterNames, type ClusterNames } from './cluster-names';
import type { LocalClusterOptions, NodePorts } from './cluster-options';
import type { ClusterState } from './cluster-state';
import { defaultNodePorts, nodeIP, nodeName, nodePodCIDR } from './node-addresses';
import { portIsFree } from './process';
import { heldByOtherClusters } from './running-clusters';

export class ClusterLayout {
  constructor(
    private readonly o: LocalClusterOptions,
    /** What clusterName derived, once up() claimed the name. */
    readonly names?: ClusterNames,
  ) {}

  /** o.clusterName's layout: derived away from what the other running clusters hold and the host's taken ports. */
  static async derived(o: LocalClusterOptions, dataDir: string): Promise<ClusterLayout> {
    const name = o.clusterName!;
    const names = await deriveClusterNames({
      name,
      nodes: o.nodes ?? 1,
      others: heldByOtherClusters(name),
      // Any address: the node agents serve on loopback addresses of their own.
      isFree: (port) => portIsFree(port, '0.0.0.0'),
      dataDir,
    });
    return new ClusterLayout(o, names);
  }

  podCIDR(i: number): string {
    return this.o.podCIDR?.(i) ?? this.names?.podCIDR(i) ?? nodePodCIDR(i);
  }

  nodePorts(i: number): NodePorts {
    return this.o.nodePorts?.(i) ?? this.names?.ports.nodes[i] ?? defaultNodePorts(i);
  }

  /** Node i's name: <prefix>-<i+1>, the prefix the cluster name's (tkube-node by default). */
  nodeName(i: number): string {
    return this.names ? nodeName(i, this.names.nodePrefix) : nodeName(i);
  }

  nodeIP(i: number): string {
    return this.names?.nodeIP(i) ?? nodeIP(i);
  }

  get apiserverPort(): number {
    return this.o.apiserverPort ?? this.names?.ports.apiserver ?? 6443;
  }

  get controllerManagerPort(): number {
    return this.o.controllerManagerPort ?? this.names?.ports.controllerManager ?? 10257;
  }

  get registryPort(): number {
    return this.o.registryPort ?? this.names?.ports.registry ?? 5000;
  }

  get serviceCIDR(): string {
    return this.o.serviceCIDR ?? this.names?.serviceCIDR ?? '10.0.0.0/24';
  }

  /** What the state records of the cluster's names and what it holds on the host (for other clusters). */
  recorded(): Pick<ClusterState, 'name' | 'slot' | 'nodes' | 'ports' | 'podCIDRs' | 'serviceCIDR'> {
    const nodes = this.o.nodes ?? 1;
    // Simulated nodes share one agent and its ports.
    const agents = this.o.runtime === 'fake' ? Math.min(nodes, 1) : nodes;
    const each = <T>(n: number, f: (i: number) => T) => Array.from({ length: n }, (_, i) => f(i));
    const n = this.names?.ports;
    return {
      name: this.o.clusterName,
      slot: this.names?.slot,
      nodes: each(nodes, (i) => this.nodeName(i)),
      ports: [
        this.apiserverPort,
        this.controllerManagerPort,
        this.registryPort,
        ...each(agents, (i) => this.nodePorts(i)).flatMap((p) => [p.port, p.readOnlyPort, p.healthzPort]),
        ...(n ? [n.proxyHealthz, n.proxyMetrics, n.dnsHealth, n.dnsReady, n.dnsMetrics] : []),
      ],
      // The name's whole block, or what the podCIDR option (--cluster-cidr) gave each node.
      podCIDRs:
        this.names && !this.o.podCIDR ? [this.names.clusterCIDR] : each(nodes, (i) => this.podCIDR(i)),
      serviceCIDR: this.serviceCIDR,
    };
  }
}
