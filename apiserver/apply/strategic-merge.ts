// Strategic merge patch for built-in kinds, with the semantics of
// k8s.io/apimachinery/pkg/util/strategicpatch (StrategicMergeMapPatch with
// MergeParallelList and IgnoreUnmatchedNulls): lists merge by patchMergeKey,
// primitive lists with strategy merge are sets, and the directives $patch,
// $retainKeys, $deleteFromPrimitiveList/<f> and $setElementOrder/<f> apply.
// kubectl's client-side apply sends exactly these patches; the server only
// applies them.
import { badRequest, unsupportedMediaType, type StatusError } from '../../shared/api/status';
import { isObject, type JSONObject, type JSONValue } from './json-util';
import { mainStrategy, patchSchemaOf, type PatchMeta, type PatchSchema } from './patch-meta';
import {
  DELETE_FROM_PRIMITIVE_LIST,
  DIRECTIVE,
  RETAIN_KEYS,
  SET_ELEMENT_ORDER,
  smpErrors,
} from './strategic-merge-errors';
import {
  deduplicateScalars,
  normalizeElementOrder,
  partitionByPresence,
  validatePatchWithSetOrderList,
} from './strategic-merge-order';
import { jsonClone } from '../../shared/api/json-value';
import { parseJSONInt64 } from '../../shared/codec/json-int64';

export { smpErrors } from './strategic-merge-errors';

/** Media types a PATCH accepts, in kube-apiserver's order. */
export const BUILTIN_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/strategic-merge-patch+json',
  'application/apply-patch+yaml',
];
export const CUSTOM_RESOURCE_PATCH_TYPES = [
  'application/json-patch+json',
  'application/merge-patch+json',
  'application/apply-patch+yaml',
];

/**
 * The kind's patch schema, or 415 when the kind has no built-in schema
 * (custom resources), as kube-apiserver answers a strategic merge patch there.
 */
export function assertStrategicMergeSupported(definition: string | undefined): PatchSchema {
  const schema = definition ? patchSchemaOf(definition) : undefined;
  if (!schema) throw unsupportedMediaType('', CUSTOM_RESOURCE_PATCH_TYPES);
  return schema;
}

/** Parses a strategic merge patch body; it must be a JSON object (null changes nothing). */
export function parseStrategicMergePatch(body: string | Uint8Array | unknown): JSONObject {
  let patch: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
    try {
      patch = parseJSONInt64(text);
    } catch (e) {
      throw badRequest((e as Error).message);
    }
  }
  if (patch === null) return {};
  if (!isObject(patch)) {
    const t = Array.isArray(patch) ? 'array' : typeof patch === 'boolean' ? 'bool' : typeof patch;
    throw badRequest(`json: cannot unmarshal ${t} into Go value of type map[string]interface {}`);
  }
  return patch;
}

/**
 * Applies `patch` to `original`, modifying both: pass copies you own.
 * `schema` is the kind's patch schema (assertStrategicMergeSupported / patchSchemaOf).
 */
export function strategicMergePatch(
  original: JSONObject,
  patch: JSONObject,
  schema: PatchSchema | undefined,
): JSONObject {
  return mergeMap(original, patch, schema);
}

/** Parses `body` and patches a copy of `original` (a built-in kind by definition name). */
export function applyStrategicMergePatch(
  original: JSONObject,
  body: string | Uint8Array | unknown,
  definition: string | undefined,
): JSONObject {
  const schema = assertStrategicMergeSupported(definition);
  const patch = parseStrategicMergePatch(body);
  return mergeMap(jsonClone(original), jsonClone(patch), schema);
}

function mergeMap(original: JSONObject | undefined, patch: JSONObject, schema: PatchSchema | undefined) {
  if (has(patch, DIRECTIVE)) return directiveInMap(patch[DIRECTIVE], patch);
  const out: JSONObject = original ?? {};
  applyRetainKeys(out, patch);
  mergeOrderedLists(out, patch, schema);

  for (const key of Object.keys(patch)) {
    let k = key;
    let isDeleteList = false;
    if (key.startsWith(DELETE_FROM_PRIMITIVE_LIST)) {
      k = directiveKey(key, DELETE_FROM_PRIMITIVE_LIST, smpErrors.badPatchFormatForPrimitiveList);
      isDeleteList = true;
    }
    const patchV = patch[key];
    if (patchV === null) {
      delete out[k];
      continue;
    }
    if (!has(out, k) || kindOf(out[k]) !== kindOf(patchV)) {
      // Not in the original, or of another type: take the patch value.
      if (!isDeleteList) setCleaned(out, k, patchV);
      continue;
    }
    const orig = out[k];
    if (isObject(orig) && isObject(patchV)) {
      const meta = schema?.lookupStruct(k);
      out[k] =
        mainStrategy(meta?.strategies ?? []) === 'replace'
          ? (clean(patchV) as JSONObject)
          : mergeMap(orig, patchV, meta?.schema);
    } else if (Array.isArray(orig) && Array.isArray(patchV)) {
      out[k] = mergeSliceHandler(orig, patchV, schema?.lookupSlice(k), isDeleteList);
    } else {
      setCleaned(out, k, patchV);
    }
  }
  return out;
}

