// One HTTP/2 server connection (RFC 9113) on an accepted socket: requests come
// in as streams with their header fields and body; answers go out as a header
// block and data. Both sides' flow control, SETTINGS, PING, GOAWAY (graceful:
// the streams under way finish) and RST_STREAM. All frames of one event-loop
// turn leave with one socket write, so an event written to a thousand watch
// streams of one connection is one TLS write, not a thousand: node:http2 makes
// a stream object, a write request and nghttp2 bookkeeping per write, which
// cost more than the apiserver's own work for a watch event (docs/performance.md).
import type { Duplex } from 'node:stream';
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
  goaway,
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
import { encodeHeaders, HpackDecoder } from './hpack';

/**
 * What a request body may put in flight per stream (given back as it is read: this bounds
 * what an unread body holds), and per connection (given back as it arrives). kube-apiserver
 * allows 256 KB per stream, its 99th percentile of object sizes.
 */
const STREAM_RECV_WINDOW = 256 << 10;
const SESSION_RECV_WINDOW = 16 << 20;
/** Above this much queued for want of window, write() says to wait for drain. */
export const STREAM_HIGH_WATER = 64 << 10;
/** Above this much in the socket's buffer, DATA waits (the client is not reading). */
const SOCKET_HIGH_WATER = 4 << 20;
/** Runs of small buffers are joined into one before the socket write; larger ones go as they are. */
const JOIN_BELOW = 16 << 10;
/** The largest request header block (Go's http.DefaultMaxHeaderBytes, which kube-apiserver keeps). */
const MAX_HEADER_BLOCK = 1 << 20;
/**
 * Stream resets a client may send: a burst, then so many a second (nghttp2's defaults).
 * Each reset stream's request may still be at work, so a client opening and resetting
 * streams without end (CVE-2023-44487, "rapid reset") is told to calm down and cut off.
 */
const RESET_BURST = 1000;
const RESETS_PER_SECOND = 33;
/** A turn's frames up to this size are joined in a buffer the session reuses. */
const ARENA_BYTES = 256 << 10;

export interface ServerSessionOptions {
  /** SETTINGS_MAX_CONCURRENT_STREAMS: streams beyond it are refused. */
  maxConcurrentStreams: number;
  /** A new request: its header fields have arrived. */
  onStream(stream: ServerStream): void;
}

/** One request/response exchange. Set the callbacks in onStream. */
export class ServerStream {
  /** The request's header fields in order, pseudo-headers first. */
  readonly fields: [string, string][];
  /** Body bytes (a view of the connection's read: copy what is kept past the call, or keep it whole). */
  onData: ((chunk: Buffer) => void) | null = null;
  /** The request's body is complete. */
  onEnd: (() => void) | null = null;
  /** The stream is over: `reset` when it ended without both sides finishing (RST_STREAM, lost connection). */
  onClose: ((reset: boolean) => void) | null = null;
  /** What write() held back has gone out (below the high-water mark again). */
  onDrain: (() => void) | null = null;

  /** @internal */ sendWindow: number;
  /** @internal */ queue: Buffer[] = [];
  /** @internal */ queued = 0;
  /** @internal */ endQueued = false;
  /** @internal Trailers to send once the queued body is out. */
  trailerFields: readonly (readonly [string, string])[] | null = null;
  /** @internal */ endSent = false;
  /** @internal */ needDrain = false;
  /** @internal */ remoteEnded: boolean;
  /** @internal */ recvUnacked = 0;
  /** @internal What the client may still send before we give window back. */
  recvWindow = STREAM_RECV_WINDOW;
  headersSent = false;
  closed = false;

  constructor(
    readonly id: number,
    readonly session: ServerSession,
    fields: [string, string][],
    remoteEnded: boolean,
  ) {
    this.fields = fields;
    this.remoteEnded = remoteEnded;
    this.sendWindow = session.peerInitialWindow;
  }

