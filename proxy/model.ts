// The model step of the proxy: Services + EndpointSlices (+ this node's name
// and addresses, the cluster's CIDRs, options) -> a pure description of what
// to program, one entry per service port. No kernel, no I/O: both renderers
// (nftables.ts, iptables.ts) and the UDP conntrack cleanup read only this.
import { cidrContains, compareIPv4, isIPv4, parseCIDR } from './ip';
import {
  SERVICE_NAME_LABEL,
  SERVICE_PROXY_NAME_LABEL,
  type EndpointSlice,
  type Service,
  type ServicePortSpec,
} from './types';

export type Protocol = 'tcp' | 'udp' | 'sctp';

export interface ModelOptions {
  nodeName: string;
  /** This node's addresses: --nodeport-addresses "primary" and CIDR entries match them. */
  nodeIPs: string[];
  /** Pod network(s): traffic from outside them is masqueraded (--cluster-cidr; empty: never). */
  clusterCIDRs: string[];
  /** Service CIDR(s): traffic to an unallocated ClusterIP in them is rejected. */
  serviceCIDRs: string[];
  /** --masquerade-all */
  masqueradeAll: boolean;
  /** --nodeport-addresses: CIDRs and/or "primary"; empty: every local address. */
  nodePortAddresses: string[];
  /**
   * --scope-source-cidrs: with several nodes on one kernel, only connections from these (this
   * node's pod CIDR) or to nodeIPs are this proxy's; empty: every connection.
   */
  scopeSourceCIDRs?: string[];
}

export interface ProxyEndpoint {
  ip: string;
  port: number;
  nodeName?: string;
  ready: boolean;
  serving: boolean;
  terminating: boolean;
}

export interface ServicePort {
  /** kube-proxy's ServicePortName: "ns/name" plus ":port" when the port is named. */
  name: string;
  namespace: string;
  service: string;
  portName: string;
  protocol: Protocol;
  clusterIP: string;
  port: number;
  nodePort?: number;
  externalIPs: string[];
  loadBalancerIPs: string[];
  /**
   * loadBalancerSourceRanges (IPv4 CIDRs) when the Service has LB IPs: the only clients its LB
   * IPs accept (plus the LB IPs themselves when a range holds a node IP); empty: any client.
   */
  sourceRanges: string[];
  /** An eTP Local LoadBalancer's healthCheckNodePort: its local endpoint count is served there. */
  healthCheckNodePort?: number;
  /** sessionAffinity ClientIP: the timeout in seconds. */
  affinitySeconds?: number;
  /** internalTrafficPolicy / externalTrafficPolicy Local. */
  internalLocal: boolean;
  externalLocal: boolean;
  /** What the Cluster policy balances over: ready endpoints, else serving-and-terminating ones. */
  clusterEndpoints: ProxyEndpoint[];
  /** The same choice among this node's endpoints (the Local policy). */
  localEndpoints: ProxyEndpoint[];
  /** Every serving endpoint (what UDP conntrack entries may still point at). */
  servingEndpoints: ProxyEndpoint[];
}

export interface RuleSet {
  servicePorts: ServicePort[];
  /** Every ClusterIP of a programmed Service (with endpoints or not). */
  clusterIPs: string[];
  serviceCIDRs: string[];
  clusterCIDRs: string[];
  masqueradeAll: boolean;
  /** Destination addresses of NodePorts; "local": any local address but loopback. */
  nodePortIPs: string[] | 'local';
  /** The connections this proxy handles, when it shares the kernel with other nodes' proxies. */
  scope?: TrafficScope;
}

/** New connections from one of sources, or to one of destinations (this node's IPs). */
export interface TrafficScope {
  sources: string[];
  destinations: string[];
}

/** sessionAffinityConfig.clientIP.timeoutSeconds' default (3 h). */
export const DEFAULT_AFFINITY_SECONDS = 10800;

/** The endpoints internal (ClusterIP) traffic goes to. */
export const internalEndpoints = (sp: ServicePort) =>
  sp.internalLocal ? sp.localEndpoints : sp.clusterEndpoints;
