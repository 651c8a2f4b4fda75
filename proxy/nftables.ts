// The nftables renderer: a RuleSet -> one table of the ip family (kube-proxy's
// nftables mode layout: base chains, service/endpoint chains, verdict maps),
// and the `nft -f -` scripts that install it as one transaction: a whole
// replace (first sync, after a failure), an in-place rewrite of everything that
// keeps the ClientIP affinity sets' dynamic contents (a full sync), or a partial
// sync that rewrites only what changed.
import {
  externalEndpoints,
  hasAnyEndpoints,
  hasExternal,
  internalEndpoints,
  type ProxyEndpoint,
  type RuleSet,
  type ServicePort,
} from './model';
import { nftEndpointBase, nftServiceBase } from './names';

export const MASQUERADE_MARK = '0x00004000';

export interface NftChain {
  name: string;
  /** Base chains: "type nat hook output priority -100". */
  hook?: string;
  rules: string[];
}

export interface NftSet {
  name: string;
  kind: 'set' | 'map';
  /** "type ipv4_addr ; flags dynamic,timeout ; timeout 10800s". */
  decl: string;
  elements: string[];
  /** Filled by the packet path (affinity): kept across syncs, never flushed. */
  dynamic?: boolean;
}

export interface NftTable {
  family: 'ip';
  name: string;
  chains: NftChain[];
  sets: NftSet[];
}

const SERVICE_KEY = 'ipv4_addr . inet_proto . inet_service : verdict';
const NODEPORT_KEY = 'inet_proto . inet_service : verdict';
const FILTER = (hook: string, prio: number) => `type filter hook ${hook} priority ${prio}`;
const NAT = (hook: string, prio: number) => `type nat hook ${hook} priority ${prio}`;
const COMMENT = 'rules for the tkube service proxy';

const list = (items: string[]) => `{ ${items.join(', ')} }`;

