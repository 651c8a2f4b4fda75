// The apiserver process: one HTTPS listener (HTTP/2 and HTTP/1.1), the filter
// chain (authentication, max-in-flight, authorization, timeout), the routes
// (resources, discovery, health, version), post-start hooks and graceful shutdown.
import http from 'node:http';
import tls from 'node:tls';
import { logger } from '../../shared/log';
import {
  badRequest,
  StatusError,
  tooManyRequests,
  timeout as timeoutError,
  type Status,
} from '../../shared/api/status';
import { goParseDurationMs } from '../../shared/codec/go-strconv';
import type { Storage } from '../storage/interface';
import type { Registry } from '../registry/registry';
import { parseRequestInfo, isLongRunning, isMutating, type RequestInfo } from '../endpoints/request-info';
import { ResourceHandler } from '../endpoints/api-handler';
import { Discovery, wantsAggregated, AGGREGATED_V2, AGGREGATED_V2BETA1 } from '../endpoints/discovery';
import { respondError } from '../endpoints/respond';
import type { Security } from '../auth/types';
import type { UserInfo } from '../registry/context';
import { HealthEndpoint } from './health';
import type { AuditHandle } from '../auth/types';
import type { APIServerMetrics } from './metrics';
import { METRICS_CONTENT_TYPE } from '../../shared/metrics/registry';
import { send, sendJSON, type Req, type Res } from './http';
import type { ServingTLS } from './tls';
import { RequestAbort } from './request-abort';
import { ServerResponse, type IncomingMessage } from 'node:http';
import { ServerSession } from '../../shared/http2/server-session';
import { exchange, type H2Request } from './h2-exchange';
import type { Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import { UPGRADE, type UpgradeRequest } from './http';

const log = logger('apiserver');

export interface ServerOptions {
  bindAddress: string;
  securePort: number;
  tls: ServingTLS;
  registry: Registry;
  storage: Storage;
  handler: ResourceHandler;
  security: Security;
  maxRequestsInflight: number;
  maxMutatingRequestsInflight: number;
  enablePriorityAndFairness: boolean;
  requestTimeoutMs: number;
  shutdownDelayMs: number;
  shutdownSendRetryAfter: boolean;
  livezGracePeriodMs: number;
  goawayChance: number;
  http2MaxStreamsPerConnection: number;
  etcdHealthcheckTimeoutMs: number;
  /** Extra non-resource routes (openapi, metrics, oidc discovery ...): return true when handled. */
  extraRoutes?: ((
    req: Req,
    res: Res,
    path: string,
    query: URLSearchParams,
    user: UserInfo,
  ) => Promise<boolean>)[];
  version: Record<string, string>;
  metrics?: APIServerMetrics;
  /** The aggregation layer: requests under a remote APIService's group/version go to its service. */
  aggregator?: AggregationLayer;
}

export interface AggregationLayer {
  remoteFor(path: string): unknown;
  proxy(req: Req, res: Res, apiService: unknown, rawUrl: string, user: UserInfo): Promise<void>;
}

interface Hook {
  name: string;
  run: () => Promise<void>;
  done: boolean;
  error?: string;
}

export class APIServer {
  private server: tls.Server | null = null;
  /** Takes the HTTP/1.1 connections of the TLS listener (h2 ones get a ServerSession). */
  private http1: http.Server | null = null;
  private readonly h2Sessions = new Set<ServerSession>();
  private readonly discovery: Discovery;
  readonly healthz = new HealthEndpoint('healthz');
  readonly livez = new HealthEndpoint('livez');
  readonly readyz = new HealthEndpoint('readyz');
  private readonly hooks: Hook[] = [];
  private hooksSettled: Promise<void> = Promise.resolve();
  /** Set until the first request other than a health probe has been answered. */
  private onFirstClientRequest?: () => void;
  private readonly firstClientRequest = new Promise<void>((r) => (this.onFirstClientRequest = r));
  private inflight = { readonly: 0, mutating: 0 };
  private readonly active = new Set<Promise<void>>();
  private shuttingDown = false;
  private draining = false;
  private readonly started = Date.now();
  port = 0;

  constructor(private readonly o: ServerOptions) {
    this.discovery = new Discovery(o.registry);
    const storageCheck = async () => {
      await o.storage.checkHealth(o.etcdHealthcheckTimeoutMs);
    };
    for (const h of [this.healthz, this.livez, this.readyz]) {
      h.add('ping', () => {});
      h.add('log', () => {});
      h.add('etcd', storageCheck);
    }
    this.readyz.add('etcd-readiness', storageCheck);
    this.readyz.add('informer-sync', () => {});
  }

  get discoveryCache(): Discovery {
    return this.discovery;
  }

  /** Resolves once every post-start hook has finished or failed (after listen). */
  postStartHooksSettled(): Promise<void> {
    return this.hooksSettled;
  }

  /**
   * Resolves once a request other than a health probe has been answered: a client is
   * using the server (what work that would compete with it waits for).
   */
  clientRequestServed(): Promise<void> {
    return this.firstClientRequest;
  }

  /** Registers a post-start hook; /livez, /readyz and /healthz report it as poststarthook/<name>. */
  addPostStartHook(name: string, run: () => Promise<void>): void {
    const hook: Hook = { name, run, done: false };
    this.hooks.push(hook);
    const check = (grace: boolean) => () => {
      if (hook.done) return;
      if (grace && Date.now() - this.started < this.o.livezGracePeriodMs) return;
      throw new Error(hook.error ?? 'not finished');
    };
    this.healthz.add(`poststarthook/${name}`, check(false));
    this.livez.add(`poststarthook/${name}`, check(true));
    this.readyz.add(`poststarthook/${name}`, check(false));
  }

  async listen(): Promise<number> {
    this.readyz.add('shutdown', () => {
      if (this.shuttingDown) throw new Error('process is shutting down');
    });
    // One TLS listener; ALPN picks HTTP/2 (tkube's own server, shared/http2) or HTTP/1.1 (node:http).
    // As before under node:http2's HTTP/1.1 fallback: idle keep-alive connections stay open, and
    // a request's body has no deadline of node's own (the filter chain's timeout applies).
    const http1 = (this.http1 = http.createServer((req, res) => this.track(this.handle(req, res))));
    http1.keepAliveTimeout = 0;
    http1.requestTimeout = 0;
    http1.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) =>
      this.track(this.handleUpgrade(req, socket, head)),
    );
    http1.on('clientError', (_err, socket: Duplex) => socket.destroy());
    const maxStreams = this.o.http2MaxStreamsPerConnection || DEFAULT_MAX_STREAMS;
    this.server = tls.createServer(
      {
        cert: this.o.tls.certPem,
        key: this.o.tls.keyPem,
        ca: this.o.tls.clientCaPem,
        requestCert: !!this.o.tls.clientCaPem,
        rejectUnauthorized: false,
        ALPNProtocols: ['h2', 'http/1.1'],
        ...(this.o.security.tlsOptions ?? {}),
      },
      (socket) => {
        socket.setNoDelay(true);
        if (socket.alpnProtocol !== 'h2') {
          http1.emit('connection', socket);
          return;
        }
        const session = new ServerSession(socket, {
          maxConcurrentStreams: maxStreams,
          onStream: (stream) => exchange(stream, socket, (req, res) => this.track(this.handle(req, res))),
        });
        this.h2Sessions.add(session);
        session.onClose = () => this.h2Sessions.delete(session);
        // Connections opened while shutting down are told at once that no new streams are taken.
        if (this.draining) session.goaway();
      },
    );
    this.server.on('tlsClientError', () => {});
    const server = this.server;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(
        this.o.securePort,
        this.o.bindAddress === '0.0.0.0' ? undefined : this.o.bindAddress,
        () => resolve(),
      );
    });
    const addr = server.address();
    this.port = typeof addr === 'object' && addr ? addr.port : this.o.securePort;
    this.hooksSettled = Promise.all(
      this.hooks.map((hook) =>
        hook
          .run()
          .then(() => {
            hook.done = true;
            log.v(2)?.info('post-start hook done', { hook: hook.name, ms: Math.round(performance.now()) });
          })
          .catch((err) => {
            hook.error = String(err);
            log.error('post-start hook failed', { hook: hook.name, err: String(err) });
          }),
      ),
    ).then(() => {});
    return this.port;
  }

  /**
   * An HTTP/1.1 upgrade request (SPDY, WebSocket) goes through the same chain,
   * answered on its socket; the aggregator takes the socket over for its services.
   */
  private async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    // A client that resets the connection must not take the process down.
    socket.on('error', () => {});
    (req as UpgradeRequest)[UPGRADE] = { socket, head };
    const res = new ServerResponse(req);
    res.assignSocket(socket as Socket);
    res.shouldKeepAlive = false;
    res.on('finish', () => socket.end());
    await this.handle(req as unknown as Req, res as unknown as Res);
  }

  private track(p: Promise<void>): void {
    this.active.add(p);
    void p.finally(() => this.active.delete(p));
  }

  private async handle(req: Req, res: Res): Promise<void> {
    const rawUrl = req.url ?? '/';
    const qi = rawUrl.indexOf('?');
    const path = qi < 0 ? rawUrl : rawUrl.slice(0, qi);
    const query = new URLSearchParams(qi < 0 ? '' : rawUrl.slice(qi + 1));
    const method = req.method ?? 'GET';
    let slot: 'readonly' | 'mutating' | null = null;
    const abort = new RequestAbort();
    const security = this.o.security;
    let audit: AuditHandle | undefined;
    const started = process.hrtime.bigint();
    let info: RequestInfo | undefined;
    let longRunningLabels: Record<string, string> | undefined;
    try {
      if (security.httpFilter?.(req, res)) return;
      if (this.draining && this.o.shutdownSendRetryAfter && !isHealthPath(path)) {
        const err = tooManyRequests('The apiserver is shutting down, please try again later.', 5);
        respondError(res, err);
        return;
      }
      if (this.o.goawayChance > 0 && req.httpVersionMajor === 2 && Math.random() < this.o.goawayChance) {
        (req as H2Request).stream.session.goaway();
      }
      // Kubernetes' filter order: authentication, audit, impersonation, max-in-flight, authorization.
      info = parseRequestInfo(method, path, query);
      const authenticated = await security.authenticate(req);
      audit = security.auditor?.begin(req, res, info, authenticated);
      const user = await security.impersonate(req, authenticated, info);
      audit?.setUser(authenticated, user === authenticated ? undefined : user);
      const longRunning = isLongRunning(info, query);
      if (!longRunning) {
        slot = this.acquire(info);
        if (!slot) throw tooManyRequests('Too many requests, please try again later.', 1);
      }
      try {
        await security.authorize(user, info, req);
        // A WebSocket upgrade is a GET ("get"); exec, attach and portforward also need "create"
        // on the subresource, whatever the protocol (kubernetes/kubernetes#133515).
        if (info.verb !== 'create' && isStreamingConnect(info))
          await security.authorize(user, { ...info, verb: 'create' }, req);
      } catch (err) {
        if (audit) audit.annotations['authorization.k8s.io/decision'] = 'forbid';
        throw err;
      }
      if (audit) audit.annotations['authorization.k8s.io/decision'] = 'allow';
      if (longRunning && this.o.metrics) {
        longRunningLabels = this.o.metrics.longRunningLabels(method, info);
        this.o.metrics.longRunning.inc(longRunningLabels);
      }
      // Only a client that leaves before the answer aborts the work (an abort builds a costly DOMException).
      // (The request's own 'close' fires once its body is read: only the response's says the client left.)
      res.on('close', () => {
        if (!res.writableFinished) abort.abort(CLIENT_GONE);
      });
      const annotations = audit?.annotations ?? {};
      const timeoutMs = longRunning ? 0 : this.requestTimeoutMs(query);
      const work = this.route(req, res, path, query, info, user, abort, annotations);
      if (longRunning) await work;
      else await this.withTimeout(res, abort, work, timeoutMs);
    } catch (err) {
      respondError(res, err);
    } finally {
      if (slot) this.release(slot);
      if (this.onFirstClientRequest && !isHealthPath(path)) {
        this.onFirstClientRequest();
        this.onFirstClientRequest = undefined;
      }
      audit?.end(res.statusCode);
      const m = this.o.metrics;
      if (m && info) {
        if (longRunningLabels) m.longRunning.dec(longRunningLabels);
        const seconds = Number(process.hrtime.bigint() - started) / 1e9;
        m.observe(method, info, req.headers['content-type'], query.has('dryRun'), res.statusCode, seconds);
      }
    }
  }

  private acquire(info: RequestInfo): 'readonly' | 'mutating' | null {
    const mutating = isMutating(info.verb);
    const ro = this.o.maxRequestsInflight;
    const mu = this.o.maxMutatingRequestsInflight;
    if (this.o.enablePriorityAndFairness) {
      const limit = ro + mu;
      if (limit > 0 && this.inflight.readonly + this.inflight.mutating >= limit) return null;
    } else if (mutating ? mu > 0 && this.inflight.mutating >= mu : ro > 0 && this.inflight.readonly >= ro)
      return null;
    const slot = mutating ? 'mutating' : 'readonly';
    this.inflight[slot]++;
    this.o.metrics?.inflight.set({ request_kind: mutating ? 'mutating' : 'readOnly' }, this.inflight[slot]);
    return slot;
  }

  private release(slot: 'readonly' | 'mutating'): void {
    this.inflight[slot]--;
    this.o.metrics?.inflight.set(
      { request_kind: slot === 'mutating' ? 'mutating' : 'readOnly' },
      this.inflight[slot],
    );
  }

  /** The deadline of a request: ?timeout= (a Go duration) when below --request-timeout (WithRequestDeadline). */
  private requestTimeoutMs(query: URLSearchParams): number {
    const max = this.o.requestTimeoutMs;
    const t = query.get('timeout');
    if (!t) return max;
    let user: number;
    try {
      user = goParseDurationMs(t);
    } catch (e) {
      throw badRequest(`invalid timeout specified in the request URL - ${(e as Error).message}`);
    }
    return user > 0 && user < max ? user : max;
  }

  private async withTimeout(res: Res, abort: RequestAbort, work: Promise<void>, ms: number): Promise<void> {
    if (ms <= 0) return work;
    let timer: NodeJS.Timeout | undefined;
    const expired = new Promise<'timeout'>((r) => (timer = setTimeout(() => r('timeout'), ms)));
    let result: 'done' | 'timeout';
    try {
      result = await Promise.race([work.then(() => 'done' as const), expired]);
    } finally {
      clearTimeout(timer);
    }
    if (result === 'timeout') {
      abort.abort();
      respondError(res, timeoutError('request did not complete within the allotted timeout'));
      work.catch(() => {});
    }
  }

  private async route(
    req: Req,
    res: Res,
    path: string,
    query: URLSearchParams,
    info: RequestInfo,
    user: UserInfo,
    abort: RequestAbort,
    auditAnnotations: Record<string, string>,
  ): Promise<void> {
    const remote = this.o.aggregator?.remoteFor(path);
    if (remote) return this.o.aggregator!.proxy(req, res, remote, req.url ?? path, user);
    if (info.isResourceRequest) {
      const scope = this.o.handler.scope(req, res, info, query, user, abort, auditAnnotations);
      try {
        await this.o.handler.serve(scope);
      } catch (err) {
        respondError(res, err, scope.rep, scope.ctx.warnings);
      }
      return;
    }
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      if (!(await this.extra(req, res, path, query, user)))
        send(res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
      return;
    }
    const health = /^\/(healthz|livez|readyz)(?:\/(.*))?$/.exec(path);
    if (health) {
      const ep = health[1] === 'healthz' ? this.healthz : health[1] === 'livez' ? this.livez : this.readyz;
      const r = await ep.serve(health[2] ?? '', query);
      send(res, r.code, 'text/plain; charset=utf-8', r.body, { 'x-content-type-options': 'nosniff' });
      return;
    }
    const p = path.replace(/\/+$/, '') || '/';
    if (p === '/version') return sendJSON(res, 200, this.o.version);
    if (p === '/metrics' && this.o.metrics)
      return send(res, 200, METRICS_CONTENT_TYPE, this.o.metrics.registry.expose());
    const accept = String(req.headers.accept ?? '');
    if (p === '/api' || p === '/apis') {
      const agg = wantsAggregated(accept);
      if (agg) {
        const body = JSON.stringify(this.discovery.aggregated(p === '/api', agg));
        return send(res, 200, agg === 'v2' ? AGGREGATED_V2 : AGGREGATED_V2BETA1, body, {
          etag: `"${hash(body)}"`,
          vary: 'Accept',
        });
      }
      if (p === '/api')
        return sendJSON(res, 200, this.discovery.apiVersions(`${req.headers.host ?? '127.0.0.1'}`));
      return sendJSON(res, 200, this.discovery.apiGroupList());
    }
    const m = /^\/(?:api\/(v1)|apis\/([^/]+)(?:\/([^/]+))?)$/.exec(p);
    if (m) {
      const doc = m[1]
        ? this.discovery.apiResourceList('', 'v1')
        : m[3]
          ? this.discovery.apiResourceList(m[2], m[3])
          : this.discovery.apiGroup(m[2]);
      if (doc) return sendJSON(res, 200, doc);
      return respondError(
        res,
        new StatusError(404, 'NotFound', 'the server could not find the requested resource', {}),
      );
    }
    if (await this.extra(req, res, path, query, user)) return;
    send(res, 404, 'text/plain; charset=utf-8', '404 page not found\n');
  }

  private async extra(
    req: Req,
    res: Res,
    path: string,
    query: URLSearchParams,
    user: UserInfo,
  ): Promise<boolean> {
    for (const r of this.o.extraRoutes ?? []) if (await r(req, res, path, query, user)) return true;
    return false;
  }

  /**
   * Graceful shutdown like kube-apiserver: /readyz fails at once, requests are
   * served for --shutdown-delay-duration, then the listener closes, in-flight
   * requests drain (new ones get 429 with --shutdown-send-retry-after) and watches end.
   */
  async shutdown(beforeDrain?: () => Promise<void>): Promise<void> {
    if (this.shuttingDown) return;
    this.shuttingDown = true;
    log.info('shutting down', { delay: this.o.shutdownDelayMs });
    if (this.o.shutdownDelayMs > 0) await new Promise((r) => setTimeout(r, this.o.shutdownDelayMs));
    this.draining = true;
    await beforeDrain?.();
    const server = this.server;
    if (server) {
      const closed = new Promise<void>((r) => server.close(() => r()));
      // Like Go's server: HTTP/2 clients get GOAWAY (their streams under way finish), idle
      // HTTP/1.1 connections close.
      for (const s of this.h2Sessions) s.goaway();
      this.http1?.closeIdleConnections();
      this.o.registry.stop();
      const deadline = Date.now() + this.o.requestTimeoutMs;
      while (this.active.size && Date.now() < deadline)
        await Promise.race([...this.active, new Promise((r) => setTimeout(r, 100))]);
      await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
    }
  }
}

const CLIENT_GONE = new Error('the client closed the connection');

/**
 * Concurrent streams per HTTP/2 connection when --http2-max-streams-per-connection is 0:
 * kube-apiserver's 100, what Go's clients assume before the server's SETTINGS arrive.
 */
const DEFAULT_MAX_STREAMS = 100;

function isStreamingConnect(info: RequestInfo): boolean {
  return (
    info.isResourceRequest &&
    info.apiGroup === '' &&
    info.resource === 'pods' &&
    ['exec', 'attach', 'portforward'].includes(info.subresource)
  );
}

function isHealthPath(path: string): boolean {
  return /^\/(healthz|livez|readyz)(\/|$)/.test(path);
}

function hash(s: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) h = Math.imul(h ^ s.charCodeAt(i), 16777619) >>> 0;
  return h.toString(16);
}

export type { Status };
