// v1.ResourceList as exact quantities (resource name → Quantity), and the
// list arithmetic of quota and limit checks (quota.Add, Subtract, Max).
import {
  addQuantity,
  compareQuantity,
  formatQuantity,
  parseQuantity,
  subQuantity,
  type Quantity,
} from './validation/quantity';

export type ResourceList = Map<string, Quantity>;

/** v1helper.IsNativeResource: no domain, or a kubernetes.io one. */
export const isNativeResourceName = (name: string): boolean =>
  !name.includes('/') || name.includes('kubernetes.io/');

/** v1helper.IsExtendedResourceName: a domain-prefixed name outside kubernetes.io, not a quota "requests." name. */
export const isExtendedResourceName = (name: string): boolean =>
  !isNativeResourceName(name) && !name.startsWith('requests.');

export const zeroQuantity = (): Quantity => ({ mant: 0n, exp: 0, format: 'DecimalSI' });

/** A whole number of things (pods, services ...). */
export const countQuantity = (n: number): Quantity => ({ mant: BigInt(n), exp: 0, format: 'DecimalSI' });

export function toResourceList(obj: Record<string, unknown> | undefined | null): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(obj ?? {})) {
    try {
      out.set(k, parseQuantity(String(v)));
    } catch {
      /* invalid quantities were refused by validation */
    }
  }
  return out;
}

export function fromResourceList(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...list.keys()].sort()) out[k] = formatQuantity(list.get(k)!);
  return out;
}

export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, out.has(k) ? addQuantity(out.get(k)!, v) : v);
  return out;
}

export function subLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, subQuantity(out.get(k) ?? zeroQuantity(), v));
  return out;
}

export function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) if (!out.has(k) || compareQuantity(v, out.get(k)!) > 0) out.set(k, v);
  return out;
}

/** Only the entries named. */
export function maskList(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  return new Map([...list].filter(([k]) => keep.has(k)));
}

/** Kubernetes' prettyPrint of a ResourceList: sorted `name=value` joined by ",". */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()]
    .sort()
    .map((k) => `${k}=${formatQuantity(list.get(k)!)}`)
    .join(',');
}
