// The aggregation layer in front of the resource API: APIServices backed by a
// service are proxied to it (authorization was done here first; the extension
// server learns the user from X-Remote-* headers, trusting this server's proxy
// client certificate through extension-apiserver-authentication), their
// availability is kept in their status, and their discovery documents feed
// /apis and aggregated discovery.
import { readFileSync, statSync } from 'node:fs';
import { logger } from '../../shared/log';
import { isStatusError } from '../../shared/api/status';
import type { UserInfo } from '../registry/context';
import { systemContext } from '../registry/context';
import type { Registry } from '../registry/registry';
import { forwardableHeaders, streamProxy, UpstreamError } from '../endpoints/handlers/proxy';
import { send, type Req, type Res } from '../server/http';
import { StoreInformer } from './store-informer';
import type { ServiceRef } from './resolve';
import { serviceHostname, type ServiceResolver } from './service-resolver';
import { checkAPIService, type Condition } from './availability';
import { APISERVICE_GROUP, LOCAL_AVAILABLE, STATUS_WRITE, withAvailable } from './local-apiservices';
import type { ServerResponse } from 'node:http';
import type { AggregatedSpec } from '../../shared/api/openapi';
import type { Counter, Gauge, MetricsRegistry } from '../../shared/metrics/registry';
import { UPGRADE, type UpgradeRequest } from '../server/http';
import { proxyUpgrade } from './upgrade';

const log = logger('aggregator');

export interface AggregatorOptions {
  registry: Registry;
  /** Where an APIService's service is reached (the apiserver's one resolver, started here). */
  services: ServiceResolver;
  proxyClientCertFile?: string;
  proxyClientKeyFile?: string;
  /** Called when what discovery should show changed. */
  onDiscoveryChange?: () => void;
  now?: () => Date;
  /** How often every APIService is checked again (Kubernetes: 30s). */
  resyncMs?: number;
  /** Where the aggregator's metrics are registered (the apiserver's /metrics). */
  metrics?: MetricsRegistry;
  /** Receives the OpenAPI documents of available aggregated APIs. */
  openapi?: { setAggregated(source: string, spec: AggregatedSpec | undefined): void };
}

/** How often an available APIService's OpenAPI documents are read again. */
const OPENAPI_REFRESH_MS = 60_000;

/** An aggregated group/version as discovery shows it. */
export interface AggregatedVersion {
  group: string;
  version: string;
  groupPriorityMinimum: number;
  versionPriority: number;
  available: boolean;
  /** The service's APIResourceList for this group/version (last one read). */
  resources?: any;
}

const NOT_FORWARDED = /^(authorization|impersonate-|x-remote-)/;

export class Aggregator {
  private readonly apiServices: StoreInformer;
  /** Remote APIServices by "group/version". */
  private readonly remote = new Map<string, any>();
  private readonly discovery = new Map<string, any>();
  private readonly checking = new Map<string, Promise<void>>();
  private readonly recheck = new Set<string>();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private proxyCert: { mtime: number; certPem?: string; keyPem?: string } | null = null;
  /** When each APIService's OpenAPI documents were last read; a changed spec (JSON) reads them again. */
  private readonly openapiRead = new Map<string, number>();
  private readonly specs = new Map<string, string>();
  private readonly unavailable?: Gauge;
  private readonly unavailableTotal?: Counter;

  constructor(private readonly o: AggregatorOptions) {
    this.unavailable = o.metrics?.gauge({
      name: 'aggregator_unavailable_apiservice',
      help: 'Gauge of APIServices which are marked as unavailable broken down by APIService name.',
      labels: ['name'],
    });
    this.unavailableTotal = o.metrics?.counter({
      name: 'aggregator_unavailable_apiservice_total',
      help: 'Counter of APIServices which are marked as unavailable broken down by APIService name and reason.',
      labels: ['name', 'reason'],
    });
    const store = (group: string, resource: string) => () => o.registry.preferred(group, resource)?.store;
    this.apiServices = new StoreInformer('apiservices', store(APISERVICE_GROUP, 'apiservices'), (type, obj) =>
      this.onAPIService(type, obj),
    );
    o.services.onChange((namespace, name) => this.onServiceChange(namespace, name));
  }

