// The answers of the CoreDNS kubernetes plugin, computed from the record index:
// the name grammar of the Kubernetes DNS specification 1.1.0 under the cluster
// zone, PTR in the reverse zones, and CoreDNS's choice between NXDOMAIN and
// NODATA (with the zone's SOA in the authority section of both).
import type { Answer, Question } from 'dns-packet';
import { canonicalIP, type PortRecord, type RecordIndex, type ServiceRecord } from './records';

export const RCODE = { NOERROR: 0, FORMERR: 1, SERVFAIL: 2, NXDOMAIN: 3, NOTIMP: 4, REFUSED: 5 } as const;

/** What the DNS specification's `dns-version` TXT record says. */
export const SCHEMA_VERSION = '1.1.0';
/** CoreDNS hard-codes the TTL of the dns-version record. */
const DNS_VERSION_TTL = 28800;

/**
 * How pod records `a-b-c-d.<ns>.pod.<zone>` are served (CoreDNS `pods`):
 * disabled: never; insecure: any parseable IP in an existing namespace;
 * verified: only the IP of a pod in that namespace.
 */
export type PodsMode = 'disabled' | 'insecure' | 'verified';

export interface ResolverOptions {
  /** Cluster domain without trailing dot, lower-case. */
  zone: string;
  /** TTL of every record (CoreDNS `ttl`, default 5). */
  ttl: number;
  pods: PodsMode;
  /** The informers have synced (before that a name error is SERVFAIL, as in CoreDNS). */
  synced(): boolean;
}

export interface Answered {
  rcode: number;
  answers: Answer[];
  authorities: Answer[];
  additionals: Answer[];
}

/** The question is not for this server's zones: forward it. */
export const FORWARD = Symbol('forward');

interface Request {
  podOrSvc: 'svc' | 'pod' | '';
  namespace: string;
  service: string;
  endpoint: string;
  port: string;
  protocol: string;
}

/** One thing a name stands for: an address (with the port SRV uses) or an ExternalName's target. */
interface Item {
  host: string;
  cname: boolean;
  port: number;
  /** Owner name of the thing, relative to the zone ("svc.ns.svc", "ep.svc.ns.svc", "a-b-c-d.ns.pod"). */
  target: string;
}

const NO_PORT: PortRecord = { name: '', protocol: '', port: -1 };
const stripUnderscore = (s: string) => (s.startsWith('_') ? s.slice(1) : s);

function family(ip: string): 4 | 6 {
  return ip.includes(':') ? 6 : 4;
}

/** The IP a reverse name stands for, or undefined (not a complete address). */
export function reverseToIP(name: string): string | undefined {
  if (name.endsWith('.in-addr.arpa')) {
    const parts = name.slice(0, -'.in-addr.arpa'.length).split('.');
    if (parts.length !== 4 || !parts.every((p) => /^\d{1,3}$/.test(p))) return undefined;
    return canonicalIP(parts.reverse().join('.'));
  }
  if (name.endsWith('.ip6.arpa')) {
    const nibbles = name.slice(0, -'.ip6.arpa'.length).split('.');
    if (nibbles.length !== 32 || !nibbles.every((n) => /^[0-9a-f]$/.test(n))) return undefined;
    const hex = nibbles.reverse().join('');
    return canonicalIP(hex.match(/.{4}/g)!.join(':'));
  }
  return undefined;
}

/** The IP of a pod record's label: "1-2-3-4", or IPv6 with "-" for ":". */
function podLabelToIP(label: string): string | undefined {
  const dashes = label.split('-').length - 1;
  if (dashes === 3 && !label.includes('--')) return canonicalIP(label.replace(/-/g, '.'));
  return canonicalIP(label.replace(/-/g, ':'));
}

function parseRequest(base: string): Request | 'invalid' | 'apex' {
  if (base === '' || base === 'svc' || base === 'pod') return 'apex';
  const segs = base.split('.');
  let last = segs.length - 1;
  const podOrSvc = segs[last];
  if (podOrSvc !== 'svc' && podOrSvc !== 'pod') return 'invalid';
  const r: Request = { podOrSvc, namespace: '', service: '', endpoint: '', port: '', protocol: '' };
  if (--last < 0) return r;
  r.namespace = segs[last];
  if (--last < 0) return r;
  r.service = segs[last];
  if (--last < 0) return r;
  if (last === 0) r.endpoint = segs[0];
  else if (last === 1) {
    r.protocol = stripUnderscore(segs[1]);
    r.port = stripUnderscore(segs[0]);
  } else return 'invalid';
  return r;
}

const matches = (want: string, have: string) => want === '' || want === have;

