// A small DER (ITU-T X.690) encoder and reader: just what X.509 certificates
// need (shared/pki/x509.ts). Values are encoded bottom-up into Buffers; a
// constructed value is the concatenation of its encoded children.

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  null: 0x05,
  oid: 0x06,
  utf8String: 0x0c,
  printableString: 0x13,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

function length(n: number): Buffer {
  if (n < 0x80) return Buffer.from([n]);
  // Long form: 0x80 | count of length bytes, then the length big-endian, no leading zeros.
  const bytes: number[] = [];
  for (let v = n; v > 0; v = Math.floor(v / 256)) bytes.unshift(v & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

/** One tag-length-value: tag is the whole identifier octet (class, constructed bit, number ≤ 30). */
export function tlv(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), length(content.length), content]);
}

export const sequence = (...items: Buffer[]): Buffer => tlv(TAG.sequence, Buffer.concat(items));

/** SET OF: DER orders the elements by their encodings. */
export const set = (...items: Buffer[]): Buffer =>
  tlv(TAG.set, Buffer.concat([...items].sort(Buffer.compare)));

export const boolean = (v: boolean): Buffer => tlv(TAG.boolean, Buffer.from([v ? 0xff : 0x00]));

export const nullValue = (): Buffer => tlv(TAG.null, Buffer.alloc(0));

/**
 * A non-negative INTEGER: a number, a bigint, or an unsigned big-endian magnitude. Leading zero
 * bytes go; a 0x00 goes in front when the high bit is set, else the value would read as negative.
 */
export function integer(v: number | bigint | Buffer): Buffer {
  let mag: Buffer;
  if (Buffer.isBuffer(v)) mag = v;
  else {
    let n = BigInt(v);
    if (n < 0n) throw new RangeError('negative INTEGER');
    const bytes: number[] = [];
    for (; n > 0n; n >>= 8n) bytes.unshift(Number(n & 0xffn));
    mag = Buffer.from(bytes);
  }
  let i = 0;
  while (i < mag.length - 1 && mag[i] === 0) i++;
  mag = mag.subarray(i);
  if (mag.length === 0) mag = Buffer.from([0]);
  if (mag[0] & 0x80) mag = Buffer.concat([Buffer.from([0]), mag]);
  return tlv(TAG.integer, mag);
}

/** An OBJECT IDENTIFIER from its dotted form, e.g. "2.5.29.17". */
export function oid(dotted: string): Buffer {
  const arcs = dotted.split('.').map((a) => {
    if (!/^\d+$/.test(a)) throw new Error(`bad OID ${dotted}`);
    return BigInt(a);
  });
  if (arcs.length < 2 || arcs[0] > 2n || (arcs[0] < 2n && arcs[1] > 39n))
    throw new Error(`bad OID ${dotted}`);
  const out: number[] = [];
  for (const arc of [arcs[0] * 40n + arcs[1], ...arcs.slice(2)]) {
    // Base 128, most significant group first, the high bit set on all but the last.
    const groups = [Number(arc & 0x7fn)];
    for (let v = arc >> 7n; v > 0n; v >>= 7n) groups.unshift(Number(v & 0x7fn) | 0x80);
    out.push(...groups);
  }
  return tlv(TAG.oid, Buffer.from(out));
}

export const utf8String = (s: string): Buffer => tlv(TAG.utf8String, Buffer.from(s, 'utf8'));

