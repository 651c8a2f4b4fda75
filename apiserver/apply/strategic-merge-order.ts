// List ordering for strategic merge patch: items named in the patch (or in
// $setElementOrder) keep the patch's order, server-only items keep the live
// order, and the two are interleaved the way strategicpatch does it.
import { DIRECTIVE, smpErrors } from './strategic-merge-errors';
import { goFormat, isObject, type JSONValue } from './json-util';

type Item = JSONValue;

/** The value items are matched by: the merge key's value for maps, the item itself otherwise. */
const keyOf = (item: Item, mergeKey: string): unknown =>
  mergeKey ? (isObject(item) ? item[mergeKey] : undefined) : item;

export function indexIn(list: readonly Item[], item: Item, mergeKey: string): number {
  const v = keyOf(item, mergeKey);
  for (let i = 0; i < list.length; i++) if (keyOf(list[i], mergeKey) === v) return i;
  return -1;
}

/** Splits `items` into those present in `by` (by merge key or value) and the rest. */
export function partitionByPresence(items: Item[], by: readonly Item[], mergeKey: string): [Item[], Item[]] {
  const inPatch: Item[] = [];
  const serverOnly: Item[] = [];
  for (const v of items) {
    if (mergeKey) {
      if (!isObject(v))
        throw smpErrors.other(`expected a map[string]interface {}, but received a ${typeof v}`);
      if (!Object.prototype.hasOwnProperty.call(v, mergeKey)) throw smpErrors.noMergeKey(v, mergeKey);
    }
    (indexIn(by, v, mergeKey) >= 0 ? inPatch : serverOnly).push(v);
  }
  return [inPatch, serverOnly];
}

/** Go's sort.SliceStable with strategicpatch's comparator (items not in `order` count as smaller). */
function sortByOrder(toSort: Item[], order: readonly Item[], mergeKey: string): Item[] {
  const less = (a: Item, b: Item) => {
    const ia = indexIn(order, a, mergeKey);
    if (ia >= 0) {
      const ib = indexIn(order, b, mergeKey);
      if (ib >= 0) return ia < ib;
    }
    return true;
  };
  for (let i = 1; i < toSort.length; i++) {
    for (let j = i; j > 0 && less(toSort[j], toSort[j - 1]); j--) {
      const t = toSort[j];
      toSort[j] = toSort[j - 1];
      toSort[j - 1] = t;
    }
  }
  return toSort;
}

function normalizeSliceOrder(
  toSort: Item[],
  order: readonly Item[],
  mergeKey: string,
  isMap: boolean,
): Item[] {
  let toDelete: Item[] = [];
  if (isMap) {
    for (const list of [toSort, order]) {
      for (const item of list) {
        if (!isObject(item))
          throw smpErrors.other(`expected a map[string]interface {}, but received a ${typeof item}`);
        if (!Object.prototype.hasOwnProperty.call(item, mergeKey)) throw smpErrors.noMergeKey(item, mergeKey);
      }
    }
    const keep: Item[] = [];
    for (const item of toSort) (isObject(item) && item[DIRECTIVE] === 'delete' ? toDelete : keep).push(item);
    toSort = keep;
  } else {
    toDelete = [];
  }
  return [...sortByOrder(toSort, order, mergeKey), ...toDelete];
}

/** Interleaves server-only items (left) into patch items (right), guided by the live order. */
function mergeSortedSlice(
  left: Item[],
  right: Item[],
  serverOrder: readonly Item[],
  mergeKey: string,
): Item[] {
  const out: Item[] = [];
  let i = 0;
  let j = 0;
  while (i < left.length && j < right.length) {
    const li = indexIn(serverOrder, left[i], mergeKey);
    const ri = indexIn(serverOrder, right[j], mergeKey);
    if (li >= 0 && ri >= 0 && li < ri) out.push(left[i++]);
    else out.push(right[j++]);
  }
  while (i < left.length) out.push(left[i++]);
  while (j < right.length) out.push(right[j++]);
  return out;
}

export function normalizeElementOrder(
  patch: Item[],
  serverOnly: Item[],
  patchOrder: readonly Item[],
  serverOrder: readonly Item[],
  mergeKey: string,
  isMap: boolean,
): Item[] {
  const p = normalizeSliceOrder(patch, patchOrder, mergeKey, isMap);
  const s = normalizeSliceOrder(serverOnly, serverOrder, mergeKey, isMap);
  return mergeSortedSlice(s, p, serverOrder, mergeKey);
}

/** strategicpatch's deduplicateScalars (it does not keep order when there are duplicates). */
export function deduplicateScalars(s: Item[]): Item[] {
  let length = s.length - 1;
  for (let i = 0; i < length; i++) {
    for (let j = i + 1; j <= length; j++) {
      if (s[i] === s[j]) {
        s[j] = s[length];
        s.length = length;
        length--;
        j--;
      }
    }
  }
  return s;
}

/**
 * Checks that the patch list's items appear in $setElementOrder in the same
 * relative order (deletions aside).
 */
export function validatePatchWithSetOrderList(patchList: Item[], setOrder: Item[], mergeKey: string): void {
  if (setOrder.length === 0 || patchList.length === 0) return;
  let nonDelete = patchList;
  if (mergeKey) {
    nonDelete = [];
    for (const v of patchList) {
      if (!isObject(v))
        throw smpErrors.other(`expected a map[string]interface {}, but received a ${typeof v}`);
      if (v[DIRECTIVE] !== 'delete') nonDelete.push(v);
    }
  }
  let pi = 0;
  let si = 0;
  while (pi < nonDelete.length && si < setOrder.length) {
    const p = nonDelete[pi];
    if (isObject(p) && Object.prototype.hasOwnProperty.call(p, DIRECTIVE)) {
      pi++;
      continue;
    }
    let equal: boolean;
    if (!mergeKey) equal = p === setOrder[si];
    else {
      const o = setOrder[si];
      if (!isObject(p) || !isObject(o)) throw smpErrors.other('expected a map[string]interface {}');
      if (!Object.prototype.hasOwnProperty.call(p, mergeKey)) throw smpErrors.noMergeKey(p, mergeKey);
      if (!Object.prototype.hasOwnProperty.call(o, mergeKey)) throw smpErrors.noMergeKey(o, mergeKey);
      equal = p[mergeKey] === o[mergeKey];
    }
    if (equal) pi++;
    si++;
  }
  if (pi < nonDelete.length && si >= setOrder.length) {
    throw smpErrors.other(
      `the order in patch list:\n${goFormat(patchList)}\n doesn't match $setElementOrder list:\n${goFormat(setOrder)}`,
    );
  }
}
