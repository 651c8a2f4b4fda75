// Where an APIService's service is reached, as kube-apiserver resolves it:
// its ClusterIP (or an ExternalName's name) and the APIService's port, or with
// --enable-aggregator-routing one ready endpoint of it (EndpointSlices of the
// service, the port of the same name as the service port).
import { StatusError } from '../../shared/api/status';
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

const unavailable = (msg: string) => new StatusError(503, 'ServiceUnavailable', msg);

function servicePort(svc: any, port: number): any {
  const p = (svc.spec?.ports ?? []).find((x: any) => x.port === port);
  if (!p) throw unavailable(`no service port ${port} found for service "${svc.metadata.name}"`);
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
  const type = svc.spec?.type ?? 'ClusterIP';
  if (type === 'ClusterIP' && svc.spec?.clusterIP === 'None')
    throw new Error('cannot route to service with ClusterIP "None"');
  if (type === 'ClusterIP' || type === 'LoadBalancer' || type === 'NodePort')
    return `https://${hostPort(svc.spec.clusterIP, servicePort(svc, ref.port).port)}`;
  if (type === 'ExternalName') return `https://${hostPort(svc.spec.externalName, ref.port)}`;
  throw new Error(`unsupported service type "${type}"`);
}

/** Every ready endpoint address of the service, as https URLs (ResolveEndpoints). */
export function resolveEndpoints(lookup: ServiceLookup, ref: ServiceRef): string[] {
  const svc = getService(lookup, ref);
  const port = servicePort(svc, ref.port);
  const type = svc.spec?.type ?? 'ClusterIP';
  if (type !== 'ClusterIP' && type !== 'LoadBalancer' && type !== 'NodePort')
    throw new Error(`unsupported service type "${type}"`);
  const out: string[] = [];
  for (const slice of lookup.endpointSlices(ref.namespace, ref.name)) {
    const p = (slice.ports ?? []).find((x: any) => (x.name ?? '') === (port.name ?? '') && x.port != null);
    if (!p) continue;
    for (const ep of slice.endpoints ?? []) {
      if (ep.conditions?.ready === false) continue;
      for (const a of (ep.addresses ?? []).slice(0, 1)) out.push(`https://${hostPort(a, p.port)}`);
    }
  }
  if (!out.length) throw unavailable(`no endpoints available for service "${ref.name}"`);
  return out;
}

export function resolveEndpoint(lookup: ServiceLookup, ref: ServiceRef): string {
  const all = resolveEndpoints(lookup, ref);
  return all[Math.floor(Math.random() * all.length)];
}