export class Resolver {
  constructor(
    private readonly index: RecordIndex,
    private readonly opts: ResolverOptions,
  ) {}

  /** Answers one question, or FORWARD when no zone of this server holds the name. */
  resolve(q: Question): Answered | typeof FORWARD {
    const name = q.name.toLowerCase().replace(/\.$/, '');
    const { zone } = this.opts;
    if (name.endsWith('.in-addr.arpa') || name.endsWith('.ip6.arpa')) return this.reverse(q, name);
    if (name !== zone && !name.endsWith(`.${zone}`)) return FORWARD;
    // The SOA's owner keeps the case of the question, as CoreDNS does.
    const zoneAsAsked = q.name.replace(/\.$/, '').slice(q.name.replace(/\.$/, '').length - zone.length);
    const base = name === zone ? '' : name.slice(0, -(zone.length + 1));
    return this.inZone(q, base, zoneAsAsked);
  }

  private rr(type: string, name: string, data: unknown, ttl = this.opts.ttl): Answer {
    return { type, class: 'IN', name, ttl, data } as Answer;
  }

  soa(zoneName: string): Answer {
    const z = this.opts.zone;
    return this.rr(
      'SOA',
      zoneName,
      {
        mname: `ns.dns.${z}`,
        rname: `hostmaster.${z}`,
        serial: this.index.serial,
        refresh: 7200,
        retry: 1800,
        expire: 86400,
        minimum: this.opts.ttl,
      },
      Math.min(this.opts.ttl, 300),
    );
  }

  private negative(rcode: number, zoneName: string): Answered {
    // CoreDNS: before the informers synced, a name error is a server failure.
    if (rcode === RCODE.NXDOMAIN && !this.opts.synced()) rcode = RCODE.SERVFAIL;
    return { rcode, answers: [], authorities: [this.soa(zoneName)], additionals: [] };
  }

  private ok(answers: Answer[], additionals: Answer[] = []): Answered {
    return { rcode: RCODE.NOERROR, answers, authorities: [], additionals };
  }

  private reverse(q: Question, name: string): Answered | typeof FORWARD {
    // The reverse zones fall through to the forwarder for anything not in the cluster.
    if (q.type !== 'PTR') return FORWARD;
    const ip = reverseToIP(name);
    const targets = ip ? this.index.reverseNames(ip) : [];
    if (!targets.length) return FORWARD;
    return this.ok(targets.map((t) => this.rr('PTR', q.name, `${t}.${this.opts.zone}`)));
  }

  private inZone(q: Question, base: string, zoneName: string): Answered {
    const z = this.opts.zone;
    // CoreDNS answers SOA only at the apex, and NODATA for it at any other name.
    if (q.type === 'SOA')
      return base === '' ? this.ok([this.soa(zoneName)]) : this.negative(RCODE.NOERROR, zoneName);
    if (base === 'dns-version') {
      if (q.type === 'TXT') return this.ok([this.rr('TXT', q.name, [SCHEMA_VERSION], DNS_VERSION_TTL)]);
      return this.negative(RCODE.NXDOMAIN, zoneName);
    }
    if (q.type === 'AXFR' || q.type === 'IXFR')
      return { rcode: RCODE.REFUSED, answers: [], authorities: [], additionals: [] };
    if (base === '' && q.type === 'NS')
      return this.ok([this.rr('NS', q.name, `ns.dns.${z}`)], this.nsAddresses());
    if (base === 'ns.dns' && (q.type === 'A' || q.type === 'AAAA')) {
      const addrs = this.nsAddresses().filter((a) => a.type === q.type);
      return addrs.length ? this.ok(addrs) : this.negative(RCODE.NOERROR, zoneName);
    }
    const req = parseRequest(base);
    if (req === 'apex') return this.negative(RCODE.NOERROR, zoneName);
    if (req === 'invalid') return this.negative(RCODE.NXDOMAIN, zoneName);
    const found = this.find(req);
    if (!found) return this.negative(RCODE.NXDOMAIN, zoneName);
    let answers: Answer[] = [];
    let additionals: Answer[] = [];
    switch (q.type) {
      case 'A':
      case 'AAAA':
        answers = this.addresses(q.name, q.type, found, 0);
        break;
      case 'CNAME':
        if (found[0]?.cname) answers = [this.rr('CNAME', q.name, found[0].host)];
        break;
      case 'SRV':
        ({ answers, additionals } = this.srv(q.name, found));
        break;
    }
    return answers.length ? this.ok(answers, additionals) : this.negative(RCODE.NOERROR, zoneName);
  }

