// SPDY/3.1 as Kubernetes streams over it (the framing of moby/spdystream):
// after an HTTP/1.1 "Upgrade: SPDY/3.1" either end opens streams (SYN_STREAM,
// answered by SYN_REPLY) that carry headers and then data frames, each side
// half-closing with FIN; RST_STREAM aborts one stream, GOAWAY the session,
// PING is echoed. Header blocks are zlib-compressed with the SPDY dictionary,
// one compression context per direction for the whole session. Kubernetes'
// peers do not use flow control, so WINDOW_UPDATE and SETTINGS are read and
// ignored; backpressure is the socket's own: while a stream's reader lags,
// the session stops reading the socket (as spdystream's blocking reads do).
import { EventEmitter } from 'node:events';
import { Duplex } from 'node:stream';
import zlib from 'node:zlib';
import { SPDY_DICTIONARY } from './spdy-dictionary';

export const SPDY_PROTOCOL = 'SPDY/3.1';

const VERSION = 3;
export const FrameType = {
  SYN_STREAM: 1,
  SYN_REPLY: 2,
  RST_STREAM: 3,
  SETTINGS: 4,
  PING: 6,
  GOAWAY: 7,
  HEADERS: 8,
  WINDOW_UPDATE: 9,
} as const;
const FLAG_FIN = 0x01;
/** Bytes a stream buffers for its reader before the session stops reading the socket. */
const READ_HIGH_WATER = 256 * 1024;
/** RST_STREAM status codes used here. */
export const RST_PROTOCOL_ERROR = 1;
export const RST_CANCEL = 5;
const MAX_FRAME = 1 << 24;
/** Data frames are cut at this size (spdystream writes at most 16 KiB per frame too). */
const MAX_DATA = 16 * 1024;

/** Header names are lowercase on the wire; several values of one name are joined by NUL. */
export type SpdyHeaders = Record<string, string[]>;

export interface ControlFrame {
  control: true;
  type: number;
  flags: number;
  payload: Buffer;
}
export interface DataFrame {
  control: false;
  streamId: number;
  flags: number;
  data: Buffer;
}
export type Frame = ControlFrame | DataFrame;

/** Splits complete frames off the front of buf; returns them and the unconsumed rest. */
export function parseFrames(buf: Buffer): { frames: Frame[]; rest: Buffer } {
  const frames: Frame[] = [];
  let off = 0;
  while (buf.length - off >= 8) {
    const len = buf.readUIntBE(off + 5, 3);
    if (buf.length - off < 8 + len) break;
    const flags = buf[off + 4];
    const body = buf.subarray(off + 8, off + 8 + len);
    if (buf[off] & 0x80) {
      const version = buf.readUInt16BE(off) & 0x7fff;
      if (version !== VERSION) throw new Error(`unsupported SPDY version ${version}`);
      frames.push({ control: true, type: buf.readUInt16BE(off + 2), flags, payload: body });
    } else {
      frames.push({ control: false, streamId: buf.readUInt32BE(off) & 0x7fffffff, flags, data: body });
    }
    off += 8 + len;
  }
  return { frames, rest: buf.subarray(off) };
}

export function controlFrame(type: number, flags: number, payload: Buffer): Buffer {
  if (payload.length >= MAX_FRAME) throw new Error('SPDY frame too large');
  const h = Buffer.alloc(8);
  h.writeUInt16BE(0x8000 | VERSION, 0);
  h.writeUInt16BE(type, 2);
  h[4] = flags;
  h.writeUIntBE(payload.length, 5, 3);
  return Buffer.concat([h, payload]);
}

export function dataFrame(streamId: number, flags: number, data: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.writeUInt32BE(streamId & 0x7fffffff, 0);
  h[4] = flags;
  h.writeUIntBE(data.length, 5, 3);
  return Buffer.concat([h, data]);
}

/** The uncompressed name/value block (32-bit counts and lengths). */
export function encodeHeaderBlock(headers: SpdyHeaders): Buffer {
  const entries = Object.entries(headers).filter(([, v]) => v.length);
  const parts: Buffer[] = [u32(entries.length)];
  for (const [name, values] of entries) {
    const n = Buffer.from(name.toLowerCase(), 'utf8');
    const v = Buffer.from(values.join('\0'), 'utf8');
    parts.push(u32(n.length), n, u32(v.length), v);
  }
  return Buffer.concat(parts);
}

