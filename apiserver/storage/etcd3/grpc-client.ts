// gRPC to one etcd endpoint over tkube's own HTTP/2 connection (shared/http2/client-session.ts):
// unary calls, and bidi streams (Watch). A unary call is one HTTP/2 request (a
// length-prefixed message) answered by one length-prefixed message and a
// grpc-status trailer; a stream carries such messages both ways. grpc-js wraps
// each call in interceptors, resolving and load-balancing call layers, Metadata
// copies and a captured stack, and node:http2 in a Duplex stream per request:
// each cost more CPU than etcd spends on the request (bench ceilings: bare
// grpc-js Put).
//
// Failures are shaped like grpc-js's ({ code, details }), so grpcStatus() and
// the error mapping read them the same way; a call that never reached a
// connected server says "No connection established", which lets a write retry
// on another endpoint.
import { EventEmitter } from 'node:events';
import { encodeHeaders, type HeaderFields } from '../../../shared/http2/hpack';
import { H2Session, type StreamAborted, type StreamHandler } from '../../../shared/http2/client-session';
import { GrpcStatus } from '../../../shared/etcd/grpc-status';
import { grpcFramed } from '../../../shared/etcd/grpc-framing';

export { GrpcStatus };

/** The TLS material of an https:// endpoint, already read. */
export interface GrpcTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export class GrpcCallError extends Error {
  constructor(
    readonly code: GrpcStatus,
    readonly details: string,
  ) {
    super(`${code} ${GrpcStatus[code] ?? ''}: ${details}`);
  }
}

/**
 * Like grpc-js's keepalive as tkube configured it: while calls or streams are open, a ping
 * every 30 s, and a connection that does not answer one within 10 s is dropped, so calls
 * fail over instead of waiting out their deadlines on a dead peer (and a quiet watch
 * stream notices a dead etcd). A call that hits its deadline pings at once.
 */
const KEEPALIVE_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;

