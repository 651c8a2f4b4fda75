// OpenAPI schema objects for the definitions of the schema source, in the two
// flavours clients read: v2 (#/definitions/, $ref with siblings) and v3
// (#/components/schemas/, property $refs wrapped in allOf, oneOf for the
// types that accept two JSON types). Converted definitions are memoised.
import { allProtoMessages, allTypes } from './schema';
import type { FieldSchema, TypeSchema } from './schema-types';

export type Flavor = 'v2' | 'v3';
export type Schema = Record<string, any>;

export const REF_PREFIX: Record<Flavor, string> = {
  v2: '#/definitions/',
  v3: '#/components/schemas/',
};

export const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';

/** Definitions every group-version document carries (its operations refer to them). */
export const COMMON_DEFINITIONS = [
  `${META}.Status`,
  `${META}.DeleteOptions`,
  `${META}.WatchEvent`,
  `${META}.Patch`,
  `${META}.APIResourceList`,
];

function fieldSchema(f: FieldSchema, flavor: Flavor, property: boolean): Schema {
  let s: Schema;
  if (f.ref) {
    const ref = { $ref: REF_PREFIX[flavor] + f.ref };
    // Kubernetes' v3 wraps a property's $ref in allOf so siblings stay valid.
    s = flavor === 'v3' && property ? { allOf: [ref] } : ref;
  } else {
    s = {};
    if (f.type) s.type = f.type;
    if (f.format) s.format = f.format;
    if (f.items) s.items = fieldSchema(f.items, flavor, false);
    if (f.values) s.additionalProperties = fieldSchema(f.values, flavor, false);
    if (f.enum) s.enum = [...f.enum];
  }
  if (f.patchStrategy) s['x-kubernetes-patch-strategy'] = f.patchStrategy;
  if (f.patchMergeKey) s['x-kubernetes-patch-merge-key'] = f.patchMergeKey;
  if (f.listType) s['x-kubernetes-list-type'] = f.listType;
  if (f.listMapKeys) s['x-kubernetes-list-map-keys'] = [...f.listMapKeys];
  if (f.mapType) s['x-kubernetes-map-type'] = f.mapType;
  return s;
}

/** v3 alternatives, from the facts: int-or-string format, and Quantity-like messages embedded as strings. */
function oneOfTypes(t: TypeSchema): string[] | undefined {
  if (t.format === 'int-or-string') return ['integer', 'string'];
  if (t.protoMessage && allProtoMessages()[t.protoMessage]?.embed === 'string') return ['string', 'number'];
  return undefined;
}

function definitionSchema(t: TypeSchema, flavor: Flavor): Schema {
  const s: Schema = {};
  const oneOf = flavor === 'v3' ? oneOfTypes(t) : undefined;
  if (oneOf) s.oneOf = oneOf.map((type) => ({ type }));
  else if (t.type) s.type = t.type;
  if (t.format) s.format = t.format;
  // An empty property list (RawExtension, FieldsV1) means "any object": leave it out, as Kubernetes does,
  // or clients would treat the object as one with no fields.
  if (t.properties && Object.keys(t.properties).length) {
    s.properties = {};
    for (const [name, f] of Object.entries(t.properties)) s.properties[name] = fieldSchema(f, flavor, true);
    if (!s.type && !oneOf) s.type = 'object';
  }
  if (t.required?.length) s.required = [...t.required];
  if (t.gvk?.length) {
    s['x-kubernetes-group-version-kind'] = t.gvk.map((g) => ({
      group: g.group,
      kind: g.kind,
      version: g.version,
    }));
  }
  if (t.structType) s['x-kubernetes-map-type'] = t.structType;
  if (t.unions?.length) {
    s['x-kubernetes-unions'] = t.unions.map((u) => ({
      ...(u.discriminator ? { discriminator: u.discriminator } : {}),
      'fields-to-discriminateBy': { ...u.fieldsToDiscriminateBy },
    }));
  }
  return s;
}

const converted: Record<Flavor, Map<string, Schema>> = { v2: new Map(), v3: new Map() };

/** The schema of a built-in definition (memoised; treat as read-only). */
export function builtinSchema(name: string, flavor: Flavor): Schema | undefined {
  let s = converted[flavor].get(name);
  if (!s) {
    const t = allTypes()[name];
    if (!t) return undefined;
    s = definitionSchema(t, flavor);
    converted[flavor].set(name, s);
  }
  return s;
}

/** Names a schema refers to through $ref with the flavour's prefix. */
export function refsIn(schema: unknown, flavor: Flavor, out: string[] = []): string[] {
  if (Array.isArray(schema)) {
    for (const x of schema) refsIn(x, flavor, out);
  } else if (schema && typeof schema === 'object') {
    for (const [k, v] of Object.entries(schema)) {
      if (k === '$ref' && typeof v === 'string' && v.startsWith(REF_PREFIX[flavor])) {
        out.push(v.slice(REF_PREFIX[flavor].length));
      } else if (typeof v === 'object') refsIn(v, flavor, out);
    }
  }
  return out;
}

const builtinRefs: Record<Flavor, Map<string, string[]>> = { v2: new Map(), v3: new Map() };

/**
 * The schemas reachable from roots: built-in definitions and extra ones (CRDs),
 * extras taking precedence. Unknown names are reported so callers can fail loudly.
 */
export function reachableSchemas(
  roots: Iterable<string>,
  flavor: Flavor,
  extra: Record<string, Schema> = {},
): { schemas: Record<string, Schema>; missing: string[] } {
  const schemas: Record<string, Schema> = {};
  const missing: string[] = [];
  const todo = [...roots];
  while (todo.length) {
    const name = todo.pop()!;
    if (name in schemas) continue;
    const ex = Object.prototype.hasOwnProperty.call(extra, name) ? extra[name] : undefined;
    const s = ex ?? builtinSchema(name, flavor);
    if (!s) {
      if (!missing.includes(name)) missing.push(name);
      continue;
    }
    schemas[name] = s;
    let refs = ex ? undefined : builtinRefs[flavor].get(name);
    if (!refs) {
      refs = refsIn(s, flavor);
      if (!ex) builtinRefs[flavor].set(name, refs);
    }
    for (const r of refs) if (!(r in schemas)) todo.push(r);
  }
  const sorted: Record<string, Schema> = {};
  for (const k of Object.keys(schemas).sort()) sorted[k] = schemas[k];
  return { schemas: sorted, missing };
}
