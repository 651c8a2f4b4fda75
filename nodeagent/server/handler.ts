// The kubelet API's routes, for any node: the node agent's own (server.ts) or
// each of the simulated nodes a simulator hosts (simulated/kubelet-api.ts). A
// request comes with the node it is for; what differs between nodes (who may
// ask, its pods, figures, logs) is that node's KubeletNode.
//   secure (--port 10250)     authenticated and authorized: /healthz, /pods,
//                             /runningpods, /spec, /stats/summary, /metrics[/cadvisor|/resource|/probes],
//                             /containerLogs/{ns}/{pod}/{container}, /logs/, /configz,
//                             /exec, /attach, /portForward, /run (streaming.ts)
//   readonly (10255)          no auth: /healthz, /pods, /spec, /stats, /metrics...
//   healthz (10248)           /healthz
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createReadStream, existsSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join, normalize, resolve, sep } from 'node:path';
import type { Duplex } from 'node:stream';
import { realClock, type Clock } from '../../shared/client/clock';
import type { KubeObject } from '../../shared/client/types';
import { stringifyJSONInt64 } from '../../shared/codec/json-int64';
import { logger } from '../../shared/log';
import { METRICS_CONTENT_TYPE, type MetricsRegistry } from '../../shared/metrics/registry';
import { writeRawResponse } from '../../shared/streaming/upgrade';
import { LogLookupError, type LogTarget } from '../pods/pod-logs';
import { readContainerLog, readLogText, type LogOptions } from '../pods/logs';
import type { NodeAuth } from './auth';
import { isStreamingPath, STATUS_TEXT, StreamError, type StreamingEndpoints } from './streaming';
import { cadvisorMetrics, machineSpec, resourceMetrics, summary, type StatsSources } from './stats';

const log = logger('nodeagent/server');

export type Mode = 'secure' | 'readonly' | 'healthz';

/** What one node serves. */
export interface KubeletNode {
  auth: NodeAuth;
  pods: {
    /** /pods and /runningpods. */
    runningPods(): KubeObject[];
    /** Where /containerLogs reads, with the kubelet's errors (LogLookupError). */
    logTarget(ns: string, pod: string, container: string, previous: boolean): LogTarget;
  };
  stats: StatsSources;
  streaming: StreamingEndpoints;
  /** The effective configuration (GET /configz). */
  configz(): Record<string, unknown>;
  /** Named health checks; all must pass for /healthz. */
  checks(): Record<string, boolean>;
  /** <root-dir>/logs, served at /logs/ (absent: nothing there). */
  logsDir?: string;
}

