// Merging an applied configuration into the live object, and removing
// fields from an object, per the type model (structured-merge-diff's Merge
// with "keep the right-hand side" and RemoveItems).
import { isObject } from '../json-util';
import { FieldSet } from './fieldset';
import { fieldPE, type PathElement } from './path';
import { listItemPE, walkAs } from './typed';
import { DEDUCED, fieldType, type ListNode, type MapNode, type TypeNode } from './types';
import { jsonClone } from '../../../shared/api/json-value';

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/**
 * live ⊕ config: atomic nodes and leaves are the config's, granular maps merge
 * key by key, map lists and sets item by item (config order first for items it
 * names, live-only items stay where they were). Nulls the config sets are
 * dropped, as the typed object would not keep them. Returns fresh containers.
 */
export function merge(live: unknown, config: unknown, t: TypeNode): unknown {
  return mergeNode(live, config, t);
}

function mergeNode(l: unknown, r: unknown, t: TypeNode): unknown {
  if (r === undefined) return l === undefined ? undefined : jsonClone(l);
  const as = t.kind === 'deduced' ? (isObject(r) ? 'map' : 'leaf') : walkAs(t, undefined);
  if (as === 'map' && isObject(r) && (l === undefined || l === null || isObject(l))) {
    return mergeMap(l ?? undefined, r, t);
  }
  if (as === 'list' && Array.isArray(r) && (l === undefined || l === null || Array.isArray(l))) {
    if ((l === undefined || l === null || l.length === 0) && r.length === 0) return [];
    return mergeList(l ?? undefined, r, t as ListNode);
  }
  if (r === null) {
    // A null container keeps the live contents; a null leaf clears the field.
    if (as === 'map' && isObject(l) && Object.keys(l).length > 0) return jsonClone(l);
    if (as === 'list' && Array.isArray(l) && l.length > 0) return jsonClone(l);
    return undefined;
  }
  return jsonClone(r);
}

function mergeMap(l: Record<string, unknown> | undefined, r: Record<string, unknown>, t: TypeNode) {
  const mt = t.kind === 'map' ? t : undefined;
  const typeOf = (k: string) => (mt ? fieldType(mt, k) : DEDUCED) ?? DEDUCED;
  const out: Record<string, unknown> = {};
  if (l) {
    for (const k of Object.keys(l)) {
      const v = mergeNode(l[k], r[k], typeOf(k));
      if (v !== undefined) out[k] = v;
    }
  }
  for (const k of Object.keys(r)) {
    if (l && has(l, k)) continue;
    const v = mergeNode(undefined, r[k], typeOf(k));
    if (v !== undefined) out[k] = v;
  }
  return out;
}

interface Indexed {
  order: PathElement[];
  items: Map<string, unknown>;
  /** Later items with the same key (only live objects may have them). */
  dups: Map<string, unknown[]>;
}

function indexItems(list: unknown[] | undefined, t: ListNode): Indexed {
  const ix: Indexed = { order: [], items: new Map(), dups: new Map() };
  if (!list) return ix;
  for (let i = 0; i < list.length; i++) {
    const pe = listItemPE(t, list[i], i);
    if (typeof pe === 'string') continue;
    if (ix.items.has(pe.key)) {
      const d = ix.dups.get(pe.key);
      if (d) d.push(list[i]);
      else ix.dups.set(pe.key, [list[i]]);
      continue;
    }
    ix.items.set(pe.key, list[i]);
    ix.order.push(pe);
  }
  return ix;
}

/** structured-merge-diff's list merge order: shared items in config order, live-only items kept in place. */
function mergeList(l: unknown[] | undefined, r: unknown[], t: ListNode): unknown[] {
  const el = t.element();
  const L = indexItems(l, t);
  const R = indexItems(r, t);
  const shared = R.order.filter((pe) => L.items.has(pe.key));
  let si = 0;
  const out: unknown[] = [];
  const emitted = new Set<string>();
  const push = (pe: PathElement, lv: unknown, rv: unknown) => {
    emitted.add(pe.key);
    const v = mergeNode(lv, rv, el);
    if (v !== undefined) out.push(v);
    if (rv === undefined) for (const d of L.dups.get(pe.key) ?? []) out.push(jsonClone(d));
  };
  let lI = 0;
  let rI = 0;
  const lLen = L.order.length;
  const rLen = R.order.length;
  while (lI < lLen || rI < rLen) {
    if (lI < lLen && emitted.has(L.order[lI].key)) {
      lI++;
      continue;
    }
    const next = si < shared.length ? shared[si] : undefined;
    if (lI < lLen && rI < rLen) {
      const pe = L.order[lI];
      if (pe.key === R.order[rI].key) {
        push(pe, L.items.get(pe.key), R.items.get(pe.key));
        lI++;
        rI++;
        si++;
        continue;
      }
      if (R.items.has(pe.key) && next && next.key !== pe.key) {
        lI++; // a shared item, placed when the config reaches it
        continue;
      }
    }
    if (lI < lLen && !R.items.has(L.order[lI].key)) {
      const pe = L.order[lI++];
      push(pe, L.items.get(pe.key), undefined);
      continue;
    }
    if (rI < rLen) {
      const pe = R.order[rI++];
      push(pe, L.items.get(pe.key), R.items.get(pe.key));
      if (next && next.key === pe.key) si++;
      continue;
    }
    lI++; // unreachable in practice: never loop without progress
  }
  return out;
}

/**
 * A copy of `v` without the paths that are members of `set` (with everything
 * below them). Containers left empty go away, except fields a Go object
 * always has, which stay as {}. Untouched subtrees are shared with `v`.
 */
export function removeItems(v: unknown, set: FieldSet, t: TypeNode): unknown {
  if (set.isEmpty()) return v;
  const as = t.kind === 'deduced' ? (isObject(v) ? 'map' : 'leaf') : walkAs(t, undefined);
  if (as === 'map' && isObject(v)) {
    const mt: MapNode | undefined = t.kind === 'map' ? t : undefined;
    const out: Record<string, unknown> = {};
    let changed = false;
    for (const k of Object.keys(v)) {
      const pe = fieldPE(k);
      if (set.hasMember(pe)) {
        changed = true;
        continue;
      }
      const sub = set.child(pe);
      if (!sub) {
        out[k] = v[k];
        continue;
      }
      const ft = (mt ? fieldType(mt, k) : DEDUCED) ?? DEDUCED;
      const nv = removeItems(v[k], sub, ft);
      if (nv !== v[k]) changed = true;
      if (nv !== undefined) out[k] = nv;
      else if (mt?.zeroValue?.(k) === 'struct') out[k] = {};
    }
    if (!changed) return v;
    return Object.keys(out).length > 0 ? out : undefined;
  }
  if (as === 'list' && Array.isArray(v) && v.length > 0) {
    const lt = t as ListNode;
    const out: unknown[] = [];
    let changed = false;
    for (let i = 0; i < v.length; i++) {
      const pe = listItemPE(lt, v[i], i);
      if (typeof pe === 'string') {
        out.push(v[i]);
        continue;
      }
      if (set.hasMember(pe)) {
        changed = true;
        continue;
      }
      const sub = set.child(pe);
      const nv = sub ? removeItems(v[i], sub, lt.element()) : v[i];
      if (nv !== v[i]) changed = true;
      if (nv !== undefined) out.push(nv);
    }
    if (!changed) return v;
    return out.length > 0 ? out : undefined;
  }
  return v;
}