  async start(): Promise<void> {
    await this.o.services.start();
    await this.apiServices.start();
    for (const obj of this.apiServices.items.values()) this.enqueue(obj.metadata.name);
    this.timer = setInterval(() => {
      for (const obj of this.apiServices.items.values()) this.enqueue(obj.metadata.name);
    }, this.o.resyncMs ?? 30_000);
    this.timer.unref();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearInterval(this.timer);
    this.apiServices.stop();
  }

  private resolve(ref: ServiceRef): string {
    return this.o.services.resolve(ref);
  }

  /** The proxy client certificate, read again when the file changes. */
  private transport(): { certPem?: string; keyPem?: string } {
    const { proxyClientCertFile: cert, proxyClientKeyFile: key } = this.o;
    if (!cert || !key) return {};
    try {
      const mtime = statSync(cert).mtimeMs + statSync(key).mtimeMs;
      if (this.proxyCert?.mtime !== mtime)
        this.proxyCert = { mtime, certPem: readFileSync(cert, 'utf8'), keyPem: readFileSync(key, 'utf8') };
    } catch (err) {
      log.warn('cannot read the proxy client certificate', { err: String(err) });
    }
    return this.proxyCert ?? {};
  }

  // ---- informer events ----------------------------------------------------------------

  private onAPIService(type: string, obj: any): void {
    const gv = `${obj.spec?.group}/${obj.spec?.version}`;
    const name = obj.metadata.name;
    for (const [k, v] of this.remote) if (v.metadata.name === name) this.remote.delete(k);
    if (type !== 'DELETED' && obj.spec?.service) this.remote.set(gv, obj);
    const spec = JSON.stringify(obj.spec);
    if (this.specs.get(name) !== spec) this.openapiRead.delete(name); // a new service: read its documents again
    if (type === 'DELETED') {
      this.specs.delete(name);
      this.unavailable?.delete({ name });
    } else this.specs.set(name, spec);
    if (type === 'DELETED' || !obj.spec?.service) {
      this.discovery.delete(name);
      this.openapiRead.delete(name);
      this.o.openapi?.setAggregated(name, undefined);
    }
    this.o.onDiscoveryChange?.();
    if (type !== 'DELETED') this.enqueue(name);
  }

  private onServiceChange(ns: string, name: string): void {
    for (const a of this.apiServices.items.values()) {
      const s = a.spec?.service;
      if (s && s.namespace === ns && s.name === name) this.enqueue(a.metadata.name);
    }
  }

  // ---- availability -------------------------------------------------------------------

  private enqueue(name: string): void {
    if (this.stopped) return;
    if (this.checking.has(name)) {
      this.recheck.add(name);
      return;
    }
    const run = this.check(name)
      .catch((err) => log.warn('availability check failed', { apiservice: name, err: String(err) }))
      .finally(() => {
        this.checking.delete(name);
        if (this.recheck.delete(name)) this.enqueue(name);
      });
    this.checking.set(name, run);
  }

