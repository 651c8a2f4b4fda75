// One HTTP/2 client connection (RFC 9113) over TCP, TLS (ALPN h2) or a unix
// socket, made for gRPC calls (the apiserver's etcd connection; the bench's watchers
// use it too): requests are a prepared header block and
// a body; what comes back is handed to each stream's handler as header fields
// and data. It keeps both sides' flow control, answers SETTINGS and PING, and
// honours GOAWAY and RST_STREAM. It does not queue streams beyond the server's
// SETTINGS_MAX_CONCURRENT_STREAMS (etcd allows 2^32-1); a refused stream
// fails as never processed. node:http2 does the same through a Duplex
// stream, an async resource and a header object per request, which cost more
// CPU than etcd spends answering (docs/performance.md); this does the framing
// only, and writes all frames of one event-loop turn with one system call.
import { connect as netConnect, isIP, type Socket } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import {
  ACK,
  DEFAULT_MAX_FRAME,
  DEFAULT_WINDOW,
  ErrorCode,
  Flag,
  type Frame,
  FrameReader,
  FrameType,
  frame,
  HEADER_SIZE,
  type HeaderBlock,
  HeaderBlocks,
  PREFACE,
  rstStream,
  Setting,
  settings,
  unpad,
  windowUpdate,
  writeHeader,
} from './frames';
import { type HeaderFields, HpackDecoder } from './hpack';

/** Receive windows: a list of many objects arrives without waiting for window updates. */
const STREAM_WINDOW = 16 << 20;
const SESSION_WINDOW = 64 << 20;
/** Stream ids are 31 bits and never reused: a connection that used them all drains and is replaced. */
const MAX_STREAM_ID = 2 ** 31 - 1;

export interface StreamHandler {
  /** A header block: the response's headers, or its trailers. */
  headers(fields: HeaderFields, endStream: boolean): void;
  /** A DATA payload (a view: copy what is kept past the call). */
  data(chunk: Buffer, endStream: boolean): void;
  /** The stream ended without END_STREAM: reset, refused, or its connection failed. */
  aborted(err: StreamAborted): void;
}

export class StreamAborted extends Error {
  constructor(
    message: string,
    /** The server surely did not process the request (never connected, refused, beyond GOAWAY): safe to retry. */
    readonly unprocessed: boolean,
  ) {
    super(message);
  }
}

export interface SessionTarget {
  /** http://host:port, https://host:port, unix:path, or host:port (plain text). */
  url: string;
  tls?: { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer } | null;
}

interface Stream {
  readonly id: number;
  readonly handler: StreamHandler;
  sendWindow: number;
  /** Body bytes not yet sent for want of window; null once all are out. */
  pending: Buffer | null;
  /** END_STREAM goes with the last pending byte. */
  pendingEnd: boolean;
  /** Received bytes not yet given back with a WINDOW_UPDATE. */
  unacked: number;
}

export class H2Session {
  private readonly socket: Socket;
  private readonly reader = new FrameReader(DEFAULT_MAX_FRAME, (f) => this.onFrame(f));
  private readonly hpack = new HpackDecoder();
  private readonly streams = new Map<number, Stream>();
  private nextId = 1;
  private out: Buffer[] = [];
  private flushing = false;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private peerInitialWindow = DEFAULT_WINDOW;
  private sendWindow = DEFAULT_WINDOW;
  private unacked = 0;
  /** Response header blocks are not limited by size here: etcd's are a few fields. */
  private readonly blocks = new HeaderBlocks(Number.MAX_SAFE_INTEGER);
  private pings: (() => void)[] = [];
  /** The socket connected (and for TLS, the handshake passed): a request may have reached the server. */
  connected = false;
  /** No new streams: the server sent GOAWAY or the connection is gone. */
  private closing = false;
  destroyed = false;
  onClose: (() => void) | null = null;

