// Deep equality of JSON values, as every layer compares objects it decoded:
// key order is ignored, and a member whose value is undefined is the same as
// a missing one (JSON cannot tell them apart).
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