/** The table for a rule set, named `tableName` (several clusters can each own one). */
export function nftTable(rs: RuleSet, tableName: string): NftTable {
  const chains: NftChain[] = [];
  const sets: NftSet[] = [];
  const chain = (name: string, rules: string[], hook?: string) => chains.push({ name, rules, hook });
  const serviceIps: string[] = [];
  const serviceNodeports: string[] = [];
  const noEndpointServices: string[] = [];
  const noEndpointNodeports: string[] = [];
  const firewallIps: string[] = [];
  const clusterCIDRs = rs.clusterCIDRs.length ? list(rs.clusterCIDRs) : undefined;
  const nodePortMatch =
    rs.nodePortIPs === 'local' ? 'fib daddr type local ip daddr != 127.0.0.0/8' : 'ip daddr @nodeport-ips';
  // Another node's connection on a shared kernel: its own proxy's table handles it (the base
  // chain's return leaves the packet to the other tables).
  const outOfScope = rs.scope
    ? [
        [
          `ip saddr != ${list(rs.scope.sources)}`,
          ...(rs.scope.destinations.length ? [`ip daddr != ${list(rs.scope.destinations)}`] : []),
          'return',
        ].join(' '),
      ]
    : [];

  chain('filter-prerouting', [...outOfScope, 'ct state new jump firewall-check'], FILTER('prerouting', -110));
  chain(
    'filter-input',
    [
      ...outOfScope,
      'ct state new jump nodeport-endpoints-check',
      'ct state new jump service-endpoints-check',
    ],
    FILTER('input', -110),
  );
  chain(
    'filter-forward',
    [...outOfScope, 'ct state new jump service-endpoints-check', 'ct state new jump cluster-ips-check'],
    FILTER('forward', -110),
  );
  chain(
    'filter-output',
    [...outOfScope, 'ct state new jump service-endpoints-check', 'ct state new jump firewall-check'],
    FILTER('output', -110),
  );
  chain(
    'filter-output-post-dnat',
    [...outOfScope, 'ct state new jump cluster-ips-check'],
    FILTER('output', -90),
  );
  chain('nat-prerouting', [...outOfScope, 'jump services'], NAT('prerouting', -100));
  chain('nat-output', [...outOfScope, 'jump services'], NAT('output', -100));
  chain('nat-postrouting', ['jump masquerading'], NAT('postrouting', 100));
  chain('mark-for-masquerade', [`meta mark set meta mark or ${MASQUERADE_MARK}`]);
  chain('masquerading', [
    `meta mark & ${MASQUERADE_MARK} == 0 return`,
    `meta mark set meta mark xor ${MASQUERADE_MARK}`,
    'masquerade fully-random',
  ]);
  chain('reject-chain', ['reject']);
  chain('services', [
    'ip daddr . meta l4proto . th dport vmap @service-ips',
    `${nodePortMatch} meta l4proto . th dport vmap @service-nodeports`,
  ]);
  chain('firewall-check', ['ip daddr . meta l4proto . th dport vmap @firewall-ips']);
  chain('service-endpoints-check', ['ip daddr . meta l4proto . th dport vmap @no-endpoint-services']);
  chain('nodeport-endpoints-check', [`${nodePortMatch} meta l4proto . th dport vmap @no-endpoint-nodeports`]);
  chain('cluster-ips-check', [
    ...(rs.serviceCIDRs.length ? [`ip daddr != @cluster-ips ip daddr ${list(rs.serviceCIDRs)} reject`] : []),
    'ip daddr @cluster-ips reject',
  ]);

  for (const sp of rs.servicePorts) {
    const base = nftServiceBase(sp);
    const epBases = new Map<ProxyEndpoint, string>();
    const epBase = (ep: ProxyEndpoint) => {
      let b = epBases.get(ep);
      if (b === undefined) epBases.set(ep, (b = nftEndpointBase(sp, ep)));
      return b;
    };
    const clusterChain = `service-${base}`;
    const localChain = `local-${base}`;
    const externalChain = `external-${base}`;
    const noEndpoints = hasAnyEndpoints(sp) ? 'drop' : 'goto reject-chain';
    const internal = internalEndpoints(sp);
    const external = externalEndpoints(sp);
    const internalChain = sp.internalLocal ? localChain : clusterChain;
    const usesCluster =
      (!sp.internalLocal && internal.length > 0) || (hasExternal(sp) && external.length > 0);
    const usesLocal = (sp.internalLocal || sp.externalLocal) && sp.localEndpoints.length > 0;

    const vip = `${sp.clusterIP} . ${sp.protocol} . ${sp.port}`;
    if (internal.length) serviceIps.push(`${vip} : goto ${internalChain}`);
    else noEndpointServices.push(`${vip} : ${noEndpoints}`);
    if (hasExternal(sp)) {
      const verdict = external.length ? `goto ${externalChain}` : noEndpoints;
      const target = external.length ? serviceIps : noEndpointServices;
      for (const ip of [...sp.externalIPs, ...sp.loadBalancerIPs])
        target.push(`${ip} . ${sp.protocol} . ${sp.port} : ${verdict}`);
      if (sp.nodePort !== undefined)
        (external.length ? serviceNodeports : noEndpointNodeports).push(
          `${sp.protocol} . ${sp.nodePort} : ${verdict}`,
        );
      if (external.length) chain(externalChain, externalRules(sp, clusterChain, localChain, clusterCIDRs));
      // loadBalancerSourceRanges guard the LB IPs only (not NodePorts, not externalIPs).
      if (sp.sourceRanges.length) {
        const firewallChain = `firewall-${base}`;
        for (const ip of sp.loadBalancerIPs)
          firewallIps.push(`${ip} . ${sp.protocol} . ${sp.port} : goto ${firewallChain}`);
        chain(firewallChain, [`ip saddr != ${list(sp.sourceRanges)} drop`]);
      }
    }
    const masq = rs.masqueradeAll
      ? `ip daddr ${sp.clusterIP} ${sp.protocol} dport ${sp.port} jump mark-for-masquerade`
      : clusterCIDRs &&
        `ip daddr ${sp.clusterIP} ${sp.protocol} dport ${sp.port} ip saddr != ${clusterCIDRs} jump mark-for-masquerade`;
    if (usesCluster)
      chain(
        clusterChain,
        balance(sp, epBase, sp.clusterEndpoints, internalChain === clusterChain ? masq : undefined),
      );
    if (usesLocal)
      chain(
        localChain,
        balance(sp, epBase, sp.localEndpoints, internalChain === localChain ? masq : undefined),
      );
    const used = new Map<string, ProxyEndpoint>();
    for (const ep of [...(usesCluster ? sp.clusterEndpoints : []), ...(usesLocal ? sp.localEndpoints : [])])
      used.set(`${ep.ip}:${ep.port}`, ep);
    for (const ep of [...used.values()]) {
      const b = epBase(ep);
      const rules = [`ip saddr ${ep.ip} jump mark-for-masquerade`];
      if (sp.affinitySeconds !== undefined) {
        rules.push(`update @affinity-${b} { ip saddr }`);
        sets.push({
          name: `affinity-${b}`,
          kind: 'set',
          decl: `type ipv4_addr ; flags dynamic,timeout ; timeout ${sp.affinitySeconds}s`,
          elements: [],
          dynamic: true,
        });
      }
      rules.push(`meta l4proto ${sp.protocol} dnat to ${ep.ip}:${ep.port}`);
      chain(`endpoint-${b}`, rules);
    }
  }

  sets.unshift(
    { name: 'cluster-ips', kind: 'set', decl: 'type ipv4_addr', elements: rs.clusterIPs },
    ...(rs.nodePortIPs === 'local'
      ? []
      : [{ name: 'nodeport-ips', kind: 'set' as const, decl: 'type ipv4_addr', elements: rs.nodePortIPs }]),
    { name: 'service-ips', kind: 'map', decl: `type ${SERVICE_KEY}`, elements: serviceIps },
    { name: 'service-nodeports', kind: 'map', decl: `type ${NODEPORT_KEY}`, elements: serviceNodeports },
    { name: 'no-endpoint-services', kind: 'map', decl: `type ${SERVICE_KEY}`, elements: noEndpointServices },
    { name: 'firewall-ips', kind: 'map', decl: `type ${SERVICE_KEY}`, elements: firewallIps },
    {
      name: 'no-endpoint-nodeports',
      kind: 'map',
      decl: `type ${NODEPORT_KEY}`,
      elements: noEndpointNodeports,
    },
  );
  return { family: 'ip', name: tableName, chains, sets };
}

