// Protobuf watch streams (application/vnd.kubernetes.protobuf;stream=watch):
// each frame is a 4-byte big-endian length and a bare meta.v1.WatchEvent
// {type, object: RawExtension{raw: an enveloped object}} (WIRE.md).
import { fieldNumber, META_WATCHEVENT, RUNTIME_RAWEXTENSION } from './protobuf-plan';
// A cycle with protobuf.ts (which re-exports this module), used only at call time.
import { decodeObject } from './protobuf';
import { ProtobufError, Reader, tagBytes, varintSize } from './protobuf-wire';

interface Layout {
  typeTag: number[];
  objectTag: number[];
  rawTag: number[];
  type: number;
  object: number;
  raw: number;
}

let layout: Layout | undefined;

function lay(): Layout {
  if (!layout) {
    const type = fieldNumber(META_WATCHEVENT, 'type');
    const object = fieldNumber(META_WATCHEVENT, 'object');
    const raw = fieldNumber(RUNTIME_RAWEXTENSION, 'raw');
    layout = {
      type,
      object,
      raw,
      typeTag: tagBytes(type, 2),
      objectTag: tagBytes(object, 2),
      rawTag: tagBytes(raw, 2),
    };
  }
  return layout;
}

/** One frame: length prefix + WatchEvent around an already enveloped object (encoded once, fanned out). */
export function encodeWatchFrame(type: string, objectEnvelope: Uint8Array): Buffer {
  const l = lay();
  const typeBytes = Buffer.from(type, 'utf8');
  const rawLen = l.rawTag.length + varintSize(objectEnvelope.length) + objectEnvelope.length;
  const msgLen =
    l.typeTag.length +
    varintSize(typeBytes.length) +
    typeBytes.length +
    l.objectTag.length +
    varintSize(rawLen) +
    rawLen;
  const out = Buffer.allocUnsafe(4 + msgLen);
  out.writeUInt32BE(msgLen, 0);
  let p = 4;
  const put = (bytes: ArrayLike<number>) => {
    for (let i = 0; i < bytes.length; i++) out[p++] = bytes[i];
  };
  const varint = (v: number) => {
    while (v > 127) {
      out[p++] = (v & 127) | 128;
      v >>>= 7;
    }
    out[p++] = v;
  };
  put(l.typeTag);
  varint(typeBytes.length);
  typeBytes.copy(out, p);
  p += typeBytes.length;
  put(l.objectTag);
  varint(rawLen);
  put(l.rawTag);
  varint(objectEnvelope.length);
  out.set(objectEnvelope, p);
  return out;
}

export interface WatchFrameEvent {
  type: string;
  /** The decoded object (JSON shape), or undefined when the event carried none. */
  object: any;
  /** The enveloped object as received. */
  raw?: Buffer;
}

/** Decodes the WatchEvent message of one frame (without its length prefix). */
export function decodeWatchFrameBody(body: Buffer): WatchFrameEvent {
  const l = lay();
  const r = new Reader(body, 0);
  const end = body.length;
  let type = '';
  let raw: Buffer | undefined;
  while (r.pos < end) {
    let t = body[r.pos++];
    if (t > 127) t = r.tag(t);
    if (t === l.type * 8 + 2) type = r.str(end);
    else if (t === l.object * 8 + 2) {
      const e = r.sub(end);
      while (r.pos < e) {
        let t2 = body[r.pos++];
        if (t2 > 127) t2 = r.tag(t2);
        if (t2 === l.raw * 8 + 2) raw = r.blob(e);
        else r.skip(t2, e);
      }
      r.done(e);
    } else r.skip(t, end);
  }
  r.done(end);
  if (!raw || raw.length === 0) return { type, object: undefined };
  return { type, object: decodeObject(raw), raw };
}

/** Splits a chunked watch stream into events; push() chunks as they arrive. */
export class WatchFrameDecoder {
  // Chunks are joined only once a whole frame is there, so a big frame sent in
  // many small chunks is copied once, not once per chunk.
  private chunks: Buffer[] = [];
  private held = 0;
  private need = 4;
  private readonly maxFrameBytes: number;

  constructor(opts: { maxFrameBytes?: number } = {}) {
    this.maxFrameBytes = opts.maxFrameBytes ?? 256 * 1024 * 1024;
  }

  /** Bytes held that do not yet make a whole frame. */
  get pending(): number {
    return this.held;
  }

  push(chunk: Uint8Array): WatchFrameEvent[] {
    if (chunk.length === 0) return [];
    this.chunks.push(
      Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength),
    );
    this.held += chunk.length;
    const out: WatchFrameEvent[] = [];
    while (this.held >= this.need) {
      const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks, this.held);
      let p = 0;
      let rest = buf.length;
      while (rest >= 4) {
        const len = buf.readUInt32BE(p);
        if (len > this.maxFrameBytes) {
          this.chunks = [];
          this.held = 0;
          this.need = 4;
          throw new ProtobufError(`protobuf: watch frame of ${len} bytes exceeds the limit`);
        }
        if (rest - 4 < len) break;
        const body = buf.subarray(p + 4, p + 4 + len);
        p += 4 + len;
        rest -= 4 + len;
        try {
          out.push(decodeWatchFrameBody(body));
        } catch (err) {
          // A corrupt stream: drop everything held; the caller ends the watch.
          this.chunks = [];
          this.held = 0;
          this.need = 4;
          throw err;
        }
      }
      // Keep the unfinished tail (copied when small, so a big chunk is not retained for it).
      const tail = buf.subarray(p);
      this.chunks = tail.length === 0 ? [] : [tail.length < 4096 ? Buffer.from(tail) : tail];
      this.held = tail.length;
      this.need = tail.length >= 4 ? 4 + tail.readUInt32BE(0) : 4;
    }
    return out;
  }

  /** Call at the end of the stream: a partial frame left over is an error. */
  end(): void {
    if (this.held > 0) throw new ProtobufError('protobuf: watch stream ended inside a frame');
  }
}
