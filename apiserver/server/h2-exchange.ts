// An HTTP/2 request and its response as the apiserver's handlers see them: the
// shape of node's compatibility API (headers, url, a readable body; writeHead,
// write, end, 'close', 'drain') over a stream of tkube's own HTTP/2 server
// (shared/http2/server-session.ts).
import { EventEmitter } from 'node:events';
import type { IncomingHttpHeaders, OutgoingHttpHeader, OutgoingHttpHeaders } from 'node:http';
import { Readable } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { ErrorCode } from '../../shared/http2/frames';
import { type ServerSession, type ServerStream, STREAM_HIGH_WATER } from '../../shared/http2/server-session';

/** What handlers reach through `req.stream` (node:http2's Http2Stream): the connection. */
export interface H2StreamView {
  readonly id: number;
  readonly session: { readonly socket: TLSSocket; goaway(): void };
}

export class H2Request extends Readable {
  readonly headers: IncomingHttpHeaders = {};
  readonly rawHeaders: string[] = [];
  readonly method: string;
  url: string;
  readonly authority: string;
  readonly scheme: string;
  readonly httpVersion = '2.0';
  readonly httpVersionMajor = 2;
  readonly httpVersionMinor = 0;
  readonly stream: H2StreamView;
  aborted = false;
  complete = false;
  /** Body bytes pushed but not yet given back to the client's window. */
  private unread = 0;

  constructor(
    private readonly h2: ServerStream,
    readonly socket: TLSSocket,
  ) {
    super();
    for (const [name, value] of h2.fields) {
      this.rawHeaders.push(name, value);
      const prev = this.headers[name];
      if (prev === undefined) this.headers[name] = name === 'set-cookie' ? [value] : value;
      else if (Array.isArray(prev)) prev.push(value);
      else this.headers[name] = prev + (name === 'cookie' ? '; ' : ', ') + value;
    }
    this.method = String(this.headers[':method'] ?? 'GET');
    this.url = String(this.headers[':path'] ?? '/');
    this.authority = String(this.headers[':authority'] ?? this.headers.host ?? '');
    this.scheme = String(this.headers[':scheme'] ?? 'https');
    const session = h2.session as ServerSession;
    this.stream = { id: h2.id, session: { socket, goaway: () => session.goaway() } };
  }

  /** @internal The stream's body bytes. */
  received(chunk: Buffer): void {
    this.unread += chunk.length;
    this.push(chunk);
  }

  /** @internal The client sent its last byte. */
  ended(): void {
    this.complete = true;
    this.push(null);
  }

  /** @internal The stream was reset or its connection lost before the body was complete. */
  abort(): void {
    if (this.complete) return;
    this.aborted = true;
    this.emit('aborted');
    this.destroy();
  }

  override _read(): void {
    // The reader wants more: what it took may be sent again by the client.
    if (this.unread > 0) {
      const n = this.unread - this.readableLength;
      if (n > 0) {
        this.h2.consumed(n);
        this.unread -= n;
      }
    }
  }
}

/** Connection-specific fields have no place in HTTP/2 (RFC 9113 8.2.2): dropped. */
const CONNECTION_SPECIFIC = new Set([
  'connection',
  'keep-alive',
  'proxy-connection',
  'transfer-encoding',
  'upgrade',
]);

/** Bodies are not sent for these (HEAD answers, 1xx, 204, 304). */
const noBody = (method: string, status: number) =>
  method === 'HEAD' || status === 204 || status === 304 || status < 200;

export class H2Response extends EventEmitter {
  statusCode = 200;
  statusMessage = '';
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  sendDate = true;
  readonly writableHighWaterMark = STREAM_HIGH_WATER;
  /** Header fields by lower-case name. */
  private readonly fields = new Map<string, OutgoingHttpHeader>();
  /** writeHead was called, the HEADERS frame not yet written. */
  private headPending = false;

  constructor(
    private readonly h2: ServerStream,
    readonly req: H2Request,
  ) {
    super();
    h2.onDrain = () => this.emit('drain');
  }

  get socket(): TLSSocket {
    return this.req.socket;
  }

  get stream(): H2StreamView {
    return this.req.stream;
  }

  get writableLength(): number {
    return this.h2.pending;
  }

  /** @internal The stream is over: finished when our side ended, else reset (client gone). */
  closed(reset: boolean): void {
    if (!reset && this.writableEnded) {
      this.writableFinished = true;
      this.emit('finish');
    }
    this.destroyed = true;
    this.emit('close');
  }

  setHeader(name: string, value: OutgoingHttpHeader): this {
    this.fields.set(name.toLowerCase(), value);
    return this;
  }

  getHeader(name: string): OutgoingHttpHeader | undefined {
    return this.fields.get(name.toLowerCase());
  }

