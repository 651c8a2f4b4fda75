// Fields a write may not own: the registry resets them (status on the main
// resource, everything but status on /status), so ownership ignores them,
// as the strategies' GetResetFields tell Kubernetes' field manager.
import { FieldSet } from './fieldset';
import { fieldPE } from './path';
import type { FieldFilter } from './updater';

/** Extra paths a /status write may not own, beyond everything outside status (per group/resource). */
const STATUS_EXTRA: Record<string, string[][]> = {
  'apps/deployments': [['metadata', 'labels']],
  'apps/replicasets': [['metadata', 'labels']],
  'apps/statefulsets': [['metadata', 'labels']],
  'apps/daemonsets': [['metadata', 'labels']],
  '/pods': [
    ['metadata', 'deletionTimestamp'],
    ['metadata', 'ownerReferences'],
  ],
};

const setOf = (paths: string[][]) => FieldSet.of(...paths.map((p) => p.map(fieldPE)));

const STATUS = setOf([['status']]);
const excludeStatus: FieldFilter = (s) => s.recursiveDifference(STATUS);

/** Keeps status and metadata only (a /status write owns nothing of the spec or other top-level fields). */
function onlyStatus(extra: FieldSet | undefined): FieldFilter {
  return (s) => {
    let out = s;
    const drop: string[] = [];
    for (const e of s.rawEntries()) {
      if (e.pe.t === 'f' && e.pe.name !== 'status' && e.pe.name !== 'metadata') drop.push(e.pe.name);
    }
    if (drop.length > 0) out = out.recursiveDifference(setOf(drop.map((d) => [d])));
    return extra ? out.recursiveDifference(extra) : out;
  };
}

export interface ResetFieldsScope {
  group: string;
  /** Plural resource name, e.g. "deployments". */
  resource: string;
  /** Whether the resource serves a status subresource (the main resource then resets status). */
  hasStatusSubresource: boolean;
}

/**
 * The reset-fields filter for a write to `subresource` ('' for the main
 * resource), or undefined when nothing is reset.
 */
export function resetFieldsFor(scope: ResetFieldsScope, subresource = ''): FieldFilter | undefined {
  if (subresource === '') return scope.hasStatusSubresource ? excludeStatus : undefined;
  if (subresource === 'status') {
    const extra = STATUS_EXTRA[`${scope.group}/${scope.resource}`];
    return onlyStatus(extra ? setOf(extra) : undefined);
  }
  return undefined;
}
