// The node agent's HTTP endpoints, on the kubelet's three ports:
//   --port (10250)          HTTPS, authenticated and authorized: /healthz, /pods,
//                           /runningpods, /spec, /stats/summary, /metrics[/cadvisor|/resource|/probes],
//                           /containerLogs/{ns}/{pod}/{container}, /logs/, /configz,
//                           /exec, /attach, /portForward, /run (streaming.ts)
//   --read-only-port (10255) plain HTTP, no auth: /healthz, /pods, /spec, /stats, /metrics...
//   --healthz-port (10248)  plain HTTP on --healthz-bind-address: /healthz
// Port 0 disables the read-only and healthz ports (tests pick free ports).
import {
  createServer as createHttpServer,
  type IncomingMessage,
  type Server,
  type ServerResponse,
} from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { createReadStream, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join, normalize, resolve, sep } from 'node:path';
import type { SecureVersion } from 'node:tls';
import { realClock, type Clock } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import { METRICS_CONTENT_TYPE, type MetricsRegistry } from '../../shared/metrics/registry';
import type { NodeAgentConfig } from '../app/config';
import type { PodManager } from '../pods/manager';
import { LogLookupError } from '../pods/pod-logs';
import { readContainerLog, type LogOptions } from '../pods/logs';
import type { NodeAuth } from './auth';
import type { ContainerRuntime } from '../pods/runtime';
import { isStreamingPath, STATUS_TEXT, StreamError, StreamingEndpoints } from './streaming';
import { writeRawResponse } from '../../shared/streaming/upgrade';
import type { Duplex } from 'node:stream';
import { cadvisorMetrics, machineSpec, resourceMetrics, summary, type StatsSources } from './stats';
import type { ServingCert } from './tls';
import { stringifyJSONInt64 } from '../../shared/codec/json-int64';

const log = logger('nodeagent/server');

type Mode = 'secure' | 'readonly' | 'healthz';

export interface ServerDeps {
  config: NodeAgentConfig;
  tls: ServingCert;
  auth: NodeAuth;
  pods: PodManager;
  /** Serves exec, attach, port-forward and run (absent: the runtime of config.runtime has none of them). */
  runtime?: ContainerRuntime;
  stats: StatsSources;
  metrics: MetricsRegistry;
  /** The effective configuration (GET /configz). */
  configz(): Record<string, unknown>;
  /** <root-dir>/logs, served at /logs/. */
  logsDir: string;
  /** Named health checks; all must pass for /healthz. */
  checks(): Record<string, boolean>;
  clock?: Clock;
}

export interface Ports {
  port: number;
  readOnlyPort: number;
  healthzPort: number;
}

const TLS_VERSIONS: Record<string, SecureVersion> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