  hasHeader(name: string): boolean {
    return this.fields.has(name.toLowerCase());
  }

  removeHeader(name: string): void {
    this.fields.delete(name.toLowerCase());
  }

  getHeaderNames(): string[] {
    return [...this.fields.keys()];
  }

  getHeaders(): OutgoingHttpHeaders {
    const out: OutgoingHttpHeaders = {};
    for (const [k, v] of this.fields) out[k] = v;
    return out;
  }

  writeHead(
    status: number,
    reasonOrHeaders?: string | OutgoingHttpHeaders | OutgoingHttpHeader[],
    headers?: OutgoingHttpHeaders | OutgoingHttpHeader[],
  ): this {
    if (this.headersSent) return this;
    const h = typeof reasonOrHeaders === 'string' ? headers : reasonOrHeaders;
    this.statusCode = status;
    if (Array.isArray(h)) {
      for (let i = 0; i + 1 < h.length; i += 2) this.setHeader(String(h[i]), h[i + 1] as OutgoingHttpHeader);
    } else if (h) {
      for (const k of Object.keys(h)) {
        const v = h[k];
        if (v !== undefined) this.setHeader(k, v);
      }
    }
    this.headersSent = true;
    this.headPending = true;
    return this;
  }

  flushHeaders(): void {
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.sendHead(false);
  }

  // Loose parameter types, as node's: a union of this and ServerResponse must stay callable.
  write(chunk: any, encoding?: any, cb?: () => void): boolean {
    const done = typeof encoding === 'function' ? encoding : cb;
    if (this.writableEnded || this.destroyed) {
      if (done) queueMicrotask(done);
      return false;
    }
    if (!this.headersSent) this.writeHead(this.statusCode);
    this.sendHead(false);
    const ok = this.bodyAllowed() ? this.h2.write(toBuffer(chunk, encoding)) : true;
    if (done) queueMicrotask(done);
    return ok;
  }

  end(chunk?: any, encoding?: any, cb?: () => void): this {
    const done = [chunk, encoding, cb].find((x) => typeof x === 'function') as (() => void) | undefined;
    if (this.writableEnded || this.destroyed) {
      if (done) queueMicrotask(done);
      return this;
    }
    this.writableEnded = true;
    if (!this.headersSent) this.writeHead(this.statusCode);
    const body =
      chunk !== undefined && typeof chunk !== 'function' && this.bodyAllowed()
        ? toBuffer(chunk, encoding)
        : null;
    if (this.headPending && (!body || !body.length)) this.sendHead(true);
    else {
      this.sendHead(false);
      this.h2.write(body ?? EMPTY, true);
    }
    if (done) this.once('finish', done);
    return this;
  }

  /** The client sees the answer cut short (RST_STREAM). */
  destroy(err?: Error): this {
    if (this.destroyed) return this;
    this.h2.reset(err ? ErrorCode.INTERNAL_ERROR : ErrorCode.CANCEL);
    return this;
  }

  /** Writes of one turn already leave together. */
  cork(): void {}
  uncork(): void {}

  private bodyAllowed(): boolean {
    return !noBody(this.req.method, this.statusCode);
  }

  private sendHead(end: boolean): void {
    if (!this.headPending) return;
    this.headPending = false;
    const out: [string, string][] = [];
    for (const [k, value] of this.fields) {
      if (CONNECTION_SPECIFIC.has(k)) continue;
      if (Array.isArray(value)) for (const v of value) out.push([k, String(v)]);
      else out.push([k, String(value)]);
    }
    if (this.sendDate && !this.fields.has('date')) out.push(['date', httpDate()]);
    this.h2.respond(this.statusCode, out, end);
  }
}

const EMPTY = Buffer.alloc(0);

function toBuffer(chunk: string | Uint8Array, encoding?: BufferEncoding | (() => void)): Buffer {
  if (typeof chunk === 'string') return Buffer.from(chunk, typeof encoding === 'string' ? encoding : 'utf8');
  return Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
}

let dateSecond = 0;
let dateText = '';
/** The Date header, formatted once a second. */
function httpDate(): string {
  const s = Math.floor(Date.now() / 1000);
  if (s !== dateSecond) {
    dateSecond = s;
    dateText = new Date(s * 1000).toUTCString();
  }
  return dateText;
}

/** Wires a new stream to a request and response, and hands them to the handler. */
export function exchange(
  stream: ServerStream,
  socket: TLSSocket,
  handler: (req: H2Request, res: H2Response) => void,
): void {
  const req = new H2Request(stream, socket);
  const res = new H2Response(stream, req);
  stream.onData = (chunk) => req.received(chunk);
  stream.onEnd = () => req.ended();
  stream.onClose = (reset) => {
    if (reset) req.abort();
    res.closed(reset);
  };
  handler(req, res);
}
