// PATCH content types and the patch kinds they select.
import { unsupportedMediaType } from '../../shared/api/status';
import { BUILTIN_PATCH_TYPES, CUSTOM_RESOURCE_PATCH_TYPES } from './strategic-merge';

export type PatchKind = 'merge' | 'json' | 'strategic' | 'apply';

export const PATCH_CONTENT_TYPES: Record<PatchKind, string> = {
  json: 'application/json-patch+json',
  merge: 'application/merge-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
};

const KIND_BY_TYPE = new Map<string, PatchKind>(
  Object.entries(PATCH_CONTENT_TYPES).map(([k, v]) => [v, k as PatchKind]),
);

/**
 * The patch kind of a Content-Type (parameters ignored); 415 listing the
 * accepted types when the resource does not take it (strategic merge is for
 * built-in kinds only).
 */
export function patchKindOf(contentType: string | undefined, builtin: boolean): PatchKind {
  const base = (contentType ?? '').split(';')[0].trim().toLowerCase();
  const accepted = builtin ? BUILTIN_PATCH_TYPES : CUSTOM_RESOURCE_PATCH_TYPES;
  const kind = KIND_BY_TYPE.get(base);
  if (!kind || !accepted.includes(base)) throw unsupportedMediaType('', accepted);
  return kind;
}
