// The in-memory record index of the cluster DNS: Services, EndpointSlices,
// Namespaces (and pods, for `pods verified`) reduced to what a DNS answer
// needs, updated per informer event. Memory grows with the objects, never
// with queries. Names are stored lower-case: object names are DNS labels.
import { isIP } from 'node:net';
import type { KubeObject } from '../shared/client';

export interface PortRecord {
  /** "" for an unnamed port (no SRV record). */
  name: string;
  /** Lower-case: tcp, udp, sctp. */
  protocol: string;
  port: number;
}

export type ServiceKind = 'ClusterIP' | 'Headless' | 'ExternalName';

export interface ServiceRecord {
  namespace: string;
  name: string;
  kind: ServiceKind;
  clusterIPs: string[];
  ports: PortRecord[];
  /** ExternalName's target, without the trailing dot. */
  externalName: string;
  publishNotReadyAddresses: boolean;
}

export interface EndpointAddress {
  ip: string;
  /** The endpoint's label under the service: its hostname, else the dashed IP. */
  label: string;
  ports: PortRecord[];
}

interface SliceRecord {
  service: string;
  ports: PortRecord[];
  endpoints: { addresses: string[]; hostname: string; ready: boolean }[];
}

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

const key = (ns: string, name: string) => `${ns}/${name}`;

/** CoreDNS's label of an endpoint without hostname: the IP with "." or ":" as "-". */
export function dashedIP(ip: string): string {
  if (!ip.includes(':')) return ip.replace(/\./g, '-');
  const d = ip.replace(/:/g, '-');
  return d.endsWith('-') ? `${d}0` : d;
}

/** The canonical text of an IP (IPv6 compressed, lower-case), undefined when not an IP. */
export function canonicalIP(ip: string): string | undefined {
  const family = isIP(ip);
  if (family === 4) return ip;
  if (family !== 6) return undefined;
  return new URL(`http://[${ip}]`).hostname.slice(1, -1);
}

function portsOf(list: unknown): PortRecord[] {
  if (!Array.isArray(list)) return [];
  return list.map((p: any) => ({
    name: String(p?.name ?? '').toLowerCase(),
    protocol: String(p?.protocol ?? 'TCP').toLowerCase(),
    port: Number(p?.port ?? -1),
  }));
}

function serviceRecord(svc: KubeObject): ServiceRecord {
  const spec: any = svc.spec ?? {};
  const ips: string[] = (spec.clusterIPs?.length ? spec.clusterIPs : spec.clusterIP ? [spec.clusterIP] : [])
    .map((ip: string) => canonicalIP(ip))
    .filter((ip: string | undefined): ip is string => !!ip);
  const kind: ServiceKind =
    spec.type === 'ExternalName' ? 'ExternalName' : spec.clusterIP === 'None' ? 'Headless' : 'ClusterIP';
  return {
    namespace: svc.metadata.namespace ?? '',
    name: svc.metadata.name ?? '',
    kind,
    clusterIPs: kind === 'ClusterIP' ? ips : [],
    ports: portsOf(spec.ports),
    externalName: String(spec.externalName ?? '').replace(/\.$/, ''),
    publishNotReadyAddresses: spec.publishNotReadyAddresses === true,
  };
}

function sliceRecord(slice: any): SliceRecord | undefined {
  const service = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
  if (!service) return undefined;
  const endpoints = (Array.isArray(slice.endpoints) ? slice.endpoints : []).map((e: any) => ({
    addresses: (Array.isArray(e?.addresses) ? e.addresses : [])
      .map((a: string) => canonicalIP(String(a)))
      .filter((a: string | undefined): a is string => !!a),
    hostname: String(e?.hostname ?? '').toLowerCase(),
    // CoreDNS: an endpoint whose ready condition is unset counts as ready.
    ready: e?.conditions?.ready !== false,
  }));
  return { service: key(slice.metadata.namespace ?? '', service), ports: portsOf(slice.ports), endpoints };
}

export class RecordIndex {
  private readonly services = new Map<string, ServiceRecord>();
  private readonly slices = new Map<string, SliceRecord>();
  private readonly slicesByService = new Map<string, Set<string>>();
  private readonly namespaces = new Set<string>();
  /** ip -> owner -> name relative to the zone ("svc.ns.svc" or "host.svc.ns.svc"). */
  private readonly reverse = new Map<string, Map<string, string>>();
  /** "ns/ip" -> number of pods with that IP (pods verified). */
  private readonly podIPs = new Map<string, number>();
  /** The SOA serial: unix time of the last change (CoreDNS's Serial). */
  serial = Math.floor(Date.now() / 1000);

  private touch(): void {
    this.serial = Math.floor(Date.now() / 1000);
  }

