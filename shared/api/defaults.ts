// applyDefaults: Kubernetes 1.36 defaulting of a decoded object, in place.
// Walks the object along its kind's schema and applies each type's defaulter
// wherever that type occurs, outer types first (as SetObjectDefaults_* do);
// subtrees whose types have no defaulters are skipped. Idempotent.
import { definitionOf, parseAPIVersion, typeSchema } from './schema';
import type { FieldSchema, GroupVersionKind } from './schema-types';
import { CORE, defaultersOf, type Obj } from './defaults-registry';
import { roundResourceList } from './defaults-core';
import './defaults-workloads';
import './defaults-misc';

export { setServiceDefaultsHook, defaultPullPolicy } from './defaults-core';
export { registerDefaults } from './defaults-registry';

const QUANTITY = 'io.k8s.apimachinery.pkg.api.resource.Quantity';
const hasDefaults = new Map<string, boolean>();
let cycleHit = false;

/**
 * Whether a definition or anything below it has a defaulter. Memoized; a result
 * that depended on a type still being computed (a cycle) is not memoized as false.
 */
function needsWalk(def: string, visiting?: Set<string>): boolean {
  const known = hasDefaults.get(def);
  if (known !== undefined) return known;
  // Only a first visit walks the types (every later call is answered above, allocating nothing).
  visiting ??= new Set<string>();
  if (visiting.has(def)) {
    cycleHit = true;
    return false;
  }
  visiting.add(def);
  const outerHit = cycleHit;
  cycleHit = false;
  let found = !!defaultersOf(def);
  for (const f of Object.values(typeSchema(def)?.properties ?? {})) {
    if (found) break;
    found = fieldNeedsWalk(def, f, visiting);
  }
  visiting.delete(def);
  if (found || !cycleHit) hasDefaults.set(def, found);
  cycleHit = outerHit || cycleHit;
  return found;
}
const isResourceList = (owner: string, f: FieldSchema) =>
  owner.startsWith(CORE) && f.values?.ref === QUANTITY;

function fieldNeedsWalk(owner: string, f: FieldSchema, visiting: Set<string>): boolean {
  if (isResourceList(owner, f)) return true;
  const inner = f.items ?? f.values ?? f;
  return !!inner.ref && needsWalk(inner.ref, visiting);
}

/** What the walk does with one field of a struct: round a resource list, or go into a struct, its items or its values. */
interface FieldStep {
  resourceList: boolean;
  ref?: string;
  items?: string;
  values?: string;
}
const fieldSteps = new Map<string, Map<string, FieldStep>>();

/** The fields of a struct the walk has something to do with (the others are skipped without a look). */
function stepsOf(def: string): Map<string, FieldStep> {
  let m = fieldSteps.get(def);
  if (m) return m;
  m = new Map();
  for (const [k, f] of Object.entries(typeSchema(def)?.properties ?? {})) {
    if (isResourceList(def, f)) m.set(k, { resourceList: true });
    else if (f.ref) m.set(k, { resourceList: false, ref: f.ref });
    else if (f.items?.ref) m.set(k, { resourceList: false, items: f.items.ref });
    else if (f.values?.ref) m.set(k, { resourceList: false, values: f.values.ref });
  }
  fieldSteps.set(def, m);
  return m;
}

function walk(v: unknown, def: string): void {
  if (v === null || typeof v !== 'object' || Array.isArray(v) || !needsWalk(def)) return;
  const o = v as Obj;
  for (const fn of defaultersOf(def) ?? []) fn(o);
  const steps = stepsOf(def);
  if (steps.size === 0) return;
  for (const k of Object.keys(o)) {
    const step = steps.get(k);
    const val = o[k];
    if (!step || val === null || val === undefined) continue;
    if (step.resourceList) {
      if (typeof val === 'object' && !Array.isArray(val)) roundResourceList(val as Obj);
    } else if (step.ref) walk(val, step.ref);
    else if (step.items) {
      if (Array.isArray(val)) for (const item of val) walk(item, step.items);
    } else if (typeof val === 'object' && !Array.isArray(val))
      for (const item of Object.values(val as Obj)) walk(item, step.values!);
  }
}

/** Applies Kubernetes' defaults to a built-in object in place; unknown kinds are left alone. */
export function applyDefaults<T extends Obj>(obj: T, gvk?: GroupVersionKind): T {
  const g =
    gvk ??
    ({
      ...parseAPIVersion(typeof obj.apiVersion === 'string' ? obj.apiVersion : ''),
      kind: String(obj.kind ?? ''),
    } as GroupVersionKind);
  const def = definitionOf(g);
  if (def) walk(obj, def);
  return obj;
}