const has = (o: object, k: string) => Object.prototype.hasOwnProperty.call(o, k);

/** The Go reflect kind the decoded value would have: map, slice, or the scalar type. */
function kindOf(v: unknown): string {
  if (Array.isArray(v)) return 'slice';
  if (isObject(v)) return 'map';
  if (typeof v === 'number') return Number.isInteger(v) ? 'int64' : 'float64';
  return typeof v;
}

function setCleaned(out: JSONObject, k: string, v: JSONValue): void {
  const [cleaned, keep] = removeDirectives(discardNulls(v));
  if (keep) out[k] = cleaned;
  else delete out[k];
}

/** A patch value as the typed object would hold it: no nulls in maps, no directives. */
function clean(v: JSONValue): JSONValue {
  return removeDirectives(discardNulls(v))[0];
}

export function discardNulls(v: JSONValue): JSONValue {
  if (Array.isArray(v)) for (const x of v) discardNulls(x);
  else if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else discardNulls(v[k]);
    }
  }
  return v;
}

/**
 * Drops maps carrying $patch and list items that are such maps; also the
 * other directive keys, which the typed object would not keep.
 */
export function removeDirectives(v: JSONValue): [JSONValue, boolean] {
  if (Array.isArray(v)) {
    const out: JSONValue[] = [];
    for (const x of v) {
      const [nx, keep] = removeDirectives(x);
      if (keep) out.push(nx);
    }
    return [out, true];
  }
  if (isObject(v)) {
    if (has(v, DIRECTIVE)) return [null, false];
    for (const k of Object.keys(v)) {
      if (
        k === RETAIN_KEYS ||
        k.startsWith(SET_ELEMENT_ORDER + '/') ||
        k.startsWith(DELETE_FROM_PRIMITIVE_LIST + '/')
      ) {
        delete v[k];
        continue;
      }
      const [nx, keep] = removeDirectives(v[k]);
      if (keep) v[k] = nx;
      else delete v[k];
    }
  }
  return [v, true];
}

function directiveInMap(directive: unknown, patch: JSONObject): JSONObject {
  if (directive === 'replace') {
    delete patch[DIRECTIVE];
    return clean(patch) as JSONObject;
  }
  if (directive === 'delete') return {};
  throw smpErrors.badPatchType(directive, patch);
}

function directiveKey(key: string, prefix: string, err: () => StatusError): string {
  const i = key.indexOf('/');
  if (i < 0 || key.slice(0, i) !== prefix) throw err();
  return key.slice(i + 1);
}

function applyRetainKeys(original: JSONObject, patch: JSONObject): void {
  if (!has(patch, RETAIN_KEYS)) return;
  const retain = patch[RETAIN_KEYS];
  delete patch[RETAIN_KEYS];
  if (retain !== null && !Array.isArray(retain)) throw smpErrors.badPatchFormatForRetainKeys();
  const keep = new Set<unknown>(retain ?? []);
  for (const k of Object.keys(patch)) {
    if (patch[k] === null || k.startsWith(DELETE_FROM_PRIMITIVE_LIST) || k.startsWith(SET_ELEMENT_ORDER))
      continue;
    if (!keep.has(k)) throw smpErrors.badPatchFormatForRetainKeys();
  }
  for (const k of Object.keys(original)) if (!keep.has(k)) delete original[k];
}

/** Processes each $setElementOrder/<f> with the patch list <f> it orders (then drops both from the patch). */
function mergeOrderedLists(original: JSONObject, patch: JSONObject, schema: PatchSchema | undefined): void {
  for (const key of Object.keys(patch)) {
    if (!key.startsWith(SET_ELEMENT_ORDER)) continue;
    const order = patch[key];
    delete patch[key];
    if (!Array.isArray(order))
      throw smpErrors.other(`expected a []interface {}, but received a ${typeof order}`);
    const field = directiveKey(key, SET_ELEMENT_ORDER, smpErrors.badPatchFormatForSetElementOrderList);
    const foundOriginal = has(original, field);
    const foundPatch = has(patch, field);
    const originalList = original[field];
    const patchList = patch[field];
    if (foundOriginal && !Array.isArray(originalList)) throw smpErrors.other('expected a []interface {}');
    if (foundPatch && !Array.isArray(patchList)) throw smpErrors.other('expected a []interface {}');
    const origArr = (originalList ?? []) as JSONValue[];
    const patchArr = (patchList ?? []) as JSONValue[];
    const meta = schema?.lookupSlice(field);
    const mergeKey = meta?.mergeKey ?? '';
    validatePatchWithSetOrderList(patchArr, order, mergeKey);

    let merged: JSONValue[];
    if (foundOriginal && !foundPatch) merged = origArr;
    else if (!foundOriginal && foundPatch) merged = removeDirectives(patchArr)[0] as JSONValue[];
    else if (foundOriginal && foundPatch) merged = mergeSliceHandler(origArr, patchArr, meta, false);
    else continue;

    const [inPatch, serverOnly] = partitionByPresence(merged, order, mergeKey);
    const isMap = sliceElementKind(origArr, patchArr) === 'map';
    original[field] = normalizeElementOrder(inPatch, serverOnly, order, origArr, mergeKey, isMap);
    delete patch[field];
  }
}

