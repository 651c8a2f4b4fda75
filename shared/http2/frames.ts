// HTTP/2 framing (RFC 9113 section 4 and 6): the frame types, flags, settings and error
// codes tkube's client and server act on (others are ignored), frame headers, and a reader
// that cuts a byte stream into frames.

export const PREFACE = Buffer.from('PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n', 'latin1');

export const enum FrameType {
  DATA = 0x0,
  HEADERS = 0x1,
  PRIORITY = 0x2,
  RST_STREAM = 0x3,
  SETTINGS = 0x4,
  PUSH_PROMISE = 0x5,
  PING = 0x6,
  GOAWAY = 0x7,
  WINDOW_UPDATE = 0x8,
  CONTINUATION = 0x9,
}

/** SETTINGS and PING answers; the same bit as END_STREAM on other frames. */
export const ACK = 0x1;

export const enum Flag {
  END_STREAM = 0x1,
  END_HEADERS = 0x4,
  PADDED = 0x8,
  PRIORITY = 0x20,
}

export const enum Setting {
  HEADER_TABLE_SIZE = 0x1,
  ENABLE_PUSH = 0x2,
  MAX_CONCURRENT_STREAMS = 0x3,
  INITIAL_WINDOW_SIZE = 0x4,
  MAX_FRAME_SIZE = 0x5,
}

export const enum ErrorCode {
  NO_ERROR = 0x0,
  PROTOCOL_ERROR = 0x1,
  INTERNAL_ERROR = 0x2,
  FLOW_CONTROL_ERROR = 0x3,
  REFUSED_STREAM = 0x7,
  CANCEL = 0x8,
  COMPRESSION_ERROR = 0x9,
  ENHANCE_YOUR_CALM = 0xb,
}

export const HEADER_SIZE = 9;
/** SETTINGS_MAX_FRAME_SIZE's default, which tkube keeps for what it receives. */
export const DEFAULT_MAX_FRAME = 16_384;
/** Both windows start here until SETTINGS or WINDOW_UPDATE move them. */
export const DEFAULT_WINDOW = 65_535;

/** Writes a frame header at b[at]. */
export function writeHeader(
  b: Buffer,
  at: number,
  length: number,
  type: FrameType,
  flags: number,
  id: number,
): void {
  b[at] = length >>> 16;
  b[at + 1] = (length >>> 8) & 0xff;
  b[at + 2] = length & 0xff;
  b[at + 3] = type;
  b[at + 4] = flags;
  b.writeUInt32BE(id, at + 5);
}

/** A whole frame whose payload is `payload`. */
export function frame(type: FrameType, flags: number, id: number, payload: Buffer = Buffer.alloc(0)): Buffer {
  const b = Buffer.allocUnsafe(HEADER_SIZE + payload.length);
  writeHeader(b, 0, payload.length, type, flags, id);
  payload.copy(b, HEADER_SIZE);
  return b;
}

export function windowUpdate(id: number, increment: number): Buffer {
  const p = Buffer.allocUnsafe(4);
  p.writeUInt32BE(increment, 0);
  return frame(FrameType.WINDOW_UPDATE, 0, id, p);
}

export function goaway(lastId: number, code: ErrorCode): Buffer {
  const p = Buffer.allocUnsafe(8);
  p.writeUInt32BE(lastId, 0);
  p.writeUInt32BE(code, 4);
  return frame(FrameType.GOAWAY, 0, 0, p);
}

export function rstStream(id: number, code: ErrorCode): Buffer {
  const p = Buffer.allocUnsafe(4);
  p.writeUInt32BE(code, 0);
  return frame(FrameType.RST_STREAM, 0, id, p);
}

export function settings(values: readonly (readonly [Setting, number])[]): Buffer {
  const p = Buffer.allocUnsafe(6 * values.length);
  values.forEach(([id, v], i) => {
    p.writeUInt16BE(id, 6 * i);
    p.writeUInt32BE(v, 6 * i + 2);
  });
  return frame(FrameType.SETTINGS, 0, 0, p);
}

