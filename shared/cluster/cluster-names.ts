// Named clusters side by side on one host (kind's --name): everything that must
// be unique on the host is derived here from the cluster's name and what the
// other running clusters hold (their recorded states) — data dir, node names,
// node IPs, every port, pod and Service CIDRs, the service proxy's kernel rule
// tables. The default name keeps today's values (.tkube, tkube-node-N, 6443,
// 10.244.<i>.0/24, ...), so a single cluster looks as it always did. Slot k
// (0 for the default name, the lowest free one from 1 for others) picks the
// address blocks; ports start at the defaults and move to a free one only when
// taken (the chosen ones are written to the cluster's state).
import { join } from 'node:path';
import type { NodePorts } from './cluster-options';
import { defaultNodePorts, NODE_PREFIX } from './node-addresses';

export const DEFAULT_CLUSTER_NAME = 'tkube';
/** The default cluster's data dir (relative to the working directory, as it has always been). */
export const DEFAULT_DATA_DIR = '.tkube';
/** Where the other named clusters' data dirs go: <base>/<name>. */
export const NAMED_DATA_DIR_BASE = '.tkube-clusters';
/** Clusters side by side at most (slots 0..MAX_SLOT): each takes a /16 of 10.244.0.0/12's upper part. */
export const MAX_SLOT = 11;

/** Why a cluster name is not usable (a DNS label short enough for node names and the iptables prefix), or undefined. */
export function invalidClusterName(name: string): string | undefined {
  return /^[a-z0-9]([a-z0-9-]{0,18}[a-z0-9])?$/.test(name)
    ? undefined
    : `cluster name "${name}" must be 1-20 lower-case letters, digits or "-", starting and ending with a letter or digit`;
}

export const defaultDataDir = (name: string) =>
  name === DEFAULT_CLUSTER_NAME ? DEFAULT_DATA_DIR : join(NAMED_DATA_DIR_BASE, name);

/** What another running cluster holds on this host (from its state). */
export interface HeldResources {
  name: string;
  slot?: number;
  ports: number[];
  podCIDRs: string[];
  serviceCIDRs: string[];
}

/** Every port a cluster's processes serve on the host. */
export interface ClusterPorts {
  apiserver: number;
  controllerManager: number;
  registry: number;
  /** The node agents' (the simulated nodes' one agent uses node 0's). */
  nodes: NodePorts[];
  /** The service proxy's --healthz-bind-address and --metrics-bind-address ports. */
  proxyHealthz: number;
  proxyMetrics: number;
  /** The cluster DNS' health, readiness and metrics ports. */
  dnsHealth: number;
  dnsReady: number;
  dnsMetrics: number;
}

/** The defaults, as the real components have them (the default cluster's). */
export function defaultClusterPorts(nodes: number): ClusterPorts {
  return {
    apiserver: 6443,
    controllerManager: 10257,
    registry: 5000,
    nodes: Array.from({ length: Math.max(nodes, 1) }, (_, i) => defaultNodePorts(i)),
    proxyHealthz: 10256,
    proxyMetrics: 10249,
    dnsHealth: 8080,
    dnsReady: 8181,
    dnsMetrics: 9153,
  };
}

export interface ClusterNames {
  name: string;
  slot: number;
  dataDir: string;
  /** Node names are <nodePrefix>-<i+1>. */
  nodePrefix: string;
  /** The cluster's pod range; node i takes its i-th /24. */
  clusterCIDR: string;
  podCIDR(i: number): string;
  serviceCIDR: string;
  /** Node i's loopback address (127.0.<slot>.<i+2>). */
  nodeIP(i: number): string;
  ports: ClusterPorts;
  /** The service proxy's nftables table and iptables chain prefix (at most 8 characters). */
  nftTable: string;
  iptablesPrefix: string;
}

const ipv4 = (s: string) => s.split('.').reduce((v, o) => v * 256 + Number(o), 0);

/** [first, last] address of an IPv4 CIDR. */
function range(cidr: string): [number, number] {
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  const start = Math.floor(ipv4(base) / size) * size;
  return [start, start + size - 1];
}