/** The endpoints external (NodePort, externalIPs, LB IPs) traffic goes to. */
export const externalEndpoints = (sp: ServicePort) =>
  sp.externalLocal ? sp.localEndpoints : sp.clusterEndpoints;
export const hasExternal = (sp: ServicePort) =>
  sp.nodePort !== undefined || sp.externalIPs.length > 0 || sp.loadBalancerIPs.length > 0;
/** Any usable endpoint anywhere: with none the Service rejects, else a Local policy without local ones drops. */
export const hasAnyEndpoints = (sp: ServicePort) => sp.clusterEndpoints.length > 0;

/** kube-proxy's ShouldSkipService plus the label its informers filter on. */
export function skipService(svc: Service): boolean {
  const spec = svc.spec ?? {};
  if (svc.metadata.labels?.[SERVICE_PROXY_NAME_LABEL] !== undefined) return true;
  if (spec.type === 'ExternalName') return true;
  return !spec.clusterIP || spec.clusterIP === 'None';
}

const protocolOf = (p: string | undefined): Protocol | undefined => {
  const v = (p ?? 'TCP').toLowerCase();
  return v === 'tcp' || v === 'udp' || v === 'sctp' ? v : undefined;
};

/** Categorizes endpoints as kube-proxy's CategorizeEndpoints (no topology hints). */
function choose(all: ProxyEndpoint[]): ProxyEndpoint[] {
  const ready = all.filter((e) => e.ready);
  return ready.length > 0 ? ready : all.filter((e) => e.serving && e.terminating);
}

function compareEndpoints(a: ProxyEndpoint, b: ProxyEndpoint): number {
  return compareIPv4(a.ip, b.ip) || a.port - b.port;
}

/** The IPv4 endpoints of one service port, across the Service's slices, deduplicated by ip:port. */
function endpointsFor(slices: EndpointSlice[], port: ServicePortSpec, protocol: Protocol): ProxyEndpoint[] {
  const seen = new Map<string, ProxyEndpoint>();
  for (const slice of slices) {
    if (slice.addressType !== undefined && slice.addressType !== 'IPv4') continue;
    const p = (slice.ports ?? []).find(
      (sp) => (sp.name ?? '') === (port.name ?? '') && protocolOf(sp.protocol) === protocol,
    );
    if (!p || typeof p.port !== 'number') continue;
    for (const ep of slice.endpoints ?? []) {
      const ip = ep.addresses?.[0];
      if (!ip || !isIPv4(ip)) continue;
      const key = `${ip}:${p.port}`;
      if (seen.has(key)) continue;
      const c = ep.conditions ?? {};
      // discovery/v1: an unset ready means ready, an unset serving means as ready.
      const ready = c.ready ?? true;
      seen.set(key, {
        ip,
        port: p.port,
        nodeName: ep.nodeName,
        ready,
        serving: c.serving ?? ready,
        terminating: c.terminating ?? false,
      });
    }
  }
  return [...seen.values()].sort(compareEndpoints);
}

/** The valid IPv4 CIDRs of loadBalancerSourceRanges (kube-proxy ignores the rest), as given. */
function sourceRanges(spec: NonNullable<Service['spec']>, lbIPs: string[], nodeIPs: string[]): string[] {
  if (!lbIPs.length) return [];
  const ranges = (spec.loadBalancerSourceRanges ?? [])
    .map((r) => r.trim())
    .filter((r) => {
      try {
        parseCIDR(r);
        return true;
      } catch {
        return false;
      }
    });
  // A node inside a range reaches the LB IPs with an LB IP as source (hairpin through the LB).
  const fromNode = ranges.some((r) => nodeIPs.some((ip) => isIPv4(ip) && cidrContains(r, ip)));
  return ranges.length && fromNode ? [...ranges, ...lbIPs] : ranges;
}

function nodePortIPs(o: ModelOptions): string[] | 'local' {
  if (o.nodePortAddresses.length === 0) return 'local';
  const ips = new Set<string>();
  for (const entry of o.nodePortAddresses) {
    for (const ip of o.nodeIPs.filter(isIPv4)) {
      if (entry === 'primary' || (entry.includes('/') && cidrContains(entry, ip))) ips.add(ip);
    }
  }
  return [...ips].sort(compareIPv4);
}

