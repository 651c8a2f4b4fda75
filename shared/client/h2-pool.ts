// HTTP/2 sessions per origin for the client's transport: dialled over TLS with ALPN (an origin
// whose server picks HTTP/1.1 is remembered and sent to the HTTP/1.1 agent), a new session when
// the others have their SETTINGS_MAX_CONCURRENT_STREAMS open, a fresh one once a session goes
// away (GOAWAY, error, close: its streams under way finish), client-go's health check (a ping
// after 30 s without reading anything, the session closed when it is not answered in 15 s),
// and sessions unref'd while no stream is open, so an idle client does not keep a process alive.
import * as http2 from 'node:http2';
import { isIP } from 'node:net';
import * as tls from 'node:tls';
import { headersFrom, requestHeaders, transportError } from './http-body';
import type { Exchange } from './http-transport';

export interface TlsOptions {
  ca?: string;
  cert?: string;
  key?: string;
  servername?: string;
  rejectUnauthorized?: boolean;
  allowPartialTrustChain?: boolean;
}

export interface H2PoolOptions {
  tls: TlsOptions;
  readIdleTimeoutMs: number;
  pingTimeoutMs: number;
}

const {
  HTTP2_HEADER_METHOD,
  HTTP2_HEADER_PATH,
  HTTP2_HEADER_STATUS,
  NGHTTP2_CANCEL,
  NGHTTP2_REFUSED_STREAM,
} = http2.constants;

/** Request headers HTTP/2 forbids (RFC 9113 8.2.2); host becomes :authority, which node sets from the origin. */
const CONNECTION_HEADERS = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
  'host',
]);

/** Streams a session takes before the server's SETTINGS arrive (Go's initial assumption). */
const INITIAL_MAX_STREAMS = 100;

/** undici's connect timeout: the TCP and TLS handshakes. */
const CONNECT_TIMEOUT_MS = 10_000;

/** Times a request refused before the server processed it (GOAWAY, REFUSED_STREAM) is sent again. */
const REFUSED_RETRIES = 3;

class Conn {
  active = 0;
  maxStreams = INITIAL_MAX_STREAMS;
  usable = true;
  private lastRead = Date.now();
  private healthTimer?: NodeJS.Timeout;
  private pingTimer?: NodeJS.Timeout;

  constructor(
    readonly session: http2.ClientHttp2Session,
    private readonly opts: H2PoolOptions,
    onGone: (c: Conn) => void,
    onClosed: (c: Conn) => void,
  ) {
    const gone = () => {
      this.usable = false;
      onGone(this);
    };
    session.on('remoteSettings', (s) => {
      this.read();
      if (typeof s.maxConcurrentStreams === 'number') this.maxStreams = s.maxConcurrentStreams;
    });
    session.on('goaway', gone);
    session.on('error', gone);
    session.once('close', () => {
      gone();
      onClosed(this);
      clearTimeout(this.healthTimer);
      clearTimeout(this.pingTimer);
    });
    // Unref'd while no stream is open; the dial's first requests reserve theirs on the same turn.
    session.once('remoteSettings', () => setImmediate(() => this.active === 0 && this.session.unref()));
    this.scheduleHealthCheck(opts.readIdleTimeoutMs);
  }

  get full(): boolean {
    return this.active >= this.maxStreams;
  }

  /** Something arrived from the server: the connection is alive. */
  read(): void {
    this.lastRead = Date.now();
  }

  /** Takes a stream slot (before any await, so concurrent requests do not overfill a session). */
  reserve(): this {
    if (this.active++ === 0) this.session.ref();
    return this;
  }

  release(): void {
    if (--this.active === 0 && !this.session.destroyed) this.session.unref();
  }

  private scheduleHealthCheck(ms: number): void {
    this.healthTimer = setTimeout(() => this.healthCheck(), ms);
    this.healthTimer.unref();
  }

