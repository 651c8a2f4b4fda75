// application/vnd.kubernetes.protobuf for every built-in kind, built by
// reflection from the schema source. The JSON side is the plain object model
// (what JSON.parse gives, apiVersion/kind at the top level).
//
// Body of a response (WIRE.md): magic "k8s\0" + runtime.Unknown{typeMeta
// {apiVersion, kind}, raw = the object's message without apiVersion/kind,
// contentEncoding "", contentType ""}. Lists carry bare item messages.
import { codecOf, precompile, structCodecOf } from './protobuf-compile';
import { fieldNumber, listFields, messageOfKind, RUNTIME_TYPEMETA, RUNTIME_UNKNOWN } from './protobuf-plan';
import { hooks, MAGIC } from './protobuf-special';
import { ProtobufError, Reader, tagBytes, varintSize, Writer } from './protobuf-wire';

export { ProtobufError } from './protobuf-wire';
export { MAGIC as PROTOBUF_MAGIC } from './protobuf-special';
export {
  encodeWatchFrame,
  WatchFrameDecoder,
  decodeWatchFrameBody,
  type WatchFrameEvent,
} from './watch-frame';

export const PROTOBUF_MEDIA_TYPE = 'application/vnd.kubernetes.protobuf';

/** Whether a kind has a Protobuf form: built-in kinds and lists, Status, meta kinds; not CRs or Table. */
export function protobufSupported(apiVersion: string, kind: string): boolean {
  return messageOfKind(apiVersion, kind) !== undefined;
}

function messageFor(apiVersion: unknown, kind: unknown): string {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string' || !apiVersion || !kind) {
    throw new ProtobufError('protobuf: object has no apiVersion and kind');
  }
  const m = messageOfKind(apiVersion, kind);
  if (!m) throw new ProtobufError(`protobuf: no protobuf serialization for ${apiVersion}, Kind=${kind}`);
  return m;
}

// ---- envelope layout, from the facts ----------------------------------------

interface Envelope {
  typeMeta: number;
  raw: number;
  contentEncoding: number;
  contentType: number;
  apiVersion: number;
  kind: number;
  /** contentEncoding "" and contentType "": every body ends with these. */
  trailer: Buffer;
  rawTag: number[];
}

let env: Envelope | undefined;

function envelope(): Envelope {
  if (!env) {
    const u = (f: string) => fieldNumber(RUNTIME_UNKNOWN, f);
    const contentEncoding = u('contentEncoding');
    const contentType = u('contentType');
    env = {
      typeMeta: u('typeMeta'),
      raw: u('raw'),
      contentEncoding,
      contentType,
      apiVersion: fieldNumber(RUNTIME_TYPEMETA, 'apiVersion'),
      kind: fieldNumber(RUNTIME_TYPEMETA, 'kind'),
      trailer: Buffer.from([...tagBytes(contentEncoding, 2), 0, ...tagBytes(contentType, 2), 0]),
      rawTag: tagBytes(u('raw'), 2),
    };
  }
  return env;
}

/** Magic, typeMeta and the raw field's tag; the caller writes raw's length and bytes. */
function writeHeader(w: Writer, apiVersion: string, kind: string): void {
  const e = envelope();
  w.bytes(MAGIC);
  w.bytes(tagBytes(e.typeMeta, 2));
  const s = w.begin();
  w.bytes(tagBytes(e.apiVersion, 2));
  w.str(apiVersion);
  w.bytes(tagBytes(e.kind, 2));
  w.str(kind);
  w.end(s);
  w.bytes(e.rawTag);
}

// ---- one reusable scratch writer ----------------------------------------------

let scratch: Writer | undefined;
let scratchBusy = false;
const SCRATCH_KEEP = 4 * 1024 * 1024;

function withWriter<T>(fn: (w: Writer) => T): T {
  const own = !scratchBusy;
  const w = own ? (scratch ??= new Writer()) : new Writer(4096);
  if (own) scratchBusy = true;
  w.reset();
  try {
    return fn(w);
  } catch (err) {
    if (err instanceof RangeError) throw new ProtobufError('protobuf: object nested too deeply');
    throw err;
  } finally {
    if (own) {
      scratchBusy = false;
      if (w.buf.length > SCRATCH_KEEP) scratch = undefined; // a huge list; do not keep its buffer
    }
  }
}

