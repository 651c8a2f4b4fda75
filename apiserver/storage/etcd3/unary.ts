// Unary gRPC calls to one etcd endpoint straight over node:http2. A unary call
// is one HTTP/2 request (a length-prefixed message) answered by one
// length-prefixed message and a grpc-status trailer; grpc-js wraps each in
// interceptors, resolving and load-balancing call layers, Metadata copies and a
// captured stack, which cost more CPU than etcd spends on the request (bench
// ceilings: bare grpc-js Put). The Watch stream stays on grpc-js.
//
// Failures are shaped like grpc-js's ({ code, details }), so grpcStatus() and
// the error mapping read them the same way; a call that never reached a
// connected server says "No connection established", which lets a write retry
// on another endpoint.
import * as http2 from 'node:http2';
import { isIP, connect as netConnect } from 'node:net';
import { status } from '@grpc/grpc-js';

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

const {
  HTTP2_HEADER_METHOD,
  HTTP2_HEADER_PATH,
  HTTP2_HEADER_CONTENT_TYPE,
  HTTP2_HEADER_TE,
  HTTP2_HEADER_STATUS,
  NGHTTP2_CANCEL,
} = http2.constants;

/**
 * Like grpc-js's keepalive as tkube configured it: while calls are open, a ping
 * every 30 s, and a connection that does not answer one within 10 s is dropped,
 * so calls fail over instead of waiting out their deadlines on a dead peer. A
 * call that hits its deadline pings at once.
 */
const KEEPALIVE_MS = 30_000;
const KEEPALIVE_TIMEOUT_MS = 10_000;

/** Per-stream and connection receive windows: a list of many objects arrives without waiting for window updates. */
const STREAM_WINDOW = 16 << 20;
const SESSION_WINDOW = 64 << 20;

