// One object as the watch cache holds it, with its selector attributes and a
// memo of its encodings, so every representation is produced once per object
// version, not once per reader or watcher.
//
// A compact entry (the cache's own, CacheCodec.compact) keeps the stored bytes
// instead of the decoded object: a decoded pod is ~8.6 KB of V8 heap (half of it
// managedFields) against ~2.7 KB of stored Protobuf. It is decoded again when a
// reader asks for `obj` (or an encoding is first made). Once its Protobuf message
// is made, that message takes the stored bytes' place (it holds the same object,
// with its resourceVersion), so the entry keeps no more than its encodings.
import type { KeyValue } from '../interface';
import { jsonClone } from '../../../shared/api/json-value';

export interface ObjectAttrs {
  labels: Record<string, string>;
  /** Selectable fields (metadata.name, metadata.namespace, spec.nodeName ...) as strings. */
  fields: Record<string, string>;
}

/** How the cache turns stored bytes into objects; provided by the registry. */
export interface CacheCodec {
  /** Decodes a stored value; the object's metadata.resourceVersion must be set to `rv`. */
  /** key: the store key (value transformers such as encryption at rest may depend on it). */
  decode(value: Buffer, rv: number, key?: string): any;
  attrs(obj: any): ObjectAttrs;
  /**
   * Keep the stored bytes and decode on demand. Off where a reader needs the same
   * decoded object across an await (webhook conversion keys on object identity).
   */
  compact?: boolean;
  /**
   * For a stored value that is the storage version's Protobuf (not JSON, not
   * transformed, not another version): a decoder of the bare message, so a compact
   * entry may keep its Protobuf encoding in place of the stored bytes.
   */
  messageDecoder?(value: Buffer): ((message: Buffer) => any) | undefined;
}

/**
 * Objects of compact entries recently decoded for readers of `obj` (at most
 * RECENT_DECODED, oldest out first): the namespaces and service accounts that
 * admission reads on every write stay decoded, and code reading `obj` twice sees
 * one object. Decodes for ingest and for encodings are not kept: on a cache fill of
 * 10k pods, keeping even the last 16 alive made V8 promote decode garbage and grow
 * its committed heap from ~50 to ~90 MB.
 */
const RECENT_DECODED = 256;
const recent = new Map<CachedObject, any>();

function remember(o: CachedObject, obj: any): void {
  if (recent.size >= RECENT_DECODED) recent.delete(recent.keys().next().value!);
  recent.set(o, obj);
}

/** A buffer that owns exactly its bytes (a slice of a pooled slab would keep the whole slab). */
function exact(b: Buffer): Buffer {
  if (b.byteOffset === 0 && b.buffer.byteLength === b.length) return b;
  const out = Buffer.allocUnsafeSlow(b.length);
  b.copy(out);
  return out;
}

const sameStrings = (a: Record<string, string>, b: Record<string, string>): boolean => {
  let n = 0;
  for (const k in a) {
    if (a[k] !== b[k]) return false;
    n++;
  }
  return n === Object.keys(b).length;
};

/**
 * Attributes equal to the previous version's are that version's (their strings too, where
 * only some are equal): a pod's labels and most of its fields outlive its status changes,
 * and the event window holds up to 100k versions, ~0.5 KB of attributes each.
 */
function sharedAttrs(a: ObjectAttrs, prev: ObjectAttrs): ObjectAttrs {
  const labels = sameStrings(a.labels, prev.labels) ? prev.labels : a.labels;
  let fields = a.fields;
  if (sameStrings(fields, prev.fields)) fields = prev.fields;
  else for (const k in fields) if (fields[k] === prev.fields[k]) fields[k] = prev.fields[k];
  return labels === prev.labels && fields === prev.fields ? prev : { labels, fields };
}

export class CachedObject {
  /** Alternating names and encodings (fewer bytes than a Map for one or two). */
  private encodings: (string | Buffer)[] | undefined;
  /** The decoded object; undefined for a compact entry. */
  private readonly decoded: any;
  /** A compact entry's stored bytes, or (messageDecoder set) its Protobuf message. */
  private bytes: Buffer | undefined;
  private readonly codec: CacheCodec | undefined;
  private messageDecoder: ((message: Buffer) => any) | undefined;
  /** bytes are this entry's own message (withRV copies share another's). */
  private ownMessage = false;

