// The service proxy (proxy/, cmd/proxy.ts) as a local cluster runs it: one per
// containerd node, all programming this one host kernel. kube-proxy instances
// sharing a kernel would fight (every table DNATs every ClusterIP, and a Local
// policy's drop in one node's table would drop the other nodes' traffic), so each
// node's proxy owns a table of its own (<table>-<i>) scoped to its node
// (--scope-source-cidrs = the node's pod CIDR, --node-ip-override = its IP): its
// pods' connections and those to its address are its, the rest the other nodes'.
// The host's own connections to the Service CIDR are routed through node 1's
// bridge with node 1's gateway as source (service-route.ts), so they are node 1's.
import { execFileSync } from 'node:child_process';
import type { ClusterPaths } from './data-dir';
import { executableArgs, findOnPath, freePort, waitUntil, type Proc } from './process';

/** The defaults of the proxy's own table and chain prefix (a named cluster passes its own). */
export const DEFAULT_PROXY_TABLE = 'tkube-proxy';
export const DEFAULT_PROXY_CHAIN_PREFIX = 'TKUBE';

/** Where the cluster's proxies keep their rules: node i's nft table and iptables chain prefix. */
export interface ProxyRuleNames {
  table: string;
  chainPrefix: string;
}

/**
 * Node i's own table and chains. The prefix stays within 7 characters: iptables chain names
 * stop at 28, and <prefix>-SVC-<16 characters of hash> takes 21 more.
 */
export function nodeProxyRules(names: ProxyRuleNames, i: number): ProxyRuleNames {
  const n = String(i + 1);
  return { table: `${names.table}-${n}`, chainPrefix: `${names.chainPrefix.slice(0, 6 - n.length)}N${n}` };
}

/** Why no service proxy can run on this host, undefined when one can. */
export function serviceProxyUnavailable(): string | undefined {
  if (process.getuid?.() !== 0) return 'not root (the proxy programs the kernel)';
  if (!findOnPath('nft') && !findOnPath('iptables-restore'))
    return 'neither nft (nftables) nor iptables-restore is installed';
  return undefined;
}

export interface NodeProxyFlags {
  paths: ClusterPaths;
  nodeName: string;
  /** The node's InternalIP: its NodePorts' address. */
  nodeIP: string;
  /** The node's pod CIDR: its pods' connections are this proxy's. */
  podCIDR: string;
  /** Every node's pod CIDR: traffic from outside them to a ClusterIP is masqueraded. */
  clusterCIDRs: string[];
  serviceCIDR: string;
  rules: ProxyRuleNames;
  healthzPort: number;
  metricsPort: number;
  extra?: string[];
}

export function nodeProxyFlags(o: NodeProxyFlags): string[] {
  return [
    '--kubeconfig',
    o.paths.proxyKubeconfig,
    '--hostname-override',
    o.nodeName,
    '--cluster-cidr',
    o.clusterCIDRs.join(','),
    '--service-cluster-ip-range',
    o.serviceCIDR,
    '--node-ip-override',
    o.nodeIP,
    // NodePorts on the node's own address only (nftables mode's default, "primary").
    '--nodeport-addresses',
    'primary',
    '--scope-source-cidrs',
    o.podCIDR,
    '--nftables-table',
    o.rules.table,
    '--iptables-chain-prefix',
    o.rules.chainPrefix,
    '--healthz-bind-address',
    `127.0.0.1:${o.healthzPort}`,
    '--metrics-bind-address',
    `127.0.0.1:${o.metricsPort}`,
    ...(o.extra ?? []),
  ];
}

/** Free health and metrics ports for one proxy (kube-proxy's 10256/10249 would collide across nodes). */
export async function proxyPorts(): Promise<{ healthzPort: number; metricsPort: number }> {
  return { healthzPort: await freePort(), metricsPort: await freePort() };
}

/**
 * `proxy --cleanup` of these rules, run to completion: after the proxy stopped (kube-proxy
 * leaves its rules when it exits) and before a start (a crashed run's rules).
 */
export function cleanupProxyRules(rules: ProxyRuleNames): void {
  execFileSync(
    process.execPath,
    executableArgs('proxy', [
      '--cleanup',
      '--nftables-table',
      rules.table,
      '--iptables-chain-prefix',
      rules.chainPrefix,
    ]),
    { stdio: 'pipe', timeout: 30_000 },
  );
}

/** The mode a running proxy chose (its /proxyMode), once it has programmed the kernel once. */
export async function syncedProxyMode(metricsPort: number): Promise<string | undefined> {
  const get = async (path: string) => {
    const r = await fetch(`http://127.0.0.1:${metricsPort}${path}`, { signal: AbortSignal.timeout(2000) });
    return r.ok ? r.text() : undefined;
  };
  try {
    const metrics = await get('/metrics');
    if (!metrics || !/^kubeproxy_sync_proxy_rules_duration_seconds_count [1-9]/m.test(metrics))
      return undefined;
    return await get('/proxyMode');
  } catch {
    return undefined;
  }
}

export interface ServiceProxiesOptions {
  paths: ClusterPaths;
  nodes: number;
  nodeName(i: number): string;
  nodeIP(i: number): string;
  podCIDR(i: number): string;
  serviceCIDR: string;
  rules: ProxyRuleNames;
  extra?: (i: number) => string[];
  timeoutMs: number;
  /** Starts a component under the cluster's supervision (LocalCluster's start). */
  start(executable: string, args: string[], logName: string): Proc;
}

/** One proxy per node, each waited for until it programmed the kernel once; the mode they chose. */
export async function startServiceProxies(o: ServiceProxiesOptions): Promise<string> {
  const clusterCIDRs = Array.from({ length: o.nodes }, (_, i) => o.podCIDR(i));
  const started: { proc: Proc; metricsPort: number }[] = [];
  for (let i = 0; i < o.nodes; i++) {
    const ports = await proxyPorts();
    const flags = nodeProxyFlags({
      paths: o.paths,
      nodeName: o.nodeName(i),
      nodeIP: o.nodeIP(i),
      podCIDR: o.podCIDR(i),
      clusterCIDRs,
      serviceCIDR: o.serviceCIDR,
      rules: nodeProxyRules(o.rules, i),
      ...ports,
      extra: o.extra?.(i),
    });
    started.push({ proc: o.start('proxy', flags, `proxy-${o.nodeName(i)}`), metricsPort: ports.metricsPort });
  }
  const modes = new Set<string>();
  for (const [i, s] of started.entries())
    modes.add(
      await waitUntil(
        () => syncedProxyMode(s.metricsPort),
        o.timeoutMs,
        `the service proxy of ${o.nodeName(i)} programming the kernel`,
        s.proc.exited,
      ),
    );
  return [...modes].join(', ');
}
