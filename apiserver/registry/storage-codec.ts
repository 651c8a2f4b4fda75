// How objects are written to the store: in the storage version, without
// resourceVersion (the store's modRevision is the version), JSON or Protobuf by
// --storage-media-type, optionally through a transformer (encryption at rest).
// Decoding sniffs the format, so a store written with another media type still reads.

import type { ValueTransformer } from '../storage/transformers';
import { parseJSONInt64, stringifyJSONInt64 } from '../../shared/codec/json-int64';

export interface ObjectCodec {
  encode(obj: any): Buffer;
  decode(data: Buffer): any;
  /** Can this codec encode the kind? (Protobuf only for built-in kinds.) */
  supports(apiVersion: string, kind: string): boolean;
}

export const jsonCodec: ObjectCodec = {
  encode: (obj) => Buffer.from(stringifyJSONInt64(obj)),
  decode: (data) => parseJSONInt64(data.toString('utf8')),
  supports: () => true,
};

const PROTO_MAGIC = Buffer.from([0x6b, 0x38, 0x73, 0x00]);

export class StorageCodec {
  constructor(
    private readonly preferred: ObjectCodec,
    private readonly protobuf: ObjectCodec | null,
    private readonly transformer: ValueTransformer | null = null,
  ) {}

  encode(obj: any, key: string): Buffer {
    const md = obj.metadata;
    let plain = obj;
    if (md && (md.resourceVersion !== undefined || md.selfLink !== undefined)) {
      const { resourceVersion: _rv, selfLink: _sl, ...rest } = md;
      plain = { ...obj, metadata: rest };
    }
    const codec = this.preferred.supports(obj.apiVersion, obj.kind) ? this.preferred : jsonCodec;
    const bytes = codec.encode(plain);
    return this.transformer ? this.transformer.toStorage(bytes, key) : bytes;
  }

  /** Decodes a stored value and stamps metadata.resourceVersion. */
  decode(data: Buffer, rv: number, key: string): any {
    const bytes = this.transformer ? this.transformer.fromStorage(data, key) : data;
    const isProto = bytes.length >= 4 && bytes.subarray(0, 4).equals(PROTO_MAGIC);
    const obj = isProto && this.protobuf ? this.protobuf.decode(bytes) : jsonCodec.decode(bytes);
    (obj.metadata ??= {}).resourceVersion = String(rv);
    return obj;
  }
}
