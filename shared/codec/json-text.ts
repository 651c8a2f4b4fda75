// JSON text that some objects' makers can write faster than JSON.stringify walks
// them: a managed-fields set writes its FieldsV1 straight from its sorted entries.
// An object with a source must not change afterwards (its text would be stale).
// A source serves once (the storage encoding of the write that made the object),
// so it is not kept alive for as long as the object.

import { stringifyJSONInt64 } from './json-int64';

export interface JSONTextSource {
  /** Exactly JSON.stringify of the object the source was set for. */
  jsonText(): string;
}

const sources = new WeakMap<object, JSONTextSource>();

export function setJSONTextSource(obj: object, source: JSONTextSource): void {
  sources.set(obj, source);
}

/** JSON.stringify(v), from v's source when it has one (which is then dropped). */
export function stringifyJSON(v: unknown): string | undefined {
  const source = typeof v === 'object' && v !== null ? sources.get(v) : undefined;
  if (!source) return stringifyJSONInt64(v);
  sources.delete(v as object);
  return source.jsonText();
}
