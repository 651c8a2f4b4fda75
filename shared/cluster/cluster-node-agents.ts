// The node agents of a local cluster: one per node, each with its own credentials, ports and
// pod CIDR (a containerd node's runtime flags too), or one agent hosting every node of a
// simulated cluster (--simulated-nodes); each start waits until its Nodes say Ready.
import { clusterDNSAgentFlags } from './cluster-dns';
import type { ClusterLayout } from './cluster-layout';
import { nodeAgentFlags, simulatedNodesFlags } from './component-flags';
import type { ClusterPaths } from './data-dir';
import { SIMULATED_NODES } from './node-addresses';
import { nodeIsReady, readyNodeCount } from './node-readiness';
import { waitUntil, type Proc } from './process';

export interface NodeAgentsOptions {
  paths: ClusterPaths;
  layout: ClusterLayout;
  serviceCIDR: string;
  /** Node i's InternalIP (LocalCluster.nodeAddress). */
  nodeAddress(i: number): string;
  /** Extra flags of node i's agent (LocalClusterOptions.nodeagentArgs). */
  extra?: (i: number) => string[];
  /** Starts a component under the cluster's supervision (LocalCluster's start). */
  start(executable: string, args: string[], logName: string): Proc;
  timeoutMs: number;
}

const agentExtra = (o: NodeAgentsOptions, i: number) => [
  ...clusterDNSAgentFlags(o.serviceCIDR),
  ...(o.extra?.(i) ?? []),
];

/** One node agent per node; resolves once every one of them is Ready. */
export async function startNodeAgents(
  o: NodeAgentsOptions,
  nodes: number,
  runtimeArgs?: string[][],
): Promise<void> {
  const { layout } = o;
  const started: Proc[] = [];
  for (let i = 0; i < nodes; i++) {
    const flags = nodeAgentFlags(i, {
      paths: o.paths,
      name: layout.nodeName(i),
      address: o.nodeAddress(i),
      ports: layout.nodePorts(i),
      podCIDR: layout.podCIDR(i),
      runtime: runtimeArgs?.[i],
      extra: agentExtra(o, i),
    });
    started.push(o.start('nodeagent', flags, layout.nodeName(i)));
  }
  for (let i = 0; i < nodes; i++)
    await waitUntil(
      () => nodeIsReady(o.paths.kubeconfig, layout.nodeName(i)),
      o.timeoutMs,
      `node ${layout.nodeName(i)} Ready`,
      started[i].exited,
    );
}

/** One node agent hosting every node (--simulated-nodes); resolves once all of them are Ready. */
export async function startSimulatedNodes(o: NodeAgentsOptions, nodes: number): Promise<void> {
  const flags = simulatedNodesFlags(
    o.paths,
    nodes,
    o.layout.nodePorts(0),
    agentExtra(o, 0),
    o.layout.names?.nodePrefix,
  );
  const p = o.start('nodeagent', flags, SIMULATED_NODES);
  // Generous: a thousand registrations take a while on a loaded machine. Each look lists every
  // Node (5 KB each): every 100 ms at 5,000 nodes the apiserver did little but serialize
  // those lists, and the registrations and Lease renewals it was waiting for fell behind.
  await waitUntil(
    async () => (await readyNodeCount(o.paths.kubeconfig)) >= nodes,
    Math.max(o.timeoutMs, nodes * 200),
    `${nodes} simulated nodes Ready`,
    p.exited,
    Math.max(100, nodes),
  );
}
