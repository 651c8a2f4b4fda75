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
import { routeThroughBridge, routeUnreachableAgain } from './service-route';

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
export function cleanupProxyRules(rules: ProxyRuleNames, netns?: string): void {
  const args = executableArgs('proxy', [
    '--cleanup',
    '--nftables-table',
    rules.table,
    '--iptables-chain-prefix',
    rules.chainPrefix,
  ]);
  execFileSync(...inKernel(netns, process.execPath, args), { stdio: 'pipe', timeout: 30_000 });
}

/** A command run in the host's network namespace, or in `netns` (tests). */
function inKernel(netns: string | undefined, cmd: string, args: string[]): [string, string[]] {
  return netns ? ['ip', ['netns', 'exec', netns, cmd, ...args]] : [cmd, args];
}

/** A tool's output, or '' when it is missing or fails. */
function outputOf(netns: string | undefined, cmd: string, args: string[]): string {
  if (!findOnPath(cmd)) return '';
  try {
    return execFileSync(...inKernel(netns, cmd, args), { stdio: 'pipe', timeout: 30_000 }).toString();
  } catch {
    return '';
  }
}

/**
 * The nodes (0-based) whose rules of this cluster are in the kernel, from `nft list tables` and
 * `iptables-save` output: a table <table>-<n>, a chain <node n's prefix>-…. A crashed run may
 * have had more nodes than this one.
 */
export function nodesWithRules(names: ProxyRuleNames, nftTables: string, iptablesSave: string): number[] {
  const nodes = new Set<number>();
  const escaped = names.table.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const table = new RegExp(`^table ip ${escaped}-(\\d+)$`);
  for (const line of nftTables.split('\n')) {
    const m = table.exec(line.trim());
    if (m && Number(m[1]) > 0) nodes.add(Number(m[1]) - 1);
  }
  for (const line of iptablesSave.split('\n')) {
    const m = /^:([^\s-]*N(\d+))-/.exec(line);
    const i = m ? Number(m[2]) - 1 : -1;
    if (m && i >= 0 && nodeProxyRules(names, i).chainPrefix === m[1]) nodes.add(i);
  }
  return [...nodes].sort((a, b) => a - b);
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
  /** The cluster's names; node i's are derived (nodeProxyRules). */
  rules?: ProxyRuleNames;
  /** Tests: the network namespace whose kernel the rules are in (default the host's). */
  netns?: string;
  extra?: (i: number) => string[];
  /** Starts a component under the cluster's supervision (LocalCluster's start). */
  start(executable: string, args: string[], logName: string): Proc;
}

export type ServiceProxyStatus = { mode: string; routedThrough?: string } | { why: string };

/**
 * A local cluster's proxies, one per containerd node: started, the Service CIDR routed through
 * the first node's bridge once they programmed the kernel, and their rules removed.
 */
export class ClusterServiceProxies {
  /** The mode they chose, or why none runs; undefined before start(). */
  status: ServiceProxyStatus | undefined;

  constructor(private readonly o: ServiceProxiesOptions) {}

  private get names(): ProxyRuleNames {
    return this.o.rules ?? { table: DEFAULT_PROXY_TABLE, chainPrefix: DEFAULT_PROXY_CHAIN_PREFIX };
  }

  /** Every node's table and chain prefix. */
  get rules(): ProxyRuleNames[] {
    return Array.from({ length: this.o.nodes }, (_, i) => nodeProxyRules(this.names, i));
  }

  /** The bridge the Service CIDR is routed through while they run. */
  get routedThrough(): string | undefined {
    return this.status && 'mode' in this.status ? this.status.routedThrough : undefined;
  }

  /**
   * Starts them and waits until each programmed the kernel once; then the CIDRs routed
   * unreachable go through `bridge` (node 1's) with its gateway as source (service-route.ts).
   */
  async start(timeoutMs: number, unreachable: string[], bridge: string): Promise<ServiceProxyStatus> {
    const why = serviceProxyUnavailable();
    if (why) return (this.status = { why });
    const o = this.o;
    const clusterCIDRs = Array.from({ length: o.nodes }, (_, i) => o.podCIDR(i));
    const started: { proc: Proc; metricsPort: number }[] = [];
    for (const [i, rules] of this.rules.entries()) {
      const ports = await proxyPorts();
      const flags = nodeProxyFlags({
        paths: o.paths,
        nodeName: o.nodeName(i),
        nodeIP: o.nodeIP(i),
        podCIDR: o.podCIDR(i),
        clusterCIDRs,
        serviceCIDR: o.serviceCIDR,
        rules,
        ...ports,
        extra: o.extra?.(i),
      });
      started.push({
        proc: o.start('proxy', flags, `proxy-${o.nodeName(i)}`),
        metricsPort: ports.metricsPort,
      });
    }
    const modes = new Set<string>();
    for (const [i, s] of started.entries())
      modes.add(
        await waitUntil(
          () => syncedProxyMode(s.metricsPort),
          timeoutMs,
          `the service proxy of ${o.nodeName(i)} programming the kernel`,
          s.proc.exited,
        ),
      );
    const routed = routeThroughBridge(unreachable, bridge, o.nodeIP(0));
    return (this.status = { mode: [...modes].join(', '), routedThrough: routed.length ? bridge : undefined });
  }

  /** First thing on a stop: the CIDRs unreachable again before the rules and the bridge go. */
  unroute(unreachable: string[]): void {
    const bridge = this.routedThrough;
    if (bridge) routeUnreachableAgain(unreachable, bridge);
  }

  /**
   * Every node's rules, once no proxy runs (kube-proxy leaves them when it exits; a crash too),
   * and those of any other node of this cluster's names still in the kernel (a crashed run with
   * more nodes).
   */
  removeRules(): void {
    if (serviceProxyUnavailable()) return;
    const netns = this.o.netns;
    const found = nodesWithRules(
      this.names,
      outputOf(netns, 'nft', ['list', 'tables']),
      outputOf(netns, 'iptables-save', ['-t', 'nat']) + outputOf(netns, 'iptables-save', ['-t', 'filter']),
    );
    const nodes = new Set([...this.rules.keys(), ...found]);
    for (const i of nodes)
      try {
        cleanupProxyRules(nodeProxyRules(this.names, i), netns);
      } catch {
        // A stop goes on; the next start removes them again (its first step).
      }
  }
}
