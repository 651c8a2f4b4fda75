// The availability of APIServices backed by a service (kube-aggregator's
// remote availability controller): the service exists, listens on the port,
// has ready endpoints, and answers the discovery document of its
// group/version. Conditions and messages as Kubernetes writes them; checked
// when the APIService, its Service or its EndpointSlices change, and every 30s.
// undici (110 modules) is loaded by the first check, not at the apiserver's start.
import { transportError } from '../endpoints/handlers/proxy';
import type { ServiceLookup, ServiceRef } from './resolve';

export interface Condition {
  status: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

export interface CheckResult {
  condition: Condition;
  /** The discovery document the check read (APIResourceList), when it passed. */
  discovery?: any;
}

export interface Transport {
  certPem?: string;
  keyPem?: string;
}

const ATTEMPTS = 5;
const TIMEOUT_MS = 5000;

function serviceRef(apiService: any): ServiceRef {
  const s = apiService.spec.service;
  return { namespace: s.namespace, name: s.name, port: s.port ?? 443 };
}

function hasAvailableEndpoint(portName: string, slices: any[]): boolean {
  return slices.some(
    (s) =>
      (s.endpoints ?? []).some((e: any) => e.conditions?.ready == null || e.conditions.ready) &&
      (s.ports ?? []).some((p: any) => p.name != null && p.name === portName && p.port != null),
  );
}

export async function checkAPIService(
  apiService: any,
  lookup: ServiceLookup,
  resolve: (ref: ServiceRef) => string,
  transport: Transport,
): Promise<CheckResult> {
  const ref = serviceRef(apiService);
  const where = `service/${ref.name} in "${ref.namespace}"`;
  const svc = lookup.service(ref.namespace, ref.name);
  if (!svc)
    return { condition: { status: 'False', reason: 'ServiceNotFound', message: `${where} is not present` } };
  if ((svc.spec?.type ?? 'ClusterIP') === 'ClusterIP') {
    const port = (svc.spec?.ports ?? []).find((p: any) => p.port === ref.port);
    if (!port)
      return {
        condition: {
          status: 'False',
          reason: 'ServicePortError',
          message: `${where} is not listening on port ${ref.port}`,
        },
      };
    const slices = lookup.endpointSlices(ref.namespace, ref.name);
    if (!slices.length)
      return {
        condition: {
          status: 'False',
          reason: 'EndpointsNotFound',
          message: `cannot find endpointslices for ${where}`,
        },
      };
    const portName = port.name ?? '';
    if (!hasAvailableEndpoint(portName, slices))
      return {
        condition: {
          status: 'False',
          reason: 'MissingEndpoints',
          message: `endpointslices for ${where} have no addresses with port name "${portName}"`,
        },
      };
  }
  const path =
    apiService.metadata.name === 'v1.'
      ? `/api/${apiService.spec.version}`
      : `/apis/${apiService.spec.group}/${apiService.spec.version}`;
  // Best effort and quick, as Kubernetes does it: TLS not verified, a few tries at once, one success enough.
  const { Agent, request } = await import('undici');
  const dispatcher = new Agent({
    connect: { rejectUnauthorized: false, cert: transport.certPem, key: transport.keyPem },
    connectTimeout: TIMEOUT_MS,
    headersTimeout: TIMEOUT_MS,
    bodyTimeout: TIMEOUT_MS,
  });
  const attempt = async (): Promise<any> => {
    const base = resolve(ref);
    const url = base + path;
    let res;
    try {
      res = await request(url, {
        dispatcher,
        signal: AbortSignal.timeout(TIMEOUT_MS + 1000),
        headers: { 'x-remote-user': 'system:kube-aggregator', 'x-remote-group': 'system:masters' },
      });
    } catch (err) {
      const e = err as Error & { code?: string };
      if (e.name === 'TimeoutError' || e.name === 'AbortError')
        throw new Error(`timed out waiting for ${url}`, { cause: err });
      throw new Error(`failing or missing response from ${url}: Get "${url}": ${transportError(e, url)}`, {
        cause: err,
      });
    }
    const text = await res.body.text();
    if (res.statusCode < 200 || res.statusCode >= 300)
      throw new Error(`failing or missing response from ${url}: bad status from ${url}: ${res.statusCode}`);
    try {
      return JSON.parse(text);
    } catch {
      return undefined;
    }
  };
  try {
    const results = await Promise.allSettled(Array.from({ length: ATTEMPTS }, attempt));
    const ok = results.find((r) => r.status === 'fulfilled');
    if (ok) {
      return {
        condition: { status: 'True', reason: 'Passed', message: 'all checks passed' },
        discovery: (ok as PromiseFulfilledResult<any>).value,
      };
    }
    const last = results[results.length - 1] as PromiseRejectedResult;
    const reason = last.reason as Error;
    return {
      condition: {
        status: 'False',
        reason: 'FailedDiscoveryCheck',
        message: reason instanceof Error ? reason.message : String(reason),
      },
    };
  } finally {
    void dispatcher.close();
  }
}