  /** Checks one APIService and writes its Available condition when it changed. */
  private async check(name: string): Promise<void> {
    const obj = this.apiServices.get('', name);
    if (!obj) return;
    let cond: Condition;
    if (!obj.spec?.service) cond = LOCAL_AVAILABLE as Condition;
    else {
      const result = await checkAPIService(
        obj,
        this.o.services,
        (ref) => this.resolve(ref),
        this.transport(),
      );
      cond = result.condition;
      if (result.discovery?.kind === 'APIResourceList') {
        const changed = JSON.stringify(this.discovery.get(name)) !== JSON.stringify(result.discovery);
        this.discovery.set(name, result.discovery);
        if (changed) this.o.onDiscoveryChange?.();
      }
      if (cond.status === 'True' && Date.now() - (this.openapiRead.get(name) ?? 0) > OPENAPI_REFRESH_MS)
        await this.readOpenAPI(obj);
    }
    const cur = (obj.status?.conditions ?? []).find((c: any) => c.type === 'Available');
    this.unavailable?.set({ name }, cond.status === 'True' ? 0 : 1);
    if (cur && cur.status === cond.status && cur.reason === cond.reason && cur.message === cond.message)
      return;
    // Counted when it stops being available (not when it never was).
    if (cur?.status === 'True' && cond.status !== 'True')
      this.unavailableTotal?.inc({ name, reason: cond.reason || 'UnknownReason' });
    if (cur?.status !== cond.status)
      log.info('changing APIService availability', {
        name,
        oldStatus: cur?.status ?? 'Unknown',
        newStatus: cond.status,
        reason: cond.reason,
        message: cond.message,
      });
    const store = this.o.registry.preferred(APISERVICE_GROUP, 'apiservices')?.store;
    if (!store) return;
    try {
      const { obj: written } = await store.update(
        systemContext(),
        name,
        (c) => c && withAvailable(c, cond, this.o.now?.() ?? new Date()),
        {},
        { sub: STATUS_WRITE },
      );
      // Known before the watch reports it: the proxy answers by it at once.
      this.apiServices.items.set(`/${name}`, written);
      if (written.spec?.service) this.remote.set(`${written.spec.group}/${written.spec.version}`, written);
      this.o.onDiscoveryChange?.();
    } catch (err) {
      if (!isStatusError(err, 'NotFound') && !isStatusError(err, 'Conflict')) throw err;
      this.recheck.add(name);
    }
  }

  /** Reads the service's /openapi/v2 and its group-version's /openapi/v3 document (as the aggregator, trusted). */
  private async readOpenAPI(apiService: any): Promise<void> {
    const name = apiService.metadata.name;
    if (!this.o.openapi) return;
    const gvPath = `apis/${apiService.spec.group}/${apiService.spec.version}`;
    const get = async (path: string): Promise<any> => {
      const { Agent, request } = await import('undici');
      const t = this.transport();
      const caBundle = apiService.spec.caBundle;
      const dispatcher = new Agent({
        connect: {
          ca: caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined,
          cert: t.certPem,
          key: t.keyPem,
          rejectUnauthorized: !apiService.spec.insecureSkipTLSVerify,
          servername: serviceHostname(apiService.spec.service),
        },
      });
      try {
        const r = await request(this.resolve(serviceRefOf(apiService)) + path, {
          dispatcher,
          headers: {
            accept: 'application/json',
            ...authProxyHeaders({ name: 'system:aggregator', groups: ['system:masters'] }),
          },
          signal: AbortSignal.timeout(10_000),
        });
        const text = await r.body.text();
        return r.statusCode === 200 ? JSON.parse(text) : undefined;
      } catch {
        return undefined;
      } finally {
        void dispatcher.close();
      }
    };
    const [v2, v3] = await Promise.all([get('/openapi/v2'), get(`/openapi/v3/${gvPath}`)]);
    this.openapiRead.set(name, Date.now());
    if (!this.apiServices.get('', name)) return;
    this.o.openapi.setAggregated(name, v2 || v3 ? { groupVersionPath: gvPath, v2, v3 } : undefined);
  }

  // ---- discovery ----------------------------------------------------------------------

  /** Aggregated group/versions (backed by a service), for /apis and aggregated discovery. */
  aggregatedVersions(): AggregatedVersion[] {
    return [...this.remote.values()].map((a) => ({
      group: a.spec.group,
      version: a.spec.version,
      groupPriorityMinimum: a.spec.groupPriorityMinimum ?? 0,
      versionPriority: a.spec.versionPriority ?? 0,
      available: isAvailable(a),
      resources: this.discovery.get(a.metadata.name),
    }));
  }

  // ---- proxy ---------------------------------------------------------------------------

