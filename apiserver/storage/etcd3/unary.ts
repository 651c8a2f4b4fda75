// Unary gRPC calls to one etcd endpoint over tkube's own HTTP/2 connection
// (h2/session.ts). A unary call is one HTTP/2 request (a length-prefixed
// message) answered by one length-prefixed message and a grpc-status trailer;
// grpc-js wraps each in interceptors, resolving and load-balancing call layers,
// Metadata copies and a captured stack, and node:http2 in a Duplex stream per
// request: each cost more CPU than etcd spends on the request (bench ceilings:
// bare grpc-js Put). The Watch stream stays on grpc-js.
//
// Failures are shaped like grpc-js's ({ code, details }), so grpcStatus() and
// the error mapping read them the same way; a call that never reached a
// connected server says "No connection established", which lets a write retry
// on another endpoint.
import { status } from '@grpc/grpc-js';
import { encodeHeaders, type HeaderFields } from './h2/hpack';
import { H2Session, type StreamAborted } from './h2/session';

/** The TLS material of an https:// endpoint, already read. */
export interface UnaryTls {
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
}

export class GrpcCallError extends Error {
  constructor(
    readonly code: status,
    readonly details: string,
  ) {
    super(`${code} ${status[code] ?? ''}: ${details}`);
  }
}

/**
 * Like grpc-js's keepalive as tkube configured it: while calls are open, a ping
 * every 30 s, and a connection that does not answer one within 10 s is dropped,
 * so calls fail over instead of waiting out their deadlines on a dead peer. A
 * call that hits its deadline pings at once.
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
  return n < 1e8 ? `${n}m` : `${Math.min(99_999_999, Math.ceil(n / 1000))}S`;
}

export class UnaryClient {
  private session: H2Session | null = null;
  private closed = false;
  /** Calls in flight (on any session). */
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
    private readonly tls: UnaryTls | null,
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
    const keepalive = setInterval(() => {
      if (this.active > 0) this.ping(session);
    }, KEEPALIVE_MS);
    keepalive.unref();
    session.onClose = () => {
      clearInterval(keepalive);
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

  private headerBlock(method: string, timeoutMs: number): Buffer {
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
    return Buffer.concat([fixed, encodeHeaders([['grpc-timeout', grpcTimeout(timeoutMs)]])]);
  }

  /** One call; rejects with a GrpcCallError (or the message decoder's error). */
  call<T>(method: string, req: Buffer, decode: (b: Buffer) => T, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new GrpcCallError(status.CANCELLED, 'Channel has been shut down'));
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
          finish(new GrpcCallError(status.UNAVAILABLE, 'stream closed without a status'));
          return;
        }
        if (code !== status.OK) {
          finish(new GrpcCallError(code, details));
          return;
        }
        const body = Buffer.concat(chunks, size);
        if (body.length < 5 || body[0] !== 0) {
          finish(new GrpcCallError(status.INTERNAL, 'malformed or compressed response message'));
          return;
        }
        const len = body.readUInt32BE(1);
        if (body.length < 5 + len) {
          finish(new GrpcCallError(status.INTERNAL, 'truncated response message'));
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
          const s = h['grpc-status'];
          if (s !== undefined) {
            code = Number(s);
            details = grpcMessage(h['grpc-message']);
          } else if (h[':status'] !== undefined && h[':status'] !== '200') {
            code = status.UNKNOWN;
            details = `etcd answered HTTP ${h[':status']}`;
          }
          if (end) complete();
        },
        data: (d: Buffer, end: boolean) => {
          if (d.length) {
            chunks.push(d);
            size += d.length;
          }
          if (end) complete();
        },
        aborted: (err: StreamAborted) => finish(new GrpcCallError(status.UNAVAILABLE, err.message)),
      };
      const frame = Buffer.allocUnsafe(5 + req.length);
      frame[0] = 0;
      frame.writeUInt32BE(req.length, 1);
      req.copy(frame, 5);
      let session: H2Session;
      let id: number;
      try {
        session = this.open();
        id = session.request(this.headerBlock(method, timeoutMs), frame, handler);
      } catch (err) {
        this.session = null;
        reject(new GrpcCallError(status.UNAVAILABLE, `No connection established: ${(err as Error).message}`));
        return;
      }
      this.active++;
      const timer = setTimeout(() => {
        session.cancel(id);
        finish(new GrpcCallError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
        this.ping(session);
      }, timeoutMs);
    });
  }

  close(): void {
    this.closed = true;
    const s = this.session;
    this.session = null;
    s?.destroy(new Error('client closed'));
  }
}