export function decodeHeaderBlock(b: Buffer): SpdyHeaders {
  const out: SpdyHeaders = {};
  let off = 0;
  const need = (n: number) => {
    if (off + n > b.length) throw new Error('truncated SPDY header block');
  };
  need(4);
  const count = b.readUInt32BE(off);
  off += 4;
  for (let i = 0; i < count; i++) {
    need(4);
    const nl = b.readUInt32BE(off);
    off += 4;
    need(nl);
    const name = b.subarray(off, off + nl).toString('utf8');
    off += nl;
    need(4);
    const vl = b.readUInt32BE(off);
    off += 4;
    need(vl);
    const value = b.subarray(off, off + vl).toString('utf8');
    off += vl;
    (out[name] ??= []).push(...value.split('\0'));
  }
  return out;
}

const u32 = (n: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};

/**
 * One zlib context of a session direction. Each header block is written and
 * sync-flushed; the output of one flush is that block's compressed form.
 * Calls must not overlap (the connection serializes them).
 */
class HeaderCodec {
  private readonly z: zlib.Deflate | zlib.Inflate;
  private chunks: Buffer[] = [];
  private failed?: Error;

  constructor(kind: 'deflate' | 'inflate') {
    this.z =
      kind === 'deflate'
        ? zlib.createDeflate({ dictionary: SPDY_DICTIONARY })
        : zlib.createInflate({ dictionary: SPDY_DICTIONARY });
    this.z.on('data', (c: Buffer) => this.chunks.push(c));
    this.z.on('error', (e) => (this.failed = e));
  }

  run(input: Buffer): Promise<Buffer> {
    if (this.failed) return Promise.reject(this.failed);
    return new Promise((resolve, reject) => {
      this.chunks = [];
      this.z.write(input);
      this.z.flush(zlib.constants.Z_SYNC_FLUSH, () => {
        // Output pushed before the flush completed may still sit in a queued
        // 'data' tick: let those run first.
        setImmediate(() => {
          if (this.failed) return reject(this.failed);
          resolve(Buffer.concat(this.chunks));
        });
      });
    });
  }

  close(): void {
    this.z.close();
  }
}

/** One SPDY stream: a duplex of its data frames; headers are those of its SYN_STREAM. */
export class SpdyStream extends Duplex {
  /** Headers of the SYN_REPLY (streams this end opened). */
  replyHeaders: SpdyHeaders = {};
  private remoteClosed = false;
  private localClosed = false;

  constructor(
    private readonly conn: SpdyConnection,
    readonly id: number,
    readonly headers: SpdyHeaders,
  ) {
    super({ allowHalfOpen: true, readableHighWaterMark: READ_HIGH_WATER });
  }

  header(name: string): string | undefined {
    return this.headers[name.toLowerCase()]?.[0];
  }

  override _read(): void {
    this.conn.releaseReading(this.id);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    if (this.localClosed) return cb();
    this.conn.sendData(this.id, Buffer.from(chunk), false).then(() => cb(), cb);
  }

  override _final(cb: (err?: Error | null) => void): void {
    this.closeLocal().then(() => cb(), cb);
  }

  /** Half-closes this end (a FIN data frame). */
  async closeLocal(): Promise<void> {
    if (this.localClosed) return;
    this.localClosed = true;
    await this.conn.sendData(this.id, Buffer.alloc(0), true);
    this.maybeDone();
  }

  /** Aborts the stream (RST_STREAM CANCEL). */
  reset(): void {
    if (!this.localClosed || !this.remoteClosed) this.conn.sendReset(this.id, RST_CANCEL);
    this.localClosed = this.remoteClosed = true;
    this.conn.forget(this.id);
    this.destroy();
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.conn.forget(this.id);
    cb(err);
  }

  /** @internal */
  onData(data: Buffer, fin: boolean): void {
    if (this.remoteClosed) return;
    if (data.length && !this.push(data)) this.conn.holdReading(this.id);
    if (fin) this.onRemoteClose();
  }

  /** @internal */
  onRemoteClose(): void {
    if (this.remoteClosed) return;
    this.remoteClosed = true;
    this.push(null);
    this.maybeDone();
  }

  /**
   * @internal the peer reset the stream or the session ended: what was received
   * can still be read, nothing more comes. Kubernetes' servers reset every
   * stream as they close a finished session, right after its last output, so
   * a reset must not drop output its reader has not taken yet (spdystream
   * too hands over the data frames that came before a reset).
   */
  onReset(): void {
    this.localClosed = true;
    this.conn.forget(this.id);
    if (!this.remoteClosed) {
      this.remoteClosed = true;
      this.push(null);
    }
    // Ends the writable side too, so that piping into the stream stops.
    if (!this.writableEnded) this.end();
  }