function text(
  res: ServerResponse,
  code: number,
  body: string,
  contentType = 'text/plain; charset=utf-8',
): void {
  res.writeHead(code, { 'content-type': contentType, 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

function json(res: ServerResponse, code: number, obj: unknown): void {
  text(res, code, stringifyJSONInt64(obj), 'application/json');
}

const bool = (v: string | null) => v === 'true' || v === '1' || v === 'True' || v === 'TRUE' || v === 't';

/** The PodLogOptions of a /containerLogs query, validated like the kubelet (400 / 422). */
export function parseLogQuery(q: URLSearchParams, now: number): LogOptions & { previous: boolean } {
  const int = (name: string): number | undefined => {
    const v = q.get(name);
    if (v === null || v === '') return undefined;
    if (!/^-?\d+$/.test(v)) throw new LogLookupError(400, '{"message": "Unable to decode query."}');
    return Number(v);
  };
  let tail = q.get('tailLines');
  // The old "tail" parameter; "all" means no limit.
  const legacy = q.get('tail');
  if (legacy !== null && legacy !== '') tail = legacy === 'all' ? null : legacy;
  const tailLines =
    tail === null
      ? undefined
      : (() => {
          if (!/^-?\d+$/.test(tail)) throw new LogLookupError(400, '{"message": "Unable to decode query."}');
          return Number(tail);
        })();
  const limitBytes = int('limitBytes');
  const sinceSeconds = int('sinceSeconds');
  const sinceTimeText = q.get('sinceTime');
  let sinceTime: number | undefined;
  if (sinceTimeText) {
    sinceTime = Date.parse(sinceTimeText);
    if (Number.isNaN(sinceTime)) throw new LogLookupError(400, '{"message": "Unable to decode query."}');
  }
  if (
    (tailLines !== undefined && tailLines < 0) ||
    (limitBytes !== undefined && limitBytes < 1) ||
    (sinceSeconds !== undefined && sinceSeconds < 1) ||
    (sinceSeconds !== undefined && sinceTime !== undefined)
  )
    throw new LogLookupError(422, '{"message": "Invalid request."}');
  return {
    follow: bool(q.get('follow')),
    previous: bool(q.get('previous')),
    timestamps: bool(q.get('timestamps')),
    tailLines,
    limitBytes,
    since: sinceSeconds !== undefined ? now - sinceSeconds * 1000 : sinceTime,
  };
}

function htmlEscape(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&#34;')
    .replace(/'/g, '&#39;');
}

export class NodeAgentServer {
  private readonly servers: Server[] = [];
  private readonly clock: Clock;
  private readonly requests;
  private readonly open = new Set<ServerResponse>();
  private readonly upgraded = new Set<Duplex>();
  private readonly streaming: StreamingEndpoints;
  readonly ports: Ports = { port: 0, readOnlyPort: 0, healthzPort: 0 };

  constructor(private readonly d: ServerDeps) {
    this.clock = d.clock ?? realClock;
    this.streaming = new StreamingEndpoints({
      pods: d.pods,
      runtime: d.runtime,
      runtimeName: d.config.runtime,
    });
    this.requests = d.metrics.counter({
      name: 'kubelet_http_requests_total',
      help: 'Number of the http requests received since the server started',
      labels: ['method', 'path', 'server_type', 'long_running'],
    });
  }

  private async listenOn(server: Server, port: number, host: string): Promise<number> {
    await new Promise<void>((resolveListen, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolveListen();
      });
    });
    this.servers.push(server);
    return (server.address() as AddressInfo).port;
  }

  /** Opens the ports (0 for read-only or healthz: not served). */
  async listen(): Promise<Ports> {
    const c = this.d.config;
    const secure = createHttpsServer(
      {
        cert: this.d.tls.certPem,
        key: this.d.tls.keyPem,
        ...(this.d.tls.clientCaPem
          ? { ca: this.d.tls.clientCaPem, requestCert: true, rejectUnauthorized: false }
          : {}),
        ...(c.tlsMinVersion ? { minVersion: TLS_VERSIONS[c.tlsMinVersion] } : {}),
      },
      (req, res) => void this.serve(req, res, 'secure'),
    );
    secure.on(
      'upgrade',
      (req: IncomingMessage, socket: Duplex, head: Buffer) => void this.upgrade(req, socket, head),
    );
    this.ports.port = await this.listenOn(secure, c.port, c.address);
    if (c.readOnlyPort > 0) {
      const ro = createHttpServer((req, res) => void this.serve(req, res, 'readonly'));
      this.ports.readOnlyPort = await this.listenOn(ro, c.readOnlyPort, c.address);
    }
    if (c.healthzPort > 0) {
      const hz = createHttpServer((req, res) => void this.serve(req, res, 'healthz'));
      this.ports.healthzPort = await this.listenOn(hz, c.healthzPort, c.healthzBindAddress);
    }
    log.info('serving', { address: c.address, ...this.ports });
    return this.ports;
  }

  /** Stops accepting, ends open streams (log follows), and closes the ports. */
  async close(): Promise<void> {
    for (const res of this.open) res.destroy();
    for (const socket of this.upgraded) socket.destroy();
    await Promise.all(
      this.servers.map(
        (s) =>
          new Promise<void>((r) => {
            s.close(() => r());
            (s as any).closeAllConnections?.();
          }),
      ),
    );
    this.servers.length = 0;
  }

  private async serve(req: IncomingMessage, res: ServerResponse, mode: Mode): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    const segment = path.split('/')[1] ?? '';
    const longRunning = segment === 'containerLogs' && bool(url.searchParams.get('follow'));
    this.requests.inc({
      method: req.method ?? 'GET',
      path: segment,
      server_type: mode === 'secure' ? 'readwrite' : 'readonly',
      long_running: String(longRunning),
    });
    this.open.add(res);
    res.on('close', () => this.open.delete(res));
    try {
      if (mode === 'secure') {
        const a = await this.d.auth.check(req, path);
        if (!a.ok) return text(res, a.code, a.message);
        log.v(5)?.info('request', { user: a.user.name, method: req.method, path });
      }
      await this.route(req, res, mode, path, url.searchParams);
    } catch (err) {
      if (err instanceof LogLookupError) return text(res, err.code, err.message);
      log.error('request failed', { path, err: String(err) });
      if (!res.headersSent) text(res, 500, String((err as Error)?.message ?? err));
      else res.destroy();
    }
  }

  /** An upgrade (exec, attach, port-forward) on the secure port: authorized, then proxied to the runtime. */
  private async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    socket.on('error', () => {});
    this.upgraded.add(socket);
    socket.once('close', () => this.upgraded.delete(socket));
    const url = new URL(req.url ?? '/', 'http://localhost');
    const path = url.pathname;
    this.requests.inc({
      method: req.method ?? 'GET',
      path: path.split('/')[1] ?? '',
      server_type: 'readwrite',
      long_running: 'true',
    });
    const refuse = (code: number, message: string) =>
      writeRawResponse(
        socket,
        code,
        STATUS_TEXT[code] ?? 'Error',
        { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' },
        message,
      );
    try {
      const a = await this.d.auth.check(req, path);
      if (!a.ok) return refuse(a.code, a.message);
      log.v(5)?.info('upgrade', { user: a.user.name, method: req.method, path });
      if (!isStreamingPath(path)) return refuse(404, '404 page not found\n');
      await this.streaming.upgrade(req, socket, head, path, url.searchParams);
    } catch (err) {
      log.error('upgrade failed', { path, err: String(err) });
      refuse(500, String((err as Error)?.message ?? err));
    }
  }

  private async route(
    req: IncomingMessage,
    res: ServerResponse,
    mode: Mode,
    path: string,
    q: URLSearchParams,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
    if (p === '/healthz' || p.startsWith('/healthz/')) return this.healthz(res, p);
    if (mode === 'healthz') return text(res, 404, '404 page not found\n');
    if (
      method !== 'GET' &&
      method !== 'HEAD' &&
      !p.startsWith('/exec') &&
      !p.startsWith('/run') &&
      !p.startsWith('/attach') &&
      !p.startsWith('/portForward')
    )
      return text(res, 405, 'Method Not Allowed');
    switch (p) {
      case '/pods':
        return json(res, 200, {
          kind: 'PodList',
          apiVersion: 'v1',
          metadata: {},
          items: this.d.pods.runningPods(),
        });
      case '/spec':
        return json(res, 200, machineSpec(this.d.stats));
      case '/stats/summary':
        return json(res, 200, summary(this.d.stats, bool(q.get('only_cpu_and_memory'))));
      case '/metrics':
        return text(res, 200, this.d.metrics.expose(), METRICS_CONTENT_TYPE);
      case '/metrics/cadvisor':
        return text(res, 200, cadvisorMetrics(this.d.stats), METRICS_CONTENT_TYPE);
      case '/metrics/resource':
        return text(res, 200, resourceMetrics(this.d.stats), METRICS_CONTENT_TYPE);
      case '/metrics/probes':
        return text(res, 200, '', METRICS_CONTENT_TYPE);
    }
    if (mode === 'readonly') return text(res, 404, '404 page not found\n');
    if (p === '/runningpods')
      return json(res, 200, {
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: {},
        items: this.d.pods.runningPods(),
      });
    if (p === '/configz') return json(res, 200, { kubeletconfig: this.d.configz() });
    if (p.startsWith('/containerLogs/')) return this.containerLogs(req, res, p, q);
    if (p === '/logs' || p.startsWith('/logs/')) return this.logs(res, path);
    if (isStreamingPath(p)) {
      try {
        return await this.streaming.request(req, res, p, q);
      } catch (err) {
        if (err instanceof StreamError) return text(res, err.code, err.message);
        throw err;
      }
    }
    return text(res, 404, '404 page not found\n');
  }

  private healthz(res: ServerResponse, p: string): void {
    const checks = { ping: true, log: true, ...this.d.checks() };
    if (p !== '/healthz') {
      const name = p.slice('/healthz/'.length);
      if (!(name in checks)) return text(res, 404, '404 page not found\n');
      return (checks as Record<string, boolean>)[name]
        ? text(res, 200, 'ok')
        : text(res, 500, `internal server error: ${name} check failed`);
    }
    const failed = Object.entries(checks).filter(([, ok]) => !ok);
    if (!failed.length) return text(res, 200, 'ok');
    const body = Object.entries(checks)
      .map(([n, ok]) => (ok ? `[+]${n} ok` : `[-]${n} failed: reason withheld`))
      .join('\n');
    text(res, 500, `${body}\nhealthz check failed\n`);
  }

  private async containerLogs(
    req: IncomingMessage,
    res: ServerResponse,
    p: string,
    q: URLSearchParams,
  ): Promise<void> {
    const parts = p.split('/').slice(2).map(decodeURIComponent);
    const [ns, pod, container] = parts;
    if (!pod) throw new LogLookupError(400, '{"message": "Missing podID."}');
    if (!container) throw new LogLookupError(400, '{"message": "Missing container name."}');
    if (!ns) throw new LogLookupError(400, '{"message": "Missing podNamespace."}');
    const opts = parseLogQuery(q, this.clock.now());
    const target = this.d.pods.logTarget(ns, pod, container, opts.previous);
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-cache' });
    if (req.method === 'HEAD') return void res.end();
    // The headers go out at once, so a follow shows as streaming to the client.
    res.flushHeaders();
    for await (const chunk of readContainerLog(target.path, opts, {
      running: target.running,
      signal: ac.signal,
    })) {
      if (ac.signal.aborted) break;
      if (!res.write(chunk)) await new Promise((r) => res.once('drain', r));
    }
    res.end();
  }

  /**
   * /logs/: a file server over the log directory (listings like Go's
   * http.FileServer, without its redirects: through the apiserver's node proxy a
   * redirect would leave the proxy path, so links carry the directory's name
   * when the path has no trailing slash).
   */
  private logs(res: ServerResponse, rawPath: string): void {
    const relPath = rawPath === '/logs' ? '' : rawPath.slice('/logs/'.length);
    const rel = normalize(decodeURIComponent(relPath) || '.');
    const root = resolve(this.d.logsDir);
    const full = resolve(root, rel);
    if (full !== root && !full.startsWith(root + sep)) return text(res, 404, '404 page not found\n');
    if (!existsSync(full)) return text(res, 404, '404 page not found\n');
    let real: string;
    try {
      real = realpathSync(full);
    } catch {
      return text(res, 404, '404 page not found\n');
    }
    const realRoot = existsSync(root) ? realpathSync(root) : root;
    if (real !== realRoot && !real.startsWith(realRoot + sep)) return text(res, 404, '404 page not found\n');
    const st = statSync(real);
    if (st.isDirectory()) {
      const prefix = rawPath.endsWith('/') ? '' : `${rawPath.split('/').pop()}/`;
      const entries = readdirSync(real, { withFileTypes: true })
        .map((e) => {
          let dir = e.isDirectory();
          if (e.isSymbolicLink()) {
            try {
              dir = statSync(join(real, e.name)).isDirectory();
            } catch {
              dir = false;
            }
          }
          return dir ? `${e.name}/` : e.name;
        })
        .sort();
      const body = `<pre>\n${entries.map((n) => `<a href="${htmlEscape(encodeURI(prefix + n))}">${htmlEscape(n)}</a>`).join('\n')}\n</pre>\n`;
      return text(res, 200, body, 'text/html; charset=utf-8');
    }
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8', 'content-length': st.size });
    createReadStream(real).pipe(res);
  }
}
