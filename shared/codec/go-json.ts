// Objects shaped as Go's encoding/json writes the built-in types, from the Go
// struct facts (go-fields.json): keys in field declaration order with embedded
// inline structs flattened in place, omitempty zeros dropped, fields without
// omitempty written even when zero ("", 0, false, null, a zero struct field by
// field, null for a zero Time), omitzero zeros dropped, map keys sorted.
// Custom-marshalled types (Time, Quantity, IntOrString, RawExtension...) keep
// the value they have. Keys the struct does not know stay, after the known ones.
import { definitionOf, goStructFacts, parseAPIVersion, resourceFacts } from '../api/schema';
import type { GoField } from '../api/schema-types';
import { stringifyJSONInt64 } from './json-int64';

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

/** Shapes a struct value; compiled on first use. Generated code calls it through `f`. */
interface Shaper {
  f: (value: unknown) => unknown;
}

const shapers = new Map<string, Shaper>();
const EMPTY: Record<string, unknown> = Object.freeze({}) as Record<string, unknown>;
const identity = (v: unknown) => v;

/** The shaper of a struct type: its value (a plain JSON value) as Go writes it. */
function shaperOf(def: string): Shaper {
  let s = shapers.get(def);
  if (s) return s;
  const st = flat(def);
  if (!st || st.custom) s = { f: identity };
  else {
    // Compiled when first called, so that structs referring to themselves resolve.
    const holder: Shaper = {
      f: (v) => {
        holder.f = compileShaper(st);
        return holder.f(v);
      },
    };
    s = holder;
  }
  shapers.set(def, s);
  return s;
}

const isEmptyCollection = (v: unknown): boolean =>
  Array.isArray(v) ? v.length === 0 : typeof v === 'object' && Object.keys(v as object).length === 0;

/** Keys the struct does not know, after the known ones (a slow path: the count said there are some). */
function copyUnknown(obj: Record<string, unknown>, out: Record<string, unknown>, known: Set<string>): void {
  for (const k of Object.keys(obj)) if (!known.has(k) && obj[k] !== undefined) out[k] = obj[k];
}

/**
 * One struct's shaper as generated JavaScript, the way protobuf-compile.ts makes its
 * codecs: each field is read and written under its own static name, so V8 keeps the
 * accesses monomorphic, and every flag test is settled when the code is made.
 */
function compileShaper(st: Flat): (value: unknown) => unknown {
  const refs: Shaper[] = [];
  const consts: unknown[] = [];
  const ref = (def: string) => {
    const r = shaperOf(def);
    let i = refs.indexOf(r);
    if (i < 0) i = refs.push(r) - 1;
    return `R[${i}]`;
  };
  const constant = (v: unknown) => `C[${consts.push(v) - 1}]`;
  const body: string[] = [];
  for (const f of st.fields) {
    const flags = f.f ?? 0;
    const key = JSON.stringify(f.j);
    // A named assignment: V8 counts those in a constructor when it sizes its objects.
    const out = /^[A-Za-z_$][\w$]*$/.test(f.j) ? `this.${f.j}` : `this[${key}]`;
    const struct = f.r !== undefined && !isCustom(f.r);
    const shaped = (x: string) => (struct ? `${ref(f.r!)}.f(${x})` : x);
    let zero = '';
    if (flags & (POINTER | SLICE | MAP)) {
      if (!(flags & OMITEMPTY)) zero = `${out} = null;`;
    } else if (struct) {
      // encoding/json never leaves out a struct for omitempty; omitzero does for a zero one.
      if (!(flags & OMITZERO)) zero = `${out} = ${shaped('EMPTY')};`;
    } else if (f.r !== undefined) {
      // A custom-marshalled struct (Time, Quantity...): its zero as Go writes it.
      if (!(flags & OMITZERO)) zero = `${out} = ${constant(f.z ?? null)};`;
    } else if (!(flags & OMITEMPTY)) zero = `${out} = ${constant(f.z ?? null)};`;
    let value: string;
    if (flags & SLICE)
      value = `Array.isArray(v) ? ${struct ? `mapShaped(v, ${ref(f.r!)})` : 'v'} : ${shaped('v')}`;
    else if (flags & MAP)
      value =
        `typeof v === "object" && !Array.isArray(v) ? sortedMap(v${struct ? `, ${ref(f.r!)}.f` : ''}) : ` +
        shaped('v');
    else value = shaped('v');
    let write = `${out} = ${value};`;
    if (flags & OMITEMPTY && !(flags & POINTER)) {
      if (flags & (SLICE | MAP)) write = `if (!isEmptyCollection(v)) ${write}`;
      else if (f.r === undefined) write = `if (v !== "" && v !== 0 && v !== false) ${write}`;
    }
    body.push(`v = obj[${key}];
      if (v === undefined || v === null) { ${zero} } else { n++; ${write} }`);
  }
  // Made by a constructor, not as {}: V8 gives an object literal room for four fields in
  // the object and puts the rest in a separate array (~0.4 KB per pod in an informer's
  // cache); a constructor's objects get room for the fields it assigns. Their prototype is
  // Object.prototype: they are plain objects to every reader.
  const src = `"use strict";
    function Shaped(obj) {
      let v, n = 0;
      ${body.join('\n      ')}
      // Fewer known fields than keys: some keys are unknown (or null).
      if (n !== Object.keys(obj).length) copyUnknown(obj, this, KNOWN);
    }
    Shaped.prototype = Object.prototype;
    return function shape(obj) {
      if (obj === null || typeof obj !== "object" || Array.isArray(obj)) return obj;
      return new Shaped(obj);
    };`;
  const factory = new Function(
    'R',
    'C',
    'EMPTY',
    'KNOWN',
    'sortedMap',
    'mapShaped',
    'isEmptyCollection',
    'copyUnknown',
    src,
  ) as (...args: unknown[]) => (value: unknown) => unknown;
  return factory(refs, consts, EMPTY, st.keys, sortedMap, mapShaped, isEmptyCollection, copyUnknown);
}

/** Sized up front: an array grown by push keeps room for 16 more (~130 bytes each in an informer's cache). */
function mapShaped(items: unknown[], s: Shaper): unknown[] {
  const out: unknown[] = new Array(items.length);
  for (let i = 0; i < items.length; i++) out[i] = s.f(items[i]);
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
  if (def) return shaperOf(def).f(o);
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
  const s = stringifyJSONInt64(value, indent);
  // JSON.stringify gives undefined for undefined (and functions): passed on as it was.
  return s !== undefined && htmlUnsafe(s) ? s.replace(/[<>&\u2028\u2029]/g, (c) => HTML_ESCAPES[c]) : s;
}