export function text(
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

export class KubeletHandler {
  private readonly clock: Clock;
  private readonly requests;
  private readonly open = new Set<ServerResponse>();
  private readonly upgraded = new Set<Duplex>();

  constructor(
    private readonly metrics: MetricsRegistry,
    clock?: Clock,
  ) {
    this.clock = clock ?? realClock;
    this.requests = metrics.counter({
      name: 'kubelet_http_requests_total',
      help: 'Number of the http requests received since the server started',
      labels: ['method', 'path', 'server_type', 'long_running'],
    });
  }

  /** Ends the open streams (log follows, upgraded connections). */
  closeStreams(): void {
    for (const res of this.open) res.destroy();
    for (const socket of this.upgraded) socket.destroy();
  }

  /** One request on one of the ports of a node. */
  async serve(node: KubeletNode, req: IncomingMessage, res: ServerResponse, mode: Mode): Promise<void> {
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
        const a = await node.auth.check(req, path);
        if (!a.ok) return text(res, a.code, a.message);
        log.v(5)?.info('request', { user: a.user.name, method: req.method, path });
      }
      await this.route(node, req, res, mode, path, url.searchParams);
    } catch (err) {
      if (err instanceof LogLookupError) return text(res, err.code, err.message);
      log.error('request failed', { path, err: String(err) });
      if (!res.headersSent) text(res, 500, String((err as Error)?.message ?? err));
      else res.destroy();
    }
  }

  /** An upgrade (exec, attach, port-forward) on the secure port: authorized, then proxied to the runtime. */
  async upgrade(node: KubeletNode, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
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
      const a = await node.auth.check(req, path);
      if (!a.ok) return refuse(a.code, a.message);
      log.v(5)?.info('upgrade', { user: a.user.name, method: req.method, path });
      if (!isStreamingPath(path)) return refuse(404, '404 page not found\n');
      await node.streaming.upgrade(req, socket, head, path, url.searchParams);
    } catch (err) {
      log.error('upgrade failed', { path, err: String(err) });
      refuse(500, String((err as Error)?.message ?? err));
    }
  }

  private async route(
    node: KubeletNode,
    req: IncomingMessage,
    res: ServerResponse,
    mode: Mode,
    path: string,
    q: URLSearchParams,
  ): Promise<void> {
    const method = req.method ?? 'GET';
    const p = path.length > 1 ? path.replace(/\/+$/, '') : path;
    if (p === '/healthz' || p.startsWith('/healthz/')) return this.healthz(node, res, p);
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
          items: node.pods.runningPods(),
        });
      case '/spec':
        return json(res, 200, machineSpec(node.stats));
      case '/stats/summary':
        return json(res, 200, summary(node.stats, bool(q.get('only_cpu_and_memory'))));
      case '/metrics':
        return text(res, 200, this.metrics.expose(), METRICS_CONTENT_TYPE);
      case '/metrics/cadvisor':
        return text(res, 200, cadvisorMetrics(node.stats), METRICS_CONTENT_TYPE);
      case '/metrics/resource':
        return text(res, 200, resourceMetrics(node.stats), METRICS_CONTENT_TYPE);
      case '/metrics/probes':
        return text(res, 200, '', METRICS_CONTENT_TYPE);
    }
    if (mode === 'readonly') return text(res, 404, '404 page not found\n');
    if (p === '/runningpods')
      return json(res, 200, {
        kind: 'PodList',
        apiVersion: 'v1',
        metadata: {},
        items: node.pods.runningPods(),
      });
    if (p === '/configz') return json(res, 200, { kubeletconfig: node.configz() });
    if (p.startsWith('/containerLogs/')) return this.containerLogs(node, req, res, p, q);
    if (p === '/logs' || p.startsWith('/logs/')) return this.logs(node, res, path);
    if (isStreamingPath(p)) {
      try {
        return await node.streaming.request(req, res, p, q);
      } catch (err) {
        if (err instanceof StreamError) return text(res, err.code, err.message);
        throw err;
      }
    }
    return text(res, 404, '404 page not found\n');
  }

  private healthz(node: KubeletNode, res: ServerResponse, p: string): void {
    const checks = { ping: true, log: true, ...node.checks() };
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
    node: KubeletNode,
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
    const target = node.pods.logTarget(ns, pod, container, opts.previous);
    const ac = new AbortController();
    res.on('close', () => ac.abort());
    res.writeHead(200, { 'content-type': 'text/plain', 'cache-control': 'no-cache' });
    if (req.method === 'HEAD') return void res.end();
    // The headers go out at once, so a follow shows as streaming to the client.
    res.flushHeaders();
    const follow = { running: target.running, signal: ac.signal };
    const chunks =
      target.text !== undefined
        ? readLogText(target.text, opts, follow)
        : readContainerLog(target.path, opts, follow);
    for await (const chunk of chunks) {
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
  private logs(node: KubeletNode, res: ServerResponse, rawPath: string): void {
    const relPath = rawPath === '/logs' ? '' : rawPath.slice('/logs/'.length);
    const rel = normalize(decodeURIComponent(relPath) || '.');
    if (!node.logsDir) return text(res, 404, '404 page not found\n');
    const root = resolve(node.logsDir);
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
