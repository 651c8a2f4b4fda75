// The REST layer: one HTTP transport per apiserver (node:http2 sessions when the server
// offers h2, else a keep-alive node:https agent: http-transport.ts), TLS and bearer token from the ClientConfig, client-go's
// QPS/burst limiter on every request but watches, content negotiation
// (Protobuf first for built-in kinds, JSON otherwise), Status errors as
// StatusError, and client-go's bounded retry on Retry-After (429 and 5xx) and
// on connection resets for GETs.
import { readFileSync } from 'node:fs';
import { basename, extname } from 'node:path';
import { HttpTransport, type HttpResponse, type ResponseBody } from './http-transport';
import { logger } from '../log';
import { decodeObject, encodeObject, protobufSupported, PROTOBUF_MEDIA_TYPE } from '../codec/protobuf';
import { goShapeObject } from '../codec/go-json';
import { parseJSONInt64, stringifyJSONInt64 } from '../codec/json-int64';
import type { ClientConfig } from './kubeconfig';
import { realClock, type Clock } from './clock';
import { newRateLimiter, type RateLimiter } from './rate-limiter';
import { genericStatusError, isAbortError, isProbableEOF, statusErrorFromObject } from './errors';
import { GO_ROOT_POOL_TRUST } from '../pki/trust';

const log = logger('client');

export const JSON_MEDIA_TYPE = 'application/json';
export { PROTOBUF_MEDIA_TYPE };

export interface ClientOptions {
  /** --kube-api-qps: 0 means client-go's default (5), negative means no limit. */
  qps?: number;
  /** --kube-api-burst: 0 means client-go's default (10). */
  burst?: number;
  /** A limiter to use instead of one built from qps/burst (e.g. shared between clients). */
  rateLimiter?: RateLimiter;
  /** --kube-api-content-type: Protobuf (default) or JSON; custom resources always use JSON. */
  contentType?: string;
  userAgent?: string;
  /**
   * The bearer token to send instead of the config's (read per request, so it may rotate):
   * kube-controller-manager's service-account clients take their tokens from TokenRequest.
   */
  bearerToken?: () => string | undefined;
  /** Offer HTTP/2 in ALPN (default true). */
  http2?: boolean;
  /** Timeout of non-watch requests in ms; 0 (default) means none, like rest.Config.Timeout. */
  timeoutMs?: number;
  /** Retries after Retry-After answers and GET connection resets (client-go: 10). */
  maxRetries?: number;
  clock?: Clock;
  /** HTTP/1.1 connections per origin; default unlimited (HTTP/2 opens a session per server stream limit). */
  connections?: number;
}

export type QueryValue = string | number | boolean | undefined | null;

export interface RequestOptions {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Absolute API path ("/api/v1/namespaces"), without the server's own path prefix. */
  path: string;
  query?: URLSearchParams | Record<string, QueryValue>;
  /** An object body: Protobuf when `protobuf` is set and its kind has a Protobuf form, else JSON. */
  body?: unknown;
  /** A body already serialized, sent with `contentType` (patches). */
  rawBody?: string | Buffer;
  contentType?: string;
  /** The resource speaks Protobuf: ask for it first and send bodies in it. */
  protobuf?: boolean;
  /** Accept header to use instead of the negotiated one (discovery, tables). */
  accept?: string;
  signal?: AbortSignal;
  /** Overrides the client's request timeout (ms); 0 disables. */
  timeoutMs?: number;
}

export interface RawResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

export interface StreamResponse {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: ResponseBody;
  contentType: string;
  /** Ends the stream (and the HTTP/2 stream or connection under it). */
  abort(): void;
}

const VERSION = 'v0.1.0';

export function defaultUserAgent(): string {
  const script = process.argv[1] ? basename(process.argv[1], extname(process.argv[1])) : 'node';
  return `${script || 'node'}/${VERSION} (${process.platform}/${process.arch}) kubernetes/tkube`;
}

/** The bearer token, re-read from tokenFile once a minute like client-go (projected tokens rotate). */
class TokenSource {
  private cached?: string;
  private readAt = 0;
  constructor(
    private readonly token?: string,
    private readonly file?: string,
    private readonly clock: Clock = realClock,
  ) {}
  get(): string | undefined {
    if (!this.file) return this.token;
    const now = this.clock.now();
    if (this.cached === undefined || now - this.readAt > 60_000) {
      try {
        this.cached = readFileSync(this.file, 'utf8').trim();
        this.readAt = now;
      } catch (err) {
        if (this.cached === undefined) this.cached = this.token;
        log.warn('cannot read token file', { file: this.file, err: String(err) });
      }
    }
    return this.cached;
  }
}

/** The connections and credentials, shared by every client derived from one config. */
export class Transport {
  readonly origin: string;
  readonly prefix: string;
  readonly http: HttpTransport;
  private readonly tokens: TokenSource;

