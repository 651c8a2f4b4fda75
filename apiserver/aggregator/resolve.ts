// Where a service's port is reached, as k8s.io/apiserver's util/proxy resolves
// it: ResolveCluster (its ClusterIP, or an ExternalName's name) or
// ResolveEndpoint (one ready endpoint from its EndpointSlices, on the slice
// port named as the service port). Pure functions over a ServiceLookup;
// service-resolver.ts decides which one the apiserver uses.
import { serviceUnavailable, StatusError } from '../../shared/api/status';
import { hostPort } from '../registry/strategies/pod-service-proxy';

export interface ServiceRef {
  namespace: string;
  name: string;
  port: number;
}

export interface ServiceLookup {
  service(namespace: string, name: string): any | undefined;
  endpointSlices(namespace: string, name: string): any[];
}

/** The service types that have a cluster IP (and endpoints). */
const ROUTABLE = new Set(['ClusterIP', 'LoadBalancer', 'NodePort']);

const typeOf = (svc: any): string => svc.spec?.type ?? 'ClusterIP';

function servicePort(svc: any, port: number): any {
  const p = (svc.spec?.ports ?? []).find((x: any) => x.port === port);
  if (!p) throw serviceUnavailable(`no service port ${port} found for service "${svc.metadata.name}"`);
  return p;
}

function getService(lookup: ServiceLookup, ref: ServiceRef): any {
  const svc = lookup.service(ref.namespace, ref.name);
  if (!svc) throw new StatusError(404, 'NotFound', `service "${ref.name}" not found`);
  return svc;
}

/** ResolveCluster: https://<clusterIP>:<service port>, or https://<externalName>:<port>. */
export function resolveCluster(lookup: ServiceLookup, ref: ServiceRef): string {
  const svc = getService(lookup, ref);
  const type = typeOf(svc);
  if (type === 'ClusterIP' && svc.spec?.clusterIP === 'None')
    throw new Error('cannot route to service with ClusterIP "None"');
  if (ROUTABLE.has(type)) return `https://${hostPort(svc.spec.clusterIP, servicePort(svc, ref.port).port)}`;
  if (type === 'ExternalName') return `https://${hostPort(svc.spec.externalName, ref.port)}`;
  throw new Error(`unsupported service type "${type}"`);
}

/**
 * Every ready endpoint of the service on the slice port named as the service port
 * (ready unset counts as ready; an endpoint's first address), as https URLs: those
 * of slices of the service's primary IP family when there are any, else the others.
 */
export function resolveEndpoints(lookup: ServiceLookup, ref: ServiceRef): string[] {
  const svc = getService(lookup, ref);
  const type = typeOf(svc);
  if (!ROUTABLE.has(type)) throw new Error(`unsupported service type "${type}"`);
  const port = servicePort(svc, ref.port);
  const slices = lookup.endpointSlices(ref.namespace, ref.name);
  if (!slices.length) throw serviceUnavailable(`no endpoints available for service "${svc.metadata.name}"`);
  const primary = svc.spec?.ipFamilies?.[0];
  const preferred: string[] = [];
  const others: string[] = [];
  for (const slice of slices) {
    const out = !primary || slice.addressType === primary ? preferred : others;
    for (const p of slice.ports ?? []) {
      if (p.name == null || p.name !== (port.name ?? '') || p.port == null) continue;
      for (const ep of slice.endpoints ?? []) {
        const address = ep.addresses?.[0];
        if (address && (ep.conditions?.ready ?? true)) out.push(`https://${hostPort(address, p.port)}`);
      }
    }
  }
  const found = preferred.length ? preferred : others;
  if (!found.length) throw serviceUnavailable(`no endpoints available for service "${ref.name}"`);
  return found;
}

/** ResolveEndpoint: one ready endpoint, at random, of the primary IP family when it has one. */
export function resolveEndpoint(lookup: ServiceLookup, ref: ServiceRef): string {
  const all = resolveEndpoints(lookup, ref);
  return all[Math.floor(Math.random() * all.length)];
}
