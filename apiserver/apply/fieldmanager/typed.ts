// Walks of objects against a type model, as structured-merge-diff's typed
// package: the field set an object sets (toFieldSet), and what changed between
// two objects (compare). Merging and removal are in typed-merge.ts.
import { isObject } from '../json-util';
import { jsonEqual } from '../../../shared/api/json-value';
import { type Entry, FieldSet } from './fieldset';
import { fieldPE, keyPE, pathString, peString, valuePE, indexPE, type PathElement } from './path';
import { DEDUCED, fieldType, isDeducedMap, type ListNode, type MapNode, type TypeNode } from './types';

/** A value that does not fit the type model (structured-merge-diff's ValidationErrors). */
export class TypedError extends Error {
  override name = 'TypedError';
  constructor(readonly errors: string[]) {
    super(errors.length === 1 ? errors[0] : ['errors:', ...errors.map((e) => '  ' + e)].join('\n'));
  }
}

/** The element identifying a list item: its key fields, its value, or its index. */
export function listItemPE(t: ListNode, item: unknown, index: number): PathElement | string {
  if (t.listType === 'map') {
    if (item === null || item === undefined) return 'associative list with keys may not have a null element';
    if (!isObject(item)) return 'associative list with keys may not have non-map elements';
    const fields: [string, unknown][] = [];
    for (const k of t.keys) {
      if (Object.prototype.hasOwnProperty.call(item, k)) fields.push([k, item[k]]);
      else {
        const d = t.keyDefault?.(k);
        if (d === undefined) {
          return `associative list with keys has an element that omits key field ${JSON.stringify(k)} (and doesn't have default value)`;
        }
        fields.push([k, d]);
      }
    }
    return keyPE(fields);
  }
  if (t.listType === 'set') return valuePE(item);
  return indexPE(index);
}

type Shape = 'map' | 'list' | 'other';
const shapeOf = (v: unknown): Shape => (Array.isArray(v) ? 'list' : isObject(v) ? 'map' : 'other');
const nullish = (v: unknown) => v === undefined || v === null;

/** How a node is walked given its value: as a map, as a list, or as a leaf. */
export function walkAs(t: TypeNode, v: unknown): 'map' | 'list' | 'leaf' {
  switch (t.kind) {
    case 'scalar':
      return 'leaf';
    case 'deduced':
      return isDeducedMap(t, v) ? 'map' : 'leaf';
    case 'list':
      return t.listType === 'atomic' ? 'leaf' : 'list';
    case 'map':
      return t.atomic ? 'leaf' : 'map';
  }
}

const mapTypeOf = (t: TypeNode): MapNode | undefined => (t.kind === 'map' ? t : undefined);

// ---------------------------------------------------------------- toFieldSet

/**
 * The paths an object sets: leaves, atomic nodes, list items, and keys of
 * maps that are not declared struct fields. With `strict`, fields missing
 * from the schema, items without keys and duplicate items are errors (as
 * for an applied configuration).
 */
export function toFieldSet(v: unknown, t: TypeNode, strict = false): FieldSet {
  const out = new FieldSet();
  const errors: string[] = [];
  const path: PathElement[] = [];

  const walk = (v: unknown, t: TypeNode): void => {
    const as = walkAs(t, v);
    if (as === 'leaf') {
      out.insert(path);
      return;
    }
    if (as === 'list') {
      if (!Array.isArray(v)) {
        if (strict && !nullish(v))
          errors.push(`${pathString(path)}: expected list, got ${JSON.stringify(v)}`);
        return;
      }
      const lt = t as ListNode;
      const seen = strict ? new Set<string>() : undefined;
      for (let i = 0; i < v.length; i++) {
        const pe = listItemPE(lt, v[i], i);
        if (typeof pe === 'string') {
          if (strict) errors.push(`${pathString(path)}: element ${i}: ${pe}`);
          continue;
        }
        if (seen) {
          if (seen.has(pe.key)) errors.push(`${pathString(path)}: duplicate entries for key ${peString(pe)}`);
          seen.add(pe.key);
        }
        path.push(pe);
        walk(v[i], lt.element());
        out.insert(path);
        path.pop();
      }
      return;
    }
    if (!isObject(v)) {
      if (strict && !nullish(v)) errors.push(`${pathString(path)}: expected map, got ${JSON.stringify(v)}`);
      return;
    }
    const mt = mapTypeOf(t);
    for (const k of Object.keys(v)) {
      const declared = mt?.field(k);
      let ft = declared ?? (mt ? mt.elements : DEDUCED);
      if (!ft) {
        if (strict) {
          errors.push(`${pathString(path)}.${k}: field not declared in schema`);
          continue;
        }
        ft = DEDUCED;
      }
      path.push(fieldPE(k));
      walk(v[k], ft);
      // Undeclared keys are members; so are null and empty values, to own an empty struct.
      if (!declared || isEmptyValue(v[k])) out.insert(path);
      path.pop();
    }
  };
  walk(v, t);
  if (errors.length > 0) throw new TypedError(errors);
  return out;
}