  /** The A/AAAA records of the name server, ns.dns.<zone>: the kube-dns Service's ClusterIPs. */
  private nsAddresses(): Answer[] {
    const svc = this.index.service('kube-system', 'kube-dns');
    const name = `ns.dns.${this.opts.zone}`;
    return (svc?.clusterIPs ?? []).map((ip) => this.rr(family(ip) === 4 ? 'A' : 'AAAA', name, ip));
  }

  private addresses(owner: string, type: 'A' | 'AAAA', items: Item[], depth: number): Answer[] {
    const out: Answer[] = [];
    const seen = new Set<string>();
    for (const it of items) {
      if (it.cname) {
        out.push(this.rr('CNAME', owner, it.host));
        // A target inside the zone is answered here; one outside is left to the client's resolver.
        const target = it.host.toLowerCase();
        const z = this.opts.zone;
        if (depth < 8 && target.endsWith(`.${z}`)) {
          const req = parseRequest(target.slice(0, -(z.length + 1)));
          const next = typeof req === 'object' ? this.find(req) : undefined;
          if (next) out.push(...this.addresses(it.host, type, next, depth + 1));
        }
        continue;
      }
      if ((type === 'A') !== (family(it.host) === 4) || seen.has(it.host)) continue;
      seen.add(it.host);
      out.push(this.rr(type, owner, it.host));
    }
    return out;
  }

  private srv(owner: string, items: Item[]): { answers: Answer[]; additionals: Answer[] } {
    const z = this.opts.zone;
    // CoreDNS divides the weight among every match, those without a port included.
    const weight = Math.max(1, Math.floor(100 / items.length));
    const answers: Answer[] = [];
    const additionals: Answer[] = [];
    const seenSrv = new Set<string>();
    const seenAddr = new Set<string>();
    for (const it of items) {
      if (it.port === -1 || it.cname) continue;
      const target = `${it.target}.${z}`;
      if (!seenSrv.has(`${target}|${it.port}`)) {
        seenSrv.add(`${target}|${it.port}`);
        answers.push(this.rr('SRV', owner, { priority: 0, weight, port: it.port, target }));
      }
      if (!seenAddr.has(`${target}|${it.host}`)) {
        seenAddr.add(`${target}|${it.host}`);
        additionals.push(this.rr(family(it.host) === 4 ? 'A' : 'AAAA', target, it.host));
      }
    }
    return { answers, additionals };
  }

  /** What the name stands for; undefined is a name error (NXDOMAIN), [] is NODATA. */
  private find(r: Request): Item[] | undefined {
    if (!r.namespace) return [];
    if (!this.index.hasNamespace(r.namespace)) return undefined;
    if (r.podOrSvc === 'pod') return this.findPod(r);
    if (!r.service) return [];
    const svc = this.index.service(r.namespace, r.service);
    if (!svc) return undefined;
    return this.findService(svc, r);
  }

  private findPod(r: Request): Item[] | undefined {
    if (this.opts.pods === 'disabled') return undefined;
    // The namespace alone exists (NODATA); labels left of the pod's are ignored, as CoreDNS does.
    if (!r.service) return [];
    const ip = podLabelToIP(r.service);
    if (!ip) return undefined;
    if (this.opts.pods === 'verified' && !this.index.hasPod(r.namespace, ip)) return undefined;
    return [{ host: ip, cname: false, port: -1, target: `${r.service}.${r.namespace}.pod` }];
  }

  private findService(svc: ServiceRecord, r: Request): Item[] | undefined {
    const base = `${svc.name}.${svc.namespace}.svc`;
    const portMatches = (p: PortRecord) => matches(r.port, p.name) && matches(r.protocol, p.protocol);
    if (svc.kind === 'ExternalName') {
      // Only a hostname becomes a CNAME; no endpoint or port names under an ExternalName.
      if (r.endpoint || r.port || r.protocol || !svc.externalName || canonicalIP(svc.externalName))
        return undefined;
      return [{ host: svc.externalName, cname: true, port: -1, target: base }];
    }
    const items: Item[] = [];
    if (svc.kind === 'Headless' || r.endpoint) {
      for (const ep of this.index.endpoints(svc)) {
        if (r.endpoint && r.endpoint !== ep.label) continue;
        for (const p of ep.ports.length ? ep.ports : [NO_PORT]) {
          if (portMatches(p))
            items.push({ host: ep.ip, cname: false, port: p.port, target: `${ep.label}.${base}` });
        }
      }
    } else {
      for (const p of svc.ports.length ? svc.ports : [NO_PORT]) {
        if (!portMatches(p)) continue;
        for (const ip of svc.clusterIPs) items.push({ host: ip, cname: false, port: p.port, target: base });
      }
    }
    return items.length ? items : undefined;
  }
}