  constructor(config: ClientConfig, opts: { http2?: boolean; connections?: number; clock?: Clock } = {}) {
    const url = new URL(config.server);
    this.origin = url.origin;
    this.prefix = url.pathname.replace(/\/+$/, '');
    this.tokens = new TokenSource(config.token, config.tokenFile, opts.clock);
    this.http = new HttpTransport({
      http2: opts.http2 ?? true,
      connections: opts.connections ?? null,
      keepAliveMs: 30_000,
      tls: {
        ca: config.caPem,
        cert: config.certPem,
        key: config.keyPem,
        rejectUnauthorized: !config.insecure,
        ...GO_ROOT_POOL_TRUST,
        ...(config.serverName ? { servername: config.serverName } : {}),
      },
    });
  }

  get isClosed(): boolean {
    return this.http.isClosed;
  }

  authorization(): string | undefined {
    const t = this.tokens.get();
    return t ? `Bearer ${t}` : undefined;
  }

  /** Closes the pool: in-flight requests get graceMs to finish (watches should be stopped first), then are cut. */
  async close(graceMs = 1000): Promise<void> {
    await this.http.close(graceMs);
  }
}

function headerString(h: string | string[] | undefined): string {
  return Array.isArray(h) ? (h[0] ?? '') : (h ?? '');
}

function retryAfterSeconds(headers: RawResponse['headers']): number | undefined {
  const v = headerString(headers['retry-after']).trim();
  if (!/^\d+$/.test(v)) return undefined;
  return Number(v);
}

/** Decodes a response body by its Content-Type: Protobuf envelope, JSON, or text. */
export function decodeBody(contentType: string, body: Buffer): any {
  if (body.length === 0) return undefined;
  // As a Go client's struct would hold it: the same object JSON gives (zero fields included).
  if (contentType.startsWith(PROTOBUF_MEDIA_TYPE)) return goShapeObject(decodeObject(body));
  if (contentType === '' || contentType.startsWith('application/json') || /\+json\b/.test(contentType)) {
    return parseJSONInt64(body.toString('utf8'));
  }
  return body.toString('utf8');
}

function buildQuery(q: RequestOptions['query']): string {
  if (!q) return '';
  if (q instanceof URLSearchParams) {
    const s = q.toString();
    return s ? `?${s}` : '';
  }
  const p = new URLSearchParams();
  for (const [k, v] of Object.entries(q)) if (v !== undefined && v !== null) p.append(k, String(v));
  const s = p.toString();
  return s ? `?${s}` : '';
}

const seenWarnings = new Set<string>();

