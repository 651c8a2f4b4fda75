// Patches and server-side apply for the apiserver's handlers.
//
//   create / update (POST, PUT):  default the object, then
//       update(live | null, obj, { manager: managerOrUserAgent(q.fieldManager, ua), apiVersion, subresource, resetFields })
//   patch (PATCH):  applyPatch(patchKindOf(contentType, builtin), live, body, ctx)
//       merge/json/strategic patch the live object, run ctx.defaulter, then record ownership;
//       apply merges and records ownership (conflicts: 409), then runs ctx.defaulter.
//   /status and other subresources: the same with subresource and resetFieldsFor(scope, 'status').
import { invalid as invalidField } from '../../shared/api/field-errors';
import { badRequest, invalid, internalError } from '../../shared/api/status';
import { definitionOf, parseAPIVersion } from '../../shared/api/schema';
import { readYAMLValue } from '../../shared/codec/yaml';
import { applyJSONPatch } from './json-patch';
import { isObject, type JSONObject } from './json-util';
import { mergeInto, parseMergePatch } from './merge-patch';
import { managerOrUserAgent, validatePatchOptions } from './options';
import type { PatchKind } from './patch-kind';
import {
  assertStrategicMergeSupported,
  parseStrategicMergePatch,
  strategicMergePatch,
} from './strategic-merge';
import { apply, update, type FieldManagerScope, type KubeObject } from './fieldmanager/field-manager';
import { jsonClone } from '../../shared/api/json-value';
import { parseJSONInt64 } from '../../shared/codec/json-int64';
import { stringifyJSONInt64 } from '../../shared/codec/json-int64';

export { apply, update, fieldManagerRequired, BEFORE_FIRST_APPLY } from './fieldmanager/field-manager';
export type {
  ApplyOptions,
  UpdateOptions,
  FieldManagerScope,
  KubeObject,
} from './fieldmanager/field-manager';
export { resetFieldsFor, type ResetFieldsScope } from './fieldmanager/reset-fields';
export { builtinModel, structuralModel, UNSTRUCTURED_WITH_METADATA } from './fieldmanager/schema-model';
export { UNSTRUCTURED, type TypeModel, type TypeNode } from './fieldmanager/types';
export type { FieldFilter } from './fieldmanager/updater';
export { FieldSet, fromFieldsV1 } from './fieldmanager/fieldset';
export { LAST_APPLIED_ANNOTATION } from './fieldmanager/last-applied';
export {
  FIELD_MANAGER_MAX_LENGTH,
  managerFromUserAgent,
  managerOrUserAgent,
  validateFieldManager,
  validatePatchOptions,
  validateWriteOptions,
} from './options';
export { PATCH_CONTENT_TYPES, patchKindOf, type PatchKind } from './patch-kind';
export { mergePatch } from './merge-patch';
export { applyJSONPatch } from './json-patch';
export {
  applyStrategicMergePatch,
  assertStrategicMergeSupported,
  BUILTIN_PATCH_TYPES,
  CUSTOM_RESOURCE_PATCH_TYPES,
} from './strategic-merge';

export interface PatchContext extends FieldManagerScope {
  /** ?fieldManager; required for apply. */
  manager?: string;
  /** The request's User-Agent, for the default manager of non-apply patches. */
  userAgent?: string;
  /** ?force; only valid for apply. */
  force?: boolean;
  /** The kind's schema definition for strategic merge (defaults to the built-in one of apiVersion/kind). */
  definition?: string;
  /** Defaults the object in place; runs before ownership is recorded (after the merge, for apply). */
  defaulter?: (obj: KubeObject) => void;
}

/** Decodes an apply body: YAML (JSON is YAML) holding one object. */
export function parseApplyBody(body: string | Uint8Array | unknown): KubeObject {
  if (typeof body !== 'string' && !(body instanceof Uint8Array)) {
    if (isObject(body)) return body;
    throw badRequest('error decoding YAML: expected an object');
  }
  const text = typeof body === 'string' ? body : Buffer.from(body).toString('utf8');
  let v: unknown;
  const trimmed = text.trimStart();
  if (trimmed.startsWith('{')) {
    try {
      v = parseJSONInt64(text);
    } catch {
      v = undefined;
    }
  }
  if (v === undefined) {
    try {
      v = readYAMLValue(text);
    } catch (e) {
      throw badRequest(`error decoding YAML: ${(e as Error).message}`);
    }
  }
  if (v === null || v === undefined) return {};
  if (!isObject(v)) {
    const t = Array.isArray(v) ? 'array' : typeof v === 'boolean' ? 'bool' : typeof v;
    throw badRequest(
      `error decoding YAML: json: cannot unmarshal ${t} into Go value of type map[string]interface {}`,
    );
  }
  return v;
}

/**
 * A PATCH: the patched object with metadata.managedFields (defaulted by
 * ctx.defaulter when given; validation is the caller's). `live` may be null
 * only for apply, which then creates. Throws StatusErrors.
 */
export function applyPatch(
  kind: PatchKind,
  live: KubeObject | null,
  body: unknown,
  ctx: PatchContext,
): KubeObject {
  validatePatchOptions(kind, ctx);
  if (kind === 'apply') {
    const applied = parseApplyBody(body);
    const obj = apply(live, applied, { ...ctx, manager: ctx.manager as string, force: ctx.force });
    ctx.defaulter?.(obj);
    return obj;
  }
  if (!live) throw internalError(new Error(`a ${kind} patch needs the live object`));
  let patched: unknown;
  switch (kind) {
    case 'merge':
      patched = mergeInto(jsonClone(live), parseMergePatch(body));
      break;
    case 'json':
      patched = applyJSONPatch(live, body);
      break;
    case 'strategic': {
      const k = ctx.kind ?? live.kind;
      const def = ctx.definition ?? definitionOf({ ...parseAPIVersion(ctx.apiVersion), kind: String(k) });
      const schema = assertStrategicMergeSupported(def);
      patched = strategicMergePatch(jsonClone(live), parseStrategicMergePatch(body), schema);
      break;
    }
  }
  if (!isObject(patched)) {
    // What decoding the patched document into the kind answers.
    const t = Array.isArray(patched) ? 'array' : patched === null ? 'null' : typeof patched;
    throw invalid({ group: '', kind: '' }, '', [
      invalidField(
        'patch',
        stringifyJSONInt64(patched),
        `json: cannot unmarshal ${t} into Go value of type map[string]interface {}`,
      ),
    ]);
  }
  const obj = patched as JSONObject;
  ctx.defaulter?.(obj);
  return update(live, obj, { ...ctx, manager: managerOrUserAgent(ctx.manager, ctx.userAgent) });
}
