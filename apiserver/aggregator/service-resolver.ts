// The apiserver's one service resolver (kube-apiserver's buildServiceResolver):
// where admission webhooks, CRD conversion webhooks and APIServices given as a
// Service are reached from this host. With --enable-aggregator-routing (tkube's
// default) a ready endpoint of the service; otherwise its ClusterIP, which only
// a service proxy on this host makes reachable: without one the host routes the
// Service CIDR off the machine. An ExternalName names its own host either way.
// Services and EndpointSlices come from a list+watch of their stores.
import type { Registry } from '../registry/registry';
import { StoreInformer } from './store-informer';
import { resolveCluster, resolveEndpoint, type ServiceLookup, type ServiceRef } from './resolve';

export interface ServiceResolverOptions {
  registry: () => Registry;
  /** --enable-aggregator-routing: a ready endpoint rather than the ClusterIP. */
  endpointRouting: boolean;
}

/** Where a webhook client connects for a service reference, and the name TLS verifies. */
export interface DialTarget {
  host: string;
  port: number;
  servername: string;
}

/** What a webhook client needs of the resolver. */
export type WebhookServiceResolver = Pick<ServiceResolver, 'dialTarget'>;

const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
const keyOf = (namespace: string | undefined, name: string | undefined) => `${namespace ?? ''}/${name ?? ''}`;

/** The DNS name a service is called by (and its serving certificate names): <name>.<namespace>.svc. */
export const serviceHostname = (ref: { namespace: string; name: string }) =>
  `${ref.name}.${ref.namespace}.svc`;

/** A called URL as Go prints it: a service's port stays in it even when it is 443 (WHATWG drops it). */
export function calledURL(url: URL, service?: ServiceRef): string {
  if (!service || url.port) return url.href;
  return url.href.replace(`//${url.host}`, `//${url.hostname}:${service.port}`);
}

export class ServiceResolver implements ServiceLookup {
  private readonly services: StoreInformer;
  private readonly slices: StoreInformer;
  /** Slice keys by the "namespace/name" of their service. */
  private readonly slicesOf = new Map<string, Set<string>>();
  /** The service each slice key was indexed under. */
  private readonly serviceOfSlice = new Map<string, string>();
  private readonly listeners: ((namespace: string, name: string) => void)[] = [];
  private started: Promise<void> | undefined;

  constructor(private readonly o: ServiceResolverOptions) {
    const store = (group: string, resource: string) => () => o.registry().preferred(group, resource)?.store;
    this.services = new StoreInformer('services', store('', 'services'), (_t, svc) =>
      this.changed(svc.metadata?.namespace, svc.metadata?.name),
    );
    this.slices = new StoreInformer('endpointslices', store('discovery.k8s.io', 'endpointslices'), (t, s) =>
      this.indexSlice(t === 'DELETED', s),
    );
  }

  /** Starts the list+watch once; resolves when both stores were listed. */
  start(): Promise<void> {
    this.started ??= Promise.all([this.services.start(), this.slices.start()]).then(() => {});
    return this.started;
  }

  stop(): void {
    this.services.stop();
    this.slices.stop();
  }

  /** Called with a service's namespace and name when it or one of its EndpointSlices changed. */
  onChange(listener: (namespace: string, name: string) => void): void {
    this.listeners.push(listener);
  }

  // ---- ServiceLookup ----------------------------------------------------------------

  service(namespace: string, name: string): any | undefined {
    return this.services.get(namespace, name);
  }

  endpointSlices(namespace: string, name: string): any[] {
    const out: any[] = [];
    for (const k of this.slicesOf.get(keyOf(namespace, name)) ?? []) {
      const s = this.slices.items.get(k);
      if (s) out.push(s);
    }
    return out;
  }

  // ---- resolution ---------------------------------------------------------------------

  /** https://<host>:<port> where the service's port is reached (a 503/404 StatusError when nowhere). */
  resolve(ref: ServiceRef): string {
    const svc = this.service(ref.namespace, ref.name);
    if (this.o.endpointRouting && (svc?.spec?.type ?? 'ClusterIP') !== 'ExternalName')
      return resolveEndpoint(this, ref);
    return resolveCluster(this, ref);
  }

  /** For a webhook client: where to connect for the service reference, TLS verifying <name>.<namespace>.svc. */
  async dialTarget(ref: ServiceRef): Promise<DialTarget> {
    await this.start();
    const url = new URL(this.resolve(ref));
    return {
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: Number(url.port || 443),
      servername: serviceHostname(ref),
    };
  }

  private indexSlice(deleted: boolean, slice: any): void {
    const key = keyOf(slice.metadata?.namespace, slice.metadata?.name);
    const before = this.serviceOfSlice.get(key);
    const name = slice.metadata?.labels?.[SERVICE_NAME_LABEL];
    const after = deleted || !name ? undefined : keyOf(slice.metadata?.namespace, name);
    if (before !== after && before !== undefined) {
      const set = this.slicesOf.get(before);
      set?.delete(key);
      if (!set?.size) this.slicesOf.delete(before);
      this.serviceOfSlice.delete(key);
    }
    if (after !== undefined) {
      let set = this.slicesOf.get(after);
      if (!set) this.slicesOf.set(after, (set = new Set()));
      set.add(key);
      this.serviceOfSlice.set(key, after);
    }
    for (const k of new Set([before, after]))
      if (k !== undefined) this.changed(slice.metadata?.namespace, k.slice(k.indexOf('/') + 1));
  }

  private changed(namespace: string | undefined, name: string | undefined): void {
    if (!name) return;
    for (const l of this.listeners) l(namespace ?? '', name);
  }
}
