// Type-level defaulters keyed by definition name, like Kubernetes' generated
// SetObjectDefaults_* which call SetDefaults_<Type> for every occurrence of a
// type inside an object (a Container in a Pod, a Deployment, a CronJob...).
export type Obj = Record<string, unknown>;
export type Defaulter = (o: Obj) => void;

export const CORE = 'io.k8s.api.core.v1.';
export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

const table = new Map<string, Defaulter[]>();

export function registerDefaults(definition: string, fn: Defaulter): void {
  const list = table.get(definition);
  if (list) list.push(fn);
  else table.set(definition, [fn]);
}

export const defaultersOf = (definition: string): Defaulter[] | undefined => table.get(definition);

/** Sets o[k] = v when the field is absent (or null), as Go defaulting does for nil pointers and zero values. */
export function setIfUnset(o: Obj, k: string, v: unknown): void {
  if (o[k] === undefined || o[k] === null || o[k] === '') o[k] = v;
}

/** The object at o[k], created when missing. */
export function ensureObj(o: Obj, k: string): Obj {
  const v = o[k];
  if (v !== null && typeof v === 'object' && !Array.isArray(v)) return v as Obj;
  const created: Obj = {};
  o[k] = created;
  return created;
}

export const asObj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
export const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asStr = (v: unknown): string => (typeof v === 'string' ? v : '');

/** Like setIfUnset, also replacing 0 (Go non-pointer integers: 0 means unset). */
export function setIfZero(o: Obj, k: string, v: unknown): void {
  if (o[k] === undefined || o[k] === null || o[k] === 0) o[k] = v;
}
