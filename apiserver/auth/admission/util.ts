// Helpers shared by the admission plugins: Kubernetes' admission.NewForbidden,
// reads through the registry's watch cache, resource lists of quantities.
import { forbidden, isStatusError, StatusError } from '../../../shared/api/status';
import {
  compareQuantity,
  formatQuantity,
  parseQuantity,
  type Quantity,
} from '../../../shared/api/validation/quantity';
import type { Registry } from '../../registry/registry';
import { systemContext } from '../../registry/context';
import type { AdmissionAttributes } from './types';

/** admission.NewForbidden: `<resource> "<name>" is forbidden: <why>` (a Forbidden error passes through). */
export function admissionForbidden(a: AdmissionAttributes, why: string | Error): StatusError {
  if (isStatusError(why, 'Forbidden')) return why;
  const msg = typeof why === 'string' ? why : why.message;
  const md = (a.object ?? a.oldObject)?.metadata;
  const name = a.name || md?.name || md?.generateName || 'Unknown';
  return forbidden({ group: a.group, resource: a.resource }, name, msg);
}

/** Reads objects of one resource through the watch cache (falls back to the store). */
export class Lister {
  constructor(
    private readonly registry: () => Registry,
    readonly group: string,
    readonly resource: string,
  ) {}

  private served() {
    return this.registry().preferred(this.group, this.resource);
  }

  /** The object, or null when it does not exist. Cache first, then a live read (the cache may lag). */
  async get(namespace: string, name: string): Promise<any | null> {
    const s = this.served();
    if (!s) return null;
    try {
      return (await s.store.reader.get(systemContext(namespace), name, '0')).obj;
    } catch (err) {
      if (!isStatusError(err, 'NotFound')) throw err;
    }
    try {
      return (await s.store.reader.get(systemContext(namespace), name)).obj;
    } catch (err) {
      if (isStatusError(err, 'NotFound')) return null;
      throw err;
    }
  }

  /** Every object (of a namespace when given), from the cache. Treat them as read-only. */
  async list(namespace = ''): Promise<any[]> {
    const s = this.served();
    if (!s) return [];
    const r = await s.store.reader.list(systemContext(namespace), { resourceVersion: '0' });
    return r.items.map((i) => i.obj);
  }
}

export const isPods = (a: AdmissionAttributes) => a.group === '' && a.resource === 'pods';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Every container of a pod spec (init, regular, ephemeral). */
export function allContainers(spec: any): any[] {
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
}

// ---- resource lists ---------------------------------------------------------

export type ResourceList = Map<string, Quantity>;

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

export function addQuantity(a: Quantity, b: Quantity): Quantity {
  const e = Math.min(a.exp, b.exp);
  const am = a.mant * 10n ** BigInt(a.exp - e);
  const bm = b.mant * 10n ** BigInt(b.exp - e);
  return normalizeQuantity({ mant: am + bm, exp: e, format: a.format });
}

export function subQuantity(a: Quantity, b: Quantity): Quantity {
  return addQuantity(a, { ...b, mant: -b.mant, cached: undefined });
}

function normalizeQuantity(q: Quantity): Quantity {
  let { mant, exp } = q;
  if (mant === 0n) return { mant: 0n, exp: 0, format: q.format };
  while (mant % 10n === 0n && exp < 0) {
    mant /= 10n;
    exp++;
  }
  return { mant, exp, format: q.format };
}

export const zero = (): Quantity => ({ mant: 0n, exp: 0, format: 'DecimalSI' });

export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, out.has(k) ? addQuantity(out.get(k)!, v) : v);
  return out;
}

export function subLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) out.set(k, subQuantity(out.get(k) ?? zero(), v));
  return out;
}

export function maxLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = new Map(a);
  for (const [k, v] of b) if (!out.has(k) || compareQuantity(v, out.get(k)!) > 0) out.set(k, v);
  return out;
}

export const quantityString = (q: Quantity) => formatQuantity(q);

/** Kubernetes' prettyPrint of a ResourceList: sorted `name=value` joined by ",". */
export function prettyPrint(list: ResourceList): string {
  return [...list.keys()]
    .sort()
    .map((k) => `${k}=${formatQuantity(list.get(k)!)}`)
    .join(',');
}

export function jsonClone<T>(v: T): T {
  return v === undefined ? v : JSON.parse(JSON.stringify(v));
}