  private maybeDone(): void {
    if (this.localClosed && this.remoteClosed) this.conn.forget(this.id);
  }
}

/**
 * A SPDY session over an upgraded socket. The client opens odd stream ids, the
 * server even ones. Streams the peer opens are answered with an empty SYN_REPLY
 * and emitted as 'stream'; 'close' fires once when the session ends.
 */
export class SpdyConnection extends EventEmitter {
  private readonly streams = new Map<number, SpdyStream>();
  /** Streams whose reader lags behind (see holdReading). */
  private readonly lagging = new Set<number>();
  private readonly pendingReplies = new Map<
    number,
    { resolve: (s: SpdyStream) => void; reject: (e: Error) => void }
  >();
  private readonly deflate = new HeaderCodec('deflate');
  private readonly inflate = new HeaderCodec('inflate');
  private nextId: number;
  private buf: Buffer = Buffer.alloc(0);
  private reading: Promise<void> = Promise.resolve();
  private writing: Promise<void> = Promise.resolve();
  private closed = false;

  /** initial: bytes of the session that arrived with the upgrade response or request. */
  constructor(
    readonly socket: Duplex,
    role: 'client' | 'server',
    initial?: Buffer,
  ) {
    super();
    this.nextId = role === 'client' ? 1 : 2;
    if (initial?.length) this.onBytes(initial);
    socket.on('data', (d: Buffer) => this.onBytes(d));
    // Frames already received are handled before the session ends.
    const ended = () => void this.reading.then(() => this.shutdown());
    socket.on('end', ended);
    socket.on('close', ended);
    socket.on('error', ended);
  }

  get isClosed(): boolean {
    return this.closed;
  }

  /** Opens a stream with the given headers; resolves once the peer replied. */
  createStream(headers: Record<string, string | string[]>): Promise<SpdyStream> {
    if (this.closed) return Promise.reject(new Error('SPDY session closed'));
    const id = this.nextId;
    this.nextId += 2;
    const h: SpdyHeaders = {};
    for (const [k, v] of Object.entries(headers)) h[k.toLowerCase()] = Array.isArray(v) ? v : [v];
    const stream = new SpdyStream(this, id, h);
    this.streams.set(id, stream);
    return new Promise((resolve, reject) => {
      this.pendingReplies.set(id, { resolve, reject });
      this.enqueue(async () => {
        const block = await this.deflate.run(encodeHeaderBlock(h));
        const head = Buffer.alloc(10);
        head.writeUInt32BE(id, 0);
        head.writeUInt32BE(0, 4); // associated stream
        head[8] = 0; // priority
        head[9] = 0; // slot
        return controlFrame(FrameType.SYN_STREAM, 0, Buffer.concat([head, block]));
      }).catch(reject);
    });
  }

  /** Ends the session: GOAWAY, then the socket. */
  close(): void {
    if (this.closed) return;
    const goaway = Buffer.alloc(8);
    goaway.writeUInt32BE(0, 0);
    goaway.writeUInt32BE(0, 4);
    void this.enqueue(async () => controlFrame(FrameType.GOAWAY, 0, goaway))
      .catch(() => {})
      .then(() => this.socket.end());
    this.shutdown();
  }

  /** @internal */
  sendData(id: number, data: Buffer, fin: boolean): Promise<void> {
    if (this.closed) return Promise.reject(new Error('SPDY session closed'));
    if (!data.length) return this.enqueue(async () => dataFrame(id, fin ? FLAG_FIN : 0, data));
    let p = Promise.resolve();
    for (let off = 0; off < data.length; off += MAX_DATA) {
      const part = data.subarray(off, off + MAX_DATA);
      const last = off + MAX_DATA >= data.length;
      p = this.enqueue(async () => dataFrame(id, fin && last ? FLAG_FIN : 0, part));
    }
    return p;
  }

  /** @internal */
  sendReset(id: number, status: number): void {
    if (this.closed) return;
    const b = Buffer.alloc(8);
    b.writeUInt32BE(id, 0);
    b.writeUInt32BE(status, 4);
    void this.enqueue(async () => controlFrame(FrameType.RST_STREAM, 0, b)).catch(() => {});
  }

  /** @internal */
  forget(id: number): void {
    this.streams.delete(id);
    this.releaseReading(id);
  }

  /** @internal stream id's reader is behind: the socket is not read until every such reader caught up. */
  holdReading(id: number): void {
    if (this.lagging.has(id)) return;
    this.lagging.add(id);
    if (this.lagging.size === 1) this.socket.pause();
  }

