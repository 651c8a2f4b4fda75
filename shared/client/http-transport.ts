// The client's HTTP transport on node:http2 and node:https (issue 39: undici's dispatchers and
// its WebAssembly HTTP/1.1 parser cost every process that talks to the apiserver ~10 MB of
// RSS). HTTP/2 by default, as client-go: one session per origin (more when the server's
// SETTINGS_MAX_CONCURRENT_STREAMS is reached), ALPN with HTTP/1.1 when the server does not
// offer h2, and plain http:// origins over HTTP/1.1. HTTP/1.1 uses a keep-alive agent of
// `connections` sockets per origin. Responses as undici's request() gives them: a status,
// lower-case headers and a body stream (see http-body.ts).
import * as http from 'node:http';
import * as https from 'node:https';
import type { Readable } from 'node:stream';
import {
  abortError,
  headersFrom,
  requestHeaders,
  ResponseBody,
  transportError,
  type ResponseHeaders,
} from './http-body';
import { H2Pool, type TlsOptions } from './h2-pool';

export type { TlsOptions } from './h2-pool';
export { ResponseBody } from './http-body';

export type { ResponseHeaders } from './http-body';

export interface HttpRequest {
  /** scheme://host:port */
  origin: string;
  /** The path with its query. */
  path: string;
  method: string;
  headers?: Record<string, string | string[] | undefined>;
  body?: string | Buffer;
  signal?: AbortSignal;
  /** The longest wait for the response's headers in ms (0 or unset: none). */
  headersTimeout?: number;
  /** The longest wait between two chunks of the body in ms (0 or unset: none). */
  bodyTimeout?: number;
}

export interface HttpResponse {
  statusCode: number;
  headers: ResponseHeaders;
  body: ResponseBody;
}

export interface HttpTransportOptions {
  /** Offer h2 in ALPN on https:// origins (default true). */
  http2?: boolean;
  /** HTTP/1.1 sockets per origin; null or unset: unlimited. */
  connections?: number | null;
  tls?: TlsOptions;
  /** How long an idle HTTP/1.1 socket is kept (default 30 s). */
  keepAliveMs?: number;
  /** HTTP/2: ping a session nothing was read from for this long (default 30 s, client-go's ReadIdleTimeout). */
  readIdleTimeoutMs?: number;
  /** HTTP/2: close a session whose ping is not answered in this long (default 15 s, client-go's PingTimeout). */
  pingTimeoutMs?: number;
}

/** The per-request bookkeeping: one settlement, its timers, the caller's signal, the in-flight count. */
export class Exchange {
  /** Ends the request under way (set by whoever started it). */
  cancel?: (err: Error) => void;
  private settled = false;
  private body?: ResponseBody;
  private timer?: NodeJS.Timeout;
  private readonly onAbort = () => {
    const err = abortError(this.o.signal?.reason);
    if (this.body) this.body.destroy(err);
    else this.fail(err);
  };

  constructor(
    readonly o: HttpRequest,
    private readonly release: () => void,
    private readonly resolve: (r: HttpResponse) => void,
    private readonly reject: (err: Error) => void,
  ) {
    o.signal?.addEventListener('abort', this.onAbort, { once: true });
    if (o.headersTimeout) {
      this.timer = setTimeout(
        () =>
          this.fail(transportError(`no response headers in ${o.headersTimeout} ms`, 'ERR_HEADERS_TIMEOUT')),
        o.headersTimeout,
      );
      this.timer.unref();
    }
  }

  get isSettled(): boolean {
    return this.settled;
  }

  respond(
    statusCode: number,
    headers: ResponseHeaders,
    source: Readable,
    cancelSource: () => void,
    complete: () => boolean,
  ): void {
    if (this.settled) {
      cancelSource();
      return;
    }
    this.settled = true;
    clearTimeout(this.timer);
    this.body = new ResponseBody(
      source,
      cancelSource,
      this.o.bodyTimeout ?? 0,
      () => this.finish(),
      complete,
    );
    this.resolve({ statusCode, headers, body: this.body });
  }

  fail(err: Error): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.cancel?.(err);
    this.finish();
    this.reject(err);
  }

  private finish(): void {
    this.o.signal?.removeEventListener('abort', this.onAbort);
    this.release();
  }
}

export class HttpTransport {
  private readonly h2?: H2Pool;
  private h1s?: https.Agent;
  private h1?: http.Agent;
  private inflight = 0;
  private idle?: () => void;
  private closed = false;

  constructor(private readonly opts: HttpTransportOptions = {}) {
    if (opts.http2 ?? true) {
      this.h2 = new H2Pool({
        tls: opts.tls ?? {},
        readIdleTimeoutMs: opts.readIdleTimeoutMs ?? 30_000,
        pingTimeoutMs: opts.pingTimeoutMs ?? 15_000,
      });
    }
  }

  get isClosed(): boolean {
    return this.closed;
  }

  request(o: HttpRequest): Promise<HttpResponse> {
    if (this.closed) return Promise.reject(transportError('the client is closed', 'ERR_CLIENT_CLOSED'));
    if (o.signal?.aborted) return Promise.reject(abortError(o.signal.reason));
    this.inflight++;
    return new Promise<HttpResponse>((resolve, reject) => {
      const ex = new Exchange(o, () => this.released(), resolve, reject);
      const h2 = o.origin.startsWith('https:') ? this.h2 : undefined;
      if (!h2) return this.sendH1(ex);
      h2.send(ex, o.origin).then(
        (sent) => {
          if (!sent) this.sendH1(ex);
        },
        (err: Error) => ex.fail(err),
      );
    });
  }

  private released(): void {
    if (--this.inflight === 0 && this.idle) this.idle();
  }

  private agentFor(origin: string): http.Agent {
    const common = {
      keepAlive: true,
      timeout: this.opts.keepAliveMs ?? 30_000,
      maxSockets: this.opts.connections ?? Infinity,
      scheduling: 'lifo' as const,
    };
    if (!origin.startsWith('https:')) return (this.h1 ??= new http.Agent(common));
    return (this.h1s ??= new https.Agent({ ...common, ...this.opts.tls, ALPNProtocols: ['http/1.1'] }));
  }

  private sendH1(ex: Exchange): void {
    if (ex.isSettled) return;
    const o = ex.o;
    let u: URL;
    try {
      u = new URL(o.origin);
    } catch (err) {
      return ex.fail(err as Error);
    }
    const mod = u.protocol === 'https:' ? https : http;
    const req = mod.request({
      agent: this.agentFor(o.origin),
      protocol: u.protocol,
      hostname: u.hostname.replace(/^\[(.*)\]$/, '$1'),
      port: u.port,
      path: o.path,
      method: o.method,
      headers: requestHeaders(o.headers, o.body),
    });
    ex.cancel = () => req.destroy();
    req.on('error', (err) => ex.fail(err));
    req.once('response', (res) => {
      ex.respond(
        res.statusCode ?? 0,
        headersFrom(res.headersDistinct),
        res,
        () => res.destroy(),
        () => res.complete,
      );
    });
    req.end(o.body);
  }

  /** Closes the connections: in-flight requests and bodies get graceMs to finish, then are cut. */
  async close(graceMs = 1000): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.h2?.drain();
    if (this.inflight > 0) {
      let timer: NodeJS.Timeout | undefined;
      await new Promise<void>((r) => {
        this.idle = r;
        timer = setTimeout(r, graceMs);
      });
      clearTimeout(timer);
    }
    this.h2?.destroy();
    this.h1?.destroy();
    this.h1s?.destroy();
  }
}
