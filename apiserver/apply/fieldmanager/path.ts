// Path elements of field sets, as structured-merge-diff defines them:
//   f:<name>            a struct field or map key
//   k:{"key":value,...} a map-list item, by its key fields sorted by name
//   v:<json>            a set item, by value
//   i:<index>           a list item by position (only in old data)
// Each element carries its serialised form, which is also its identity.
import { goJSON, goStringCompare, isObject } from '../json-util';
import { boundedMemo } from '../../../shared/heap/bounded-memo';

export type PathElement =
  | { readonly t: 'f'; readonly key: string; readonly name: string }
  | { readonly t: 'k'; readonly key: string; readonly fields: readonly (readonly [string, unknown])[] }
  | { readonly t: 'v'; readonly key: string; readonly value: unknown }
  | { readonly t: 'i'; readonly key: string; readonly index: number };

export type Path = readonly PathElement[];

/**
 * Field elements by name: objects of one kind repeat their field names, and a shared element's
 * key is a string already hashed, which the field sets' maps look up over and over.
 */
export const fieldPE: (name: string) => PathElement = boundedMemo(16_384, (name) => ({
  t: 'f',
  key: 'f:' + name,
  name,
}));

export function keyPE(fields: (readonly [string, unknown])[]): PathElement {
  const sorted = fields.length < 2 ? fields : [...fields].sort((a, b) => goStringCompare(a[0], b[0]));
  const json = '{' + sorted.map(([n, v]) => `${goJSON(n)}:${goJSON(v)}`).join(',') + '}';
  return { t: 'k', key: 'k:' + json, fields: sorted };
}

export const valuePE = (value: unknown): PathElement => ({ t: 'v', key: 'v:' + goJSON(value), value });

export const indexPE = (index: number): PathElement => ({ t: 'i', key: 'i:' + index, index });

export class PathElementError extends Error {
  override name = 'PathElementError';
}

/** Parses a serialised element; returns undefined for unknown prefixes (which readers skip). */
export function parsePathElement(s: string): PathElement | undefined {
  if (s.length < 2) throw new PathElementError('key must be 2 characters long:');
  if (s[1] !== ':') throw new PathElementError(`missing colon: ${s}`);
  const body = s.slice(2);
  switch (s[0]) {
    case 'f':
      return fieldPE(body);
    case 'v':
      return valuePE(parseJSON(body));
    case 'k': {
      const o = parseJSON(body);
      if (!isObject(o)) throw new PathElementError(`expected a JSON object in ${s}`);
      return keyPE(Object.entries(o));
    }
    case 'i': {
      if (!/^[+-]?\d+$/.test(body)) throw new PathElementError(`invalid index in ${s}`);
      return indexPE(Number(body));
    }
    default:
      return undefined;
  }
}

function parseJSON(s: string): unknown {
  try {
    return JSON.parse(s);
  } catch (e) {
    throw new PathElementError((e as Error).message);
  }
}

const TYPE_ORDER = { f: 0, k: 1, v: 2, i: 3 } as const;

/** structured-merge-diff's order: fields, then keys, then values, then indices. */
export function comparePE(a: PathElement, b: PathElement): number {
  if (a.t !== b.t) return TYPE_ORDER[a.t] - TYPE_ORDER[b.t];
  switch (a.t) {
    case 'f':
      return goStringCompare(a.name, (b as typeof a).name);
    case 'k': {
      const bf = (b as typeof a).fields;
      for (let i = 0; ; i++) {
        if (i >= a.fields.length) return i >= bf.length ? 0 : -1;
        if (i >= bf.length) return 1;
        const c = goStringCompare(a.fields[i][0], bf[i][0]) || compareValues(a.fields[i][1], bf[i][1]);
        if (c !== 0) return c;
      }
    }
    case 'v':
      return compareValues(a.value, (b as typeof a).value);
    case 'i':
      return a.index - (b as typeof a).index;
  }
}

const rank = (v: unknown): number =>
  typeof v === 'number'
    ? 0
    : typeof v === 'string'
      ? 1
      : typeof v === 'boolean'
        ? 2
        : Array.isArray(v)
          ? 3
          : isObject(v)
            ? 4
            : 5;

/** value.Compare: numbers < strings < booleans < lists < maps < null. */
export function compareValues(a: unknown, b: unknown): number {
  const ra = rank(a);
  const rb = rank(b);
  if (ra !== rb) return ra - rb;
  switch (ra) {
    case 0:
      return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
    case 1:
      return goStringCompare(a as string, b as string);
    case 2:
      return a === b ? 0 : a ? 1 : -1;
    case 3: {
      const x = a as unknown[];
      const y = b as unknown[];
      for (let i = 0; ; i++) {
        if (i >= x.length) return i >= y.length ? 0 : -1;
        if (i >= y.length) return 1;
        const c = compareValues(x[i], y[i]);
        if (c !== 0) return c;
      }
    }
    case 4: {
      const x = a as Record<string, unknown>;
      const y = b as Record<string, unknown>;
      const kx = Object.keys(x).sort(goStringCompare);
      const ky = Object.keys(y).sort(goStringCompare);
      for (let i = 0; ; i++) {
        if (i >= kx.length) return i >= ky.length ? 0 : -1;
        if (i >= ky.length) return 1;
        const c = goStringCompare(kx[i], ky[i]) || compareValues(x[kx[i]], y[ky[i]]);
        if (c !== 0) return c;
      }
    }
    default:
      return 0;
  }
}

/** value.ToString, as paths are printed in conflicts: "nginx" quoted, numbers bare. */
function valueString(v: unknown): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return JSON.stringify(v);
  if (Array.isArray(v)) return '[' + v.map(valueString).join(',') + ']';
  if (isObject(v)) {
    return (
      '{' +
      Object.keys(v)
        .sort(goStringCompare)
        .map((k) => `${k}=${valueString(v[k])}`)
        .join(';') +
      '}'
    );
  }
  return String(v);
}

/** PathElement.String(): .name, [k=v,...], [=v], [i]. */
export function peString(pe: PathElement): string {
  switch (pe.t) {
    case 'f':
      return '.' + pe.name;
    case 'k':
      return '[' + pe.fields.map(([n, v]) => `${n}=${valueString(v)}`).join(',') + ']';
    case 'v':
      return `[=${valueString(pe.value)}]`;
    case 'i':
      return `[${pe.index}]`;
  }
}

/** fieldpath.Path.String(), e.g. .spec.template.spec.containers[name="nginx"].image */
export const pathString = (p: Path): string => p.map(peString).join('');