  /** @internal */
  releaseReading(id: number): void {
    if (this.lagging.delete(id) && this.lagging.size === 0 && !this.closed) this.socket.resume();
  }

  /** Frames leave in the order they were asked for; resolves once written to the socket. */
  private enqueue(build: () => Promise<Buffer>): Promise<void> {
    const next = this.writing.then(async () => {
      const frame = await build();
      if (this.socket.destroyed || this.socket.writableEnded) throw new Error('SPDY session closed');
      if (!this.socket.write(frame))
        await new Promise<void>((r) => {
          const done = () => {
            this.socket.off('drain', done);
            this.socket.off('close', done);
            r();
          };
          this.socket.on('drain', done);
          this.socket.on('close', done);
        });
    });
    this.writing = next.catch(() => {});
    return next;
  }

  private onBytes(d: Buffer): void {
    this.buf = this.buf.length ? Buffer.concat([this.buf, d]) : d;
    let parsed: { frames: Frame[]; rest: Buffer };
    try {
      parsed = parseFrames(this.buf);
    } catch (e) {
      this.fail(e as Error);
      return;
    }
    this.buf = parsed.rest;
    for (const f of parsed.frames)
      this.reading = this.reading.then(() => this.onFrame(f)).catch((e) => this.fail(e));
  }

  private fail(e: Error): void {
    this.emit('protocolError', e);
    this.socket.destroy();
    this.shutdown();
  }

  private async onFrame(f: Frame): Promise<void> {
    if (!f.control) {
      this.streams.get(f.streamId)?.onData(f.data, (f.flags & FLAG_FIN) !== 0);
      return;
    }
    const p = f.payload;
    switch (f.type) {
      case FrameType.SYN_STREAM: {
        const id = p.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaderBlock(await this.inflate.run(p.subarray(10)));
        const stream = new SpdyStream(this, id, headers);
        this.streams.set(id, stream);
        const reply = Buffer.alloc(4);
        reply.writeUInt32BE(id);
        await this.enqueue(async () =>
          controlFrame(FrameType.SYN_REPLY, 0, Buffer.concat([reply, await this.deflate.run(u32(0))])),
        ).catch(() => {});
        this.emit('stream', stream);
        if (f.flags & FLAG_FIN) stream.onRemoteClose();
        return;
      }
      case FrameType.SYN_REPLY: {
        const id = p.readUInt32BE(0) & 0x7fffffff;
        const headers = decodeHeaderBlock(await this.inflate.run(p.subarray(4)));
        const stream = this.streams.get(id);
        const waiting = this.pendingReplies.get(id);
        this.pendingReplies.delete(id);
        if (stream) {
          stream.replyHeaders = headers;
          waiting?.resolve(stream);
          if (f.flags & FLAG_FIN) stream.onRemoteClose();
        }
        return;
      }
      case FrameType.HEADERS: {
        // Decompressed to keep the zlib context in step; Kubernetes sends none after the reply.
        await this.inflate.run(p.subarray(4));
        if (f.flags & FLAG_FIN) this.streams.get(p.readUInt32BE(0) & 0x7fffffff)?.onRemoteClose();
        return;
      }
      case FrameType.RST_STREAM: {
        const id = p.readUInt32BE(0) & 0x7fffffff;
        const waiting = this.pendingReplies.get(id);
        this.pendingReplies.delete(id);
        waiting?.reject(new Error(`stream ${id} reset by peer (status ${p.readUInt32BE(4)})`));
        this.streams.get(id)?.onReset();
        return;
      }
      case FrameType.PING:
        // This end sends no pings, so every PING is the peer's: echo it.
        await this.enqueue(async () => controlFrame(FrameType.PING, 0, Buffer.from(p))).catch(() => {});
        return;
      case FrameType.GOAWAY:
        this.shutdown();
        this.socket.end();
        return;
      default:
        // SETTINGS, WINDOW_UPDATE, unknown types: nothing to do.
        return;
    }
  }

  private shutdown(): void {
    if (this.closed) return;
    this.closed = true;
    for (const w of this.pendingReplies.values()) w.reject(new Error('SPDY session closed'));
    this.pendingReplies.clear();
    for (const s of [...this.streams.values()]) s.onReset();
    this.streams.clear();
    // Let queued header work finish before the zlib contexts go.
    void this.writing
      .then(() => this.reading)
      .finally(() => {
        this.deflate.close();
        this.inflate.close();
      });
    this.emit('close');
  }
}
