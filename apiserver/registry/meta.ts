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

export function metaOf(obj: any): any {
  if (!obj.metadata || typeof obj.metadata !== 'object') obj.metadata = {};
  return obj.metadata;
}

export function parseResourceVersion(rv: string | undefined): number | undefined {
  if (rv === undefined || rv === '') return undefined;
  if (!/^\d+$/.test(rv)) return NaN;
  return Number(rv);
}
