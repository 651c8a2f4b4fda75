// Client-side apply <-> server-side apply hand-over for the "kubectl" manager
// (lastappliedmanager.go, lastappliedupdater.go): conflicts on fields the
// last-applied annotation already set to their live values are allowed, and
// an existing annotation is kept in step with what kubectl applies.
import { goJSONSorted, isObject } from '../json-util';
import { FieldSet } from './fieldset';
import { compare, toFieldSet } from './typed';
import type { Conflict } from './updater';
import type { TypeNode } from './types';

export const LAST_APPLIED_ANNOTATION = 'kubectl.kubernetes.io/last-applied-configuration';
export const KUBECTL_MANAGER = 'kubectl';

function lastAppliedOf(obj: unknown): string | undefined {
  const a = isObject(obj) && isObject(obj.metadata) ? obj.metadata.annotations : undefined;
  const v = isObject(a) ? a[LAST_APPLIED_ANNOTATION] : undefined;
  return typeof v === 'string' && v !== '' ? v : undefined;
}

/**
 * The fields the live object's last-applied configuration sets to their live
 * values, or undefined when there is none usable.
 */
export function allowedConflictsFromLastApplied(
  live: unknown,
  apiVersion: string,
  t: TypeNode,
): FieldSet | undefined {
  const text = lastAppliedOf(live);
  if (!text) return undefined;
  let last: unknown;
  try {
    last = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!isObject(last) || last.apiVersion !== apiVersion) return undefined;
  try {
    const set = toFieldSet(last, t, true);
    const c = compare(last, live, t);
    return set.difference(c.modified).difference(c.added).difference(c.removed);
  } catch {
    return undefined;
  }
}

/** The conflicts the allowed set does not cover. */
export const conflictsNotAllowed = (conflicts: Conflict[], allowed: FieldSet) =>
  conflicts.filter((c) => !allowed.has(c.path));

/** Refreshes the last-applied annotation on `result` from the applied configuration, when it has one. */
export function updateLastApplied(result: Record<string, unknown>, applied: Record<string, unknown>): void {
  if (!lastAppliedOf(result)) return;
  const copy = structuredClone(applied);
  const meta = copy.metadata;
  if (isObject(meta) && isObject(meta.annotations)) {
    delete meta.annotations[LAST_APPLIED_ANNOTATION];
  }
  const annotations = (result.metadata as Record<string, Record<string, unknown>>).annotations;
  annotations[LAST_APPLIED_ANNOTATION] = goJSONSorted(copy) + '\n';
}
