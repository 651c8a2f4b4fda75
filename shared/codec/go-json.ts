// Objects shaped as Go's encoding/json writes the built-in types, from the Go
// struct facts (go-fields.json): keys in field declaration order with embedded
// inline structs flattened in place, omitempty zeros dropped, fields without
// omitempty written even when zero ("", 0, false, null, a zero struct field by
// field, null for a zero Time), omitzero zeros dropped, map keys sorted.
// Custom-marshalled types (Time, Quantity, IntOrString, RawExtension...) keep
// the value they have. Keys the struct does not know stay, after the known ones.
import { definitionOf, goStructFacts, parseAPIVersion, resourceFacts } from '../api/schema';
import type { GoField } from '../api/schema-types';

const OMITEMPTY = 1;
const OMITZERO = 2;
const POINTER = 4;
const SLICE = 8;
const MAP = 16;
const INLINE = 32;

interface Flat {
  custom: boolean;
  fields: GoField[];
  keys: Set<string>;
}

const flatCache = new Map<string, Flat | null>();

/** A struct's JSON fields with inline embedded structs expanded in place (encoding/json's view). */
function flat(def: string): Flat | null {
  let f = flatCache.get(def);
  if (f !== undefined) return f;
  const st = goStructFacts().defs[def];
  if (!st) f = null;
  else if (st.custom) f = { custom: true, fields: [], keys: new Set() };
  else {
    const fields: GoField[] = [];
    for (const field of st.fields) {
      if ((field.f ?? 0) & INLINE && field.r) fields.push(...(flat(field.r)?.fields ?? []));
      else fields.push(field);
    }
    f = { custom: false, fields, keys: new Set(fields.map((x) => x.j)) };
  }
  flatCache.set(def, f);
  return f;
}

/** The field of a struct with this JSON name (inline structs looked into), if any. */
export function goField(def: string, json: string): GoField | undefined {
  return flat(def)?.fields.find((f) => f.j === json);
}

/** A non-pointer omitempty field of a basic type: Go's JSON leaves out its zero. */
export const isOmittedScalar = (f: GoField): boolean =>
  ((f.f ?? 0) & (OMITEMPTY | POINTER | SLICE | MAP)) === OMITEMPTY && f.r === undefined;

const isCustom = (def: string | undefined) => !!def && flat(def)?.custom === true;

function sortedMap(m: Record<string, unknown>, each?: (v: unknown) => unknown): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(m).sort()) out[k] = each ? each(m[k]) : m[k];
  return out;
}

/** The value of a field of struct type def (a plain JSON value), shaped like Go writes it. */
export function goShape(value: unknown, def: string): unknown {
  const st = flat(def);
  if (!st || st.custom || value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const obj = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const f of st.fields) {
    const flags = f.f ?? 0;
    const v = obj[f.j];
    const ref = f.r;
    const struct = ref !== undefined && !isCustom(ref);
    if (v === undefined || v === null) {
      if (flags & (POINTER | SLICE | MAP)) {
        if (!(flags & OMITEMPTY)) out[f.j] = null;
      } else if (struct) {
        // encoding/json never leaves out a struct for omitempty; omitzero does for a zero one.
        if (!(flags & OMITZERO)) out[f.j] = goShape({}, ref);
      } else if (ref !== undefined) {
        // A custom-marshalled struct (Time, Quantity...): its zero as Go writes it.
        if (!(flags & OMITZERO)) out[f.j] = f.z ?? null;
      } else if (!(flags & OMITEMPTY)) out[f.j] = f.z ?? null;
      continue;
    }
    if (flags & OMITEMPTY) {
      if (flags & (SLICE | MAP) && !(flags & POINTER)) {
        if (Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v).length === 0)
          continue;
      } else if (!(flags & POINTER) && ref === undefined && (v === '' || v === 0 || v === false)) continue;
    }
    if (flags & SLICE && Array.isArray(v)) out[f.j] = struct ? v.map((x) => goShape(x, ref)) : v;
    else if (flags & MAP && typeof v === 'object' && !Array.isArray(v))
      out[f.j] = sortedMap(v as Record<string, unknown>, struct ? (x) => goShape(x, ref) : undefined);
    else out[f.j] = struct ? goShape(v, ref) : v;
  }
  for (const k of Object.keys(obj)) if (!st.keys.has(k) && obj[k] !== undefined) out[k] = obj[k];
  return out;
}

const META_V1 = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const defOfKind = new Map<string, string | null>();

/** The Go definition of a built-in object by its apiVersion and kind (null for custom resources). */
export function goDefinitionOf(apiVersion: unknown, kind: unknown): string | null {
  if (typeof apiVersion !== 'string' || typeof kind !== 'string') return null;
  const key = `${apiVersion}|${kind}`;
  let d = defOfKind.get(key);
  if (d === undefined) {
    const gv = parseAPIVersion(apiVersion);
    // meta.k8s.io kinds (Table, PartialObjectMetadata[List]) are metav1 structs with no served resource.
    const def = gv.group === 'meta.k8s.io' ? `${META_V1}${kind}` : definitionOf({ ...gv, kind });
    d = def && goStructFacts().defs[def] ? def : null;
    defOfKind.set(key, d);
  }
  return d;
}

let builtinGroups: Set<string> | undefined;
const isBuiltinGroup = (group: string) =>
  (builtinGroups ??= new Set(['meta.k8s.io', ...resourceFacts().map((r) => r.group)])).has(group);

/** Every object's keys sorted, as Go writes a map[string]interface{}. */
export function sortedDeep(v: unknown): unknown {
  if (Array.isArray(v)) return v.map(sortedDeep);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v).sort()) out[k] = sortedDeep((v as Record<string, unknown>)[k]);
  return out;
}

/**
 * A built-in object as Go writes its struct; a custom resource as Go writes the
 * unstructured map it is (keys sorted at every level); anything else as it is.
 */
export function goShapeObject(obj: unknown): unknown {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return obj;
  const o = obj as Record<string, unknown>;
  const def = goDefinitionOf(o.apiVersion, o.kind);
  if (def) return goShape(o, def);
  if (typeof o.apiVersion === 'string' && o.metadata !== undefined) {
    const { group } = parseAPIVersion(o.apiVersion);
    if (group && !isBuiltinGroup(group)) return sortedDeep(o);
  }
  return obj;
}

/** Five indexOf scans (vectorised by V8) cost a twentieth of one character-class regex over a body. */
const htmlUnsafe = (s: string): boolean =>
  s.indexOf('<') >= 0 ||
  s.indexOf('>') >= 0 ||
  s.indexOf('&') >= 0 ||
  s.indexOf('\u2028') >= 0 ||
  s.indexOf('\u2029') >= 0;
const HTML_ESCAPES: Record<string, string> = {
  '<': '\\u003c',
  '>': '\\u003e',
  '&': '\\u0026',
  '\u2028': '\\u2028',
  '\u2029': '\\u2029',
};

/**
 * JSON text as Go's encoder writes it: <, > and & escaped as \u003c, \u003e, \u0026
 * (SetEscapeHTML is on by default), and U+2028/U+2029 escaped always. The
 * characters only ever occur inside strings, so replacing them in the text is safe.
 */
export function goJSONText(value: unknown, indent?: number): string {
  const s = JSON.stringify(value, null, indent);
  // JSON.stringify gives undefined for undefined (and functions): passed on as it was.
  return s !== undefined && htmlUnsafe(s) ? s.replace(/[<>&\u2028\u2029]/g, (c) => HTML_ESCAPES[c]) : s;
}
