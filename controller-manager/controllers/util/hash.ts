// Hashes of templates (pod-template-hash, ControllerRevision names): FNV-32a
// over a canonical JSON form (object keys sorted) plus the collision count,
// spelled with rand.SafeEncodeString's alphabet like Kubernetes' names.

const SAFE_ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** rand.SafeEncodeString: every byte mapped into an alphabet without vowels and look-alikes. */
export function safeEncodeString(s: string): string {
  let out = '';
  for (let i = 0; i < s.length; i++) out += SAFE_ALPHABET[s.charCodeAt(i) % SAFE_ALPHABET.length];
  return out;
}

/**
 * JSON with object keys in sorted order, undefined and null members dropped (Go hashes the
 * decoded struct, where a null member is the zero value, as if absent).
 */
export function canonicalJSON(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (v === null || typeof v !== 'object') return JSON.stringify(v) ?? 'null';
  if (Array.isArray(v)) return `[${v.map((x) => (x === undefined ? 'null' : canonicalJSON(x))).join(',')}]`;
  const o = v as Record<string, unknown>;
  const keys = Object.keys(o)
    .filter((k) => o[k] !== undefined && o[k] !== null)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJSON(o[k])}`).join(',')}}`;
}

export class Fnv32a {
  private h = 0x811c9dc5;

  write(bytes: Uint8Array): this {
    let h = this.h;
    for (let i = 0; i < bytes.length; i++) {
      h ^= bytes[i];
      h = Math.imul(h, 0x01000193) >>> 0;
    }
    this.h = h >>> 0;
    return this;
  }

  sum32(): number {
    return this.h >>> 0;
  }
}

function uint32LE(n: number): Uint8Array {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
}

/** controller.ComputeHash: the pod-template-hash of a template and the collision count. */
export function computeHash(template: unknown, collisionCount?: number | null): string {
  const h = new Fnv32a().write(Buffer.from(canonicalJSON(template)));
  if (collisionCount !== undefined && collisionCount !== null) h.write(uint32LE(collisionCount));
  return safeEncodeString(String(h.sum32()));
}