function mergeSliceHandler(
  original: JSONValue[],
  patch: JSONValue[],
  meta: PatchMeta | undefined,
  isDeleteList: boolean,
): JSONValue[] {
  // Delete lists apply whatever the field's strategy.
  if (mainStrategy(meta?.strategies ?? []) === 'merge' || isDeleteList) {
    return mergeSlice(original, patch, meta, isDeleteList);
  }
  return clean(patch) as JSONValue[];
}

/** The element kind shared by every item of the lists; throws like sliceElementType. */
function sliceElementKind(...lists: JSONValue[][]): string {
  let prev: string | undefined;
  for (const l of lists) {
    for (const v of l) {
      const k = kindOf(v);
      if (prev === undefined) {
        if (k === 'slice') throw smpErrors.noListOfLists();
        prev = k;
      } else if (prev !== k) {
        throw smpErrors.other(
          `list element types are not identical: ${lists.map((x) => JSON.stringify(x)).join(' ')}`,
        );
      }
    }
  }
  if (prev === undefined) throw smpErrors.other('no elements in any of the given slices');
  return prev;
}

function mergeSlice(
  original: JSONValue[],
  patch: JSONValue[],
  meta: PatchMeta | undefined,
  isDeleteList: boolean,
): JSONValue[] {
  if (original.length === 0 && patch.length === 0) return original;
  const kind = sliceElementKind(original, patch);
  const mergeKey = meta?.mergeKey ?? '';
  let merged: JSONValue[];
  let patchRest = patch;
  let base = original;
  if (kind !== 'map') {
    if (isDeleteList) {
      const del = new Set(patch);
      return original.filter((v) => !del.has(v));
    }
    merged = deduplicateScalars([...original, ...patch]);
  } else {
    if (!mergeKey)
      throw smpErrors.other(`cannot merge lists without merge key for ${meta?.schema?.name ?? ''}`);
    [base, patchRest] = withSpecialElements(original, patch, mergeKey);
    merged = withoutSpecialElements(base, patchRest, mergeKey, meta?.schema);
  }
  const [inPatch, serverOnly] = partitionByPresence(merged, patchRest, mergeKey);
  return normalizeElementOrder(inPatch, serverOnly, patchRest, base, mergeKey, kind === 'map');
}

/** Handles $patch items: delete removes by key, replace makes the list the patch's items. */
function withSpecialElements(
  original: JSONValue[],
  patch: JSONValue[],
  mergeKey: string,
): [JSONValue[], JSONValue[]] {
  const rest: JSONValue[] = [];
  let replace = false;
  let base = original;
  for (const v of patch) {
    const m = v as JSONObject;
    if (!has(m, DIRECTIVE)) {
      rest.push(v);
      continue;
    }
    switch (m[DIRECTIVE]) {
      case 'delete':
        if (!has(m, mergeKey)) throw smpErrors.noMergeKey(m, mergeKey);
        base = base.filter((o) => !(isObject(o) && has(o, mergeKey) && o[mergeKey] === m[mergeKey]));
        break;
      case 'replace':
        replace = true;
        break;
      case 'merge':
        throw smpErrors.other('merging lists cannot yet be specified in the patch');
      default:
        throw smpErrors.badPatchType(m[DIRECTIVE], m);
    }
  }
  if (replace) return [rest.map((x) => clean(x)), []];
  return [base, rest];
}

function withoutSpecialElements(
  original: JSONValue[],
  patch: JSONValue[],
  mergeKey: string,
  schema: PatchSchema | undefined,
): JSONValue[] {
  const out = [...original];
  for (const v of patch) {
    const m = v as JSONObject;
    if (!has(m, mergeKey)) throw smpErrors.noMergeKey(m, mergeKey);
    let found = -1;
    for (let i = 0; i < out.length; i++) {
      const o = out[i];
      if (!isObject(o)) throw smpErrors.other(`value for key ${i} is not a map`);
      if (has(o, mergeKey) && o[mergeKey] === m[mergeKey]) {
        found = i;
        break;
      }
    }
    if (found >= 0) out[found] = mergeMap(out[found] as JSONObject, m, schema);
    else out.push(clean(m));
  }
  return out;
}