// ---------------------------------------------------------------- compare

export interface Comparison {
  added: FieldSet;
  modified: FieldSet;
  removed: FieldSet;
}

/**
 * What changed from `lhs` to `rhs` (undefined: absent). Declared fields a Go
 * object always has (MapNode.zeroValue) compare as {} or null when absent, so
 * ownership entries get Kubernetes' shape.
 */
export function compare(lhs: unknown, rhs: unknown, t: TypeNode): Comparison {
  const c: Comparison = { added: new FieldSet(), modified: new FieldSet(), removed: new FieldSet() };
  const path: PathElement[] = [];

  const leaf = (l: unknown, r: unknown) => {
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
    else if (!jsonEqual(l, r)) c.modified.insert(path);
  };

  const node = (l: unknown, r: unknown, t: TypeNode): void => {
    // A deduced node is a map when either side is one.
    const as = t.kind === 'deduced' ? (isObject(l) || isObject(r) ? 'map' : 'leaf') : walkAs(t, undefined);
    if (as === 'leaf') return leaf(l, r);
    const want: Shape = as;
    const ls = nullish(l) ? want : shapeOf(l);
    const rs = nullish(r) ? want : shapeOf(r);
    if (ls !== want || rs !== want) {
      // A value of another shape than its type (or than the other side): the
      // container's contents come and go, the node itself changed.
      if (ls === want && !nullish(l)) children(l, undefined, t, as);
      if (rs === want && !nullish(r)) children(undefined, r, t, as);
      return leaf(l, r);
    }
    if (isEmpty(l) && isEmpty(r)) return leaf(l, r); // keeps the empty/null distinction
    children(l, r, t, as);
    if (l === undefined) c.added.insert(path);
    else if (r === undefined) c.removed.insert(path);
  };

  const children = (l: unknown, r: unknown, t: TypeNode, as: 'map' | 'list') => {
    if (as === 'map') mapChildren(l as Record<string, unknown>, r as Record<string, unknown>, t);
    else listChildren(l as unknown[] | null | undefined, r as unknown[] | null | undefined, t as ListNode);
  };

  const mapChildren = (
    l: Record<string, unknown> | null | undefined,
    r: Record<string, unknown> | null | undefined,
    t: TypeNode,
  ) => {
    const mt = mapTypeOf(t);
    const visit = (k: string) => {
      const ft = (mt ? fieldType(mt, k) : DEDUCED) ?? DEDUCED;
      let lv = l ? l[k] : undefined;
      let rv = r ? r[k] : undefined;
      const z = mt?.zeroValue?.(k);
      if (z) {
        if (l && nullish(lv)) lv = z === 'struct' ? {} : null;
        if (r && nullish(rv)) rv = z === 'struct' ? {} : null;
      }
      path.push(fieldPE(k));
      node(lv, rv, ft);
      path.pop();
    };
    if (l) for (const k of Object.keys(l)) visit(k);
    if (r) for (const k of Object.keys(r)) if (!l || !Object.prototype.hasOwnProperty.call(l, k)) visit(k);
    // Fields a Go object always has, absent on both sides in JSON (they matter when one side is new).
    const zeros = mt?.zeroFields?.();
    if (zeros) {
      for (const k of zeros) {
        if (
          (l && Object.prototype.hasOwnProperty.call(l, k)) ||
          (r && Object.prototype.hasOwnProperty.call(r, k))
        )
          continue;
        if (l && r) continue; // {} vs {} or null vs null: no change
        visit(k);
      }
    }
  };

  const listChildren = (l: unknown[] | null | undefined, r: unknown[] | null | undefined, t: ListNode) => {
    const el = t.element();
    const index = (list: unknown[] | null | undefined, order: PathElement[]) => {
      const m = new Map<string, unknown[]>();
      if (!list) return m;
      for (let i = 0; i < list.length; i++) {
        const pe = listItemPE(t, list[i], i);
        if (typeof pe === 'string') throw new TypedError([`${pathString(path)}: element ${i}: ${pe}`]);
        const got = m.get(pe.key);
        if (got) got.push(list[i]);
        else {
          m.set(pe.key, [list[i]]);
          order.push(pe);
        }
      }
      return m;
    };
    const order: PathElement[] = [];
    const lm = index(l, order);
    const rOrder: PathElement[] = [];
    const rm = index(r, rOrder);
    for (const pe of rOrder) if (!lm.has(pe.key)) order.push(pe);
    for (const pe of order) {
      const ll = lm.get(pe.key) ?? [];
      const rl = rm.get(pe.key) ?? [];
      path.push(pe);
      if (ll.length <= 1 && rl.length <= 1) node(ll[0], rl[0], el);
      else if (ll.length >= 2 && rl.length >= 2) {
        if (!jsonEqual(ll, rl)) c.modified.insert(path);
      } else if (ll.length >= 2) {
        if (rl.length) node(undefined, rl[0], el);
        c.removed.insert(path);
      } else {
        if (ll.length) node(ll[0], undefined, el);
        c.added.insert(path);
      }
      path.pop();
    }
  };

  node(lhs, rhs, t);
  return c;
}