  private healthCheck(): void {
    if (this.session.destroyed) return;
    const quiet = Date.now() - this.lastRead;
    if (quiet < this.opts.readIdleTimeoutMs)
      return this.scheduleHealthCheck(this.opts.readIdleTimeoutMs - quiet);
    this.pingTimer = setTimeout(() => {
      this.session.destroy(transportError('the server did not answer a ping', 'ERR_HTTP2_PING_TIMEOUT'));
    }, this.opts.pingTimeoutMs);
    this.pingTimer.unref();
    const sent = this.session.ping((err) => {
      clearTimeout(this.pingTimer);
      if (err) return;
      this.read();
      this.scheduleHealthCheck(this.opts.readIdleTimeoutMs);
    });
    if (!sent) {
      clearTimeout(this.pingTimer);
      this.scheduleHealthCheck(this.opts.readIdleTimeoutMs);
    }
  }
}

export class H2Pool {
  /** The sessions new streams may go to, per origin. */
  private readonly conns = new Map<string, Conn[]>();
  /** Every session not closed yet (GOAWAY'd ones too, finishing their streams). */
  private readonly live = new Set<Conn>();
  private readonly dialing = new Map<string, Promise<Conn | undefined>>();
  /** Origins whose server chose HTTP/1.1 in ALPN. */
  private readonly http1 = new Set<string>();
  private draining = false;

  constructor(private readonly opts: H2PoolOptions) {}