export interface Frame {
  type: number;
  flags: number;
  id: number;
  /** A view of the received bytes: valid until the handler returns unless copied or kept whole. */
  payload: Buffer;
}

/** Cuts received chunks into frames; a frame split across chunks is joined, others are views of their chunk. */
export class FrameReader {
  private rest: Buffer | null = null;

  constructor(
    private readonly maxFrame: number,
    private readonly onFrame: (f: Frame) => void,
  ) {}

  push(chunk: Buffer): void {
    let b = this.rest ? Buffer.concat([this.rest, chunk]) : chunk;
    this.rest = null;
    let at = 0;
    while (b.length - at >= HEADER_SIZE) {
      const length = (b[at] << 16) | (b[at + 1] << 8) | b[at + 2];
      if (length > this.maxFrame)
        throw new Error(`http2: frame of ${length} bytes above the ${this.maxFrame} allowed`);
      const end = at + HEADER_SIZE + length;
      if (end > b.length) break;
      this.onFrame({
        type: b[at + 3],
        flags: b[at + 4],
        id: b.readUInt32BE(at + 5) & 0x7fffffff,
        payload: b.subarray(at + HEADER_SIZE, end),
      });
      at = end;
    }
    if (at < b.length) {
      // Keep only the tail, so a large chunk is not held for a few trailing bytes.
      b = b.subarray(at);
      this.rest = at > 0 && b.length < 4096 ? Buffer.from(b) : b;
    }
  }
}

/** A frame's payload without its padding (RFC 9113 6.1). */
export function unpad(f: Frame): Buffer {
  if (!(f.flags & Flag.PADDED)) return f.payload;
  const pad = f.payload[0];
  if (pad >= f.payload.length) throw new Error('http2: padding exceeds the frame');
  return f.payload.subarray(1, f.payload.length - pad);
}

/** A complete header block and the stream it opens or ends. */
export interface HeaderBlock {
  id: number;
  /** END_STREAM was set on its HEADERS frame. */
  end: boolean;
  block: Buffer;
}

/**
 * Joins header blocks split over a HEADERS frame and CONTINUATION frames
 * (RFC 9113 6.10); nothing else may come in between on the connection.
 */
export class HeaderBlocks {
  private pending: { id: number; end: boolean; parts: Buffer[]; bytes: number } | null = null;

  constructor(private readonly maxBytes: number) {}

  /** Throws unless `f` may come now: only CONTINUATION while a block is open. */
  check(f: Frame): void {
    if (this.pending && f.type !== FrameType.CONTINUATION) throw new Error('http2: header block interrupted');
  }

  /** A HEADERS frame: its block if complete, else null (CONTINUATION frames follow). */
  headers(f: Frame): HeaderBlock | null {
    let p = unpad(f);
    if (f.flags & Flag.PRIORITY) p = p.subarray(5);
    const end = (f.flags & Flag.END_STREAM) !== 0;
    if (f.flags & Flag.END_HEADERS) return { id: f.id, end, block: p };
    this.pending = { id: f.id, end, parts: [Buffer.from(p)], bytes: p.length };
    return null;
  }

  /** A CONTINUATION frame: the whole block once END_HEADERS arrives, else null. */
  continuation(f: Frame): HeaderBlock | null {
    const b = this.pending;
    if (!b || b.id !== f.id) throw new Error('http2: unexpected CONTINUATION');
    b.parts.push(Buffer.from(f.payload));
    b.bytes += f.payload.length;
    if (b.bytes > this.maxBytes) throw new Error(`http2: header block over ${this.maxBytes} bytes`);
    if (!(f.flags & Flag.END_HEADERS)) return null;
    this.pending = null;
    return { id: b.id, end: b.end, block: Buffer.concat(b.parts) };
  }
}