/** Decodes a grpc-message trailer (percent-encoded UTF-8). */
function grpcMessage(v: unknown): string {
  const s = typeof v === 'string' ? v : '';
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** grpc-timeout: at most 8 digits and a unit. */
function grpcTimeout(ms: number): string {
  const n = Math.max(1, Math.ceil(ms));
  // Whole seconds from 10 s on: the call's own timer keeps the exact deadline, and the few
  // spellings this leaves have their header encoded once (timeoutBlock).
  return n < 10_000 ? `${n}m` : `${Math.min(99_999_999, Math.ceil(n / 1000))}S`;
}

/** setTimeout's limit (about 24.8 days); a longer delay would fire at once. */
const MAX_TIMER_MS = 2 ** 31 - 1;

const timeoutBlocks = new Map<string, Buffer>();

/** The grpc-timeout field, encoded. */
function timeoutBlock(ms: number): Buffer {
  const v = grpcTimeout(ms);
  let b = timeoutBlocks.get(v);
  if (!b) {
    b = encodeHeaders([['grpc-timeout', v]]);
    if (timeoutBlocks.size >= 1024) timeoutBlocks.clear();
    timeoutBlocks.set(v, b);
  }
  return b;
}

/** The status a header block carries: grpc-status, or a failure for an HTTP status other than 200. */
function statusOf(h: HeaderFields): { code: GrpcStatus; details: string } | undefined {
  const s = h['grpc-status'];
  if (s !== undefined) return { code: Number(s), details: grpcMessage(h['grpc-message']) };
  if (h[':status'] !== undefined && h[':status'] !== '200')
    return { code: GrpcStatus.UNKNOWN, details: `etcd answered HTTP ${h[':status']}` };
  return undefined;
}

/**
 * A bidi stream's side as the watcher uses it: write() messages; 'data' per message
 * received (its own buffer), then 'end' on an OK status or 'error' with a GrpcCallError.
 */
export class GrpcStream extends EventEmitter {
  private id = 0;
  private done = false;
  /** Received bytes not yet cut into messages (views of DATA payloads), and their total. */
  private parts: Buffer[] = [];
  private have = 0;

  constructor(
    private readonly session: H2Session,
    headerBlock: Buffer,
    private readonly onDone: () => void,
  ) {
    super();
    const handler: StreamHandler = {
      headers: (h, end) => {
        const st = statusOf(h);
        if (st && (end || st.code !== GrpcStatus.OK)) this.finish(st.code, st.details);
        else if (end) this.finish(GrpcStatus.UNAVAILABLE, 'stream closed without a status');
      },
      data: (d, end) => {
        this.take(d);
        if (end) this.finish(GrpcStatus.UNAVAILABLE, 'stream closed without a status');
      },
      aborted: (err: StreamAborted) => this.finish(GrpcStatus.UNAVAILABLE, err.message),
    };
    // 'end' and 'error' come on a later tick: the caller's listeners are in place by then.
    this.id = session.request(headerBlock, Buffer.alloc(0), handler, true);
  }

  write(msg: Buffer): void {
    if (!this.done) this.session.send(this.id, grpcFramed(msg));
  }

  /** Ends the stream from this side; 'error' follows with CANCELLED, as grpc-js does. */
  cancel(): void {
    if (this.done) return;
    this.session.cancel(this.id);
    this.finish(GrpcStatus.CANCELLED, 'Cancelled on client');
  }

  private take(d: Buffer): void {
    this.parts.push(d);
    this.have += d.length;
    while (this.have >= 5) {
      if (this.parts[0].length < 5) this.parts = [Buffer.concat(this.parts, this.have)];
      const head = this.parts[0];
      if (head[0] !== 0) {
        this.session.cancel(this.id);
        this.finish(GrpcStatus.INTERNAL, 'compressed message on a stream that asked for none');
        return;
      }
      const len = head.readUInt32BE(1);
      if (this.have < 5 + len) return;
      // Each message in a buffer of its own, copied once however many frames it came in: values
      // decoded from it are views that the watch cache keeps, and must not pin read buffers.
      const msg = Buffer.allocUnsafeSlow(len);
      this.consume(5);
      this.consume(len, msg);
      this.emit('data', msg);
      if (this.done) return;
    }
  }

  /** Takes n received bytes off the front, into `into` when given. */
  private consume(n: number, into?: Buffer): void {
    this.have -= n;
    for (let at = 0; at < n;) {
      const p = this.parts[0];
      const k = Math.min(p.length, n - at);
      if (into) p.copy(into, at, 0, k);
      at += k;
      if (k === p.length) this.parts.shift();
      else this.parts[0] = p.subarray(k);
    }
  }

  private finish(code: GrpcStatus, details: string): void {
    if (this.done) return;
    this.done = true;
    this.onDone();
    process.nextTick(() => {
      if (code === GrpcStatus.OK) this.emit('end');
      else this.emit('error', new GrpcCallError(code, details));
    });
  }
}

export class GrpcClient {
  private session: H2Session | null = null;
  private closed = false;
  /** Calls and streams open (on any session). */
  private active = 0;
  private readonly pinging = new WeakSet<H2Session>();
  /** The header block of each method, but for grpc-timeout. */
  private readonly blocks = new Map<string, Buffer>();
  private readonly scheme: string;
  private readonly authority: string;

  /**
   * url: http://host:port, https://host:port or unix:path (as parseEndpoint
   * accepts them; a bare host:port is plain text).
   */
  constructor(
    private readonly url: string,
    private readonly tls: GrpcTls | null,
  ) {
    this.scheme = url.startsWith('https:') ? 'https' : 'http';
    this.authority = url.startsWith('unix:')
      ? 'localhost'
      : url.replace(/^[a-z]+:\/\//i, '').replace(/\/.*$/, '');
  }

  private open(): H2Session {
    if (this.session?.accepting) return this.session;
    const session = new H2Session({ url: this.url, tls: this.url.startsWith('https:') ? this.tls : null });
    this.session = session;
    // Until the connection is gone: one that takes no new streams (GOAWAY, ids used up) may
    // still carry a watch, whose dead peer must be noticed too.
    const keepalive = setInterval(() => {
      if (session.destroyed) clearInterval(keepalive);
      else if (this.active > 0) this.ping(session);
    }, KEEPALIVE_MS);
    keepalive.unref();
    session.onClose = () => {
      if (this.session === session) this.session = null;
    };
    return session;
  }

  /** Drops the session unless the peer answers a ping in time. */
  private ping(session: H2Session): void {
    if (session.destroyed || this.pinging.has(session)) return;
    this.pinging.add(session);
    const timer = setTimeout(
      () => session.destroy(new Error('etcd did not answer a keepalive ping')),
      KEEPALIVE_TIMEOUT_MS,
    );
    timer.unref();
    session.ping(() => {
      clearTimeout(timer);
      this.pinging.delete(session);
    });
  }

  private headerBlock(method: string, extra: Buffer | null): Buffer {
    let fixed = this.blocks.get(method);
    if (!fixed) {
      fixed = encodeHeaders([
        [':method', 'POST'],
        [':scheme', this.scheme],
        [':path', method],
        [':authority', this.authority],
        ['content-type', 'application/grpc'],
        ['te', 'trailers'],
      ]);
      this.blocks.set(method, fixed);
    }
    return extra ? Buffer.concat([fixed, extra]) : fixed;
  }

  /**
   * Opens a bidi stream with extra request metadata (e.g. etcd's hasleader). Throws a
   * GrpcCallError when the client is closed.
   */
  stream(method: string, metadata: readonly (readonly [string, string])[] = []): GrpcStream {
    if (this.closed) throw new GrpcCallError(GrpcStatus.CANCELLED, 'Channel has been shut down');
    const session = this.open();
    this.active++;
    return new GrpcStream(
      session,
      this.headerBlock(method, metadata.length ? encodeHeaders(metadata) : null),
      () => this.active--,
    );
  }

  /** One call; rejects with a GrpcCallError (or the message decoder's error). */
  call<T>(method: string, req: Buffer, decode: (b: Buffer) => T, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new GrpcCallError(GrpcStatus.CANCELLED, 'Channel has been shut down'));
        return;
      }
      let code: number | undefined;
      let details = '';
      const chunks: Buffer[] = [];
      let size = 0;
      let settled = false;
      const finish = (err: Error | null, value?: T) => {
        if (settled) return;
        settled = true;
        this.active--;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value as T);
      };
      const complete = () => {
        if (code === undefined) {
          finish(new GrpcCallError(GrpcStatus.UNAVAILABLE, 'stream closed without a status'));
          return;
        }
        if (code !== GrpcStatus.OK) {
          finish(new GrpcCallError(code, details));
          return;
        }
        const body = Buffer.concat(chunks, size);
        if (body.length < 5 || body[0] !== 0) {
          finish(new GrpcCallError(GrpcStatus.INTERNAL, 'malformed or compressed response message'));
          return;
        }
        const len = body.readUInt32BE(1);
        if (body.length < 5 + len) {
          finish(new GrpcCallError(GrpcStatus.INTERNAL, 'truncated response message'));
          return;
        }
        let value: T;
        try {
          value = decode(body.subarray(5, 5 + len));
        } catch (err) {
          finish(err as Error);
          return;
        }
        finish(null, value);
      };
      const handler = {
        headers: (h: HeaderFields, end: boolean) => {
          const st = statusOf(h);
          if (st) ({ code, details } = st);
          if (end) complete();
        },
        data: (d: Buffer, end: boolean) => {
          if (d.length) {
            chunks.push(d);
            size += d.length;
          }
          if (end) complete();
        },
        aborted: (err: StreamAborted) => finish(new GrpcCallError(GrpcStatus.UNAVAILABLE, err.message)),
      };
      let session: H2Session;
      let id: number;
      try {
        session = this.open();
        id = session.request(this.headerBlock(method, timeoutBlock(timeoutMs)), grpcFramed(req), handler);
      } catch (err) {
        this.session = null;
        reject(
          new GrpcCallError(GrpcStatus.UNAVAILABLE, `No connection established: ${(err as Error).message}`),
        );
        return;
      }
      this.active++;
      const timer = setTimeout(
        () => {
          session.cancel(id);
          finish(new GrpcCallError(GrpcStatus.DEADLINE_EXCEEDED, 'Deadline exceeded'));
          this.ping(session);
        },
        Math.min(timeoutMs, MAX_TIMER_MS),
      );
    });
  }

  close(): void {
    this.closed = true;
    const s = this.session;
    this.session = null;
    s?.destroy(new Error('client closed'));
  }
}