  constructor(target: SessionTarget) {
    const { url } = target;
    if (url.startsWith('unix:')) {
      this.socket = netConnect(url.replace(/^unix:(\/\/)?/, ''), () => (this.connected = true));
    } else {
      const u = new URL(/^[a-z]+:\/\//i.test(url) ? url : `http://${url}`);
      const host = u.hostname.replace(/^\[|\]$/g, '');
      if (u.protocol === 'https:') {
        const port = Number(u.port || 443);
        this.socket = tlsConnect(
          // SNI carries host names only; the certificate is still checked against an IP.
          { host, port, ...(target.tls ?? {}), servername: isIP(host) ? '' : host, ALPNProtocols: ['h2'] },
          () => (this.connected = true),
        );
      } else this.socket = netConnect(Number(u.port || 80), host, () => (this.connected = true));
    }
    this.socket.setNoDelay(true);
    // Idle connections must not keep the process alive; open calls do (their timers).
    this.socket.unref();
    this.socket.on('data', (chunk: Buffer) => {
      try {
        this.reader.push(chunk);
      } catch (err) {
        this.destroy(err as Error);
      }
    });
    this.socket.on('error', (err) => this.destroy(err));
    this.socket.on('close', () => this.destroy(new Error('connection closed')));
    this.write(PREFACE);
    this.write(
      settings([
        [Setting.ENABLE_PUSH, 0],
        [Setting.INITIAL_WINDOW_SIZE, STREAM_WINDOW],
      ]),
    );
    this.write(windowUpdate(0, SESSION_WINDOW - DEFAULT_WINDOW));
  }

  /**
   * Opens a stream: `headerBlock` from encodeHeaders(), then `body`, ending this side of the
   * stream unless `open` (then send() carries more).
   */
  request(headerBlock: Buffer, body: Buffer, handler: StreamHandler, open = false): number {
    if (this.closing) throw new StreamAborted('the connection takes no new streams', true);
    const id = this.nextId;
    this.nextId += 2;
    if (this.nextId > MAX_STREAM_ID) this.stopTaking();
    const s: Stream = {
      id,
      handler,
      sendWindow: this.peerInitialWindow,
      pending: null,
      pendingEnd: false,
      unacked: 0,
    };
    this.streams.set(id, s);
    // The header block and as much of the body as the windows take go out as one buffer.
    const n = Math.min(body.length, this.peerMaxFrame, s.sendWindow, this.sendWindow);
    const all = n === body.length;
    const withData = n > 0 || !open;
    const b = Buffer.allocUnsafe((withData ? 2 * HEADER_SIZE : HEADER_SIZE) + headerBlock.length + n);
    writeHeader(b, 0, headerBlock.length, FrameType.HEADERS, Flag.END_HEADERS, id);
    headerBlock.copy(b, HEADER_SIZE);
    if (withData) {
      const at = HEADER_SIZE + headerBlock.length;
      writeHeader(b, at, n, FrameType.DATA, all && !open ? Flag.END_STREAM : 0, id);
      body.copy(b, at + HEADER_SIZE, 0, n);
    }
    this.write(b);
    s.sendWindow -= n;
    this.sendWindow -= n;
    if (!all) this.queue(s, body.subarray(n), !open);
    return id;
  }

  /** More of an open stream's body; `end` ends this side of it. */
  send(id: number, data: Buffer, end = false): void {
    const s = this.streams.get(id);
    if (!s || this.destroyed) return;
    this.queue(s, data, end);
  }

  private queue(s: Stream, data: Buffer, end: boolean): void {
    s.pending = s.pending ? Buffer.concat([s.pending, data]) : data;
    s.pendingEnd = end;
    this.sendPending();
  }

  /** Ends a stream from this side (RST_STREAM CANCEL); its handler hears nothing more. */
  cancel(id: number): void {
    if (!this.streams.delete(id) || this.destroyed) return;
    this.write(rstStream(id, ErrorCode.CANCEL));
  }

  /** Calls `done` when the server answers a PING. */
  ping(done: () => void): void {
    this.pings.push(done);
    this.write(frame(FrameType.PING, 0, 0, Buffer.alloc(8)));
  }

  /** False once the server sent GOAWAY or the connection is gone: open a new session. */
  get accepting(): boolean {
    return !this.closing;
  }

  /** Closes the connection; open streams are aborted with `err`'s message. */
  destroy(err: Error): void {
    if (this.destroyed) return;
    this.destroyed = true;
    this.socket.destroy();
    const unprocessed = !this.connected;
    const message = unprocessed
      ? `No connection established: ${err.message}`
      : `connection lost: ${err.message}`;
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const s of streams) s.handler.aborted(new StreamAborted(message, unprocessed));
    this.stopTaking();
  }

  /** No new streams from now on; the owner hears it once. */
  private stopTaking(): void {
    if (this.closing) return;
    this.closing = true;
    this.onClose?.();
  }

  /** A stream is over: forget it, and close a draining connection after its last one. */
  private end(id: number): void {
    this.streams.delete(id);
    if (this.closing && this.streams.size === 0) this.destroy(new Error('GOAWAY: connection drained'));
  }

  /**
   * Frames go out once the event loop has run this turn's I/O callbacks: the requests that all
   * the client sockets read in one turn share one system call to etcd.
   */
  private write(b: Buffer): void {
    this.out.push(b);
    if (this.flushing) return;
    this.flushing = true;
    setImmediate(() => {
      this.flushing = false;
      const bufs = this.out;
      this.out = [];
      if (this.destroyed) return;
      if (bufs.length === 1) this.socket.write(bufs[0]);
      else {
        this.socket.cork();
        for (const x of bufs) this.socket.write(x);
        this.socket.uncork();
      }
    });
  }