/** The rule set for these objects: pure, deterministic (sorted), IPv4. */
export function buildRuleSet(services: Service[], slices: EndpointSlice[], o: ModelOptions): RuleSet {
  const slicesBySvc = new Map<string, EndpointSlice[]>();
  for (const s of slices) {
    const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
    if (!svc) continue;
    const key = `${s.metadata.namespace ?? ''}/${svc}`;
    const list = slicesBySvc.get(key);
    if (list) list.push(s);
    else slicesBySvc.set(key, [s]);
  }
  const servicePorts: ServicePort[] = [];
  const clusterIPs = new Set<string>();
  for (const svc of services) {
    if (skipService(svc)) continue;
    const spec = svc.spec!;
    const clusterIP = spec.clusterIP!;
    if (!isIPv4(clusterIP)) continue;
    clusterIPs.add(clusterIP);
    const namespace = svc.metadata.namespace ?? '';
    const nsName = `${namespace}/${svc.metadata.name}`;
    const svcSlices = slicesBySvc.get(nsName) ?? [];
    const affinity =
      spec.sessionAffinity === 'ClientIP'
        ? (spec.sessionAffinityConfig?.clientIP?.timeoutSeconds ?? DEFAULT_AFFINITY_SECONDS)
        : undefined;
    const externalIPs = (spec.externalIPs ?? []).filter(isIPv4).sort(compareIPv4);
    const loadBalancerIPs = (svc.status?.loadBalancer?.ingress ?? [])
      .filter((i) => i.ip && isIPv4(i.ip) && (i.ipMode ?? 'VIP') === 'VIP')
      .map((i) => i.ip!)
      .sort(compareIPv4);
    const nodePorts = spec.type === 'NodePort' || spec.type === 'LoadBalancer';
    const ranges = sourceRanges(spec, loadBalancerIPs, o.nodeIPs);
    for (const port of spec.ports ?? []) {
      const protocol = protocolOf(port.protocol);
      if (!protocol) continue;
      const all = endpointsFor(svcSlices, port, protocol);
      const portName = port.name ?? '';
      servicePorts.push({
        name: portName ? `${nsName}:${portName}` : nsName,
        namespace,
        service: svc.metadata.name,
        portName,
        protocol,
        clusterIP,
        port: port.port,
        nodePort: nodePorts && port.nodePort ? port.nodePort : undefined,
        externalIPs,
        loadBalancerIPs,
        sourceRanges: ranges,
        healthCheckNodePort:
          spec.type === 'LoadBalancer' && spec.externalTrafficPolicy === 'Local' && spec.healthCheckNodePort
            ? spec.healthCheckNodePort
            : undefined,
        affinitySeconds: affinity,
        internalLocal: spec.internalTrafficPolicy === 'Local',
        // Only external traffic has an external policy (kube: ExternalPolicyLocal needs NodePort/LB).
        externalLocal: spec.externalTrafficPolicy === 'Local' && (nodePorts || externalIPs.length > 0),
        clusterEndpoints: choose(all),
        localEndpoints: choose(all.filter((e) => e.nodeName === o.nodeName)),
        servingEndpoints: all.filter((e) => e.serving),
      });
    }
  }
  servicePorts.sort((a, b) =>
    a.name < b.name ? -1 : a.name > b.name ? 1 : a.protocol < b.protocol ? -1 : 1,
  );
  return {
    servicePorts,
    clusterIPs: [...clusterIPs].sort(compareIPv4),
    serviceCIDRs: o.serviceCIDRs,
    clusterCIDRs: o.clusterCIDRs,
    masqueradeAll: o.masqueradeAll,
    nodePortIPs: nodePortIPs(o),
    ...(o.scopeSourceCIDRs?.length
      ? { scope: { sources: o.scopeSourceCIDRs, destinations: o.nodeIPs.filter(isIPv4) } }
      : {}),
  };
}
