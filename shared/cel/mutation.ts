// The CEL of MutatingAdmissionPolicy (k8s.io/apiserver/pkg/cel/mutation): the
// JSONPatch type, the `jsonpatch.escapeKey` function, and Kubernetes' object
// construction syntax (`Object{spec: Object.spec{replicas: 3}}`, types resolved
// by their dotted names). The engine underneath parses no message construction
// at all, so a construction is rewritten before parsing into a call the engine
// knows (`__k8s_new__("Object.spec", {"replicas": dyn(3)})`): fields become map
// entries of dyn values, `?field:` entries carry their optional, and the result
// is an ObjectVal (or a JSONPatch) carrying its type name for the checks
// Kubernetes makes when the value is used.
import { CelCompileError, celOptional, syntaxError, type CelEnvironment } from './engine';
import type * as Values from './library/values';

/** A value built by `Name{...}`: its dotted type name and its fields (the CEL type Object). */
export class ObjectVal {
  constructor(
    readonly typeName: string,
    readonly fields: Record<string, unknown>,
  ) {}
}

/** One JSON patch operation as a mutation expression builds it (`JSONPatch{op: ..., path: ...}`). */
export class JSONPatch {
  declare op?: string;
  declare path?: string;
  declare from?: string;
  declare value?: unknown;
  constructor(fields: Record<string, unknown>) {
    Object.assign(this, fields);
  }
}

const JSONPATCH_FIELDS: Record<string, string> = {
  op: 'string',
  path: 'string',
  from: 'string',
  value: 'dyn',
};
const CONSTRUCT = '__k8s_new__';
const NEW_OBJECT = '__k8s_new_Object__';
const NEW_JSONPATCH = '__k8s_new_JSONPatch__';
const OPTIONAL_MARK = '?';

/** Field values of a construction: optional entries unwrapped or dropped. */
function fieldsOf(m: unknown): Record<string, unknown> {
  const entries = m instanceof Map ? [...m.entries()] : Object.entries(m as Record<string, unknown>);
  const out: Record<string, unknown> = {};
  for (const [k, v] of entries) {
    const key = String(k);
    if (key.startsWith(OPTIONAL_MARK)) {
      if (v instanceof celOptional()) {
        if (v.hasValue()) out[key.slice(1)] = v.value();
      } else out[key.slice(1)] = v;
    } else out[key] = v;
  }
  return out;
}

class JsonPatchNamespace {}

