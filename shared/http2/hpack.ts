// HPACK (RFC 7541) for tkube's own HTTP/2 client and server: a full decoder
// (static and dynamic tables, Huffman) for what the peer sends, and an encoder
// of plain literals that are never indexed, so the peer's table for what we
// send stays empty and our side keeps no encoder state.
import { huffmanDecode } from './huffman';

/** The static table (RFC 7541 appendix A); index 1 is STATIC[0]. */
const STATIC: readonly (readonly [string, string])[] = [
  [':authority', ''],
  [':method', 'GET'],
  [':method', 'POST'],
  [':path', '/'],
  [':path', '/index.html'],
  [':scheme', 'http'],
  [':scheme', 'https'],
  [':status', '200'],
  [':status', '204'],
  [':status', '206'],
  [':status', '304'],
  [':status', '400'],
  [':status', '404'],
  [':status', '500'],
  ['accept-charset', ''],
  ['accept-encoding', 'gzip, deflate'],
  ['accept-language', ''],
  ['accept-ranges', ''],
  ['accept', ''],
  ['access-control-allow-origin', ''],
  ['age', ''],
  ['allow', ''],
  ['authorization', ''],
  ['cache-control', ''],
  ['content-disposition', ''],
  ['content-encoding', ''],
  ['content-language', ''],
  ['content-length', ''],
  ['content-location', ''],
  ['content-range', ''],
  ['content-type', ''],
  ['cookie', ''],
  ['date', ''],
  ['etag', ''],
  ['expect', ''],
  ['expires', ''],
  ['from', ''],
  ['host', ''],
  ['if-match', ''],
  ['if-modified-since', ''],
  ['if-none-match', ''],
  ['if-range', ''],
  ['if-unmodified-since', ''],
  ['last-modified', ''],
  ['link', ''],
  ['location', ''],
  ['max-forwards', ''],
  ['proxy-authenticate', ''],
  ['proxy-authorization', ''],
  ['range', ''],
  ['referer', ''],
  ['refresh', ''],
  ['retry-after', ''],
  ['server', ''],
  ['set-cookie', ''],
  ['strict-transport-security', ''],
  ['transfer-encoding', ''],
  ['user-agent', ''],
  ['vary', ''],
  ['via', ''],
  ['www-authenticate', ''],
];

/** The table size both sides start with (SETTINGS_HEADER_TABLE_SIZE's default); tkube never raises it. */
const TABLE_SIZE = 4096;
/** An entry's size: its octets plus 32 (RFC 7541 4.1). Names and values are Latin-1, one char per octet. */
const entrySize = (name: string, value: string): number => name.length + value.length + 32;

export type HeaderFields = Record<string, string>;

/** One connection's decoder: header blocks must be decoded in the order they arrived, all of them. */
export class HpackDecoder {
  /** Newest first, as HPACK indexes it. */
  private dynamic: [string, string][] = [];
  private size = 0;
  private maxSize = TABLE_SIZE;
  private pos = 0;
  private buf: Uint8Array = new Uint8Array(0);

  /** The fields of one complete header block; a repeated name keeps its last value. */
  decode(block: Uint8Array): HeaderFields {
    const out: HeaderFields = {};
    this.each(block, (name, value) => (out[name] = value));
    return out;
  }

  /** The fields of one complete header block in order, repeated names included. */
  decodeList(block: Uint8Array): [string, string][] {
    const out: [string, string][] = [];
    this.each(block, (name, value) => out.push([name, value]));
    return out;
  }

  private each(block: Uint8Array, field: (name: string, value: string) => void): void {
    this.buf = block;
    this.pos = 0;
    while (this.pos < block.length) {
      const b = block[this.pos];
      if (b & 0x80) {
        const [name, value] = this.entry(this.int(7));
        field(name, value);
      } else if (b & 0x40) {
        const [name, value] = this.literal(6);
        this.add(name, value);
        field(name, value);
      } else if (b & 0x20) {
        const size = this.int(5);
        if (size > TABLE_SIZE) throw new Error(`hpack: table size ${size} above the ${TABLE_SIZE} allowed`);
        this.maxSize = size;
        this.evict(0);
      } else {
        // Without indexing (0000) or never indexed (0001): same layout, 4-bit prefix.
        const [name, value] = this.literal(4);
        field(name, value);
      }
    }
  }