  constructor(
    readonly key: string,
    readonly rv: number,
    /** Treat as immutable: it is shared by every reader. Unused for a compact entry. */
    obj: any,
    readonly attrs: ObjectAttrs,
    /** A compact entry: the stored bytes and how to decode them. */
    stored?: { value: Buffer; codec: CacheCodec },
  ) {
    if (!stored) this.decoded = obj;
    else {
      this.bytes = stored.value;
      this.codec = stored.codec;
    }
  }

  /** prev: the key's previous version, whose key and equal attributes the new one shares. */
  static fromKV(kv: KeyValue, codec: CacheCodec, prev?: CachedObject | null): CachedObject {
    const obj = codec.decode(kv.value, kv.modRevision, kv.key);
    const stored = codec.compact ? { value: exact(kv.value), codec } : undefined;
    const attrs = codec.attrs(obj);
    return prev
      ? new CachedObject(prev.key, kv.modRevision, obj, sharedAttrs(attrs, prev.attrs), stored)
      : new CachedObject(kv.key, kv.modRevision, obj, attrs, stored);
  }

  /** The decoded object (shared by every reader: treat as immutable). */
  get obj(): any {
    if (!this.codec) return this.decoded;
    let obj = recent.get(this);
    if (obj === undefined) {
      obj = this.decode();
      remember(this, obj);
    }
    return obj;
  }

  /**
   * A private copy of the object for a writer to change (a read-modify-write's first
   * guess): a compact entry decodes its bytes afresh, a decoded one is deep-copied.
   */
  copy(): any {
    return this.codec ? this.decode() : jsonClone(this.decoded);
  }

  private decode(): any {
    const bytes = this.bytes!;
    if (!this.messageDecoder) return this.codec!.decode(bytes, this.rv, this.key);
    const obj = this.messageDecoder(bytes);
    (obj.metadata ??= {}).resourceVersion = String(this.rv);
    return obj;
  }

  /** The same object at another resourceVersion (a delete's revision). */
  withRV(rv: number): CachedObject {
    if (this.codec) {
      const o = new CachedObject(this.key, rv, undefined, this.attrs, {
        value: this.bytes!,
        codec: this.codec,
      });
      // Its decode stamps its own resourceVersion on what the message holds.
      o.messageDecoder = this.messageDecoder;
      return o;
    }
    const obj = this.decoded;
    return new CachedObject(
      this.key,
      rv,
      { ...obj, metadata: { ...obj.metadata, resourceVersion: String(rv) } },
      this.attrs,
    );
  }

  /**
   * The bare Protobuf message of the object in the storage version, made once.
   * A compact entry whose stored bytes are Protobuf keeps it in their place;
   * other entries memoise it under `name` like encoded().
   */
  message(name: string, encode: (obj: any) => Buffer): Buffer {
    if (this.ownMessage) return this.bytes!;
    if (this.messageDecoder) return this.encoded(name, encode);
    const decoder = this.codec?.messageDecoder?.(this.bytes!);
    if (!decoder) return this.encoded(name, encode);
    const m = exact(encode(this.objForEncoding()));
    this.bytes = m;
    this.messageDecoder = decoder;
    this.ownMessage = true;
    return m;
  }

  /** An encoding of this object, computed once per name (e.g. "json", "pb"). */
  encoded(name: string, encode: (obj: any) => Buffer): Buffer {
    const e = this.encodings;
    if (e) for (let i = 0; i < e.length; i += 2) if (e[i] === name) return e[i + 1] as Buffer;
    const own = exact(encode(this.objForEncoding()));
    (this.encodings ??= []).push(name, own);
    return own;
  }

  /** A decode for an encoding is not remembered: lists encode thousands in one go. */
  private objForEncoding(): any {
    return this.codec ? (recent.get(this) ?? this.decode()) : this.decoded;
  }
}
