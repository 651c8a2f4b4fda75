// CEL values as the engine represents them: which CEL type a value is, and
// equality and ordering as the libraries and Kubernetes' object types need them
// (deep equality of objects, maps and lists; numeric order across int, uint and double).
import { Optional } from '@marcbachmann/cel-js';
import { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';

export const isUnsigned = (v: unknown): v is UnsignedInt => v instanceof UnsignedInt;
export const isDuration = (v: unknown): v is Duration => v instanceof Duration;

/** The name a type value (`type(x)`) stands for; undefined for other values. Its class, tagged
 * "Type<name>", is the one the engine does not export. */
export function typeValueName(v: unknown): string | undefined {
  if (typeof v !== 'object' || v === null) return undefined;
  const tag = (v as { [Symbol.toStringTag]?: unknown })[Symbol.toStringTag];
  return typeof tag === 'string' && tag.startsWith('Type<') ? (v as { name: string }).name : undefined;
}

/** A CEL map: a Map, or a plain object (map literals and JSON objects). */
export const isCelMap = (v: unknown): v is Map<unknown, unknown> | Record<string, unknown> =>
  v instanceof Map || (typeof v === 'object' && v !== null && Object.getPrototypeOf(v) === Object.prototype);

/** A value's CEL type as cel-go names it in errors ("null_type", "google.protobuf.Duration", ...). */
export function celTypeName(v: unknown): string {
  if (v === null) return 'null_type';
  if (typeof v === 'bigint') return 'int';
  if (typeof v === 'number') return 'double';
  if (typeof v === 'string') return 'string';
  if (typeof v === 'boolean') return 'bool';
  if (v instanceof Uint8Array) return 'bytes';
  if (Array.isArray(v)) return 'list';
  if (v instanceof Date) return 'google.protobuf.Timestamp';
  if (isDuration(v)) return 'google.protobuf.Duration';
  if (isUnsigned(v)) return 'uint';
  if (v instanceof Optional) return 'optional_type';
  if (typeValueName(v) !== undefined) return 'type';
  if (isCelMap(v)) return 'map';
  const tag = (v as { [Symbol.toStringTag]?: unknown })?.[Symbol.toStringTag];
  return typeof tag === 'string' ? tag : ((v as object)?.constructor?.name ?? typeof v);
}

const isMapLike = (v: unknown): v is Map<unknown, unknown> => v instanceof Map;
const isPlain = (v: unknown): v is Record<string, unknown> =>
  v !== null &&
  typeof v === 'object' &&
  !Array.isArray(v) &&
  !(v instanceof Map) &&
  !(v instanceof Uint8Array);

function entries(v: unknown): [unknown, unknown][] | undefined {
  if (isMapLike(v)) return [...v.entries()];
  // Plain objects and the classes of declared object types (own enumerable fields).
  if (isPlain(v) && !(v instanceof Date) && Object.keys(v).length === Object.getOwnPropertyNames(v).length)
    return Object.entries(v);
  return undefined;
}

function numeric(v: unknown): number | bigint | undefined {
  if (typeof v === 'bigint' || typeof v === 'number') return v;
  if (v !== null && typeof v === 'object' && 'valueOf' in v) {
    const p = (v as { valueOf(): unknown }).valueOf();
    if (typeof p === 'bigint' || typeof p === 'number') return p;
  }
  return undefined;
}

export function celEquals(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => celEquals(x, b[i]));
  if (a instanceof Uint8Array && b instanceof Uint8Array)
    return a.length === b.length && a.every((x, i) => x === b[i]);
  if (a instanceof Date && b instanceof Date) return a.getTime() === b.getTime();
  const ea = entries(a);
  const eb = entries(b);
  if (ea && eb) {
    if (ea.length !== eb.length) return false;
    const mb = new Map(eb);
    return ea.every(([k, v]) => mb.has(k) && celEquals(v, mb.get(k)));
  }
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na == nb;
  if (a !== null && b !== null && typeof a === 'object' && typeof b === 'object')
    return String(a) === String(b) && a.constructor === b.constructor;
  return false;
}

export function celCompare(a: unknown, b: unknown): number {
  const na = numeric(a);
  const nb = numeric(b);
  if (na !== undefined && nb !== undefined) return na < nb ? -1 : na > nb ? 1 : 0;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  if (typeof a === 'boolean' && typeof b === 'boolean') return Number(a) - Number(b);
  if (a instanceof Date && b instanceof Date) return a.getTime() - b.getTime();
  if (a instanceof Uint8Array && b instanceof Uint8Array) return Buffer.compare(a, b);
  throw new Error('no such overload');
}
