// The decode pass over a parsed body, against the schema of its kind, doing what
// kube-apiserver's typed JSON decoding does:
// - unknown and duplicate fields as strict-decoding messages, in document order,
//   with Kubernetes' paths (`unknown field "spec.containers[0].foo"`);
// - type mismatches as Go's json error (`json: cannot unmarshal string into Go
//   struct field ContainerPort.spec.containers.ports.containerPort of type int32`),
//   and the custom decoders' errors (quantities, times, base64);
// - the re-encoding Kubernetes does on the way in: nulls dropped, quantities and
//   times in canonical form.
import { fieldsOf, structDesc, type Desc, type Kind } from './go-decode-types';
import { formatQuantity, quantityFromJSON } from './validation/quantity';
import { formatGoTime, isZeroGoTime, parseGoTime } from './validation/gotime';
import { boundedMemo } from '../heap/bounded-memo';

export interface FieldCheckOptions {
  /** Report unknown fields (fieldValidation Warn or Strict). */
  collectUnknown: boolean;
  /** Paths of duplicated keys, from the JSON parser. */
  duplicates?: ReadonlySet<string>;
}

export interface FieldCheckResult {
  /** `unknown field "…"` and `duplicate field "…"`, document order, deduplicated, at most 100. */
  strict: string[];
  /** The first decoding error (Go's wording), when the body cannot be decoded. */
  error?: string;
}

class DecodeAbort extends Error {}
const MAX_STRICT = 100;

// Times and quantities as Go writes them back, by spelling: an object's repeat (a pod's
// conditions, its requests and limits). A time is undefined for the zero time (dropped).
// Each throws Go's parse error.
const MEMO_MAX = 1024;
const goTimeIn = (micro: boolean) =>
  boundedMemo(MEMO_MAX, (v) => {
    const t = parseGoTime(v, micro);
    return isZeroGoTime(t) ? undefined : formatGoTime(t, micro);
  });
const normalizedTimes = [goTimeIn(false), goTimeIn(true)];
const normalizedTime = (v: string, micro: boolean) => normalizedTimes[micro ? 1 : 0](v);
const quantityText = boundedMemo(MEMO_MAX, (v) => formatQuantity(quantityFromJSON(v)));
const normalizedQuantity = (v: unknown): string =>
  typeof v === 'string' ? quantityText(v) : formatQuantity(quantityFromJSON(v));

/**
 * Walks `obj` (mutating it into the form Kubernetes would store) against the
 * definition's schema. Cheap enough for every write: one pass, and paths
 * are spelled out only for what is reported.
 */
export function checkFields(
  obj: Record<string, unknown>,
  definition: string,
  opts: FieldCheckOptions,
): FieldCheckResult {
  const strict: string[] = [];
  const seen = new Set<string>();
  const stack: string[] = [];
  let structName = '';
  let typeError: string | undefined;
  const note = (msg: string) => {
    if (strict.length < MAX_STRICT && !seen.has(msg)) {
      seen.add(msg);
      strict.push(msg);
    }
  };
  const mismatch = (v: unknown, goType: string, literal = false) => {
    if (typeError) return;
    let what = Array.isArray(v) ? 'array' : v === null ? 'null' : typeof v;
    if (what === 'boolean') what = 'bool';
    if (literal) what = `number ${String(v)}`;
    typeError = structName
      ? `json: cannot unmarshal ${what} into Go struct field ${structName}.${stack.join('.')} of type ${goType}`
      : `json: cannot unmarshal ${what} into Go value of type ${goType}`;
  };
  const nested = (v: unknown, goType: string, literal = false) => {
    // Errors from a custom decoder's inner json.Unmarshal carry no field context.
    let what = Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;
    if (literal) what = `number ${String(v)}`;
    throw new DecodeAbort(`json: cannot unmarshal ${what} into Go value of type ${goType}`);
  };

  // Where the walk is: keys and indexes, made into a path only when one is reported.
  const at: (string | number)[] = [];
  const pathHere = (): string => {
    let p = '';
    for (const x of at) p = typeof x === 'number' ? `${p}[${x}]` : p ? `${p}.${x}` : x;
    return p;
  };
  const dups = opts.duplicates?.size ? opts.duplicates : undefined;

  // Returns the value to store (normalized), or undefined to drop it.
  const walk = (v: unknown, d: Desc): unknown => {
    switch (d.kind) {
      case 'string':
        if (typeof v !== 'string') mismatch(v, d.goType);
        return v;
      case 'bool':
        if (typeof v !== 'boolean') mismatch(v, d.goType);
        return v;
      case 'float':
        if (typeof v === 'bigint') return Number(v);
        if (typeof v !== 'number') mismatch(v, d.goType);
        return v;
      case 'int32':
      case 'int64':
        if (typeof v !== 'number' && typeof v !== 'bigint') mismatch(v, d.goType);
        else if (!inRange(v, d.kind)) mismatch(v, d.goType, true);
        return v;
      case 'bytes': {
        if (typeof v !== 'string') {
          mismatch(v, d.goType);
          return v;
        }
        const bad = goBase64Error(v);
        if (bad >= 0) throw new DecodeAbort(`illegal base64 data at input byte ${bad}`);
        return /[\r\n]/.test(v) ? Buffer.from(v, 'base64').toString('base64') : v;
      }
      case 'quantity':
        try {
          return normalizedQuantity(v);
        } catch (e) {
          throw new DecodeAbort((e as Error).message);
        }
      case 'intstr':
        if (typeof v === 'string') return v;
        if (typeof v !== 'number') nested(v, 'int32');
        if (!inRange(v as number, 'int32')) nested(v, 'int32', true);
        return v;
      case 'time':
      case 'microtime': {
        if (typeof v !== 'string') nested(v, 'string');
        try {
          return normalizedTime(v as string, d.kind === 'microtime');
        } catch (e) {
          throw new DecodeAbort((e as Error).message);
        }
      }
      case 'array': {
        if (!Array.isArray(v)) {
          mismatch(v, d.goType);
          return v;
        }
        const kind = d.item!.kind;
        for (let i = 0; i < v.length; i++) {
          const item = v[i];
          if (isPlainValue(item, kind)) continue;
          at.push(i);
          const out = item === null ? zeroOf(d.item!) : walk(item, d.item!);
          if (out !== item) v[i] = out;
          at.pop();
        }
        return v;
      }
      case 'map': {
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          mismatch(v, d.goType);
          return v;
        }
        const m = v as Record<string, unknown>;
        const kind = d.value!.kind;
        for (const k of Object.keys(m)) {
          if (!dups && isPlainValue(m[k], kind)) continue;
          at.push(k);
          if (dups?.has(pathHere())) note(`duplicate field "${pathHere()}"`);
          const val = m[k];
          const out = val === null ? zeroOf(d.value!) : walk(val, d.value!);
          at.pop();
          if (out === undefined) delete m[k];
          else if (out !== val) m[k] = out;
        }
        return v;
      }
      case 'struct': {
        if (v === null || typeof v !== 'object' || Array.isArray(v)) {
          mismatch(v, d.goType);
          return v;
        }
        const o = v as Record<string, unknown>;
        const fields = fieldsOf(d.def!);
        const name = d.name!;
        for (const k of Object.keys(o)) {
          const f = fields.get(k);
          if (f !== undefined && !dups && isPlainValue(o[k], f.kind)) continue;
          at.push(k);
          if (!f) {
            // Decoding into the kind drops what it does not know, whatever the directive.
            if (opts.collectUnknown) note(`unknown field "${pathHere()}"`);
            at.pop();
            delete o[k];
            continue;
          }
          if (dups?.has(pathHere())) note(`duplicate field "${pathHere()}"`);
          const val = o[k];
          if (val === null) {
            at.pop();
            delete o[k];
            continue;
          }
          const depth = stack.length;
          const outer = structName;
          if (f.via) stack.push(...f.via);
          stack.push(k);
          structName = name;
          const out = walk(val, f);
          while (stack.length > depth) stack.pop();
          structName = outer;
          at.pop();
          // Most values come back as they were: a store would only cost.
          if (out === undefined) delete o[k];
          else if (out !== val) o[k] = out;
        }
        return v;
      }
      default:
        return v;
    }
  };

  try {
    walk(obj, structDesc(definition));
  } catch (e) {
    if (e instanceof DecodeAbort) return { strict, error: e.message };
    throw e;
  }
  if (typeError) return { strict, error: typeError };
  typed.set(obj, definition);
  return { strict };
}

