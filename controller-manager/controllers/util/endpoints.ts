// What the Endpoints and EndpointSlice controllers share: which Services get
// endpoints from a controller, which pods belong in them, and how a Service
// port's targetPort resolves on a pod.
import type { Obj } from './base';
import { isPodReady, isPodTerminal } from './pod';

export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';
export const HEADLESS_LABEL = 'service.kubernetes.io/headless';
export const TRIGGER_TIME_ANNOTATION = 'endpoints.kubernetes.io/last-change-trigger-time';

/** Services whose endpoints a controller computes: with a selector, not ExternalName, not the apiserver's own. */
export function managedService(svc: Obj): boolean {
  if (svc.metadata.namespace === 'default' && svc.metadata.name === 'kubernetes') return false;
  if (svc.spec?.type === 'ExternalName') return false;
  const sel = svc.spec?.selector;
  return !!sel && Object.keys(sel).length > 0;
}

export function serviceSelects(svc: Obj, pod: Obj): boolean {
  const sel: Record<string, string> = svc.spec?.selector ?? {};
  const labels = pod.metadata.labels ?? {};
  const keys = Object.keys(sel);
  return keys.length > 0 && keys.every((k) => labels[k] === sel[k]);
}

/** ShouldPodBeInEndpoints. */
export function shouldPodBeInEndpoints(pod: Obj, includeTerminating: boolean): boolean {
  if (isPodTerminal(pod)) return false;
  if (!pod.status?.podIP && !(pod.status?.podIPs ?? []).length) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  return true;
}

export function podIPs(pod: Obj): string[] {
  const ips: string[] = (pod.status?.podIPs ?? []).map((p: any) => p.ip).filter(Boolean);
  if (!ips.length && pod.status?.podIP) ips.push(pod.status.podIP);
  return ips;
}

export const isIPv6 = (ip: string) => ip.includes(':');

/** The pod's IP of a family ("IPv4" / "IPv6"). */
export function podIPOfFamily(pod: Obj, family: string): string | undefined {
  return podIPs(pod).find((ip) => (family === 'IPv6') === isIPv6(ip));
}

/** The address family of a Service (its first ipFamily, else that of its cluster IP, else IPv4). */
export function serviceFamilies(svc: Obj): string[] {
  const fams: string[] = svc.spec?.ipFamilies ?? [];
  if (fams.length) return fams;
  const ip: string | undefined = svc.spec?.clusterIP;
  if (ip && ip !== 'None' && isIPv6(ip)) return ['IPv6'];
  return ['IPv4'];
}

/** podutil.FindPort: the container port a Service port's targetPort names (or its number). */
export function findPort(pod: Obj, svcPort: any): number | undefined {
  const target = svcPort.targetPort ?? svcPort.port;
  if (typeof target === 'number') return target;
  if (typeof target === 'string' && /^\d+$/.test(target)) return Number(target);
  const protocol = svcPort.protocol ?? 'TCP';
  for (const c of pod.spec?.containers ?? [])
    for (const p of c.ports ?? [])
      if (p.name === target && (p.protocol ?? 'TCP') === protocol) return p.containerPort;
  return undefined;
}

/** ShouldSetHostname: the pod names this headless Service as its subdomain. */
export function shouldSetHostname(pod: Obj, svc: Obj): boolean {
  return (
    !!pod.spec?.hostname &&
    pod.spec?.subdomain === svc.metadata.name &&
    svc.metadata.namespace === pod.metadata.namespace
  );
}

export function podReference(pod: Obj): any {
  return { kind: 'Pod', namespace: pod.metadata.namespace, name: pod.metadata.name, uid: pod.metadata.uid };
}

export { isPodReady };