  private entry(index: number): readonly [string, string] {
    if (index >= 1 && index <= STATIC.length) return STATIC[index - 1];
    const e = this.dynamic[index - STATIC.length - 1];
    if (!e) throw new Error(`hpack: no table entry ${index}`);
    return e;
  }

  private literal(prefix: number): [string, string] {
    const index = this.int(prefix);
    const name = index === 0 ? this.string() : this.entry(index)[0];
    return [name, this.string()];
  }

  private add(name: string, value: string): void {
    const size = entrySize(name, value);
    this.evict(size);
    // An entry larger than the table empties it and is not added (RFC 7541 4.4).
    if (size > this.maxSize) return;
    this.dynamic.unshift([name, value]);
    this.size += size;
  }

  /** Evicts the oldest entries until `room` more octets fit. */
  private evict(room: number): void {
    while (this.size + room > this.maxSize && this.dynamic.length > 0) {
      const [n, v] = this.dynamic.pop()!;
      this.size -= entrySize(n, v);
    }
  }

  /** An integer with an N-bit prefix (RFC 7541 5.1). */
  private int(prefix: number): number {
    const b = this.buf;
    if (this.pos >= b.length) throw new Error('hpack: truncated header block');
    const max = (1 << prefix) - 1;
    let v = b[this.pos++] & max;
    if (v < max) return v;
    for (let shift = 0; ; shift += 7) {
      if (this.pos >= b.length || shift > 28) throw new Error('hpack: bad integer');
      const c = b[this.pos++];
      v += (c & 0x7f) * 2 ** shift;
      if (!(c & 0x80)) return v;
    }
  }

  private string(): string {
    const b = this.buf;
    if (this.pos >= b.length) throw new Error('hpack: truncated header block');
    const huffman = (b[this.pos] & 0x80) !== 0;
    const len = this.int(7);
    const start = this.pos;
    const end = start + len;
    if (end > b.length) throw new Error('hpack: truncated string');
    this.pos = end;
    return huffman
      ? huffmanDecode(b, start, end)
      : Buffer.from(b.buffer, b.byteOffset + start, len).toString('latin1');
  }
}

/** Static table indexes: of a whole field ("name\0value"), and of a name's first entry. */
const STATIC_FIELD = new Map(STATIC.map(([n, v], i) => [`${n}\0${v}`, i + 1]));
const STATIC_NAME = new Map<string, number>();
STATIC.forEach(([n], i) => {
  if (!STATIC_NAME.has(n)) STATIC_NAME.set(n, i + 1);
});

function pushInt(out: number[], first: number, prefix: number, v: number): void {
  const max = (1 << prefix) - 1;
  if (v < max) {
    out.push(first | v);
    return;
  }
  out.push(first | max);
  v -= max;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
}

function pushString(out: number[], s: string): void {
  pushInt(out, 0, 7, s.length);
  for (let i = 0; i < s.length; i++) out.push(s.charCodeAt(i) & 0xff);
}

/**
 * A header block of literals never indexed: each name by its static index when
 * it has one, values as plain Latin-1. Pseudo-headers must come first.
 */
export function encodeHeaders(fields: readonly (readonly [string, string])[]): Buffer {
  const out: number[] = [];
  for (const [name, value] of fields) {
    const full = STATIC_FIELD.get(`${name}\0${value}`);
    if (full !== undefined) {
      pushInt(out, 0x80, 7, full);
      continue;
    }
    const byName = STATIC_NAME.get(name) ?? 0;
    pushInt(out, 0x10, 4, byName);
    if (byName === 0) pushString(out, name);
    pushString(out, value);
  }
  return Buffer.from(out);
}