function balance(
  sp: ServicePort,
  epBase: (ep: ProxyEndpoint) => string,
  eps: ProxyEndpoint[],
  masq: string | undefined,
): string[] {
  const rules = masq ? [masq] : [];
  if (sp.affinitySeconds !== undefined)
    for (const ep of eps) {
      const b = epBase(ep);
      rules.push(`ip saddr @affinity-${b} goto endpoint-${b}`);
    }
  const targets = eps.map((ep, i) => `${i} : goto endpoint-${epBase(ep)}`);
  rules.push(`numgen random mod ${eps.length} vmap { ${targets.join(' , ')} }`);
  return rules;
}

function externalRules(
  sp: ServicePort,
  clusterChain: string,
  localChain: string,
  clusterCIDRs?: string,
): string[] {
  if (!sp.externalLocal) return ['jump mark-for-masquerade', `goto ${clusterChain}`];
  // Local: the client address is kept; pods and the node itself still use the Cluster policy.
  const rules: string[] = [];
  if (clusterCIDRs && sp.clusterEndpoints.length) rules.push(`ip saddr ${clusterCIDRs} goto ${clusterChain}`);
  if (sp.clusterEndpoints.length)
    rules.push('fib saddr type local jump mark-for-masquerade', `fib saddr type local goto ${clusterChain}`);
  rules.push(`goto ${localChain}`);
  return rules;
}

const chainDecl = (c: NftChain) => (c.hook ? ` { ${c.hook} ; policy accept ; }` : '');
const setDecl = (s: NftSet) => ` { ${s.decl} ; }`;

/** Declares the table's contents with `add` lines (after the table itself exists). */
function addLines(t: NftTable, out: string[]): void {
  const at = `${t.family} ${t.name}`;
  for (const c of t.chains) out.push(`add chain ${at} ${c.name}${chainDecl(c)}`);
  for (const s of t.sets) {
    out.push(`add ${s.kind} ${at} ${s.name}${setDecl(s)}`);
    if (s.elements.length) out.push(`add element ${at} ${s.name} ${list(s.elements)}`);
  }
  for (const c of t.chains) for (const r of c.rules) out.push(`add rule ${at} ${c.name} ${r}`);
}

/** One transaction that deletes the table (if any) and creates it whole. */
export function nftReplaceScript(t: NftTable): string {
  const at = `${t.family} ${t.name}`;
  // "add table" first so that "delete table" cannot fail on a missing table (no "destroy" before nft 1.0.8).
  const out = [`add table ${at}`, `delete table ${at}`, `add table ${at} { comment "${COMMENT}" ; }`];
  addLines(t, out);
  return out.join('\n') + '\n';
}

/**
 * One transaction that rewrites a table installed as `prev` into `next`: every rule and
 * non-dynamic element is rewritten, stale chains and sets deleted, and the affinity sets that
 * stay keep the client addresses the packet path put in them.
 */