  /** The response's header block; `end` when there is no body. */
  respond(status: number, headers: readonly (readonly [string, string])[], end: boolean): void {
    if (this.headersSent || this.closed) return;
    this.headersSent = true;
    this.session.sendHeaders(this, [[':status', String(status)], ...headers], end);
  }

  /** Body bytes; false when they wait for the client's window (then onDrain says when to go on). */
  write(data: Buffer, end = false): boolean {
    if (this.closed || this.endQueued) return false;
    return this.session.sendData(this, data, end);
  }

  /** Ends the response with a trailing header block (gRPC's status), after the body written so far. */
  trailers(fields: readonly (readonly [string, string])[]): void {
    if (this.closed || this.endQueued || !this.headersSent) return;
    this.session.sendTrailers(this, fields);
  }

  /** Ends the stream now (RST_STREAM): the client sees the answer cut short. */
  reset(code: ErrorCode = ErrorCode.CANCEL): void {
    this.session.resetStream(this, code);
  }

  /** The owner read `n` body bytes: the client may send that many more. */
  consumed(n: number): void {
    this.session.consumed(this, n);
  }

  /** Bytes written but not yet sent for want of window. */
  get pending(): number {
    return this.queued;
  }
}

export class ServerSession {
  /** @internal */ peerInitialWindow = DEFAULT_WINDOW;
  private readonly reader = new FrameReader(DEFAULT_MAX_FRAME, (f) => this.onFrame(f));
  private readonly hpack = new HpackDecoder();
  private readonly streams = new Map<number, ServerStream>();
  /** Streams with data held back by a window or the socket. */
  private readonly blocked = new Set<ServerStream>();
  private preface: Buffer | null = Buffer.alloc(0);
  private lastStreamId = 0;
  private peerMaxFrame = DEFAULT_MAX_FRAME;
  private sendWindow = DEFAULT_WINDOW;
  private recvUnacked = 0;
  private readonly blocks = new HeaderBlocks(MAX_HEADER_BLOCK);
  /** Frames of this turn: whole frames, or DATA frames whose header is written at flush. */
  private out: (Buffer | DataFrame)[] = [];
  private outBytes = 0;
  private flushing = false;
  private socketFull = false;
  /** Join buffers not in a write under way. */
  private arenas: Buffer[] = [];
  /** GOAWAY sent: no new streams; the connection closes once the last one is over. */
  private goingAway = false;
  /** The socket was ended: nothing more is written. */
  private ending = false;
  /** Resets the client may still send now, as of `resetsAt`. */
  private resetTokens = RESET_BURST;
  private resetsAt = performance.now();
  destroyed = false;
  onClose: (() => void) | null = null;

  constructor(
    readonly socket: Duplex,
    private readonly opts: ServerSessionOptions,
  ) {
    socket.on('data', (chunk: Buffer) => this.onSocketData(chunk));
    socket.on('drain', () => {
      this.socketFull = false;
      this.pumpBlocked();
    });
    socket.on('error', () => this.destroy());
    socket.on('close', () => this.destroy());
    this.write(
      settings([
        [Setting.MAX_CONCURRENT_STREAMS, opts.maxConcurrentStreams],
        [Setting.INITIAL_WINDOW_SIZE, STREAM_RECV_WINDOW],
      ]),
    );
    this.write(windowUpdate(0, SESSION_RECV_WINDOW - DEFAULT_WINDOW));
  }

  /** Open streams. */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Graceful close (GOAWAY, NO_ERROR): the streams under way finish, no new ones
   * start, and the connection closes after the last one.
   */
  goaway(): void {
    if (this.goingAway || this.destroyed) return;
    this.goingAway = true;
    this.write(goaway(this.lastStreamId, ErrorCode.NO_ERROR));
    this.closeIfDone();
  }

  /** Closes the connection now; open streams end as reset. */
  destroy(): void {
    if (this.destroyed) return;
    this.socket.destroy();
    this.abandon();
  }

