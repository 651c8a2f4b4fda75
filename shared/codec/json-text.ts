// JSON text that some objects' makers can write faster than JSON.stringify walks
// them: a managed-fields set writes its FieldsV1 straight from its sorted entries.
// An object with a source must not change afterwards (its text would be stale).

export interface JSONTextSource {
  /** Exactly JSON.stringify of the object the source was set for. */
  jsonText(): string;
}

const sources = new WeakMap<object, JSONTextSource>();

export function setJSONTextSource(obj: object, source: JSONTextSource): void {
  sources.set(obj, source);
}

/** JSON.stringify(v), from v's source when it has one. */
export function stringifyJSON(v: unknown): string | undefined {
  const source = typeof v === 'object' && v !== null ? sources.get(v) : undefined;
  return source ? source.jsonText() : JSON.stringify(v);
}