// ---------------------------------------------------------------- createdSet

// What an object being created stands against at each node, as compare sees it:
// nothing, or the zero value a Go object carries for a declared field ({} or null).
const ABSENT = 0;
const ZERO_STRUCT = 1;
const ZERO_NULL = 2;
type Prior = typeof ABSENT | typeof ZERO_STRUCT | typeof ZERO_NULL;
/** Compared and inspected only, never kept or changed: one empty object serves every node. */
const EMPTY_STRUCT = Object.freeze({});
const priorValue = (p: Prior) => (p === ABSENT ? undefined : p === ZERO_STRUCT ? EMPTY_STRUCT : null);

/** Thrown where compare would take its slow branches (a value of the wrong shape, an unkeyed item). */
const NOT_PLAIN = new Error('not a plain create');

/**
 * The fields a create sets: the added and modified paths of `compare({}, obj, t)`
 * (a create removes nothing), built level by level in one walk instead of path
 * by path into three sets. Undefined where compare would meet a value of the
 * wrong shape or a list item it cannot key; the caller then takes compare.
 */
export function createdSet(obj: unknown, t: TypeNode): FieldSet | undefined {
  // The root stands against {}: a map whatever its type says, unless that type is not a map at all.
  if (!isObject(obj) || (t.kind !== 'deduced' && walkAs(t, undefined) !== 'map')) return undefined;
  const kids: Entry[] = [];
  try {
    mapEntries(ZERO_STRUCT, obj, t, kids);
  } catch (e) {
    if (e === NOT_PLAIN) return undefined;
    throw e;
  }
  return FieldSet.fromDistinctEntries(kids);
}

