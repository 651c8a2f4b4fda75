// Minimal protobuf wire format, written for the handful of etcd messages we use.
// Hand-rolled rather than reflective so that revisions decode straight into
// JS numbers, lease IDs into exact bigints, and values into zero-copy Buffer
// views of the received gRPC message.

/** A message to encode: fields in order. Omitted (default) fields are simply left out. */
export type Fields = Field[];
/**
 * One field: [number, value]. number → varint (must be a non-negative integer
 * below 2^53), bigint → varint (int64, two's complement when negative),
 * true → varint 1, string/Buffer → length-delimited, Fields → nested message.
 */
export type Field = readonly [number, number | bigint | boolean | string | Buffer | Fields];

const WT_VARINT = 0;
const WT_I64 = 1;
const WT_LEN = 2;
const WT_I32 = 5;

const TWO_64 = 1n << 64n;

function varintSize(n: number): number {
  if (n < 0x80) return 1;
  if (n < 0x4000) return 2;
  if (n < 0x200000) return 3;
  if (n < 0x10000000) return 4;
  let size = 4;
  n = Math.floor(n / 0x10000000);
  while (n > 0) {
    size++;
    n = Math.floor(n / 0x80);
  }
  return size;
}

function bigVarintSize(n: bigint): number {
  if (n < 0n) n += TWO_64;
  let size = 1;
  while (n >= 0x80n) {
    size++;
    n >>= 7n;
  }
  return size;
}

function fieldSize(f: Field): number {
  const [no, v] = f;
  const tag = varintSize(no << 3);
  switch (typeof v) {
    case 'number':
      return tag + varintSize(v);
    case 'bigint':
      return tag + bigVarintSize(v);
    case 'boolean':
      return v ? tag + 1 : 0;
    case 'string': {
      const len = Buffer.byteLength(v, 'utf8');
      return tag + varintSize(len) + len;
    }
    default: {
      const len = Buffer.isBuffer(v) ? v.length : messageSize(v);
      return tag + varintSize(len) + len;
    }
  }
}

function messageSize(fields: Fields): number {
  let size = 0;
  for (const f of fields) size += fieldSize(f);
  return size;
}

class Encoder {
  pos = 0;
  constructor(readonly buf: Buffer) {}

  varint(n: number): void {
    const buf = this.buf;
    while (n >= 0x80000000) {
      buf[this.pos++] = (n % 0x80) | 0x80;
      n = Math.floor(n / 0x80);
    }
    while (n >= 0x80) {
      buf[this.pos++] = (n & 0x7f) | 0x80;
      n >>>= 7;
    }
    buf[this.pos++] = n;
  }

  bigVarint(n: bigint): void {
    if (n < 0n) n += TWO_64;
    while (n >= 0x80n) {
      this.buf[this.pos++] = Number(n & 0x7fn) | 0x80;
      n >>= 7n;
    }
    this.buf[this.pos++] = Number(n);
  }

  message(fields: Fields): void {
    for (const [no, v] of fields) {
      switch (typeof v) {
        case 'number':
          this.varint(no << 3);
          this.varint(v);
          break;
        case 'bigint':
          this.varint(no << 3);
          this.bigVarint(v);
          break;
        case 'boolean':
          if (v) {
            this.varint(no << 3);
            this.varint(1);
          }
          break;
        case 'string': {
          this.varint((no << 3) | WT_LEN);
          this.varint(Buffer.byteLength(v, 'utf8'));
          this.pos += this.buf.write(v, this.pos, 'utf8');
          break;
        }
        default:
          this.varint((no << 3) | WT_LEN);
          if (Buffer.isBuffer(v)) {
            this.varint(v.length);
            v.copy(this.buf, this.pos);
            this.pos += v.length;
          } else {
            this.varint(messageSize(v));
            this.message(v);
          }
      }
    }
  }
}

/** Encodes a message into one exactly-sized Buffer. */
export function encode(fields: Fields): Buffer {
  const enc = new Encoder(Buffer.allocUnsafe(messageSize(fields)));
  enc.message(fields);
  return enc.buf;
}

/** Sequential reader over one message (or a nested message's bytes). */
export class Reader {
  pos: number;
  constructor(
    readonly buf: Buffer,
    start = 0,
    readonly end = buf.length,
  ) {
    this.pos = start;
  }

  get more(): boolean {
    return this.pos < this.end;
  }

  /** Reads a tag: returns field number * 8 + wire type (as on the wire). */
  tag(): number {
    return this.varint();
  }

  /** Reads a varint as a JS number (exact below 2^53; negative int64 values come out wrong). */
  varint(): number {
    const buf = this.buf;
    let b = buf[this.pos++];
    if (b < 0x80) return b;
    let result = b & 0x7f;
    let shift = 7;
    do {
      if (this.pos >= this.end) throw new Error('protobuf: truncated varint');
      b = buf[this.pos++];
      result += shift < 28 ? (b & 0x7f) << shift : (b & 0x7f) * 2 ** shift;
      shift += 7;
    } while (b >= 0x80);
    return result;
  }

  /** Reads a varint as an exact signed 64-bit bigint. */
  bigVarint(): bigint {
    let result = 0n;
    let shift = 0n;
    let b: number;
    do {
      if (this.pos >= this.end) throw new Error('protobuf: truncated varint');
      b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      shift += 7n;
    } while (b >= 0x80);
    return BigInt.asIntN(64, result);
  }

  bool(): boolean {
    return this.varint() !== 0;
  }

  /** Length-delimited bytes as a view (no copy) of the underlying buffer. */
  bytes(): Buffer {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Error('protobuf: truncated bytes');
    return this.buf.subarray(start, this.pos);
  }

  string(): string {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Error('protobuf: truncated string');
    return this.buf.toString('utf8', start, this.pos);
  }

  /** A reader over a nested message; advances past it. */
  sub(): Reader {
    const len = this.varint();
    const start = this.pos;
    this.pos += len;
    if (this.pos > this.end) throw new Error('protobuf: truncated message');
    return new Reader(this.buf, start, this.pos);
  }

  /** Skips a field of the given wire type (unknown fields are legal). */
  skip(tag: number): void {
    switch (tag & 7) {
      case WT_VARINT:
        this.varint();
        return;
      case WT_I64:
        this.pos += 8;
        return;
      case WT_LEN: {
        const len = this.varint(); // read first: it moves pos
        this.pos += len;
        return;
      }
      case WT_I32:
        this.pos += 4;
        return;
      default:
        throw new Error(`protobuf: unsupported wire type ${tag & 7}`);
    }
  }
}

/** Tag values as they appear on the wire, for switch statements in decoders. */
export const varintTag = (no: number): number => no << 3;
export const lenTag = (no: number): number => (no << 3) | WT_LEN;
