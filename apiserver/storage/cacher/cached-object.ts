// One object as the watch cache holds it: decoded once at ingest, with its
// selector attributes, and a memo of its encodings so every representation is
// produced once per object version, not once per reader or watcher.
import type { KeyValue } from '../interface';

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
}

export class CachedObject {
  private encodings: Map<string, Buffer> | undefined;

  constructor(
    readonly key: string,
    readonly rv: number,
    /** Treat as immutable: it is shared by every reader. */
    readonly obj: any,
    readonly attrs: ObjectAttrs,
  ) {}

  static fromKV(kv: KeyValue, codec: CacheCodec): CachedObject {
    const obj = codec.decode(kv.value, kv.modRevision, kv.key);
    return new CachedObject(kv.key, kv.modRevision, obj, codec.attrs(obj));
  }

  /** The same object at another resourceVersion (a delete's revision). */
  withRV(rv: number): CachedObject {
    const obj = { ...this.obj, metadata: { ...this.obj.metadata, resourceVersion: String(rv) } };
    return new CachedObject(this.key, rv, obj, this.attrs);
  }

  /** An encoding of this object, computed once per name (e.g. "json", "pb"). */
  encoded(name: string, encode: (obj: any) => Buffer): Buffer {
    let m = this.encodings;
    if (!m) m = this.encodings = new Map();
    let b = m.get(name);
    if (!b) {
      b = encode(this.obj);
      m.set(name, b);
    }
    return b;
  }
}
