// Binary layouts of the embedded store's LMDB keys and records, and the lmdb-js
// codecs that read them. lmdb-js hands decoders its reused read buffer, so a
// decoder copies out exactly the bytes the caller keeps (one copy per value) and
// skips the rest (prefix filters, header-only reads) without allocating.
import type { KeyValue, StorageEvent, StorageEventType } from '../interface';
import { StorageError } from '../errors';

export const CREATE = 1;
export const UPDATE = 2;
export const DELETE = 3;
export type EventCode = typeof CREATE | typeof UPDATE | typeof DELETE;
const TYPE_NAMES: readonly StorageEventType[] = ['create', 'create', 'update', 'delete'];
export const codeOf = (type: StorageEventType): EventCode =>
  type === 'create' ? CREATE : type === 'update' ? UPDATE : DELETE;

/** The store starts at revision 1 like etcd, so the first write gets 2. */
export const INITIAL_REVISION = 1;
/** Key bytes allowed: LMDB's 1978-byte key limit minus the 9 bytes the history index appends. */
export const MAX_KEY_BYTES = 1969;
const U32 = 0x1_0000_0000;

export class Kv implements KeyValue {
  constructor(
    public key: string,
    public value: Buffer,
    public createRevision: number,
    public modRevision: number,
    public lease: number,
  ) {}
}

export class Event implements StorageEvent {
  readonly type: StorageEventType;
  constructor(
    code: EventCode,
    readonly key: string,
    readonly revision: number,
    readonly kv: Kv | null,
    readonly prevKv: Kv | null,
  ) {
    this.type = TYPE_NAMES[code];
  }
}

/** lmdb-js passes Buffers, except for values served straight from the map. */
function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.length);
}

/**
 * A value copied out of lmdb-js's read buffer into an ArrayBuffer of its own: the watch
 * cache keeps it as it is, and a slice of Node's shared 8 KiB pool would pin the slab
 * (and, dead, leave holes in malloc's heap between the values kept).
 */
function copyOut(b: Buffer, start: number, end: number): Buffer {
  const out = Buffer.allocUnsafeSlow(end - start);
  b.copy(out, 0, start, end);
  return out;
}

export function writeU64BE(t: Uint8Array, at: number, v: number): number {
  const hi = Math.floor(v / U32);
  const lo = v >>> 0;
  t[at] = hi >>> 24;
  t[at + 1] = (hi >>> 16) & 0xff;
  t[at + 2] = (hi >>> 8) & 0xff;
  t[at + 3] = hi & 0xff;
  t[at + 4] = lo >>> 24;
  t[at + 5] = (lo >>> 16) & 0xff;
  t[at + 6] = (lo >>> 8) & 0xff;
  t[at + 7] = lo & 0xff;
  return at + 8;
}

export function readU64BE(t: Uint8Array, at: number): number {
  const hi = ((t[at] << 24) | (t[at + 1] << 16) | (t[at + 2] << 8) | t[at + 3]) >>> 0;
  const lo = ((t[at + 4] << 24) | (t[at + 5] << 16) | (t[at + 6] << 8) | t[at + 7]) >>> 0;
  return hi * U32 + lo;
}

/** A raw key (Buffer) is written as is: range bounds that are not valid UTF-8. */
function writeKeyBytes(key: string | Uint8Array, t: Uint8Array, at: number): number {
  if (typeof key === 'string') return at + asBuffer(t).write(key, at);
  t.set(key, at);
  return at + key.length;
}

// --- key encoders (lmdb-js `keyEncoder`) ---

/** kv: the key's UTF-8 bytes, so LMDB order is etcd's byte order. */
export const kvKeys = {
  writeKey: writeKeyBytes,
  readKey: (t: Uint8Array, start: number, end: number): string => asBuffer(t).toString('utf8', start, end),
};

/** log: the revision as 8 big-endian bytes, so appends are in key order. */
export const logKeys = {
  writeKey: (rev: number, t: Uint8Array, at: number): number => writeU64BE(t, at, rev),
  readKey: (t: Uint8Array, start: number): number => readU64BE(t, start),
};

export type HistKey = [key: string, revision: number];
/**
 * hist: key bytes, 0x00, revision (8 bytes BE). Keys never contain NUL, so all
 * revisions of one key sort together, before any longer key. A Uint8Array is a
 * raw range bound.
 */
export const histKeys = {
  writeKey(k: HistKey | Uint8Array, t: Uint8Array, at: number): number {
    if (k instanceof Uint8Array) return writeKeyBytes(k, t, at);
    const end = writeKeyBytes(k[0], t, at);
    t[end] = 0;
    return writeU64BE(t, end + 1, k[1]);
  },
  readKey: (t: Uint8Array, start: number, end: number): HistKey => [
    asBuffer(t).toString('utf8', start, end - 9),
    readU64BE(t, end - 8),
  ],
};