  /** No more frames either way: every open stream ends as reset. */
  private abandon(): void {
    if (this.destroyed) return;
    this.destroyed = true;
    const open = [...this.streams.values()];
    this.streams.clear();
    this.blocked.clear();
    for (const s of open) this.endStream(s, true);
    this.onClose?.();
  }

  /** Ends the socket after what is queued (a GOAWAY last), and cuts it if the client does not close. */
  private endSocket(): void {
    this.flush();
    this.ending = true;
    this.socket.end();
    setTimeout(() => this.socket.destroy(), 1000).unref();
  }

  // ---- sending ----

  /** @internal */
  sendHeaders(s: ServerStream, fields: readonly (readonly [string, string])[], end: boolean): void {
    const blockBytes = encodeHeaders(fields);
    let at = 0;
    let type = FrameType.HEADERS;
    do {
      const n = Math.min(blockBytes.length - at, this.peerMaxFrame);
      const last = at + n === blockBytes.length;
      const b = Buffer.allocUnsafe(HEADER_SIZE + n);
      const flags = (last ? Flag.END_HEADERS : 0) | (end && type === FrameType.HEADERS ? Flag.END_STREAM : 0);
      writeHeader(b, 0, n, type, flags, s.id);
      blockBytes.copy(b, HEADER_SIZE, at, at + n);
      this.write(b);
      at += n;
      type = FrameType.CONTINUATION;
    } while (at < blockBytes.length);
    if (end) {
      s.endQueued = s.endSent = true;
      this.sent(s);
    }
  }

  /** @internal */
  sendData(s: ServerStream, data: Buffer, end: boolean): boolean {
    if (data.length) {
      s.queue.push(data);
      s.queued += data.length;
    }
    if (end) s.endQueued = true;
    this.pump(s);
    if (s.queued < STREAM_HIGH_WATER) return true;
    s.needDrain = true;
    return false;
  }

  /** @internal */
  sendTrailers(s: ServerStream, fields: readonly (readonly [string, string])[]): void {
    s.trailerFields = fields;
    s.endQueued = true;
    this.pump(s);
  }

  /** Frames what the windows allow of a stream's queue. */
  private pump(s: ServerStream): void {
    while (s.queue.length && s.sendWindow > 0 && this.sendWindow > 0 && !this.socketFull) {
      const b = s.queue[0];
      const n = Math.min(b.length, this.peerMaxFrame, s.sendWindow, this.sendWindow);
      let chunk: Buffer;
      if (n === b.length) {
        s.queue.shift();
        chunk = b;
      } else {
        chunk = b.subarray(0, n);
        s.queue[0] = b.subarray(n);
      }
      s.queued -= n;
      s.sendWindow -= n;
      this.sendWindow -= n;
      const last = s.endQueued && s.queue.length === 0 && !s.trailerFields;
      this.writeData(s.id, last ? Flag.END_STREAM : 0, chunk);
      if (last) s.endSent = true;
    }
    if (s.endQueued && !s.endSent && s.queue.length === 0) {
      if (s.trailerFields) this.sendHeaders(s, s.trailerFields, true);
      else {
        this.writeData(s.id, Flag.END_STREAM, EMPTY);
        s.endSent = true;
      }
    }
    if (s.queue.length) this.blocked.add(s);
    else this.blocked.delete(s);
    if (s.needDrain && s.queued < STREAM_HIGH_WATER) {
      s.needDrain = false;
      // Not from inside write(): the owner may write again from its drain handler.
      queueMicrotask(() => s.onDrain?.());
    }
    if (s.endSent) this.sent(s);
  }

  private pumpBlocked(): void {
    for (const s of [...this.blocked]) {
      if (this.sendWindow <= 0 || this.socketFull) return;
      this.pump(s);
    }
  }

  /** Our side is done: the stream closes, and a client still sending is told to stop (RFC 9113 8.1). */
  private sent(s: ServerStream): void {
    if (s.closed) return;
    if (!s.remoteEnded) this.write(rstStream(s.id, ErrorCode.NO_ERROR));
    this.forget(s, false);
  }