  /** Sends the exchange on a session of the origin's; false when the origin speaks HTTP/1.1 only. */
  async send(ex: Exchange, origin: string): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      if (this.http1.has(origin)) return false;
      const conn = await this.acquire(origin);
      if (!conn) return false;
      if (ex.isSettled) {
        conn.release();
        return true;
      }
      const refused = await this.stream(ex, conn);
      if (!refused || ex.isSettled) return true;
      if (attempt >= REFUSED_RETRIES) {
        ex.fail(refused);
        return true;
      }
    }
  }

  /** A session with a free stream: an open one, the one being dialled, or a new one. */
  private async acquire(origin: string): Promise<Conn | undefined> {
    for (;;) {
      if (this.draining) throw transportError('the client is closed', 'ERR_CLIENT_CLOSED');
      const open = this.conns.get(origin)?.find((c) => c.usable && !c.full);
      if (open) return open.reserve();
      let dial = this.dialing.get(origin);
      if (!dial) {
        dial = this.dial(origin).finally(() => this.dialing.delete(origin));
        this.dialing.set(origin, dial);
      }
      const c = await dial;
      if (!c) return undefined;
      if (c.usable && !c.full) return c.reserve();
    }
  }

  private dial(origin: string): Promise<Conn | undefined> {
    return new Promise((resolve, reject) => {
      const u = new URL(origin);
      const host = u.hostname.replace(/^\[(.*)\]$/, '$1');
      const socket = tls.connect({
        ...this.opts.tls,
        host,
        port: Number(u.port || 443),
        servername: this.opts.tls.servername ?? (isIP(host) ? undefined : host),
        ALPNProtocols: ['h2', 'http/1.1'],
      });
      socket.once('error', reject);
      const timer = setTimeout(
        () => socket.destroy(transportError(`connect to ${origin}: timed out`, 'ETIMEDOUT')),
        CONNECT_TIMEOUT_MS,
      );
      socket.once('close', () => clearTimeout(timer));
      socket.once('secureConnect', () => {
        clearTimeout(timer);
        socket.off('error', reject);
        if (socket.alpnProtocol !== 'h2') {
          this.http1.add(origin);
          socket.destroy();
          return resolve(undefined);
        }
        const session = http2.connect(origin, {
          createConnection: () => socket,
          settings: { enablePush: false },
        });
        const conn = new Conn(
          session,
          this.opts,
          (c) => this.forget(origin, c),
          (c) => this.live.delete(c),
        );
        this.live.add(conn);
        const list = this.conns.get(origin) ?? [];
        list.push(conn);
        this.conns.set(origin, list);
        if (this.draining) session.close();
        // Ready once the server's SETTINGS came: its stream limit is known before streams go out.
        const failed = (err?: Error) =>
          reject(err ?? transportError(`${origin}: the session closed`, 'ECONNRESET'));
        session.once('error', failed);
        session.once('close', failed);
        session.once('remoteSettings', () => {
          session.off('error', failed);
          session.off('close', failed);
          resolve(conn);
        });
      });
    });
  }

  private forget(origin: string, c: Conn): void {
    const list = this.conns.get(origin);
    if (!list) return;
    const rest = list.filter((x) => x !== c);
    if (rest.length) this.conns.set(origin, rest);
    else this.conns.delete(origin);
  }

  /**
   * Opens the exchange's stream on conn. Resolves with an error when the server refused the
   * stream unprocessed (it may be sent again), else with undefined once the exchange is settled.
   */
  private stream(ex: Exchange, conn: Conn): Promise<Error | undefined> {
    const o = ex.o;
    const headers: http2.OutgoingHttpHeaders = {
      [HTTP2_HEADER_METHOD]: o.method,
      [HTTP2_HEADER_PATH]: o.path,
    };
    for (const [name, v] of Object.entries(requestHeaders(o.headers, o.body)))
      if (!CONNECTION_HEADERS.has(name)) headers[name] = v;
    let req: http2.ClientHttp2Stream;
    try {
      req = conn.session.request(headers, { endStream: o.body === undefined });
    } catch (err) {
      // The session went away between choosing it and now: nothing was sent.
      conn.usable = false;
      conn.release();
      return Promise.resolve(err as Error);
    }
    return new Promise((resolve) => {
      let responded = false;
      const cancel = () => {
        if (!req.closed) req.close(NGHTTP2_CANCEL);
      };
      ex.cancel = cancel;
      req.on('error', (err) => {
        // The body has it; a refused stream is sent again from 'close'.
        if (responded || req.rstCode === NGHTTP2_REFUSED_STREAM) return;
        resolve(undefined);
        ex.fail(err);
      });
      req.once('response', (h, _flags, raw?: string[]) => {
        responded = true;
        conn.read();
        req.on('data', () => conn.read());
        // node ends the streams of a destroyed session as if the server had: those are cut short.
        ex.respond(
          Number(h[HTTP2_HEADER_STATUS]),
          headersFrom(distinct(h, raw)),
          req,
          cancel,
          () => !conn.session.destroyed,
        );
        resolve(undefined);
      });
      req.once('close', () => {
        conn.release();
        if (responded || ex.isSettled) return resolve(undefined);
        const err = transportError(
          `the HTTP/2 stream closed before a response (code ${req.rstCode})`,
          'ERR_HTTP2_STREAM_ERROR',
        );
        if (req.rstCode === NGHTTP2_REFUSED_STREAM) return resolve(err);
        resolve(undefined);
        ex.fail(err);
      });
      if (o.body !== undefined) req.end(o.body);
    });
  }

  /** No new streams: the sessions close once their streams are done. */
  drain(): void {
    this.draining = true;
    for (const c of this.live) c.session.close();
  }

  /** Cuts every session and its streams. */
  destroy(): void {
    this.draining = true;
    for (const c of [...this.live]) c.session.destroy();
    this.conns.clear();
  }
}

/** Each response header as a list, like HTTP/1.1's headersDistinct: node:http2 joins repeated ones in `h`, not in `raw`. */
function distinct(h: http2.IncomingHttpHeaders, raw?: string[]): Record<string, string[] | undefined> {
  const out: Record<string, string[] | undefined> = {};
  if (raw) {
    for (let i = 0; i + 1 < raw.length; i += 2) (out[raw[i]] ??= []).push(raw[i + 1]);
    return out;
  }
  for (const [k, v] of Object.entries(h)) {
    if (v === undefined) continue;
    out[k] = Array.isArray(v) ? v : [String(v)];
  }
  return out;
}