// ---- encoding ---------------------------------------------------------------

/** The enveloped Protobuf form of an object, a list or a Status. */
export function encodeObject(obj: any): Buffer {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw new ProtobufError('protobuf: can only encode an object');
  }
  const { apiVersion, kind } = obj;
  const codec = codecOf(messageFor(apiVersion, kind));
  return withWriter((w) => {
    writeHeader(w, apiVersion, kind);
    const s = w.begin();
    codec.e(w, obj);
    w.end(s);
    w.bytes(envelope().trailer);
    return w.finish();
  });
}

/** The bare message of an object (no envelope, no apiVersion/kind): list items, watch cache. */
export function encodeMessage(apiVersion: string, kind: string, obj: any): Buffer {
  const codec = codecOf(messageFor(apiVersion, kind));
  return withWriter((w) => {
    codec.e(w, obj);
    return w.finish();
  });
}

/** Wraps an already encoded message in the envelope. */
export function wrapEnvelope(apiVersion: string, kind: string, raw: Uint8Array): Buffer {
  const head = new Writer(64 + apiVersion.length * 3 + kind.length * 3);
  writeHeader(head, apiVersion, kind);
  head.u32(raw.length);
  const trailer = envelope().trailer;
  const out = Buffer.allocUnsafe(head.pos + raw.length + trailer.length);
  head.buf.copy(out, 0, 0, head.pos);
  out.set(raw, head.pos);
  trailer.copy(out, head.pos + raw.length);
  return out;
}

/**
 * An enveloped list around pre-encoded item messages (from encodeMessage),
 * without re-encoding or copying them: the body's parts in order (the items
 * themselves, between small prefixes), for a corked write.
 */
export function encodeListFromRawItems(
  apiVersion: string,
  listKind: string,
  listMeta: any,
  rawItems: readonly Uint8Array[],
): Buffer[] {
  const { metadata, items } = listFields(messageFor(apiVersion, listKind));
  const meta = withWriter((w) => {
    codecOf(metadata.type).e(w, listMeta ?? {});
    return w.finish();
  });
  const metaTag = tagBytes(metadata.n, 2);
  const itemTag = tagBytes(items.n, 2);
  const metaLen = metaTag.length + varintSize(meta.length) + meta.length;
  let rawLen = metaLen;
  for (const it of rawItems) rawLen += itemTag.length + varintSize(it.length) + it.length;

  const w = new Writer(64 + apiVersion.length * 3 + listKind.length * 3 + metaLen);
  writeHeader(w, apiVersion, listKind);
  w.u32(rawLen);
  const writeMeta = (into: Writer) => {
    into.bytes(metaTag);
    into.blob(meta);
  };
  if (metadata.n < items.n) writeMeta(w);
  const parts: Buffer[] = [w.take()];
  // Every item's tag and length, written into one buffer and sliced.
  const prefixes = new Writer(rawItems.length * (itemTag.length + 5) + 1);
  for (const it of rawItems) {
    const at = prefixes.pos;
    prefixes.bytes(itemTag);
    prefixes.u32(it.length);
    parts.push(prefixes.buf.subarray(at, prefixes.pos), asBuffer(it));
  }
  if (metadata.n > items.n) {
    const tail = new Writer(metaLen);
    writeMeta(tail);
    parts.push(tail.take());
  }
  parts.push(envelope().trailer);
  return parts;
}

// ---- decoding ---------------------------------------------------------------

const MAX_ENVELOPE_DEPTH = 16;
let envelopeDepth = 0;

function asBuffer(b: Uint8Array): Buffer {
  return Buffer.isBuffer(b) ? b : Buffer.from(b.buffer, b.byteOffset, b.byteLength);
}

export function hasProtobufMagic(b: Uint8Array): boolean {
  return b.length >= 4 && b[0] === MAGIC[0] && b[1] === MAGIC[1] && b[2] === MAGIC[2] && b[3] === MAGIC[3];
}