/** Declares JSONPatch, object construction and jsonpatch.escapeKey in a mutation environment. */
export function registerMutationLibrary(env: CelEnvironment): void {
  env.registerType('JSONPatch', { ctor: JSONPatch, fields: JSONPATCH_FIELDS });
  // The root of an apply configuration is typed Object (Kubernetes checks it is what the expression returns).
  env.registerType('Object', ObjectVal);
  env.registerFunction(
    `${NEW_OBJECT}(map<string, dyn>): Object`,
    (m: unknown) => new ObjectVal('Object', fieldsOf(m)),
  );
  env.registerFunction(`${NEW_JSONPATCH}(map<string, dyn>): JSONPatch`, (m: unknown) => {
    const f = fieldsOf(m);
    for (const k of Object.keys(f))
      if (!(k in JSONPATCH_FIELDS)) throw new Error(`no such field '${k}' in type JSONPatch`);
    return new JSONPatch(f);
  });
  env.registerFunction(
    `${CONSTRUCT}(string, map<string, dyn>): dyn`,
    (name: string, m: unknown) => new ObjectVal(name, fieldsOf(m)),
  );
  const NS = 'kubernetes.JsonPatchNamespace';
  env.registerType(NS, JsonPatchNamespace);
  env.registerConstant('jsonpatch', NS, new JsonPatchNamespace());
  env.registerFunction(`${NS}.escapeKey(string): string`, (_ns: unknown, k: string) =>
    k.replace(/~/g, '~0').replace(/\//g, '~1'),
  );
}

// --- the source rewrite -------------------------------------------------------

const IDENT = /[A-Za-z_][A-Za-z0-9_]*/y;
const KEYWORDS = new Set(['in', 'true', 'false', 'null']);

/** The end (exclusive) of the string literal starting at i, or -1 when none starts there. */
function stringEnd(src: string, i: number): number {
  let j = i;
  let raw = false;
  while (j < src.length && j - i < 2 && /[rRbB]/.test(src[j])) {
    if (src[j] === 'r' || src[j] === 'R') raw = true;
    j++;
  }
  const q = src[j];
  if (q !== '"' && q !== "'") return -1;
  if (j > i && i > 0 && /[A-Za-z0-9_]/.test(src[i - 1])) return -1; // the prefix was part of a name
  const triple = src.startsWith(q.repeat(3), j);
  const close = triple ? q.repeat(3) : q;
  j += close.length;
  while (j < src.length) {
    if (!raw && src[j] === '\\') {
      j += 2;
      continue;
    }
    if (src.startsWith(close, j)) return j + close.length;
    if (!triple && src[j] === '\n') return j;
    j++;
  }
  return src.length;
}

/** Skips a string literal or comment at i; returns the index after it, or i when there is none. */
function skipLiteral(src: string, i: number): number {
  if (src.startsWith('//', i)) {
    const nl = src.indexOf('\n', i);
    return nl < 0 ? src.length : nl;
  }
  const e = stringEnd(src, i);
  return e < 0 ? i : e;
}

/**
 * Walks src from `from` to `to` outside string literals and comments, calling
 * visit(i, depth) at each character with the bracket depth before it; stops at
 * the first index visit returns true for and returns it, else -1.
 */
function scanCode(
  src: string,
  from: number,
  to: number,
  visit: (i: number, depth: number) => boolean,
): number {
  let depth = 0;
  for (let i = from; i < to;) {
    const s = skipLiteral(src, i);
    if (s !== i) {
      i = s;
      continue;
    }
    if (visit(i, depth)) return i;
    const c = src[i];
    if (c === '(' || c === '[' || c === '{') depth++;
    else if (c === ')' || c === ']' || c === '}') depth--;
    i++;
  }
  return -1;
}

const CLOSING = new Set([')', ']', '}']);

/** The index of the bracket closing the one opened at `open`, or -1. */
function matching(src: string, open: number): number {
  return scanCode(src, open, src.length, (i, depth) => depth === 1 && CLOSING.has(src[i]));
}

/** The [start, end) ranges of src between `from` and `to` split at top-level commas (a trailing comma ends none). */
function topLevelParts(src: string, from: number, to: number): [number, number][] {
  const parts: [number, number][] = [];
  let start = from;
  scanCode(src, from, to, (i, depth) => {
    if (depth === 0 && src[i] === ',') {
      parts.push([start, i]);
      start = i + 1;
    }
    return false;
  });
  parts.push([start, to]);
  const last = parts[parts.length - 1];
  if (src.slice(last[0], last[1]).trim() === '') parts.pop();
  return parts;
}

/** A construction the rewrite cannot read (a part that is not `name: value`). */
export class ConstructionSyntaxError extends CelCompileError {}

/** An expression rewritten for the engine, and where each of its characters came from. */
export interface Rewritten {
  text: string;
  /** The position in the original expression of a position in text. */
  position(p: number): number;
}

class Output {
  text = '';
  readonly origin: number[] = [];
  /** Text standing for the original at `at`. */
  emit(text: string, at: number): void {
    this.text += text;
    for (let k = 0; k < text.length; k++) this.origin.push(at);
  }
  copy(src: string, from: number, to: number): void {
    this.text += src.slice(from, to);
    for (let k = from; k < to; k++) this.origin.push(k);
  }
}

const FIELD = /\s*(\?)?\s*([A-Za-z_][A-Za-z0-9_]*)\s*:/y;

/** Rewrites src[from, to) into out (see rewriteObjectConstruction). */
function rewrite(src: string, from: number, to: number, out: Output): void {
  let i = from;
  while (i < to) {
    const s = skipLiteral(src, i);
    if (s !== i) {
      out.copy(src, i, Math.min(s, to));
      i = s;
      continue;
    }
    const prev = i > 0 ? src[i - 1] : '';
    IDENT.lastIndex = i;
    const m = /[A-Za-z_]/.test(src[i]) && !/[A-Za-z0-9_.]/.test(prev) ? IDENT.exec(src) : null;
    if (!m) {
      out.copy(src, i, i + 1);
      i++;
      continue;
    }
    // A qualified name (a.b.c) followed by `{` is a construction.
    let end = i + m[0].length;
    while (src[end] === '.') {
      IDENT.lastIndex = end + 1;
      const n = IDENT.exec(src);
      if (!n) break;
      end = end + 1 + n[0].length;
    }
    const name = src.slice(i, end);
    let brace = end;
    while (brace < to && /\s/.test(src[brace])) brace++;
    const close = src[brace] === '{' && !KEYWORDS.has(name) ? matching(src, brace) : -1;
    if (close < 0 || close >= to) {
      out.copy(src, i, end);
      i = end;
      continue;
    }
    out.emit(
      name === 'JSONPatch'
        ? `${NEW_JSONPATCH}({`
        : name === 'Object'
          ? `${NEW_OBJECT}({`
          : `${CONSTRUCT}(${JSON.stringify(name)}, {`,
      i,
    );
    topLevelParts(src, brace + 1, close).forEach(([a, b], n) => {
      FIELD.lastIndex = a;
      const f = FIELD.exec(src);
      if (!f || FIELD.lastIndex > b) {
        let at = a;
        while (at < b && /\s/.test(src[at])) at++;
        throw new ConstructionSyntaxError(
          syntaxError(src, `Syntax error: expected a field initializer 'name: value' in ${name}{...}`, at),
        );
      }
      if (name === 'JSONPatch' && !(f[2] in JSONPATCH_FIELDS))
        throw new ConstructionSyntaxError(
          syntaxError(src, `undefined field '${f[2]}'`, src.indexOf(f[2], a)),
        );
      if (n > 0) out.emit(', ', a);
      out.emit(`${JSON.stringify((f[1] ? OPTIONAL_MARK : '') + f[2])}: dyn(`, a);
      rewrite(src, FIELD.lastIndex, b, out);
      out.emit(')', b);
    });
    out.emit('})', close);
    i = close + 1;
  }
}

/**
 * The expression with every `Type.name{field: value}` construction turned into
 * a function call the engine parses (the source unchanged when it has none),
 * with the way back to positions in the source for error messages.
 */
export function rewriteObjectConstruction(src: string): Rewritten {
  const out = new Output();
  rewrite(src, 0, src.length, out);
  return {
    text: out.text,
    position: (p) => (p < out.origin.length ? out.origin[p] : src.length),
  };
}

// --- values out of CEL --------------------------------------------------------

/** Kubernetes' check that every nested `Object.a.b{}` is named after the path of fields leading to it. */
export function typeNameErrors(v: unknown, path?: string[]): string[] {
  const errs: string[] = [];
  if (v instanceof ObjectVal) {
    const at = path ?? [v.typeName];
    const want = at.join('.');
    if (v.typeName !== want)
      errs.push(
        `unexpected type name "${v.typeName}", expected "${want}", which matches field name path from root Object type`,
      );
    for (const [k, f] of Object.entries(v.fields)) errs.push(...typeNameErrors(f, [...at, k]));
  } else if (Array.isArray(v)) {
    for (const x of v) errs.push(...typeNameErrors(x, path));
  } else if (v instanceof Map) {
    for (const x of v.values()) errs.push(...typeNameErrors(x, path));
  } else if (v && typeof v === 'object' && Object.getPrototypeOf(v) === Object.prototype) {
    for (const x of Object.values(v)) errs.push(...typeNameErrors(x, path));
  }
  return errs;
}

/**
 * A CEL value as JSON, as Kubernetes converts it (through protobuf's Value):
 * ints as numbers, maps and constructed objects as objects, bytes as base64,
 * timestamps and durations as their protobuf JSON strings.
 */
export function celToJson(v: unknown): unknown {
  if (typeof v === 'bigint') return Number(v);
  if (v instanceof celOptional()) return v.hasValue() ? celToJson(v.value()) : null;
  if (v instanceof ObjectVal) return celToJson(v.fields);
  if (v instanceof Uint8Array) return Buffer.from(v).toString('base64');
  if (v instanceof Date) return v.toISOString().replace(/\.000Z$/, 'Z');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  if ((require('./library/values') as typeof Values).isDuration(v)) return String(v); // protobuf JSON: "90s", "1.5s"

  if (Array.isArray(v)) return v.map(celToJson);
  if (v instanceof Map) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of v) {
      if (typeof k !== 'string') throw new Error(`map key "${String(k)}" is of type ${typeof k}, not string`);
      out[k] = celToJson(x);
    }
    return out;
  }
  if (v && typeof v === 'object') {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = celToJson(x);
    return out;
  }
  return v;
}