  /** The remote APIService a path falls under (/apis/<group>/<version>[/...]), if any. */
  remoteFor(path: string): any | undefined {
    // Every request asks: with no non-local APIService (the usual case) there is nothing to match.
    if (!this.remote.size) return undefined;
    const m = /^\/apis\/([^/]+)\/([^/]+)(?:\/|$)/.exec(path);
    return m ? this.remote.get(`${m[1]}/${m[2]}`) : undefined;
  }

  /**
   * Proxies a request (already authenticated and authorized) to the service of
   * its APIService. Errors are plain text as the aggregator writes them.
   */
  async proxy(req: Req, res: Res, apiService: any, rawUrl: string, user: UserInfo): Promise<void> {
    if (!isAvailable(apiService)) return proxyError(res, 'service unavailable', 503);
    let base: string;
    try {
      base = this.resolve(serviceRefOf(apiService));
    } catch (err) {
      log.error('error resolving service', {
        service: `${apiService.spec.service.namespace}/${apiService.spec.service.name}`,
        err: String(err),
      });
      return proxyError(res, 'service unavailable', 503);
    }
    const t = this.transport();
    const headers = forwardableHeaders(req as any, (k) => NOT_FORWARDED.test(k));
    Object.assign(headers, authProxyHeaders(user));
    const caBundle = apiService.spec.caBundle;
    const upgrade = (req as unknown as UpgradeRequest)[UPGRADE];
    if (upgrade) {
      const upstream = new URL(base);
      return proxyUpgrade(req as unknown as UpgradeRequest, upgrade, res, {
        host: upstream.hostname.replace(/^\[|\]$/g, ''),
        port: Number(upstream.port || 443),
        path: rawUrl,
        headers,
        ca: caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined,
        cert: t.certPem,
        key: t.keyPem,
        insecure: !!apiService.spec.insecureSkipTLSVerify,
        serverName: serviceHostname(apiService.spec.service),
      });
    }
    try {
      await streamProxy(
        req as any,
        res as ServerResponse,
        {
          url: base + rawUrl,
          caPem: caBundle ? Buffer.from(caBundle, 'base64').toString('utf8') : undefined,
          certPem: t.certPem,
          keyPem: t.keyPem,
          insecure: !!apiService.spec.insecureSkipTLSVerify,
          serverName: serviceHostname(apiService.spec.service),
        },
        headers,
      );
    } catch (err) {
      if (err instanceof UpstreamError) return proxyError(res, err.message, 503);
      throw err;
    }
  }
}

const serviceRefOf = (a: any): ServiceRef => ({
  namespace: a.spec.service.namespace,
  name: a.spec.service.name,
  port: a.spec.service.port ?? 443,
});

export function isAvailable(apiService: any): boolean {
  return (apiService.status?.conditions ?? []).some(
    (c: any) => c.type === 'Available' && c.status === 'True',
  );
}

/** Go's http.Error: plain text, nosniff, the message and a newline. */
function proxyError(res: Res, message: string, code: number): void {
  send(res, code, 'text/plain; charset=utf-8', `${message}\n`, { 'x-content-type-options': 'nosniff' });
}

/** The user as the front-proxy headers carry it (client-go's SetAuthProxyHeaders). */
export function authProxyHeaders(user: UserInfo): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = { 'X-Remote-User': user.name };
  if (user.groups?.length) out['X-Remote-Group'] = [...user.groups];
  for (const [k, values] of Object.entries(user.extra ?? {}))
    out[`X-Remote-Extra-${headerKeyEscape(k)}`] = [...(values as string[])];
  return out;
}

/** Extra keys percent-encoded where a header name cannot hold the character (headerKeyEscape). */
function headerKeyEscape(key: string): string {
  let out = '';
  for (const b of Buffer.from(key, 'utf8')) {
    const c = String.fromCharCode(b);
    if (/^[A-Za-z0-9!#$&'*+.^_`|~-]$/.test(c) && c !== '%') out += c;
    else out += `%${b.toString(16).toUpperCase().padStart(2, '0')}`;
  }
  return out;
}