/** Decodes a grpc-message trailer (percent-encoded UTF-8). */
function grpcMessage(v: unknown): string {
  const s = typeof v === 'string' ? v : '';
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** Sessions whose connection came up: a call on one may have reached etcd. */
const everConnected = new WeakSet<http2.ClientHttp2Session>();

export class UnaryClient {
  private session: http2.ClientHttp2Session | null = null;
  private closed = false;
  /** Calls in flight (on any session). */
  private active = 0;
  private readonly pinging = new WeakSet<http2.ClientHttp2Session>();

  /**
   * url: http://host:port, https://host:port or unix:path (as parseEndpoint
   * accepts them; a bare host:port is plain text).
   */
  constructor(
    private readonly url: string,
    private readonly tls: UnaryTls | null,
  ) {}

  private open(): http2.ClientHttp2Session {
    if (this.session && !this.session.closed && !this.session.destroyed) return this.session;
    const opts: http2.SecureClientSessionOptions = {
      settings: { initialWindowSize: STREAM_WINDOW, enablePush: false },
      // Large responses (lists) are held until read: do not let nghttp2's default cap refuse them.
      maxSessionMemory: 1024,
    };
    let authority: string;
    if (this.url.startsWith('unix:')) {
      const path = this.url.replace(/^unix:(\/\/)?/, '');
      authority = 'http://localhost';
      opts.createConnection = () => netConnect(path);
    } else if (/^[a-z]+:\/\//i.test(this.url)) {
      authority = this.url;
      if (this.url.startsWith('https:')) {
        Object.assign(opts, this.tls ?? {});
        // SNI carries host names only; the certificate is still checked against the IP.
        if (isIP(new URL(this.url).hostname.replace(/^\[|\]$/g, ''))) opts.servername = '';
      }
    } else authority = `http://${this.url}`;
    const session = http2.connect(authority, opts);
    this.session = session;
    session.once('connect', () => {
      everConnected.add(session);
      session.setLocalWindowSize(SESSION_WINDOW);
    });
    const keepalive = setInterval(() => {
      if (this.active > 0) this.ping(session);
    }, KEEPALIVE_MS);
    keepalive.unref();
    const drop = () => {
      clearInterval(keepalive);
      if (this.session === session) this.session = null;
    };
    // Errors reach the calls through their streams; the session is just replaced.
    session.on('error', drop);
    session.on('close', drop);
    session.on('goaway', drop);
    // Idle connections must not keep the process alive; open calls do (their timers).
    session.unref();
    return session;
  }

  /** Drops the session unless the peer answers a ping in time. */
  private ping(session: http2.ClientHttp2Session): void {
    if (session.destroyed || this.pinging.has(session)) return;
    this.pinging.add(session);
    const timer = setTimeout(
      () => session.destroy(new Error('etcd did not answer a keepalive ping')),
      KEEPALIVE_TIMEOUT_MS,
    );
    timer.unref();
    try {
      session.ping((err) => {
        clearTimeout(timer);
        this.pinging.delete(session);
        if (err && !session.destroyed) session.destroy(err);
      });
    } catch {
      // Not connected yet: the connection attempt has its own failure path.
      clearTimeout(timer);
      this.pinging.delete(session);
    }
  }

  /** One call; rejects with a GrpcCallError (or the message decoder's error). */
  call<T>(method: string, req: Buffer, decode: (b: Buffer) => T, timeoutMs: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.closed) {
        reject(new GrpcCallError(status.CANCELLED, 'Channel has been shut down'));
        return;
      }
      let session: http2.ClientHttp2Session;
      try {
        session = this.open();
      } catch (err) {
        reject(new GrpcCallError(status.UNAVAILABLE, `No connection established: ${String(err)}`));
        return;
      }
      let stream: http2.ClientHttp2Stream;
      try {
        stream = session.request({
          [HTTP2_HEADER_METHOD]: 'POST',
          [HTTP2_HEADER_PATH]: method,
          [HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
          [HTTP2_HEADER_TE]: 'trailers',
          'grpc-timeout': `${Math.max(1, Math.ceil(timeoutMs))}m`,
        });
      } catch (err) {
        this.session = null;
        reject(new GrpcCallError(status.UNAVAILABLE, `No connection established: ${String(err)}`));
        return;
      }
      let settled = false;
      let gotResponse = false;
      let code: number | undefined;
      let details = '';
      const chunks: Buffer[] = [];
      let size = 0;
      this.active++;
      const finish = (err: Error | null, value?: T) => {
        if (settled) return;
        settled = true;
        this.active--;
        clearTimeout(timer);
        if (err) reject(err);
        else resolve(value as T);
      };
      const timer = setTimeout(() => {
        stream.close(NGHTTP2_CANCEL);
        finish(new GrpcCallError(status.DEADLINE_EXCEEDED, 'Deadline exceeded'));
        this.ping(session);
      }, timeoutMs);
      const readStatus = (h: http2.IncomingHttpHeaders) => {
        const s = h['grpc-status'];
        if (s !== undefined) {
          code = Number(s);
          details = grpcMessage(h['grpc-message']);
        }
      };
      stream.on('response', (h) => {
        gotResponse = true;
        const httpStatus = Number(h[HTTP2_HEADER_STATUS]);
        if (httpStatus !== 200 && h['grpc-status'] === undefined) {
          code = status.UNKNOWN;
          details = `etcd answered HTTP ${httpStatus}`;
        }
        readStatus(h); // a trailers-only answer carries the status in its headers
      });
      stream.on('trailers', readStatus);
      stream.on('data', (d: Buffer) => {
        chunks.push(d);
        size += d.length;
      });
      stream.on('error', (err: Error) => {
        const never = !gotResponse && !everConnected.has(session);
        finish(
          new GrpcCallError(
            status.UNAVAILABLE,
            never ? `No connection established: ${err.message}` : `connection to etcd lost: ${err.message}`,
          ),
        );
      });
      stream.on('close', () => {
        if (settled) return;
        if (code === undefined) {
          const rst = stream.rstCode;
          const never = !gotResponse && !everConnected.has(session);
          finish(
            new GrpcCallError(
              status.UNAVAILABLE,
              never
                ? 'No connection established'
                : `stream closed without a status${rst ? ` (HTTP/2 error ${rst})` : ''}`,
            ),
          );
          return;
        }
        if (code !== status.OK) {
          finish(new GrpcCallError(code, details));
          return;
        }
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
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
      });
      const frame = Buffer.allocUnsafe(5 + req.length);
      frame[0] = 0;
      frame.writeUInt32BE(req.length, 1);
      req.copy(frame, 5);
      stream.end(frame);
    });
  }

  close(): void {
    this.closed = true;
    const s = this.session;
    this.session = null;
    s?.destroy();
  }
}
