// The iptables renderer (the fallback where nft is missing): a RuleSet ->
// `iptables-restore --noflush` text of the proxy's own chains in nat and filter,
// kube-proxy's layout (SERVICES, SVC/SVL/EXT/SEP, MARK-MASQ, POSTROUTING) under
// a prefix of its own ("TKUBE" by default) so that it never touches another
// proxy's chains. The built-in chains only get the jump rules of iptJumpRules().
import {
  externalEndpoints,
  hasAnyEndpoints,
  hasExternal,
  internalEndpoints,
  type ProxyEndpoint,
  type RuleSet,
  type ServicePort,
} from './model';
import { iptSepHash, iptSvcHash } from './names';

export const DEFAULT_CHAIN_PREFIX = 'TKUBE';
const MARK = '0x4000';

export interface JumpRule {
  table: 'filter' | 'nat';
  chain: string;
  /** The rule's match and target, as `iptables -t <table> -I <chain>` takes them. */
  args: string[];
}

/** The rules in built-in chains that lead into the proxy's chains (ensured, never rewritten). */
export function iptJumpRules(prefix: string): JumpRule[] {
  const c = (comment: string) => ['-m', 'comment', '--comment', comment];
  const isNew = ['-m', 'conntrack', '--ctstate', 'NEW'];
  return [
    {
      table: 'filter',
      chain: 'INPUT',
      args: [...c('tkube externally-visible service portals'), ...isNew, '-j', `${prefix}-EXTERNAL-SERVICES`],
    },
    {
      table: 'filter',
      chain: 'FORWARD',
      args: [...c('tkube externally-visible service portals'), ...isNew, '-j', `${prefix}-EXTERNAL-SERVICES`],
    },
    {
      table: 'filter',
      chain: 'FORWARD',
      args: [...c('tkube service portals'), ...isNew, '-j', `${prefix}-SERVICES`],
    },
    {
      table: 'filter',
      chain: 'OUTPUT',
      args: [...c('tkube service portals'), ...isNew, '-j', `${prefix}-SERVICES`],
    },
    { table: 'filter', chain: 'FORWARD', args: [...c('tkube forwarding rules'), '-j', `${prefix}-FORWARD`] },
    { table: 'nat', chain: 'PREROUTING', args: [...c('tkube service portals'), '-j', `${prefix}-SERVICES`] },
    { table: 'nat', chain: 'OUTPUT', args: [...c('tkube service portals'), '-j', `${prefix}-SERVICES`] },
    {
      table: 'nat',
      chain: 'POSTROUTING',
      args: [...c('tkube postrouting rules'), '-j', `${prefix}-POSTROUTING`],
    },
  ];
}

/** The proxy's chains already in the kernel (from iptables-save), to delete those no longer rendered. */
export interface ExistingChains {
  filter: string[];
  nat: string[];
}

const q = (s: string) => `"${s}"`;
const l4 = (sp: ServicePort, port: number) => `-p ${sp.protocol} -m ${sp.protocol} --dport ${port}`;