  private setReverse(ip: string, owner: string, name: string | undefined): void {
    let owners = this.reverse.get(ip);
    if (name === undefined) {
      if (!owners) return;
      owners.delete(owner);
      if (owners.size === 0) this.reverse.delete(ip);
      return;
    }
    if (!owners) this.reverse.set(ip, (owners = new Map()));
    owners.set(owner, name);
  }

  upsertService(obj: KubeObject): void {
    this.deleteService(obj);
    const rec = serviceRecord(obj);
    const k = key(rec.namespace, rec.name);
    this.services.set(k, rec);
    for (const ip of rec.clusterIPs) this.setReverse(ip, `s|${k}`, `${rec.name}.${rec.namespace}.svc`);
    this.touch();
  }

  deleteService(obj: KubeObject): void {
    const k = key(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    const old = this.services.get(k);
    if (!old) return;
    for (const ip of old.clusterIPs) this.setReverse(ip, `s|${k}`, undefined);
    this.services.delete(k);
    this.touch();
  }

  upsertSlice(obj: KubeObject): void {
    this.deleteSlice(obj);
    const rec = sliceRecord(obj);
    if (!rec) return;
    const k = key(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    this.slices.set(k, rec);
    let set = this.slicesByService.get(rec.service);
    if (!set) this.slicesByService.set(rec.service, (set = new Set()));
    set.add(k);
    const [ns, svc] = rec.service.split('/');
    rec.endpoints.forEach((e, i) => {
      for (const ip of e.addresses)
        this.setReverse(ip, `e|${k}|${i}`, `${e.hostname || dashedIP(ip)}.${svc}.${ns}.svc`);
    });
    this.touch();
  }

  deleteSlice(obj: KubeObject): void {
    const k = key(obj.metadata.namespace ?? '', obj.metadata.name ?? '');
    const old = this.slices.get(k);
    if (!old) return;
    old.endpoints.forEach((e, i) => {
      for (const ip of e.addresses) this.setReverse(ip, `e|${k}|${i}`, undefined);
    });
    const set = this.slicesByService.get(old.service);
    set?.delete(k);
    if (set?.size === 0) this.slicesByService.delete(old.service);
    this.slices.delete(k);
    this.touch();
  }

  addNamespace(obj: KubeObject): void {
    this.namespaces.add(obj.metadata.name ?? '');
    this.touch();
  }

  deleteNamespace(obj: KubeObject): void {
    this.namespaces.delete(obj.metadata.name ?? '');
    this.touch();
  }

  private podIPKeys(obj: KubeObject): string[] {
    const status: any = obj.status ?? {};
    const ips: string[] = (status.podIPs ?? []).map((p: any) => p?.ip).filter(Boolean);
    if (!ips.length && status.podIP) ips.push(status.podIP);
    return ips.map((ip) => key(obj.metadata.namespace ?? '', canonicalIP(ip) ?? ip));
  }

  /** Pods are tracked by (namespace, IP) only; the caller passes the old object on update. */
  changePod(old: KubeObject | undefined, obj: KubeObject | undefined): void {
    for (const k of old ? this.podIPKeys(old) : []) {
      const n = (this.podIPs.get(k) ?? 0) - 1;
      if (n > 0) this.podIPs.set(k, n);
      else this.podIPs.delete(k);
    }
    for (const k of obj ? this.podIPKeys(obj) : []) this.podIPs.set(k, (this.podIPs.get(k) ?? 0) + 1);
  }

  hasNamespace(ns: string): boolean {
    return this.namespaces.has(ns);
  }

  hasPod(ns: string, ip: string): boolean {
    return this.podIPs.has(key(ns, ip));
  }

  service(ns: string, name: string): ServiceRecord | undefined {
    return this.services.get(key(ns, name));
  }

  /** The addresses DNS publishes for a service: ready ones, all with publishNotReadyAddresses. */
  endpoints(svc: ServiceRecord): EndpointAddress[] {
    const out: EndpointAddress[] = [];
    const slices = this.slicesByService.get(key(svc.namespace, svc.name));
    if (!slices) return out;
    for (const sk of slices) {
      const slice = this.slices.get(sk)!;
      for (const e of slice.endpoints) {
        if (!e.ready && !svc.publishNotReadyAddresses) continue;
        for (const ip of e.addresses) out.push({ ip, label: e.hostname || dashedIP(ip), ports: slice.ports });
      }
    }
    return out;
  }

  /** PTR targets of an IP relative to the zone: the first Service with it, else every endpoint name. */
  reverseNames(ip: string): string[] {
    const owners = this.reverse.get(ip);
    if (!owners) return [];
    const names: string[] = [];
    for (const [owner, name] of owners) {
      if (owner.startsWith('s|')) return [name];
      if (!names.includes(name)) names.push(name);
    }
    return names;
  }

  get serviceCount(): number {
    return this.services.size;
  }
}
