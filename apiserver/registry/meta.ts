// Object metadata the server owns: names, uids, timestamps, resourceVersion.
import { randomUUID, randomBytes } from 'node:crypto';

// Kubernetes' generateName alphabet (no vowels or look-alikes, so no words appear).
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

export function generateNameSuffix(n = 5): string {
  const bytes = randomBytes(n);
  let out = '';
  for (let i = 0; i < n; i++) out += ALPHABET[bytes[i] % ALPHABET.length];
  return out;
}

/** generateName + random suffix, keeping the base within 58 characters like Kubernetes. */
export function generateName(base: string): string {
  return (base.length > 58 ? base.slice(0, 58) : base) + generateNameSuffix();
}

export const newUID = (): string => randomUUID();

/** RFC 3339 with second precision, as metav1.Time serialises. */
export function rfc3339(d: Date): string {
  return d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** RFC 3339 with microseconds, as metav1.MicroTime serialises. */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export function metaOf(obj: any): any {
  if (!obj.metadata || typeof obj.metadata !== 'object') obj.metadata = {};
  return obj.metadata;
}

export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d+$/.test(rv)) return NaN;
  return Number(rv);
}

/** Deep structural equality of two JSON values (key order insensitive). */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== typeof b || a === null || b === null || typeof a !== 'object') return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ka = Object.keys(a as object).filter((k) => (a as any)[k] !== undefined);
  const kb = Object.keys(b as object).filter((k) => (b as any)[k] !== undefined);
  if (ka.length !== kb.length) return false;
  for (const k of ka) if (!jsonEqual((a as any)[k], (b as any)[k])) return false;
  return true;
}

/** A deep copy of a JSON value. */
export const clone = <T>(v: T): T => (v === undefined ? v : structuredClone(v));