  /** Sends what the windows now allow of each stream's pending body. */
  private sendPending(): void {
    for (const s of this.streams.values()) {
      while (s.pending && (s.pending.length === 0 || (this.sendWindow > 0 && s.sendWindow > 0))) {
        const n = Math.min(s.pending.length, this.peerMaxFrame, s.sendWindow, this.sendWindow);
        const last = n === s.pending.length;
        const b = Buffer.allocUnsafe(HEADER_SIZE + n);
        writeHeader(b, 0, n, FrameType.DATA, last && s.pendingEnd ? Flag.END_STREAM : 0, s.id);
        s.pending.copy(b, HEADER_SIZE, 0, n);
        this.write(b);
        s.sendWindow -= n;
        this.sendWindow -= n;
        s.pending = last ? null : s.pending.subarray(n);
      }
      if (this.sendWindow <= 0) return;
    }
  }

  private onFrame(f: Frame): void {
    this.blocks.check(f);
    switch (f.type) {
      case FrameType.DATA:
        return this.onData(f);
      case FrameType.HEADERS:
        return this.deliverHeaders(this.blocks.headers(f));
      case FrameType.CONTINUATION:
        return this.deliverHeaders(this.blocks.continuation(f));
      case FrameType.RST_STREAM: {
        const s = this.streams.get(f.id);
        if (!s) return;
        this.end(f.id);
        const code = f.payload.readUInt32BE(0);
        const refused = code === ErrorCode.REFUSED_STREAM;
        s.handler.aborted(
          new StreamAborted(
            refused
              ? 'No connection established: the server refused the stream'
              : `stream closed without a status (HTTP/2 error ${code})`,
            refused,
          ),
        );
        return;
      }
      case FrameType.SETTINGS:
        if (!(f.flags & ACK)) this.onSettings(f.payload);
        return;
      case FrameType.PING:
        if (f.flags & ACK) this.pings.shift()?.();
        else this.write(frame(FrameType.PING, ACK, 0, Buffer.from(f.payload)));
        return;
      case FrameType.GOAWAY:
        return this.onGoaway(f.payload.readUInt32BE(0) & 0x7fffffff, f.payload.readUInt32BE(4));
      case FrameType.WINDOW_UPDATE: {
        const inc = f.payload.readUInt32BE(0) & 0x7fffffff;
        if (f.id === 0) this.sendWindow += inc;
        else {
          const s = this.streams.get(f.id);
          if (!s) return;
          s.sendWindow += inc;
        }
        this.sendPending();
        return;
      }
      case FrameType.PUSH_PROMISE:
        throw new Error('http2: PUSH_PROMISE though push is off');
      default:
      // PRIORITY and frame types this client does not know are ignored (RFC 9113 4.1).
    }
  }

  private onData(f: Frame): void {
    // Padding counts against the windows too.
    const size = f.payload.length;
    this.unacked += size;
    if (this.unacked >= SESSION_WINDOW / 2) {
      this.write(windowUpdate(0, this.unacked));
      this.unacked = 0;
    }
    const s = this.streams.get(f.id);
    if (!s) return;
    const end = (f.flags & Flag.END_STREAM) !== 0;
    if (end) this.end(f.id);
    else {
      s.unacked += size;
      if (s.unacked >= STREAM_WINDOW / 2) {
        this.write(windowUpdate(s.id, s.unacked));
        s.unacked = 0;
      }
    }
    s.handler.data(unpad(f), end);
  }

  private deliverHeaders(h: HeaderBlock | null): void {
    if (!h) return;
    const { id, block, end } = h;
    // Every block is decoded, even a cancelled stream's: the dynamic table must follow the server's.
    const fields = this.hpack.decode(block);
    const s = this.streams.get(id);
    if (!s) return;
    if (end) this.end(id);
    s.handler.headers(fields, end);
  }

  private onSettings(p: Buffer): void {
    for (let at = 0; at + 6 <= p.length; at += 6) {
      const v = p.readUInt32BE(at + 2);
      switch (p.readUInt16BE(at)) {
        case Setting.INITIAL_WINDOW_SIZE: {
          const delta = v - this.peerInitialWindow;
          this.peerInitialWindow = v;
          for (const s of this.streams.values()) s.sendWindow += delta;
          break;
        }
        case Setting.MAX_FRAME_SIZE:
          this.peerMaxFrame = v;
          break;
        default:
        // The peer's table size only bounds an encoder that indexes, and this one never does.
      }
    }
    this.write(frame(FrameType.SETTINGS, ACK, 0));
    this.sendPending();
  }

  private onGoaway(lastId: number, code: number): void {
    for (const s of [...this.streams.values()]) {
      if (s.id <= lastId) continue;
      this.streams.delete(s.id);
      s.handler.aborted(new StreamAborted(`No connection established: GOAWAY (HTTP/2 error ${code})`, true));
    }
    this.stopTaking();
    if (this.streams.size === 0) this.destroy(new Error(`GOAWAY (HTTP/2 error ${code})`));
  }
}
