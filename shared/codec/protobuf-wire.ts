// Protobuf wire primitives: a growable forward writer and a bounds-checked
// reader. Hand-written (not protobufjs) because the generated per-message
// encoders call these on every field, and a flat Buffer with one-byte length
// reservation is the cheapest shape for V8.

/** Every decoding or encoding failure is one of these; the API layer maps it to 400. */
export class ProtobufError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProtobufError';
  }
}

const TWO32 = 4294967296;

// Node's unchecked UTF-8 fast paths (present on every Buffer, not in @types/node).
interface FastBuffer extends Buffer {
  utf8Slice(start: number, end: number): string;
  latin1Slice(start: number, end: number): string;
  base64Slice(start: number, end: number): string;
  utf8Write(s: string, offset: number, length: number): number;
}
const SMALL_STRING = 42; // 42 UTF-16 units encode to at most 126 bytes: a one-byte length

export class Writer {
  buf: Buffer;
  pos = 0;

  constructor(size = 64 * 1024) {
    this.buf = Buffer.allocUnsafe(size);
  }

  reset(): void {
    this.pos = 0;
  }

  ensure(n: number): void {
    if (this.pos + n > this.buf.length) {
      const next = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n + 1024));
      this.buf.copy(next, 0, 0, this.pos);
      this.buf = next;
    }
  }

  /** A copy of what was written. */
  finish(): Buffer {
    const out = Buffer.allocUnsafe(this.pos);
    this.buf.copy(out, 0, 0, this.pos);
    return out;
  }

  /** What was written, without copying (for writers not reused). */
  take(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  b1(a: number): void {
    this.ensure(1);
    this.buf[this.pos++] = a;
  }

  b2(a: number, b: number): void {
    this.ensure(2);
    const buf = this.buf;
    buf[this.pos++] = a;
    buf[this.pos++] = b;
  }

  bytes(tag: ArrayLike<number>): void {
    this.ensure(tag.length);
    for (let i = 0; i < tag.length; i++) this.buf[this.pos++] = tag[i];
  }

  /** Unsigned varint of a number in [0, 2^32). */
  u32(v: number): void {
    this.ensure(5);
    const buf = this.buf;
    while (v > 127) {
      buf[this.pos++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[this.pos++] = v;
  }

  /** Varint of a 64-bit two's complement value given as low and high 32-bit halves. */
  u64(lo: number, hi: number): void {
    this.ensure(10);
    const buf = this.buf;
    while (hi !== 0 || lo > 127) {
      buf[this.pos++] = (lo & 127) | 128;
      lo = ((lo >>> 7) | (hi << 25)) >>> 0;
      hi >>>= 7;
    }
    buf[this.pos++] = lo;
  }

  /** int32: negative values take ten bytes, as in every proto implementation. */
  i32(v: number): void {
    if (v >= 0) this.u32(v);
    else this.u64(v >>> 0, 0xffffffff);
  }

  /** int64 from a number, or a bigint (past 2^53, as the JSON codec keeps them). */
  i64(v: number | bigint): void {
    if (typeof v === 'bigint') {
      const u = BigInt.asUintN(64, v);
      this.u64(Number(u & 0xffffffffn), Number(u >> 32n));
      return;
    }
    if (v >= 0) {
      if (v < TWO32) this.u32(v);
      else this.u64((v % TWO32) >>> 0, Math.floor(v / TWO32) >>> 0);
      return;
    }
    const a = -v;
    let lo = (a % TWO32) >>> 0;
    let hi = Math.floor(a / TWO32) >>> 0;
    lo = (~lo + 1) >>> 0;
    hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    this.u64(lo, hi);
  }

  f64(v: number): void {
    this.ensure(8);
    this.buf.writeDoubleLE(v, this.pos);
    this.pos += 8;
  }

  /** A length-prefixed UTF-8 string. */
  str(s: string): void {
    const n = s.length;
    if (n <= SMALL_STRING) {
      this.ensure(1 + n * 3);
      const buf = this.buf;
      const start = this.pos;
      let p = start + 1;
      for (let i = 0; i < n; i++) {
        let c = s.charCodeAt(i);
        if (c < 0x80) buf[p++] = c;
        else if (c < 0x800) {
          buf[p++] = 0xc0 | (c >> 6);
          buf[p++] = 0x80 | (c & 63);
        } else {
          if (c >= 0xd800 && c < 0xdc00 && i + 1 < n) {
            const d = s.charCodeAt(i + 1);
            if (d >= 0xdc00 && d < 0xe000) {
              c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
              i++;
              buf[p++] = 0xf0 | (c >> 18);
              buf[p++] = 0x80 | ((c >> 12) & 63);
              buf[p++] = 0x80 | ((c >> 6) & 63);
              buf[p++] = 0x80 | (c & 63);
              continue;
            }
          }
          if (c >= 0xd800 && c < 0xe000) c = 0xfffd; // lone surrogate, as Buffer does
          buf[p++] = 0xe0 | (c >> 12);
          buf[p++] = 0x80 | ((c >> 6) & 63);
          buf[p++] = 0x80 | (c & 63);
        }
      }
      buf[start] = p - start - 1;
      this.pos = p;
      return;
    }
    const len = Buffer.byteLength(s, 'utf8');
    this.u32(len);
    this.ensure(len);
    (this.buf as FastBuffer).utf8Write(s, this.pos, len);
    this.pos += len;
  }

  /** Length-prefixed raw bytes. */
  blob(b: Uint8Array): void {
    this.u32(b.length);
    this.ensure(b.length);
    this.buf.set(b, this.pos);
    this.pos += b.length;
  }

  /** Reserves one byte for the length of a nested message; pass the result to end(). */
  begin(): number {
    this.ensure(1);
    return this.pos++;
  }

  /** Writes the nested message's length, moving its bytes when the length needs more than one byte. */
  end(start: number): void {
    const len = this.pos - start - 1;
    if (len < 128) {
      this.buf[start] = len;
      return;
    }
    const extra = varintSize(len) - 1;
    this.ensure(extra);
    const buf = this.buf;
    buf.copyWithin(start + 1 + extra, start + 1, this.pos);
    this.pos += extra;
    let p = start;
    let v = len;
    while (v > 127) {
      buf[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    buf[p] = v;
  }
}

export function varintSize(v: number): number {
  return v < 128 ? 1 : v < 16384 ? 2 : v < 2097152 ? 3 : v < 268435456 ? 4 : 5;
}

/** The bytes of a field's tag. */
export function tagBytes(n: number, wireType: number): number[] {
  let v = n * 8 + wireType;
  const out: number[] = [];
  while (v > 127) {
    out.push((v & 127) | 128);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return out;
}

/** Go's order for map keys: bytewise on UTF-8, which differs from UTF-16 order only around surrogates. */
export function compareKeys(a: string, b: string): number {
  const n = a.length < b.length ? a.length : b.length;
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x !== y) {
      if (x >= 0xd800 && y >= 0xd800) {
        x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
        y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
      }
      return x - y;
    }
  }
  return a.length - b.length;
}

export const MAX_DEPTH = 200;

const INTERN_MAX = 32;
const INTERN_MASK = 4095;
const interned: string[] = new Array<string>(INTERN_MASK + 1).fill('');

export class Reader {
  buf: Buffer;
  pos: number;
  depth = 0;

  constructor(buf: Buffer, pos = 0) {
    this.buf = buf;
    this.pos = pos;
  }

  fail(what = 'malformed message'): never {
    throw new ProtobufError(`protobuf: ${what} at offset ${this.pos}`);
  }

  /** The rest of a tag varint whose first byte (>= 128) is already consumed. */
  tag(first: number): number {
    let v = first & 127;
    let shift = 7;
    const buf = this.buf;
    for (let i = 0; i < 4; i++) {
      if (this.pos >= buf.length) this.fail('truncated tag');
      const b = buf[this.pos++];
      v += (b & 127) * 2 ** shift;
      if (b < 128) return v > 0xffffffff ? this.fail('tag too large') : v;
      shift += 7;
    }
    return this.fail('tag too long');
  }

  /** A varint reduced to its low 32 bits (unsigned). */
  u32(): number {
    const buf = this.buf;
    let v = 0;
    let shift = 0;
    for (let i = 0; i < 10; i++) {
      if (this.pos >= buf.length) this.fail('truncated varint');
      const b = buf[this.pos++];
      if (shift < 32) v |= (b & 127) << shift;
      if (b < 128) return v >>> 0;
      shift += 7;
    }
    return this.fail('varint too long');
  }

  i32(): number {
    return this.u32() | 0;
  }

  /** int64 as a JS number, or a bigint when it is not a safe integer (so it stays exact). */
  i64(): number | bigint {
    const buf = this.buf;
    let lo = 0;
    let hi = 0;
    let i = 0;
    for (; i < 10; i++) {
      if (this.pos >= buf.length) this.fail('truncated varint');
      const b = buf[this.pos++];
      if (i < 4) lo |= (b & 127) << (i * 7);
      else if (i === 4) {
        lo |= (b & 15) << 28;
        hi |= (b & 127) >> 4;
      } else hi |= (b & 127) << (i * 7 - 32);
      if (b < 128) break;
    }
    if (i === 10) this.fail('varint too long');
    lo >>>= 0;
    const negative = (hi & 0x80000000) !== 0;
    if (negative) {
      lo = (~lo + 1) >>> 0;
      hi = (~hi + (lo === 0 ? 1 : 0)) >>> 0;
    }
    hi >>>= 0;
    // Magnitudes from 2^53 on do not fit a double exactly.
    if (hi >= 0x200000) {
      const big = (BigInt(hi) << 32n) | BigInt(lo);
      return negative ? -big : big;
    }
    return negative ? -(hi * TWO32 + lo) : hi * TWO32 + lo;
  }

  bool(): boolean {
    return this.u32() !== 0;
  }

  f64(end: number): number {
    if (this.pos + 8 > end) this.fail('truncated double');
    const v = this.buf.readDoubleLE(this.pos);
    this.pos += 8;
    return v;
  }

  /** Reads a length and returns the end of the nested bytes, checked against the parent's end. */
  sub(end: number): number {
    const len = this.u32();
    const e = this.pos + len;
    if (e > end) this.fail('length beyond end of message');
    return e;
  }

  str(end: number): string {
    const e = this.sub(end);
    const p = this.pos;
    this.pos = e;
    const n = e - p;
    const buf = this.buf as FastBuffer;
    if (n > INTERN_MAX) return buf.utf8Slice(p, e);
    // Short ASCII strings repeat across objects (namespaces, labels, enum values):
    // reuse the string from a small hash table instead of allocating a new one.
    let h = n;
    for (let i = p; i < e; i++) {
      const c = buf[i];
      if (c > 127) return buf.utf8Slice(p, e);
      h = (Math.imul(h, 31) + c) | 0;
    }
    const slot = (h ^ (h >>> 13)) & INTERN_MASK;
    const cached = interned[slot];
    if (cached.length === n) {
      let j = 0;
      while (j < n && cached.charCodeAt(j) === buf[p + j]) j++;
      if (j === n) return cached;
    }
    const str = buf.latin1Slice(p, e);
    interned[slot] = str;
    return str;
  }

  /** A length-delimited field as base64 (bytes fields in JSON), without a Buffer view in between. */
  base64(end: number): string {
    const e = this.sub(end);
    const p = this.pos;
    this.pos = e;
    return (this.buf as FastBuffer).base64Slice(p, e);
  }

  blob(end: number): Buffer {
    const e = this.sub(end);
    const b = this.buf.subarray(this.pos, e);
    this.pos = e;
    return b;
  }

  /** Skips a field of an unknown number. */
  skip(tag: number, end: number): void {
    if (tag < 8) this.fail('field number 0');
    switch (tag & 7) {
      case 0:
        this.u32();
        break;
      case 1:
        this.pos += 8;
        break;
      case 2:
        this.pos = this.sub(end);
        break;
      case 5:
        this.pos += 4;
        break;
      default:
        this.fail(`unsupported wire type ${tag & 7}`);
    }
    if (this.pos > end) this.fail('field beyond end of message');
  }

  /** Called when a message's fields are read: they must end exactly at its end. */
  done(end: number): void {
    if (this.pos !== end) this.fail('message overruns its length');
  }
}

/** Sets a property of a decoded map; guards the one key plain assignment would misread. */
export function setKey(m: Record<string, unknown>, k: string, v: unknown): void {
  if (k === '__proto__')
    Object.defineProperty(m, k, { value: v, enumerable: true, writable: true, configurable: true });
  else m[k] = v;
}