export function nftUpdateScript(prev: NftTable, next: NftTable): string {
  const at = `${next.family} ${next.name}`;
  const out = [`add table ${at} { comment "${COMMENT}" ; }`, `flush table ${at}`];
  const nextChains = new Map(next.chains.map((c) => [c.name, c]));
  const nextSets = new Map(next.sets.map((s) => [s.name, s]));
  const keptSets = new Set<string>();
  for (const s of prev.sets) {
    const n = nextSets.get(s.name);
    if (n && n.kind === s.kind && n.decl === s.decl) {
      keptSets.add(s.name);
      if (!s.dynamic) out.push(`flush ${s.kind} ${at} ${s.name}`);
    }
  }
  for (const c of prev.chains) {
    const n = nextChains.get(c.name);
    if (!n || (n.hook ?? '') !== (c.hook ?? '')) out.push(`delete chain ${at} ${c.name}`);
  }
  for (const s of prev.sets) if (!keptSets.has(s.name)) out.push(`delete ${s.kind} ${at} ${s.name}`);
  addLines(next, out);
  return out.join('\n') + '\n';
}

/**
 * A partial sync (kube-proxy's nftables mode between full syncs): one transaction that touches
 * only what differs between `prev` (as installed) and `next` — new chains and sets declared,
 * changed chains flushed and refilled, map and set elements deleted/added one by one, chains no
 * longer used flushed (their deletion waits: `deleteChains`, flushed by an earlier sync), stale
 * sets deleted. Undefined when the difference needs a full sync (a set's type or a base chain's
 * hook changed).
 */
export function nftPartialScript(
  prev: NftTable,
  next: NftTable,
  deleteChains: string[] = [],
): string | undefined {
  const at = `${next.family} ${next.name}`;
  const prevChains = new Map(prev.chains.map((c) => [c.name, c]));
  const prevSets = new Map(prev.sets.map((s) => [s.name, s]));
  const nextChains = new Set(next.chains.map((c) => c.name));
  const nextSets = new Set(next.sets.map((s) => s.name));
  for (const c of next.chains) {
    const p = prevChains.get(c.name);
    if (p && (p.hook ?? '') !== (c.hook ?? '')) return undefined;
  }
  for (const s of next.sets) {
    const p = prevSets.get(s.name);
    if (p && (p.kind !== s.kind || p.decl !== s.decl || !!p.dynamic !== !!s.dynamic)) return undefined;
  }
  const out: string[] = [];
  for (const c of next.chains)
    if (!prevChains.has(c.name)) out.push(`add chain ${at} ${c.name}${chainDecl(c)}`);
  for (const s of next.sets)
    if (!prevSets.has(s.name)) out.push(`add ${s.kind} ${at} ${s.name}${setDecl(s)}`);
  for (const c of next.chains) {
    const p = prevChains.get(c.name);
    if (p && sameList(p.rules, c.rules)) continue;
    if (p) out.push(`flush chain ${at} ${c.name}`);
    for (const r of c.rules) out.push(`add rule ${at} ${c.name} ${r}`);
  }
  for (const s of next.sets) {
    if (s.dynamic) continue;
    const before = new Set(prevSets.get(s.name)?.elements ?? []);
    const now = new Set(s.elements);
    // A map element whose verdict changed is deleted by its key, then added with the new one.
    const gone = [...before].filter((e) => !now.has(e)).map((e) => (s.kind === 'map' ? mapKey(e) : e));
    const added = s.elements.filter((e) => !before.has(e));
    if (gone.length) out.push(`delete element ${at} ${s.name} ${list(gone)}`);
    if (added.length) out.push(`add element ${at} ${s.name} ${list(added)}`);
  }
  for (const c of prev.chains) if (!nextChains.has(c.name)) out.push(`flush chain ${at} ${c.name}`);
  for (const s of prev.sets) if (!nextSets.has(s.name)) out.push(`delete ${s.kind} ${at} ${s.name}`);
  for (const name of deleteChains) if (!nextChains.has(name)) out.push(`delete chain ${at} ${name}`);
  return out.length ? out.join('\n') + '\n' : '';
}

const mapKey = (element: string) => element.slice(0, element.indexOf(' : '));

function sameList(a: string[], b: string[]): boolean {
  return a.length === b.length && a.every((x, i) => x === b[i]);
}

/** One transaction that removes the table, whether or not it exists. */
export function nftDeleteScript(tableName: string): string {
  return `add table ip ${tableName}\ndelete table ip ${tableName}\n`;
}