export type TtlKey = [deadline: number, key: string];
/** ttl: deadline (ms, 8 bytes BE) then key bytes, so the first entry is the next to expire. */
export const ttlKeys = {
  writeKey(k: TtlKey | Uint8Array, t: Uint8Array, at: number): number {
    if (k instanceof Uint8Array) return writeKeyBytes(k, t, at);
    return writeKeyBytes(k[1], t, writeU64BE(t, at, k[0]));
  },
  readKey: (t: Uint8Array, start: number, end: number): TtlKey => [
    readU64BE(t, start),
    asBuffer(t).toString('utf8', start + 8, end),
  ],
};

/**
 * The history-index bound for "keys >= s". Keys never contain NUL, so for
 * s = a + "\0" + rest that is "keys > a": a's bytes then 0x01, past a's entries.
 */
export function histBound(s: string | Buffer): Buffer {
  const b = typeof s === 'string' ? Buffer.from(s) : s;
  const nul = b.indexOf(0);
  if (nul < 0) return b;
  const out = Buffer.allocUnsafe(nul + 1);
  b.copy(out, 0, 0, nul);
  out[nul] = 1;
  return out;
}

/** The first key after every key with this prefix (etcd's prefix end); undefined: no end. */
export function prefixEnd(prefix: string): Buffer | undefined {
  const b = Buffer.from(prefix);
  for (let i = b.length - 1; i >= 0; i--) {
    if (b[i] < 0xff) {
      b[i]++;
      return b.subarray(0, i + 1);
    }
  }
  return undefined;
}

/** Compares strings in UTF-8 byte order (JS compares UTF-16 units, which differs past U+D7FF). */
export function utf8Compare(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    if (x >= 0xd800) x = x < 0xe000 ? x + 0x2000 : x - 0x800;
    if (y >= 0xd800) y = y < 0xe000 ? y + 0x2000 : y - 0x800;
    return x - y;
  }
  return a.length - b.length;
}

/** Keys are written as given (they carry their prefix); NUL is refused because the history index uses it. */
export function checkKey(key: string): StorageError | null {
  if (typeof key !== 'string' || key.length === 0) return new StorageError('InvalidObject', 'empty key');
  if (key.includes('\0')) return new StorageError('InvalidObject', 'key contains NUL', key);
  if (key.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(key) > MAX_KEY_BYTES) {
    return new StorageError('InvalidObject', `key longer than ${MAX_KEY_BYTES} bytes`, key);
  }
  return null;
}

/** Values are stored as given; a plain Uint8Array is viewed as a Buffer (no copy). */
export function checkValue(value: unknown): Buffer | StorageError {
  if (Buffer.isBuffer(value)) return value;
  if (value instanceof Uint8Array) return asBuffer(value);
  return new StorageError('InvalidObject', 'value must be a Buffer');
}

// --- records ---

/** One growable buffer records are encoded into; LMDB copies a put's bytes at once inside a transaction. */
export class Scratch {
  buf = Buffer.allocUnsafeSlow(64 * 1024);
  reserve(n: number): Buffer {
    if (this.buf.length < n) this.buf = Buffer.allocUnsafeSlow(Math.max(n, this.buf.length * 2));
    return this.buf;
  }
}

// kv record: createRevision f64 | modRevision f64 | lease f64 | value bytes
const KV_HEADER = 24;

export function encodeKv(s: Scratch, kv: Kv): Buffer {
  const n = KV_HEADER + kv.value.length;
  const b = s.reserve(n);
  b.writeDoubleLE(kv.createRevision, 0);
  b.writeDoubleLE(kv.modRevision, 8);
  b.writeDoubleLE(kv.lease, 16);
  kv.value.copy(b, KV_HEADER);
  return b.subarray(0, n);
}

/** Decodes kv records to a Kv whose key the caller fills in. */
export const kvCodec = {
  encode: (b: Buffer): Buffer => b,
  decode(raw: Uint8Array): Kv {
    const b = asBuffer(raw);
    return new Kv(
      '',
      copyOut(b, KV_HEADER, b.length),
      b.readDoubleLE(0),
      b.readDoubleLE(8),
      b.readDoubleLE(16),
    );
  },
};

// log record, one event:
//  0 type u8 | 1 flags u8 | 4 keyLen u32 | 8 valueLen u32 | 12 prevLen u32
// 16 revision f64 | 24 kv.createRevision f64 | 32 kv.lease f64
// 40 prev.createRevision f64 | 48 prev.modRevision f64 | 56 prev.lease f64
// 64 key bytes | value bytes | prev value bytes (only with PREV_INLINE)
//
// The previous value normally is not repeated: it is the value of the log entry
// at prev.modRevision. Only when that entry is gone (compacted) is it copied in
// (PREV_INLINE): at write time if it already was, or by compaction when it
// deletes the predecessor of an entry it keeps. This halves the history an
// update costs, and a compaction still deletes one contiguous range.
const LOG_HEADER = 64;
const PREV_INLINE = 1;

