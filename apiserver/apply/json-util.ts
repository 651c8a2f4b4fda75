// Small helpers over plain JSON values, shared by the patchers and the field manager.

import { goJSONText } from '../../shared/codec/go-json';

export type JSONValue = null | boolean | number | string | JSONValue[] | JSONObject;
export interface JSONObject {
  [key: string]: JSONValue;
}

export const isObject = (v: unknown): v is JSONObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** JSON text as Go's encoding/json writes it: <, >, & and U+2028/2029 escaped. */
export function goJSON(v: unknown): string {
  if (typeof v === 'number' || typeof v === 'boolean') return JSON.stringify(v);
  return goJSONText(v);
}

/** JSON with object keys sorted, as Go encodes a map[string]interface{}. */
export function goJSONSorted(v: unknown): string {
  return goJSON(sortKeys(v));
}

function sortKeys(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortKeys);
  if (!isObject(v)) return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort(goStringCompare)) out[k] = sortKeys(v[k]);
  return out;
}

/** Orders strings by UTF-8 bytes (code points), like Go's strings.Compare. */
export function goStringCompare(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    let x = a.charCodeAt(i);
    let y = b.charCodeAt(i);
    if (x === y) continue;
    // Surrogates (astral code points) sort after the rest of the BMP in UTF-8.
    if (x >= 0xd800 && y >= 0xd800) {
      x = x >= 0xe000 ? x - 0x800 : x + 0x2000;
      y = y >= 0xe000 ? y - 0x800 : y + 0x2000;
    }
    return x < y ? -1 : 1;
  }
  return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** Go's %v of a decoded JSON value: map[k:v ...] with sorted keys, [a b], <nil>. */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort(goStringCompare);
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  return String(v);
}