  /** @internal */
  resetStream(s: ServerStream, code: ErrorCode): void {
    if (s.closed) return;
    this.write(rstStream(s.id, code));
    this.forget(s, true);
  }

  private forget(s: ServerStream, reset: boolean): void {
    this.streams.delete(s.id);
    this.blocked.delete(s);
    this.endStream(s, reset);
    this.closeIfDone();
  }

  private endStream(s: ServerStream, reset: boolean): void {
    if (s.closed) return;
    s.closed = true;
    s.queue = [];
    s.queued = 0;
    s.onClose?.(reset);
  }

  private closeIfDone(): void {
    if (this.goingAway && this.streams.size === 0 && !this.destroyed) this.endSocket();
  }

  /** @internal */
  consumed(s: ServerStream, n: number): void {
    if (s.closed || s.remoteEnded) return;
    s.recvUnacked += n;
    if (s.recvUnacked >= STREAM_RECV_WINDOW / 2) {
      this.write(windowUpdate(s.id, s.recvUnacked));
      s.recvWindow += s.recvUnacked;
      s.recvUnacked = 0;
    }
  }

  /** Frames go out together once this turn's I/O callbacks have run. */
  private write(b: Buffer): void {
    if (this.ending) return;
    this.out.push(b);
    this.outBytes += b.length;
    this.scheduleFlush();
  }

  /** A DATA frame: its header is made at flush, straight into the buffer that goes out. */
  private writeData(id: number, flags: number, payload: Buffer): void {
    if (this.ending) return;
    this.out.push({ id, flags, payload });
    this.outBytes += HEADER_SIZE + payload.length;
    this.scheduleFlush();
  }

  private scheduleFlush(): void {
    if (this.flushing || this.destroyed) return;
    this.flushing = true;
    setImmediate(() => this.flush());
  }

  private flush(): void {
    this.flushing = false;
    const frames = this.out;
    const total = this.outBytes;
    this.out = [];
    this.outBytes = 0;
    if (this.destroyed || !frames.length) return;
    const socket = this.socket;
    if (total <= ARENA_BYTES) {
      // The turn's frames (a watch event to a hundred streams: ~150 KB) joined in a reused
      // buffer: a fresh one per turn would be external memory V8 answers with full collections.
      const arena = this.arenas.pop() ?? Buffer.allocUnsafeSlow(ARENA_BYTES);
      let at = 0;
      for (const f of frames) at = put(arena, at, f);
      // Free again once written (TLS encrypts it within write() unless the socket queues it).
      socket.write(arena.subarray(0, total), () => {
        if (this.arenas.length < 2) this.arenas.push(arena);
      });
    } else {
      // A large answer: small frames joined, large DATA payloads written as they are.
      socket.cork();
      let run: (Buffer | DataFrame)[] = [];
      let runBytes = 0;
      const joinRun = () => {
        if (!run.length) return;
        const b = Buffer.allocUnsafe(runBytes);
        let at = 0;
        for (const f of run) at = put(b, at, f);
        socket.write(b);
        run = [];
        runBytes = 0;
      };
      for (const f of frames) {
        if (Buffer.isBuffer(f) || f.payload.length < JOIN_BELOW) {
          run.push(f);
          runBytes += Buffer.isBuffer(f) ? f.length : HEADER_SIZE + f.payload.length;
          continue;
        }
        joinRun();
        const h = Buffer.allocUnsafe(HEADER_SIZE);
        writeHeader(h, 0, f.payload.length, FrameType.DATA, f.flags, f.id);
        socket.write(h);
        socket.write(f.payload);
      }
      joinRun();
      socket.uncork();
    }
    if (socket.writableLength >= SOCKET_HIGH_WATER) this.socketFull = true;
  }

  // ---- receiving ----

