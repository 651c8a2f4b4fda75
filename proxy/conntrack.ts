// Stale UDP conntrack entries: UDP NAT is decided once per flow, so a client
// keeps sending to an endpoint that is gone until its entry is deleted. After a
// sync, entries whose reply comes from an endpoint that stopped serving are
// deleted with conntrack-tools (kube-proxy's filters, service-proxy.md §8).
import type { Logger } from '../shared/log';
import type { Runner } from './exec';
import type { RuleSet } from './model';

export interface ConntrackFilter {
  origDst?: string;
  origPortDst: number;
  replySrc: string;
  replyPortSrc: number;
}

/** The flows to delete going from `prev` to `next`: UDP endpoints no longer serving their service port. */
export function staleUdpFlows(prev: RuleSet | undefined, next: RuleSet): ConntrackFilter[] {
  if (!prev) return [];
  const serving = new Map<string, Set<string>>();
  for (const sp of next.servicePorts)
    if (sp.protocol === 'udp')
      serving.set(sp.name, new Set(sp.servingEndpoints.map((e) => `${e.ip}:${e.port}`)));
  const out: ConntrackFilter[] = [];
  for (const sp of prev.servicePorts) {
    if (sp.protocol !== 'udp') continue;
    const still = serving.get(sp.name) ?? new Set<string>();
    for (const ep of sp.servingEndpoints) {
      if (still.has(`${ep.ip}:${ep.port}`)) continue;
      const reply = { replySrc: ep.ip, replyPortSrc: ep.port };
      for (const ip of [sp.clusterIP, ...sp.externalIPs, ...sp.loadBalancerIPs])
        out.push({ origDst: ip, origPortDst: sp.port, ...reply });
      if (sp.nodePort !== undefined) out.push({ origPortDst: sp.nodePort, ...reply });
    }
  }
  return out;
}

export function conntrackArgs(f: ConntrackFilter): string[] {
  return [
    '-D',
    '-p',
    'udp',
    ...(f.origDst ? ['--orig-dst', f.origDst] : []),
    '--orig-port-dst',
    String(f.origPortDst),
    '--reply-src',
    f.replySrc,
    '--reply-port-src',
    String(f.replyPortSrc),
  ];
}

/** Deletes the flows; "0 flow entries" (exit 1) is success, a missing conntrack tool a warning. */
export async function deleteFlows(run: Runner, flows: ConntrackFilter[], log: Logger): Promise<void> {
  for (const f of flows) {
    try {
      const r = await run('conntrack', conntrackArgs(f));
      if (r.code !== 0 && !/0 flow entries/.test(r.stderr))
        log.warn('deleting stale UDP conntrack entries failed', {
          args: conntrackArgs(f).join(' '),
          err: r.stderr.trim(),
        });
    } catch (err) {
      log.warn('conntrack not available: stale UDP flows are left to time out', { err: String(err) });
      return;
    }
  }
}
