// Structural schemas at work on custom resources, as apiextensions-apiserver
// applies them: pruning of unknown fields and of non-nullable nulls, defaults
// from `default:`, validation (the OpenAPI rules, x-kubernetes-list-type
// uniqueness, embedded resources), and values of selectable fields.
import { validateWithSchema } from '../../../shared/api/validation';
import { duplicate, invalid, required, type FieldError } from '../../../shared/api/field-errors';
import { validateObjectMeta } from '../../../shared/api/validation/metadata';
import { nameIsDNSSubdomain } from '../../../shared/api/validation/names';
import { checkCustomResourceFields } from '../../../shared/api/unknown-fields-custom';
import { jsonEqual } from '../../../shared/api/json-value';
import type { Schema } from './types';

type Obj = Record<string, unknown>;

const isObj = (v: unknown): v is Obj => v !== null && typeof v === 'object' && !Array.isArray(v);
const asSchema = (v: unknown): Schema | undefined => (isObj(v) ? (v as Schema) : undefined);

function propertySchema(s: Schema | undefined, name: string): Schema | undefined {
  if (!s) return undefined;
  const p = asSchema(asSchema(s.properties)?.[name]);
  if (p) return p;
  return asSchema(s.additionalProperties);
}

/** Removes nulls of fields that are neither nullable nor defaulted (PruneNonNullableNullsWithoutDefaults). */
export function pruneNulls(x: unknown, s: Schema | undefined): void {
  if (Array.isArray(x)) {
    const items = asSchema(s?.items);
    for (const v of x) pruneNulls(v, items);
    return;
  }
  if (!isObj(x)) return;
  for (const k of Object.keys(x)) {
    const sub = propertySchema(s, k);
    if (x[k] === null && sub && sub.nullable !== true && sub.default === undefined) delete x[k];
    else pruneNulls(x[k], sub);
  }
}

const copy = <T>(v: T): T => structuredClone(v);
const nonNullableNull = (v: unknown, s: Schema | undefined) => v === null && !!s && s.nullable !== true;

/** Applies `default:` values in place (structural defaulting: absent fields and non-nullable nulls). */
export function applySchemaDefaults(x: unknown, s: Schema | undefined): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = asSchema(s.items);
    if (!items) return;
    for (let i = 0; i < x.length; i++) {
      if (nonNullableNull(x[i], items) && items.default !== undefined) x[i] = copy(items.default);
      applySchemaDefaults(x[i], items);
    }
    return;
  }
  if (!isObj(x)) return;
  const props = asSchema(s.properties) ?? {};
  for (const [k, p] of Object.entries(props)) {
    const ps = asSchema(p);
    if (!ps || ps.default === undefined) continue;
    if (!(k in x) || nonNullableNull(x[k], ps)) x[k] = copy(ps.default);
  }
  const additional = asSchema(s.additionalProperties);
  for (const k of Object.keys(x)) {
    const ps = asSchema(props[k]);
    if (ps) applySchemaDefaults(x[k], ps);
    else if (additional) {
      if (nonNullableNull(x[k], additional) && additional.default !== undefined)
        x[k] = copy(additional.default);
      applySchemaDefaults(x[k], additional);
    }
  }
}

/** Whether a schema declares any default (reads need no defaulting pass otherwise). */
export function hasDefaults(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasDefaults);
  if (!isObj(s)) return false;
  if (s.default !== undefined) return true;
  return Object.entries(s).some(
    ([k, v]) => k !== 'default' && k !== 'enum' && k !== 'example' && hasDefaults(v),
  );
}

/**
 * What decoding does to a custom resource with its version's schema: unknown
 * fields pruned (x-kubernetes-preserve-unknown-fields keeps them), then
 * non-nullable nulls without a default removed, then defaults applied.
 */
export function normalize(obj: Obj, schema: Schema | undefined): void {
  if (!schema) return;
  checkCustomResourceFields(obj, schema);
  pruneNulls(obj, schema);
  applySchemaDefaults(obj, schema);
}

// ---- validation -----------------------------------------------------------------

/** Uniqueness of x-kubernetes-list-type set and map lists (ValidateListSetsAndMaps). */
function validateLists(x: unknown, s: Schema | undefined, path: string, out: FieldError[]): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = asSchema(s.items);
    const listType = s['x-kubernetes-list-type'];
    if (listType === 'set') {
      x.forEach((v, i) => {
        if (x.slice(0, i).some((w) => jsonEqual(v, w))) out.push(duplicate(`${path}[${i}]`, v));
      });
    } else if (listType === 'map') {
      const keys: string[] = Array.isArray(s['x-kubernetes-list-map-keys'])
        ? s['x-kubernetes-list-map-keys']
        : [];
      const keyOf = (v: unknown) => {
        const o = isObj(v) ? v : {};
        const k: Obj = {};
        for (const name of keys) {
          const d = asSchema(asSchema(items?.properties)?.[name])?.default;
          k[name] = o[name] !== undefined ? o[name] : d;
        }
        return k;
      };
      const seen: Obj[] = [];
      x.forEach((v, i) => {
        const k = keyOf(v);
        if (seen.some((w) => jsonEqual(w, k))) out.push(duplicate(`${path}[${i}]`, k));
        seen.push(k);
      });
    }
    x.forEach((v, i) => validateLists(v, items, `${path}[${i}]`, out));
    return;
  }
  if (!isObj(x)) return;
  for (const [k, v] of Object.entries(x)) {
    validateLists(v, propertySchema(s, k), path ? `${path}.${k}` : k, out);
  }
}