export function iptablesRestoreText(
  rs: RuleSet,
  prefix = DEFAULT_CHAIN_PREFIX,
  existing?: ExistingChains,
): string {
  const P = prefix;
  const filter = new Map<string, string[]>();
  const nat = new Map<string, string[]>();
  const add = (t: Map<string, string[]>, chain: string, rule?: string) => {
    let rules = t.get(chain);
    if (!rules) t.set(chain, (rules = []));
    if (rule !== undefined) rules.push(`-A ${chain} ${rule}`);
  };
  for (const c of ['SERVICES', 'EXTERNAL-SERVICES', 'FORWARD']) add(filter, `${P}-${c}`);
  for (const c of ['SERVICES', 'NODEPORTS', 'POSTROUTING', 'MARK-MASQ']) add(nat, `${P}-${c}`);
  if (rs.scope) {
    // Another node's connection on a shared kernel is its own proxy's (one CIDR and one address
    // can be negated in a rule: the node's pod CIDR and its first IP).
    const dst = rs.scope.destinations[0];
    const guard = `! -s ${rs.scope.sources[0]}${dst ? ` ! -d ${dst}/32` : ''} -m comment --comment ${q('another node of this host')} -j RETURN`;
    add(filter, `${P}-SERVICES`, guard);
    add(filter, `${P}-EXTERNAL-SERVICES`, guard);
    add(nat, `${P}-SERVICES`, guard);
  }
  add(nat, `${P}-MARK-MASQ`, `-j MARK --or-mark ${MARK}`);
  add(nat, `${P}-POSTROUTING`, `-m mark ! --mark ${MARK}/${MARK} -j RETURN`);
  add(nat, `${P}-POSTROUTING`, `-j MARK --xor-mark ${MARK}`);
  add(
    nat,
    `${P}-POSTROUTING`,
    `-m comment --comment ${q('tkube service traffic requiring SNAT')} -j MASQUERADE --random-fully`,
  );
  add(
    filter,
    `${P}-FORWARD`,
    `-m comment --comment ${q('tkube forwarding rules')} -m mark --mark ${MARK}/${MARK} -j ACCEPT`,
  );
  add(filter, `${P}-FORWARD`, `-m conntrack --ctstate RELATED,ESTABLISHED -j ACCEPT`);
  // Only one pod network can be negated in a single match; kube-proxy's ClusterCIDR detector has one too.
  const podCIDR = rs.clusterCIDRs[0];

  for (const sp of rs.servicePorts) {
    const svcHash = iptSvcHash(sp);
    const svc = `${P}-SVC-${svcHash}`;
    const svl = `${P}-SVL-${svcHash}`;
    const ext = `${P}-EXT-${svcHash}`;
    const internal = internalEndpoints(sp);
    const external = externalEndpoints(sp);
    const internalChain = sp.internalLocal ? svl : svc;
    const noEndpoints = hasAnyEndpoints(sp)
      ? (what: string) => `-m comment --comment ${q(`${sp.name} has no local endpoints`)} ${what} -j DROP`
      : (what: string) => `-m comment --comment ${q(`${sp.name} has no endpoints`)} ${what} -j REJECT`;
    const vip = `-d ${sp.clusterIP}/32 ${l4(sp, sp.port)}`;
    if (internal.length)
      add(
        nat,
        `${P}-SERVICES`,
        `-m comment --comment ${q(`${sp.name} cluster IP`)} ${vip} -j ${internalChain}`,
      );
    else add(filter, `${P}-SERVICES`, noEndpoints(vip));
    if (hasExternal(sp)) {
      for (const ip of [...sp.externalIPs, ...sp.loadBalancerIPs]) {
        const dst = `-d ${ip}/32 ${l4(sp, sp.port)}`;
        if (external.length)
          add(nat, `${P}-SERVICES`, `-m comment --comment ${q(`${sp.name} external IP`)} ${dst} -j ${ext}`);
        else add(filter, `${P}-EXTERNAL-SERVICES`, noEndpoints(dst));
      }
      if (sp.nodePort !== undefined) {
        if (external.length)
          add(nat, `${P}-NODEPORTS`, `-m comment --comment ${q(sp.name)} ${l4(sp, sp.nodePort)} -j ${ext}`);
        else
          add(
            filter,
            `${P}-EXTERNAL-SERVICES`,
            noEndpoints(`-m addrtype --dst-type LOCAL ${l4(sp, sp.nodePort)}`),
          );
      }
      if (external.length) {
        add(nat, ext);
        if (!sp.externalLocal) {
          add(
            nat,
            ext,
            `-m comment --comment ${q('masquerade traffic for ' + sp.name + ' external destinations')} -j ${P}-MARK-MASQ`,
          );
          add(nat, ext, `-j ${svc}`);
        } else {
          if (podCIDR && sp.clusterEndpoints.length)
            add(
              nat,
              ext,
              `-s ${podCIDR} -m comment --comment ${q('pod traffic for ' + sp.name + ' external destinations')} -j ${svc}`,
            );
          if (sp.clusterEndpoints.length) {
            add(
              nat,
              ext,
              `-m comment --comment ${q('masquerade LOCAL traffic for ' + sp.name + ' external destinations')} -m addrtype --src-type LOCAL -j ${P}-MARK-MASQ`,
            );
            add(
              nat,
              ext,
              `-m comment --comment ${q('route LOCAL traffic for ' + sp.name + ' external destinations')} -m addrtype --src-type LOCAL -j ${svc}`,
            );
          }
          add(nat, ext, `-j ${svl}`);
        }
      }
    }
    const masq = rs.masqueradeAll
      ? `-m comment --comment ${q(`${sp.name} cluster IP`)} ${vip} -j ${P}-MARK-MASQ`
      : podCIDR &&
        `-m comment --comment ${q(`${sp.name} cluster IP`)} ! -s ${podCIDR} ${vip} -j ${P}-MARK-MASQ`;
    const usesCluster =
      (!sp.internalLocal && internal.length > 0) || (hasExternal(sp) && external.length > 0);
    const usesLocal = (sp.internalLocal || sp.externalLocal) && sp.localEndpoints.length > 0;
    const seps = new Map<string, ProxyEndpoint>();
    const balance = (chain: string, eps: ProxyEndpoint[], withMasq: boolean) => {
      add(nat, chain);
      if (withMasq && masq) add(nat, chain, masq);
      if (sp.affinitySeconds !== undefined)
        for (const ep of eps) {
          const sep = `${P}-SEP-${iptSepHash(sp, ep)}`;
          add(
            nat,
            chain,
            `-m comment --comment ${q(`${sp.name} -> ${ep.ip}:${ep.port}`)} -m recent --name ${sep} --rcheck --seconds ${sp.affinitySeconds} --reap -j ${sep}`,
          );
        }
      eps.forEach((ep, i) => {
        const sep = `${P}-SEP-${iptSepHash(sp, ep)}`;
        const n = eps.length - i;
        const pick = n > 1 ? `-m statistic --mode random --probability ${(1 / n).toFixed(10)} ` : '';
        add(nat, chain, `-m comment --comment ${q(`${sp.name} -> ${ep.ip}:${ep.port}`)} ${pick}-j ${sep}`);
        seps.set(sep, ep);
      });
    };
    if (usesCluster) balance(svc, sp.clusterEndpoints, internalChain === svc);
    if (usesLocal) balance(svl, sp.localEndpoints, internalChain === svl);
    for (const [sep, ep] of seps) {
      add(nat, sep);
      add(nat, sep, `-m comment --comment ${q(sp.name)} -s ${ep.ip}/32 -j ${P}-MARK-MASQ`);
      const affinity = sp.affinitySeconds !== undefined ? `-m recent --name ${sep} --set ` : '';
      add(
        nat,
        sep,
        `-m comment --comment ${q(sp.name)} ${affinity}-p ${sp.protocol} -m ${sp.protocol} -j DNAT --to-destination ${ep.ip}:${ep.port}`,
      );
    }
  }
  // NodePorts last: they match any local (or the allowed) destination.
  if (rs.nodePortIPs === 'local')
    add(
      nat,
      `${P}-SERVICES`,
      `-m comment --comment ${q('tkube service nodeports; NOTE: this must be the last rule in this chain')} -m addrtype --dst-type LOCAL ! -d 127.0.0.0/8 -j ${P}-NODEPORTS`,
    );
  else
    for (const ip of rs.nodePortIPs)
      add(
        nat,
        `${P}-SERVICES`,
        `-m comment --comment ${q('tkube service nodeports')} -d ${ip}/32 -j ${P}-NODEPORTS`,
      );
  // What is still addressed to the Service CIDR after DNAT is no allocated ClusterIP:port.
  for (const cidr of rs.serviceCIDRs)
    add(
      filter,
      `${P}-SERVICES`,
      `-m comment --comment ${q('reject traffic to unallocated ClusterIPs')} -d ${cidr} -j REJECT`,
    );

  return [table('filter', filter, existing?.filter), table('nat', nat, existing?.nat)].join('');
}

function table(name: string, chains: Map<string, string[]>, existing: string[] = []): string {
  const stale = existing.filter((c) => !chains.has(c)).sort();
  const out = [`*${name}`];
  for (const c of chains.keys()) out.push(`:${c} - [0:0]`);
  // A stale chain is flushed (":X") and then deleted, after every chain that jumped to it was rewritten.
  for (const c of stale) out.push(`:${c} - [0:0]`);
  for (const rules of chains.values()) out.push(...rules);
  for (const c of stale) out.push(`-X ${c}`);
  out.push('COMMIT');
  return out.join('\n') + '\n';
}