/** The value of a prevKv still to be read from the log entry at its modRevision. */
export const UNRESOLVED: Buffer = Buffer.alloc(0);

export function encodeLog(
  s: Scratch,
  code: EventCode,
  key: string,
  rev: number,
  kv: Kv | null,
  prev: Kv | null,
  inlinePrev: boolean,
): Buffer {
  const vlen = kv ? kv.value.length : 0;
  const plen = prev && inlinePrev ? prev.value.length : 0;
  const b = s.reserve(LOG_HEADER + key.length * 3 + vlen + plen);
  const klen = b.write(key, LOG_HEADER);
  b.fill(0, 0, 4);
  b[0] = code;
  b[1] = prev && inlinePrev ? PREV_INLINE : 0;
  b.writeUInt32LE(klen, 4);
  b.writeUInt32LE(vlen, 8);
  b.writeUInt32LE(plen, 12);
  b.writeDoubleLE(rev, 16);
  b.writeDoubleLE(kv ? kv.createRevision : 0, 24);
  b.writeDoubleLE(kv ? kv.lease : 0, 32);
  b.writeDoubleLE(prev ? prev.createRevision : 0, 40);
  b.writeDoubleLE(prev ? prev.modRevision : 0, 48);
  b.writeDoubleLE(prev ? prev.lease : 0, 56);
  let at = LOG_HEADER + klen;
  if (kv) at += kv.value.copy(b, at);
  if (plen > 0) at += prev!.value.copy(b, at);
  return b.subarray(0, at);
}

/** The parts of a log record compaction and historic ranges need. */
export interface LogHead {
  readonly code: EventCode;
  readonly key: string;
  readonly revision: number;
  /** The previous value is in the record. */
  readonly prevInline: boolean;
}

/** Event (prevKv value may be UNRESOLVED). */
export const LOG_FULL = 0;
/** LogHead. */
export const LOG_HEAD = 1;
/** The event's prevKv or null (value may be UNRESOLVED). */
export const LOG_PREV = 2;
/** A copy of the event's new value (create/update records). */
export const LOG_VALUE = 3;

/**
 * Decodes log records. Callers set `mode` (and optionally a key filter) around
 * a synchronous read and reset it after. Records whose key fails the filter
 * decode to null without copying anything.
 */
export class LogCodec {
  mode = LOG_FULL;
  /** Keep keys starting with these bytes. */
  prefix: Buffer | null = null;
  /** Keep keys in [lo, hi) (hi null: no end). */
  lo: Buffer | null = null;
  hi: Buffer | null = null;

  encode(b: Buffer): Buffer {
    return b;
  }

  decode(raw: Uint8Array): Event | LogHead | Kv | Buffer | null {
    const b = asBuffer(raw);
    const klen = b.readUInt32LE(4);
    const kend = LOG_HEADER + klen;
    const vlen = b.readUInt32LE(8);
    if (this.mode === LOG_VALUE) return copyOut(b, kend, kend + vlen);
    if (this.prefix) {
      const p = this.prefix;
      if (klen < p.length || b.compare(p, 0, p.length, LOG_HEADER, LOG_HEADER + p.length) !== 0) return null;
    }
    if (this.lo && b.compare(this.lo, 0, this.lo.length, LOG_HEADER, kend) < 0) return null;
    if (this.hi && b.compare(this.hi, 0, this.hi.length, LOG_HEADER, kend) >= 0) return null;
    const code = b[0] as EventCode;
    const key = b.toString('utf8', LOG_HEADER, kend);
    const rev = b.readDoubleLE(16);
    const inline = (b[1] & PREV_INLINE) !== 0;
    if (this.mode === LOG_HEAD) return { code, key, revision: rev, prevInline: inline };
    const prev =
      code === CREATE
        ? null
        : new Kv(
            key,
            inline ? copyOut(b, kend + vlen, kend + vlen + b.readUInt32LE(12)) : UNRESOLVED,
            b.readDoubleLE(40),
            b.readDoubleLE(48),
            b.readDoubleLE(56),
          );
    if (this.mode === LOG_PREV) return prev;
    const kv =
      code === DELETE
        ? null
        : new Kv(key, copyOut(b, kend, kend + vlen), b.readDoubleLE(24), rev, b.readDoubleLE(32));
    return new Event(code, key, rev, kv, prev);
  }
}

/** hist and ttl values: one byte (the event code in hist). */
export const byteCodec = {
  encode: (b: Buffer): Buffer => b,
  decode: (b: Uint8Array): number => b[0],
};
export const CODE_BYTES: readonly Buffer[] = [0, 1, 2, 3].map((c) => Buffer.from([c]));

/** meta values: one f64. Only written inside write transactions, which copy at once. */
const metaBuf = Buffer.alloc(8);
export const metaCodec = {
  encode(v: number): Buffer {
    metaBuf.writeDoubleLE(v, 0);
    return metaBuf;
  },
  decode: (b: Uint8Array): number => asBuffer(b).readDoubleLE(0),
};