/** Embedded resources (x-kubernetes-embedded-resource): apiVersion and kind set, metadata well formed. */
function validateEmbedded(
  x: unknown,
  s: Schema | undefined,
  path: string,
  out: FieldError[],
  root: boolean,
): void {
  if (!s) return;
  if (Array.isArray(x)) {
    const items = asSchema(s.items);
    x.forEach((v, i) => validateEmbedded(v, items, `${path}[${i}]`, out, false));
    return;
  }
  if (!isObj(x)) return;
  if (!root && s['x-kubernetes-embedded-resource'] === true) {
    if (typeof x.apiVersion !== 'string' || x.apiVersion === '')
      out.push(required(`${path}.apiVersion`, 'must not be empty'));
    if (typeof x.kind !== 'string' || x.kind === '') out.push(required(`${path}.kind`, 'must not be empty'));
    const md = x.metadata;
    if (md !== undefined && !isObj(md)) out.push(invalid(`${path}.metadata`, md, 'must be an object'));
    else if (isObj(md) && typeof md.name === 'string' && md.name !== '')
      for (const msg of nameIsDNSSubdomain(md.name, false))
        out.push(invalid(`${path}.metadata.name`, md.name, msg));
  }
  for (const [k, v] of Object.entries(x)) {
    if ((root || s['x-kubernetes-embedded-resource'] === true) && k === 'metadata') continue;
    validateEmbedded(v, propertySchema(s, k), path ? `${path}.${k}` : k, out, false);
  }
}

/**
 * The value rules of a version's schema on a whole object (metadata is checked
 * by the caller). On update, list-type uniqueness is ratcheting: checked only
 * when the old object passed it.
 */
export function validateAgainstSchema(obj: Obj, schema: Schema | undefined, old?: Obj): FieldError[] {
  if (!schema) return [];
  // metadata is ObjectMeta whatever the schema says (only name/generateName may be restricted).
  const { metadata: _m, ...rest } = obj;
  const errs = validateWithSchema(withoutMetadata(schema), rest);
  const oldListErrs: FieldError[] = [];
  if (old) validateLists(old, schema, '', oldListErrs);
  if (!oldListErrs.length) validateLists(obj, schema, '', errs);
  validateEmbedded(obj, schema, '', errs, true);
  return errs;
}

const stripped = new WeakMap<Schema, Schema>();

function withoutMetadata(schema: Schema): Schema {
  let s = stripped.get(schema);
  if (!s) {
    const props = asSchema(schema.properties);
    if (props && 'metadata' in props) {
      const { metadata: _m, ...others } = props;
      const req = Array.isArray(schema.required)
        ? (schema.required as string[]).filter((r) => r !== 'metadata')
        : undefined;
      s = { ...schema, properties: others, ...(req ? { required: req } : {}) };
    } else s = schema;
    stripped.set(schema, s);
  }
  return s;
}

/** ObjectMeta rules of a custom resource (names are DNS subdomains). */
export function validateCustomMeta(obj: Obj, namespaced: boolean): FieldError[] {
  return validateObjectMeta(isObj(obj.metadata) ? obj.metadata : undefined, {
    namespaced,
    name: nameIsDNSSubdomain,
  });
}

// ---- paths (scale, selectable fields) -------------------------------------------

/** ".spec.replicas" → ["spec", "replicas"]. */
export const pathSegments = (jsonPath: string): string[] =>
  jsonPath.replace(/^\./, '').split('.').filter(Boolean);

export function valueAt(obj: unknown, segs: string[]): unknown {
  let v = obj;
  for (const k of segs) {
    if (!isObj(v)) return undefined;
    v = v[k];
  }
  return v;
}

/** The schema of a field path, or undefined when the schema does not declare it. */
export function schemaAt(schema: Schema | undefined, segs: string[]): Schema | undefined {
  let s = schema;
  for (const k of segs) {
    s = asSchema(asSchema(s?.properties)?.[k]);
    if (!s) return undefined;
  }
  return s;
}

/** The field selector value of a selectable field ("" when absent). */
export function selectableValue(obj: unknown, segs: string[]): string {
  const v = valueAt(obj, segs);
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return '';
}