  private onSocketData(chunk: Buffer): void {
    if (this.destroyed) return;
    try {
      if (this.preface) {
        const got = Buffer.concat([this.preface, chunk]);
        if (got.length < PREFACE.length) {
          if (!PREFACE.subarray(0, got.length).equals(got))
            throw new ConnectionError('not an HTTP/2 preface');
          this.preface = got;
          return;
        }
        if (!got.subarray(0, PREFACE.length).equals(PREFACE))
          throw new ConnectionError('not an HTTP/2 preface');
        this.preface = null;
        chunk = got.subarray(PREFACE.length);
      }
      this.reader.push(chunk);
    } catch (err) {
      this.fail(err);
    }
  }

  /** A connection error: GOAWAY with its code, then the connection closes. */
  private fail(err: unknown): void {
    const code =
      err instanceof ConnectionError
        ? err.code
        : String((err as Error)?.message).startsWith('hpack')
          ? ErrorCode.COMPRESSION_ERROR
          : ErrorCode.PROTOCOL_ERROR;
    this.write(goaway(this.lastStreamId, code));
    this.endSocket();
    this.abandon();
  }

  private onFrame(f: Frame): void {
    this.blocks.check(f);
    switch (f.type) {
      case FrameType.DATA:
        return this.onData(f);
      case FrameType.HEADERS:
        if (f.id === 0) throw new ConnectionError('HEADERS on stream 0');
        return this.onHeaderBlock(this.blocks.headers(f));
      case FrameType.CONTINUATION:
        return this.onHeaderBlock(this.blocks.continuation(f));
      case FrameType.RST_STREAM: {
        if (f.id === 0 || f.payload.length !== 4) throw new ConnectionError('bad RST_STREAM');
        this.countReset();
        const s = this.streams.get(f.id);
        if (s) this.forget(s, true);
        return;
      }
      case FrameType.SETTINGS:
        if (f.id !== 0 || f.payload.length % 6) throw new ConnectionError('bad SETTINGS');
        if (!(f.flags & ACK)) this.onSettings(f.payload);
        return;
      case FrameType.PING:
        if (f.id !== 0 || f.payload.length !== 8) throw new ConnectionError('bad PING');
        if (!(f.flags & ACK)) this.write(frame(FrameType.PING, ACK, 0, Buffer.from(f.payload)));
        return;
      case FrameType.GOAWAY:
        // The client opens no more streams; those under way finish.
        this.goingAway = true;
        this.closeIfDone();
        return;
      case FrameType.WINDOW_UPDATE: {
        if (f.payload.length !== 4) throw new ConnectionError('bad WINDOW_UPDATE');
        const inc = f.payload.readUInt32BE(0) & 0x7fffffff;
        if (f.id === 0) {
          this.sendWindow += inc;
          if (this.sendWindow > 0x7fffffff)
            throw new ConnectionError('window overflow', ErrorCode.FLOW_CONTROL_ERROR);
          this.pumpBlocked();
        } else {
          const s = this.streams.get(f.id);
          if (!s) return;
          s.sendWindow += inc;
          if (s.sendWindow > 0x7fffffff) return this.resetStream(s, ErrorCode.FLOW_CONTROL_ERROR);
          this.pump(s);
        }
        return;
      }
      case FrameType.PUSH_PROMISE:
        throw new ConnectionError('a client may not push');
      default:
      // PRIORITY and unknown frame types are ignored (RFC 9113 4.1, 5.3.2).
    }
  }

  private countReset(): void {
    const now = performance.now();
    this.resetTokens = Math.min(
      RESET_BURST,
      this.resetTokens + ((now - this.resetsAt) / 1000) * RESETS_PER_SECOND,
    );
    this.resetsAt = now;
    if (this.resetTokens < 1)
      throw new ConnectionError('too many stream resets', ErrorCode.ENHANCE_YOUR_CALM);
    this.resetTokens -= 1;
  }