export const PRINTABLE = /^[A-Za-z0-9 '()+,\-./:=?]*$/;

export function printableString(s: string): Buffer {
  if (!PRINTABLE.test(s)) throw new Error(`not a PrintableString: ${JSON.stringify(s)}`);
  return tlv(TAG.printableString, Buffer.from(s, 'latin1'));
}

export const octetString = (b: Buffer): Buffer => tlv(TAG.octetString, b);

/** A BIT STRING of whole bytes, unusedBits of the last byte's low bits not part of it. */
export function bitString(bytes: Buffer, unusedBits = 0): Buffer {
  if (unusedBits < 0 || unusedBits > 7 || (unusedBits > 0 && bytes.length === 0))
    throw new RangeError('bad BIT STRING');
  return tlv(TAG.bitString, Buffer.concat([Buffer.from([unusedBits]), bytes]));
}

/**
 * Named bits (bit 0 first, as KeyUsage numbers them) as a DER BIT STRING: bit i is the
 * (0x80 >> i % 8) bit of byte i / 8; trailing zero bits are dropped (X.690 11.2.2).
 */
export function namedBits(bits: number[]): Buffer {
  const top = bits.length ? Math.max(...bits) : -1;
  const bytes = Buffer.alloc(Math.floor(top / 8) + 1);
  for (const b of bits) bytes[b >> 3] |= 0x80 >> (b & 7);
  return bitString(bytes, bytes.length ? 7 - (top & 7) : 0);
}

/** RFC 5280 4.1.2.5: UTCTime for years 1950-2049, GeneralizedTime otherwise; whole seconds, UTC. */
export function time(d: Date): Buffer {
  if (Number.isNaN(d.getTime())) throw new RangeError('invalid date');
  const iso = d.toISOString(); // YYYY-MM-DDTHH:MM:SS.sssZ
  const digits =
    iso.slice(0, 4) +
    iso.slice(5, 7) +
    iso.slice(8, 10) +
    iso.slice(11, 13) +
    iso.slice(14, 16) +
    iso.slice(17, 19);
  const year = d.getUTCFullYear();
  if (year >= 1950 && year < 2050) return tlv(TAG.utcTime, Buffer.from(digits.slice(2) + 'Z', 'latin1'));
  if (year < 0 || year > 9999) throw new RangeError('year out of range');
  return tlv(TAG.generalizedTime, Buffer.from(digits + 'Z', 'latin1'));
}

/** [n] EXPLICIT: a constructed context tag around a whole encoded value. */
export const explicit = (n: number, value: Buffer): Buffer => tlv(0xa0 | n, value);

/** [n] IMPLICIT of a primitive value: the context tag replaces the value's own. */
export const implicit = (n: number, content: Buffer): Buffer => tlv(0x80 | n, content);

/** One value read from DER: its identifier octet and where it and its content lie in the buffer. */
export interface Element {
  tag: number;
  /** Offset of the identifier octet. */
  start: number;
  /** Offset of the content. */
  contentStart: number;
  /** Offset just past the content. */
  end: number;
}

/** The element at offset, its length checked against limit (the end of its parent). */
export function read(buf: Buffer, offset = 0, limit = buf.length): Element {
  if (offset + 2 > limit) throw new Error('DER: truncated');
  const tag = buf[offset];
  if ((tag & 0x1f) === 0x1f) throw new Error('DER: multi-byte tags are not supported');
  let len = buf[offset + 1];
  let p = offset + 2;
  if (len & 0x80) {
    const n = len & 0x7f;
    // 0x80 is BER's indefinite length, never DER; over 4 bytes is more than any buffer here.
    if (n === 0 || n > 4 || p + n > limit) throw new Error('DER: bad length');
    len = 0;
    for (let i = 0; i < n; i++) len = len * 256 + buf[p + i];
    p += n;
  }
  if (p + len > limit) throw new Error('DER: truncated');
  return { tag, start: offset, contentStart: p, end: p + len };
}

/** The elements inside a constructed one. */
export function children(buf: Buffer, parent: Element): Element[] {
  const out: Element[] = [];
  for (let p = parent.contentStart; p < parent.end;) {
    const e = read(buf, p, parent.end);
    out.push(e);
    p = e.end;
  }
  return out;
}

export const bytesOf = (buf: Buffer, e: Element): Buffer => buf.subarray(e.start, e.end);
export const contentOf = (buf: Buffer, e: Element): Buffer => buf.subarray(e.contentStart, e.end);

export { TAG };