/** compare's node(prior, r, t) for one child element; pushes its entry (if any) onto `into`. */
function createdNode(prior: Prior, r: unknown, t: TypeNode, pe: PathElement, into: Entry[]): void {
  const as =
    t.kind === 'deduced' ? (prior === ZERO_STRUCT || isObject(r) ? 'map' : 'leaf') : walkAs(t, undefined);
  const l = priorValue(prior);
  if (as !== 'leaf') {
    if ((nullish(l) ? as : shapeOf(l)) !== as || (nullish(r) ? as : shapeOf(r)) !== as) throw NOT_PLAIN;
  }
  // A leaf, or a container empty on both sides, is set when it differs from what it stands against.
  if (as === 'leaf' || (isEmpty(l) && isEmpty(r))) {
    if (prior === ABSENT || !jsonEqual(l, r)) into.push({ pe, member: true, children: undefined });
    return;
  }
  const kids: Entry[] = [];
  if (as === 'map') mapEntries(prior, r as Record<string, unknown>, t, kids);
  else listEntries(r as unknown[], t as ListNode, kids);
  const member = prior === ABSENT;
  if (member || kids.length > 0)
    into.push({ pe, member, children: kids.length > 0 ? FieldSet.fromDistinctEntries(kids) : undefined });
}

function mapEntries(prior: Prior, r: Record<string, unknown>, t: TypeNode, into: Entry[]): void {
  const mt = mapTypeOf(t);
  // Only a present prior ({}) carries zero values down; under an absent or null one, the zeros the
  // new object lacks are added instead.
  const carried = prior === ZERO_STRUCT;
  const visit = (k: string) => {
    const ft = (mt ? fieldType(mt, k) : DEDUCED) ?? DEDUCED;
    let lp: Prior = ABSENT;
    let rv = r[k];
    const z = mt?.zeroValue?.(k);
    if (z) {
      if (carried) lp = z === 'struct' ? ZERO_STRUCT : ZERO_NULL;
      if (nullish(rv)) rv = z === 'struct' ? {} : null;
    }
    createdNode(lp, rv, ft, fieldPE(k), into);
  };
  for (const k of Object.keys(r)) visit(k);
  const zeros = carried ? undefined : mt?.zeroFields?.();
  if (zeros) for (const k of zeros) if (!Object.prototype.hasOwnProperty.call(r, k)) visit(k);
}

function listEntries(r: unknown[], t: ListNode, into: Entry[]): void {
  const el = t.element();
  const pes: PathElement[] = [];
  for (let i = 0; i < r.length; i++) {
    const pe = listItemPE(t, r[i], i);
    if (typeof pe === 'string') throw NOT_PLAIN;
    pes.push(pe);
  }
  // Items sharing a key are owned as one, not looked into (compare's duplicate branch).
  const shared = sharedKeys(pes);
  for (let i = 0; i < r.length; i++) {
    const pe = pes[i];
    if (!shared?.has(pe.key)) createdNode(ABSENT, r[i], el, pe, into);
    else if (shared.get(pe.key) === i) into.push({ pe, member: true, children: undefined });
  }
}

/** The keys more than one item has, each with the index of its first item; undefined for none. */
function sharedKeys(pes: PathElement[]): Map<string, number> | undefined {
  let out: Map<string, number> | undefined;
  if (pes.length <= 8) {
    // Short lists (nearly all) are checked pair by pair, allocating nothing.
    for (let i = 1; i < pes.length; i++)
      for (let j = 0; j < i; j++)
        if (pes[i].key === pes[j].key && !out?.has(pes[j].key)) (out ??= new Map()).set(pes[j].key, j);
    return out;
  }
  const first = new Map<string, number>();
  for (let i = 0; i < pes.length; i++) {
    const k = pes[i].key;
    const at = first.get(k);
    if (at === undefined) first.set(k, i);
    else if (!out?.has(k)) (out ??= new Map()).set(k, at);
  }
  return out;
}

const isEmptyValue = (v: unknown) => v === null || (isObject(v) && isEmpty(v));

function isEmpty(v: unknown): boolean {
  if (v === undefined || v === null) return true;
  if (Array.isArray(v)) return v.length === 0;
  if (isObject(v)) {
    for (const _ in v) return false;
    return true;
  }
  return false;
}