/** Objects checkFields accepted, with the definition they were checked against. */
const typed = new WeakMap<object, string>();

/**
 * Whether checkFields accepted this very object as the definition: every field it
 * has then has its Go type, and its times, quantities and bytes their Go form.
 * (Later changes to it are the server's own, which keep them so.)
 */
export function typedDecoded(obj: object, definition: string): boolean {
  return typed.get(obj) === definition;
}

/** A value of a scalar kind that walk() would keep as it is and report nothing about (most of a body). */
function isPlainValue(v: unknown, kind: Kind): boolean {
  switch (kind) {
    case 'string':
      return typeof v === 'string';
    case 'bool':
      return typeof v === 'boolean';
    case 'float':
      return typeof v === 'number';
    case 'int32':
    case 'int64':
      return typeof v === 'number' && inRange(v, kind);
    default:
      return false;
  }
}

function inRange(v: number | bigint, kind: 'int32' | 'int64'): boolean {
  // Past 2^53 integers come as bigints (codec/json-int64); only an int64 holds them.
  if (typeof v === 'bigint') return kind === 'int64' && BigInt.asIntN(64, v) === v;
  if (!Number.isInteger(v)) return false;
  return kind === 'int32' ? v >= -2147483648 && v <= 2147483647 : Math.abs(v) < 2 ** 63;
}

/** What Go stores for a JSON null inside a map or list. */
function zeroOf(d: Desc): unknown {
  switch (d.kind) {
    case 'string':
    case 'bytes':
      return '';
    case 'int32':
    case 'int64':
    case 'float':
    case 'intstr':
      return 0;
    case 'bool':
      return false;
    case 'quantity':
      return '0';
    case 'struct':
      return {};
    default:
      return null;
  }
}

const B64 = /[A-Za-z0-9+/]/;

/** Offset Go's base64.StdEncoding reports for bad input, or -1 when it decodes. */
export function goBase64Error(src: string): number {
  let si = 0;
  const n = src.length;
  const skipNL = () => {
    while (si < n && (src[si] === '\n' || src[si] === '\r')) si++;
  };
  for (;;) {
    for (let j = 0; j < 4; j++) {
      if (si === n) return j === 0 ? -1 : si - j;
      const c = src[si++];
      if (B64.test(c)) continue;
      if (c === '\n' || c === '\r') {
        j--;
        continue;
      }
      if (c !== '=' || j < 2) return si - 1;
      if (j === 2) {
        skipNL();
        if (si === n) return n;
        if (src[si] !== '=') return si - 1;
        si++;
      }
      skipNL();
      return si < n ? si : -1;
    }
  }
}
