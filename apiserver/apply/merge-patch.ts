// JSON merge patch (RFC 7386), with the errors kube-apiserver answers for
// application/merge-patch+json.
import { badRequest } from '../../shared/api/status';
import { isObject, type JSONObject } from './json-util';
import { jsonClone } from '../../shared/api/json-value';
import { parseJSONInt64 } from '../../shared/codec/json-int64';

/** RFC 7386 MergePatch(target, patch) on copies: neither argument is modified. */
export function mergePatch(target: unknown, patch: unknown): unknown {
  return mergeInto(jsonClone(target), patch);
}

/**
 * Merges `patch` into `target`, reusing (and modifying) target's containers.
 * Values taken from the patch are copied, with nulls pruned from objects.
 */
export function mergeInto(target: unknown, patch: unknown): unknown {
  if (!isObject(patch)) return pruneNulls(jsonClone(patch));
  const out: JSONObject = isObject(target) ? target : {};
  for (const k in patch) {
    const v = patch[k];
    if (v === null) delete out[k];
    else
      out[k] =
        isObject(v) && isObject(out[k]) ? (mergeInto(out[k], v) as JSONObject) : pruneNulls(jsonClone(v));
  }
  return out;
}

/** Removes null members of objects, recursively (arrays keep null items, as evanphx/json-patch does). */
function pruneNulls<T>(v: T): T {
  if (Array.isArray(v)) {
    for (const x of v) pruneNulls(x);
  } else if (isObject(v)) {
    for (const k of Object.keys(v)) {
      if (v[k] === null) delete v[k];
      else pruneNulls(v[k]);
    }
  }
  return v;
}

export const BAD_MERGE_PATCH = 'Invalid JSON Patch';

/** Parses a merge patch body: it must be a JSON object (or array, which replaces the document). */
export function parseMergePatch(body: string | Uint8Array | unknown): unknown {
  let patch: unknown = body;
  if (typeof body === 'string' || body instanceof Uint8Array) {
    const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
    try {
      patch = parseJSONInt64(text);
    } catch {
      throw badRequest(BAD_MERGE_PATCH);
    }
  }
  // evanphx/json-patch answers ErrBadJSONPatch for null and for scalars.
  if (patch === null || typeof patch !== 'object') throw badRequest(BAD_MERGE_PATCH);
  return patch;
}