function logWarnings(headers: RawResponse['headers']): void {
  const w = headers['warning'];
  if (!w) return;
  for (const line of Array.isArray(w) ? w : [w]) {
    // RFC 7234 warnings: 299 - "text"; node:http2 joins repeated headers with ", ".
    const texts = [...line.matchAll(/(?:^|,\s*)\d{3}\s+\S+\s+"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
    for (const text of texts.length ? texts : [line]) {
      if (seenWarnings.has(text)) continue;
      if (seenWarnings.size > 1000) seenWarnings.clear();
      seenWarnings.add(text);
      log.warn(`Warning: ${text}`);
    }
  }
}

export class RestClient {
  readonly limiter: RateLimiter;
  readonly protobuf: boolean;
  readonly userAgent: string;
  readonly clock: Clock;
  private readonly maxRetries: number;
  private readonly timeoutMs: number;

  constructor(
    readonly transport: Transport,
    readonly options: ClientOptions = {},
  ) {
    this.clock = options.clock ?? realClock;
    this.limiter = options.rateLimiter ?? newRateLimiter(options.qps, options.burst, this.clock);
    const ct = options.contentType ?? PROTOBUF_MEDIA_TYPE;
    if (ct !== PROTOBUF_MEDIA_TYPE && ct !== JSON_MEDIA_TYPE) {
      throw new Error(`unsupported content type "${ct}": use ${JSON_MEDIA_TYPE} or ${PROTOBUF_MEDIA_TYPE}`);
    }
    this.protobuf = ct === PROTOBUF_MEDIA_TYPE;
    this.userAgent = options.userAgent ?? defaultUserAgent();
    this.maxRetries = options.maxRetries ?? 10;
    this.timeoutMs = options.timeoutMs ?? 0;
  }

  private encode(o: RequestOptions, useProtobuf: boolean): { body?: string | Buffer; contentType?: string } {
    if (o.rawBody !== undefined) return { body: o.rawBody, contentType: o.contentType ?? JSON_MEDIA_TYPE };
    if (o.body === undefined) return {};
    const b = o.body as any;
    if (useProtobuf && b && typeof b === 'object' && protobufSupported(b.apiVersion, b.kind)) {
      return { body: encodeObject(b), contentType: PROTOBUF_MEDIA_TYPE };
    }
    return { body: stringifyJSONInt64(b), contentType: JSON_MEDIA_TYPE };
  }

  private headers(o: RequestOptions, contentType: string | undefined): Record<string, string> {
    const useProtobuf = this.protobuf && !!o.protobuf;
    const h: Record<string, string> = {
      accept: o.accept ?? (useProtobuf ? `${PROTOBUF_MEDIA_TYPE}, ${JSON_MEDIA_TYPE}` : JSON_MEDIA_TYPE),
      'user-agent': this.userAgent,
    };
    if (contentType) h['content-type'] = contentType;
    const token = this.options.bearerToken?.();
    const auth = token ? `Bearer ${token}` : this.transport.authorization();
    if (auth) h.authorization = auth;
    return h;
  }

  private signalFor(o: RequestOptions, watch: boolean): AbortSignal | undefined {
    const ms = watch ? 0 : (o.timeoutMs ?? this.timeoutMs);
    if (!ms) return o.signal;
    const t = AbortSignal.timeout(ms);
    return o.signal ? AbortSignal.any([o.signal, t]) : t;
  }

  /**
   * Sends a request with client-go's retry rules and returns the response (body unread).
   * Non-watch requests wait for the rate limiter first.
   */
  private async send(o: RequestOptions, watch: boolean): Promise<HttpResponse> {
    const { body, contentType } = this.encode(o, this.protobuf && !!o.protobuf);
    const path = this.transport.prefix + o.path + buildQuery(o.query);
    const signal = this.signalFor(o, watch);
    // Watches are not throttled on their first try, like client-go's Request.Watch.
    if (!watch) await this.limiter.wait(signal);
    for (let attempt = 1; ; attempt++) {
      let res: HttpResponse;
      try {
        res = await this.transport.http.request({
          origin: this.transport.origin,
          path,
          method: o.method,
          headers: this.headers(o, contentType),
          body,
          signal,
          headersTimeout: 300_000,
          bodyTimeout: watch ? 0 : 300_000,
        });
      } catch (err) {
        if (signal?.aborted || isAbortError(err)) throw signal?.reason ?? err;
        // A reset connection on a GET is retried after a second (client-go's artificial Retry-After).
        if (
          o.method === 'GET' &&
          isProbableEOF(err) &&
          attempt <= this.maxRetries &&
          !this.transport.isClosed
        ) {
          log.v(4)?.info('retrying request after a connection error', { path, attempt, err: String(err) });
          await this.clock.sleep(1000, signal);
          signal?.throwIfAborted();
          await this.limiter.wait(signal);
          continue;
        }
        throw err;
      }
      const code = res.statusCode;
      const wait = code === 429 || code >= 500 ? retryAfterSeconds(res.headers) : undefined;
      if (wait !== undefined && attempt <= this.maxRetries) {
        await res.body.dump().catch(() => {});
        log.v(4)?.info('retrying after Retry-After', { path, code, seconds: wait, attempt });
        await this.clock.sleep(wait * 1000, signal);
        signal?.throwIfAborted();
        await this.limiter.wait(signal);
        continue;
      }
      return res;
    }
  }

  /** A request whose whole body is read; failures are thrown as StatusError. */
  async raw(o: RequestOptions): Promise<RawResponse> {
    const res = await this.send(o, false);
    let body: Buffer;
    try {
      body = await res.body.buffer();
    } catch (err) {
      if (o.signal?.aborted) throw o.signal.reason;
      throw err;
    }
    logWarnings(res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) throw this.errorFor(res.statusCode, res.headers, body);
    return { statusCode: res.statusCode, headers: res.headers, body };
  }

  /** A request decoded by its Content-Type (undefined for an empty body). */
  async request<T = any>(o: RequestOptions): Promise<T> {
    const r = await this.raw(o);
    const obj = decodeBody(headerString(r.headers['content-type']), r.body);
    if (obj && obj.kind === 'Status' && obj.status === 'Failure')
      throw statusErrorFromObject(obj, r.statusCode);
    return obj as T;
  }

  /** A streaming request (watch): not rate limited, no body timeout. */
  async stream(o: RequestOptions): Promise<StreamResponse> {
    const ac = new AbortController();
    const signal = o.signal ? AbortSignal.any([o.signal, ac.signal]) : ac.signal;
    const res = await this.send({ ...o, signal }, true);
    logWarnings(res.headers);
    if (res.statusCode < 200 || res.statusCode >= 300) {
      const body = await res.body.buffer();
      throw this.errorFor(res.statusCode, res.headers, body);
    }
    return {
      statusCode: res.statusCode,
      headers: res.headers,
      body: res.body,
      contentType: headerString(res.headers['content-type']),
      abort: () => {
        ac.abort();
        res.body.destroy();
      },
    };
  }

  private errorFor(code: number, headers: RawResponse['headers'], body: Buffer): Error {
    const ct = headerString(headers['content-type']);
    let obj: any;
    try {
      obj = decodeBody(ct, body);
    } catch {
      obj = undefined;
    }
    if (obj && typeof obj === 'object' && obj.kind === 'Status') {
      const err = statusErrorFromObject(obj, code);
      const ra = retryAfterSeconds(headers);
      if (ra && !err.status.details?.retryAfterSeconds)
        err.status.details = { ...err.status.details, retryAfterSeconds: ra };
      return err;
    }
    return genericStatusError(
      code,
      typeof obj === 'string' ? obj : body.toString('utf8'),
      retryAfterSeconds(headers),
    );
  }
}