interface ReadEnvelope {
  apiVersion: string;
  kind: string;
  rawStart: number;
  rawEnd: number;
  contentEncoding: string;
  contentType: string;
}

function readEnvelope(b: Buffer): ReadEnvelope {
  if (!hasProtobufMagic(b)) throw new ProtobufError('protobuf: body does not start with the k8s\\0 prefix');
  const e = envelope();
  const r = new Reader(b, 4);
  const end = b.length;
  const out: ReadEnvelope = {
    apiVersion: '',
    kind: '',
    rawStart: 0,
    rawEnd: 0,
    contentEncoding: '',
    contentType: '',
  };
  while (r.pos < end) {
    let t = b[r.pos++];
    if (t > 127) t = r.tag(t);
    if (t === e.typeMeta * 8 + 2) {
      const te = r.sub(end);
      while (r.pos < te) {
        let t2 = b[r.pos++];
        if (t2 > 127) t2 = r.tag(t2);
        if (t2 === e.apiVersion * 8 + 2) out.apiVersion = r.str(te);
        else if (t2 === e.kind * 8 + 2) out.kind = r.str(te);
        else r.skip(t2, te);
      }
      r.done(te);
    } else if (t === e.raw * 8 + 2) {
      out.rawEnd = r.sub(end);
      out.rawStart = r.pos;
      r.pos = out.rawEnd;
    } else if (t === e.contentEncoding * 8 + 2) out.contentEncoding = r.str(end);
    else if (t === e.contentType * 8 + 2) out.contentType = r.str(end);
    else r.skip(t, end);
  }
  r.done(end);
  if (out.contentEncoding)
    throw new ProtobufError(`protobuf: unsupported content encoding ${out.contentEncoding}`);
  if (out.contentType && !out.contentType.startsWith(PROTOBUF_MEDIA_TYPE)) {
    throw new ProtobufError(`protobuf: unsupported content type ${out.contentType}`);
  }
  return out;
}

function guarded<T>(fn: () => T): T {
  if (envelopeDepth >= MAX_ENVELOPE_DEPTH) throw new ProtobufError('protobuf: envelopes nested too deeply');
  envelopeDepth++;
  try {
    return fn();
  } catch (err) {
    if (err instanceof ProtobufError) throw err;
    if (err instanceof RangeError) throw new ProtobufError('protobuf: message nested too deeply');
    throw new ProtobufError(`protobuf: malformed message (${(err as Error).message})`);
  } finally {
    envelopeDepth--;
  }
}

/** The JSON-shaped object of an enveloped body, with apiVersion and kind restored. */
export function decodeObject(buf: Uint8Array): any {
  const b = asBuffer(buf);
  return guarded(() => {
    const h = readEnvelope(b);
    const codec = structCodecOf(messageFor(h.apiVersion, h.kind));
    const o: Record<string, unknown> = { apiVersion: h.apiVersion, kind: h.kind };
    codec.into(new Reader(b, h.rawStart), h.rawEnd, o);
    return o;
  });
}

/** Decodes a bare message (no envelope) of a known kind, adding apiVersion and kind. */
export function decodeMessage(apiVersion: string, kind: string, raw: Uint8Array): any {
  const b = asBuffer(raw);
  return guarded(() => {
    const codec = structCodecOf(messageFor(apiVersion, kind));
    const o: Record<string, unknown> = { apiVersion, kind };
    codec.into(new Reader(b, 0), b.length, o);
    return o;
  });
}

/** apiVersion and kind of an enveloped body, without decoding the object. */
export function peekTypeMeta(buf: Uint8Array): { apiVersion: string; kind: string } {
  const h = guarded(() => readEnvelope(asBuffer(buf)));
  return { apiVersion: h.apiVersion, kind: h.kind };
}

/** Compiles the codecs of a kind ahead of the first request. */
export function warmUpProtobuf(apiVersion: string, kind: string): void {
  precompile(messageFor(apiVersion, kind));
}

hooks.decodeEnvelope = decodeObject;
