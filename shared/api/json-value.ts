// JSON values as every layer handles the objects it decoded: deep equality
// (key order ignored; a member whose value is undefined is the same as a
// missing one, as JSON cannot tell them apart) and deep copies.

export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  let n = 0;
  for (const k in ao) {
    if (ao[k] === undefined) continue;
    if (!jsonEqual(ao[k], bo[k])) return false;
    n++;
  }
  for (const k in bo) if (bo[k] !== undefined) n--;
  return n === 0;
}

/**
 * A deep copy of a JSON value: objects and arrays are fresh, scalars shared.
 * Several times faster than structuredClone on API objects (it knows the
 * shapes are plain); bytes and dates, which decoded objects may hold, are copied too.
 */
export function jsonClone<T>(v: T): T {
  if (typeof v !== 'object' || v === null) return v;
  if (Array.isArray(v)) {
    const out = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = jsonClone(v[i]);
    return out as T;
  }
  if (ArrayBuffer.isView(v)) return (Buffer.isBuffer(v) ? Buffer.from(v) : (v as any).slice()) as T;
  if (v instanceof Date) return new Date(v.getTime()) as T;
  const out: Record<string, unknown> = {};
  for (const k in v) out[k] = jsonClone((v as Record<string, unknown>)[k]);
  return out as T;
}