  private onData(f: Frame): void {
    if (f.id === 0) throw new ConnectionError('DATA on stream 0');
    // The whole frame, padding too, counts against the windows; the connection's is given back at once.
    const size = f.payload.length;
    this.recvUnacked += size;
    if (this.recvUnacked >= SESSION_RECV_WINDOW / 2) {
      this.write(windowUpdate(0, this.recvUnacked));
      this.recvUnacked = 0;
    }
    const s = this.streams.get(f.id);
    if (!s || s.remoteEnded) {
      if (f.id > this.lastStreamId) throw new ConnectionError('DATA on an idle stream');
      return;
    }
    // A client sending beyond the window it was given would have us hold any amount unread.
    s.recvWindow -= size;
    if (s.recvWindow < 0) return this.resetStream(s, ErrorCode.FLOW_CONTROL_ERROR);
    const data = unpad(f);
    // Padding is given back now; the data once the owner has read it.
    if (size > data.length) this.consumed(s, size - data.length);
    const end = (f.flags & Flag.END_STREAM) !== 0;
    if (end) s.remoteEnded = true;
    if (data.length) s.onData?.(data);
    if (end) s.onEnd?.();
  }

  private onHeaderBlock(h: HeaderBlock | null): void {
    if (!h) return;
    const { id, block, end } = h;
    // Every block is decoded, refused or not: the table must follow the client's encoder.
    const fields = this.hpack.decodeList(block);
    const open = this.streams.get(id);
    if (open) {
      // Trailers: only the end of the body matters here.
      if (!end) throw new ConnectionError('trailers without END_STREAM');
      if (!open.remoteEnded) {
        open.remoteEnded = true;
        open.onEnd?.();
      }
      return;
    }
    if (id % 2 === 0 || id <= this.lastStreamId) throw new ConnectionError(`HEADERS on stream ${id}`);
    this.lastStreamId = id;
    if (this.goingAway) return;
    if (this.streams.size >= this.opts.maxConcurrentStreams) {
      this.write(rstStream(id, ErrorCode.REFUSED_STREAM));
      return;
    }
    const s = new ServerStream(id, this, fields, end);
    this.streams.set(id, s);
    this.opts.onStream(s);
    if (end && !s.closed) s.onEnd?.();
  }

  private onSettings(p: Buffer): void {
    for (let at = 0; at < p.length; at += 6) {
      const v = p.readUInt32BE(at + 2);
      switch (p.readUInt16BE(at)) {
        case Setting.INITIAL_WINDOW_SIZE: {
          if (v > 0x7fffffff) throw new ConnectionError('window too large', ErrorCode.FLOW_CONTROL_ERROR);
          const delta = v - this.peerInitialWindow;
          this.peerInitialWindow = v;
          for (const s of this.streams.values()) s.sendWindow += delta;
          break;
        }
        case Setting.MAX_FRAME_SIZE:
          if (v < DEFAULT_MAX_FRAME || v > 0xffffff) throw new ConnectionError('bad SETTINGS_MAX_FRAME_SIZE');
          this.peerMaxFrame = v;
          break;
        default:
        // The client's table size bounds an encoder that indexes, and ours never does.
      }
    }
    this.write(frame(FrameType.SETTINGS, ACK, 0));
    this.pumpBlocked();
  }
}

class ConnectionError extends Error {
  constructor(
    message: string,
    readonly code: ErrorCode = ErrorCode.PROTOCOL_ERROR,
  ) {
    super(`http2: ${message}`);
  }
}

/** A DATA frame waiting for its header. */
interface DataFrame {
  id: number;
  flags: number;
  payload: Buffer;
}

const EMPTY = Buffer.alloc(0);

/** Copies a frame into `b` at `at`; returns the end. */
function put(b: Buffer, at: number, f: Buffer | DataFrame): number {
  if (Buffer.isBuffer(f)) return at + f.copy(b, at);
  writeHeader(b, at, f.payload.length, FrameType.DATA, f.flags, f.id);
  return at + HEADER_SIZE + f.payload.copy(b, at + HEADER_SIZE);
}