export function cidrsOverlap(a: string, b: string): boolean {
  if (a.includes(':') || b.includes(':')) return a === b;
  const [a0, a1] = range(a);
  const [b0, b1] = range(b);
  return a0 <= b1 && b0 <= a1;
}

const slotClusterCIDR = (slot: number) => `10.${244 + slot}.0.0/16`;
const slotServiceCIDR = (slot: number) => `10.0.${slot}.0/24`;

/** Slot 0 for the default name; else the lowest slot whose blocks no other cluster holds. */
function chooseSlot(name: string, others: HeldResources[]): number {
  const held = (slot: number) =>
    others.some(
      (o) =>
        o.slot === slot ||
        o.podCIDRs.some((c) => cidrsOverlap(c, slotClusterCIDR(slot))) ||
        o.serviceCIDRs.some((c) => cidrsOverlap(c, slotServiceCIDR(slot))),
    );
  if (name === DEFAULT_CLUSTER_NAME) return 0;
  for (let slot = 1; slot <= MAX_SLOT; slot++) if (!held(slot)) return slot;
  throw new Error(
    `no free address block for cluster "${name}": ${others.length} other clusters run (${others.map((o) => o.name).join(', ')}); stop one`,
  );
}

/**
 * The derivation: the name's slot, blocks and names, and each port the default unless another
 * cluster holds it or isFree says it is taken on the host, then the next free one from 20000
 * (free and held by nobody). isFree is injected so that tests need not own real ports.
 */
export async function deriveClusterNames(o: {
  name: string;
  nodes: number;
  others: HeldResources[];
  isFree(port: number): Promise<boolean>;
  dataDir?: string;
}): Promise<ClusterNames> {
  const invalid = invalidClusterName(o.name);
  if (invalid) throw new Error(invalid);
  const slot = chooseSlot(o.name, o.others);
  const isDefault = o.name === DEFAULT_CLUSTER_NAME;
  const held = new Set(o.others.flatMap((x) => x.ports));
  let next = 20000;
  const pick = async (port: number): Promise<number> => {
    if (!held.has(port) && (await o.isFree(port))) {
      held.add(port);
      return port;
    }
    for (; next < 65536; next++)
      if (!held.has(next) && (await o.isFree(next))) {
        held.add(next);
        return next++;
      }
    throw new Error('no free port on 127.0.0.1');
  };
  const d = defaultClusterPorts(o.nodes);
  const ports: ClusterPorts = {
    apiserver: await pick(d.apiserver),
    controllerManager: await pick(d.controllerManager),
    registry: await pick(d.registry),
    nodes: [],
    proxyHealthz: await pick(d.proxyHealthz),
    proxyMetrics: await pick(d.proxyMetrics),
    dnsHealth: await pick(d.dnsHealth),
    dnsReady: await pick(d.dnsReady),
    dnsMetrics: await pick(d.dnsMetrics),
  };
  for (const n of d.nodes)
    ports.nodes.push({
      port: await pick(n.port),
      readOnlyPort: await pick(n.readOnlyPort),
      healthzPort: await pick(n.healthzPort),
    });
  const clusterCIDR = slotClusterCIDR(slot);
  return {
    name: o.name,
    slot,
    dataDir: o.dataDir ?? defaultDataDir(o.name),
    nodePrefix: isDefault ? NODE_PREFIX : `${o.name}-node`,
    clusterCIDR,
    podCIDR: (i) => `10.${244 + slot}.${i}.0/24`,
    serviceCIDR: slotServiceCIDR(slot),
    nodeIP: (i) => `127.0.${slot}.${i + 2}`,
    ports,
    nftTable: isDefault ? 'tkube-proxy' : `tkube-proxy-${o.name}`,
    iptablesPrefix: isDefault ? 'TKUBE' : `TK${slot}`,
  };
}

/** Every port of a derivation, for the state (what another cluster must not take). */
export function portsOf(p: ClusterPorts): number[] {
  const { nodes, ...rest } = p;
  return [...Object.values(rest), ...nodes.flatMap((n) => [n.port, n.readOnlyPort, n.healthzPort])];
}
