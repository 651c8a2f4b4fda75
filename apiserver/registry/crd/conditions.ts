// The status conditions the CRD controller writes, as apiextensions-apiserver's
// controllers compute them:
//   NamesAccepted  spec.names become status.acceptedNames unless a name is
//                  taken within the group (the naming controller)
//   Established    once the names are accepted
//   Terminating    while the custom resources are deleted, and how that ended
import { jsonEqual } from '../../../shared/api/json-value';
import { findCondition, type CRD, type CRDCondition, type CRDNames } from './types';

function normalizeNames(n: CRDNames | undefined): Record<string, unknown> {
  return {
    plural: n?.plural ?? '',
    singular: n?.singular ?? '',
    kind: n?.kind ?? '',
    listKind: n?.listKind ?? '',
    shortNames: n?.shortNames ?? [],
    categories: n?.categories ?? [],
  };
}

/** Whether two sets of names are the same (absent lists and empty ones alike). */
export const sameNames = (a: CRDNames | undefined, b: CRDNames | undefined) =>
  jsonEqual(normalizeNames(a), normalizeNames(b));

/**
 * The naming controller's calculation: the names to accept (each requested
 * name unless another CRD of the group accepted it already), NamesAccepted,
 * and the Established condition to write with them.
 */
export function calculateNames(
  crd: CRD,
  all: Iterable<CRD>,
): {
  names: CRDNames;
  namesAccepted: CRDCondition;
  established: CRDCondition;
} {
  const resources = new Set<string>();
  const kinds = new Set<string>();
  for (const other of all) {
    if (other.spec.group !== crd.spec.group) continue;
    const a = other.status?.acceptedNames;
    if (!a) continue;
    for (const n of [a.plural, a.singular ?? '', ...(a.shortNames ?? [])]) resources.add(n);
    kinds.add(a.kind);
    kinds.add(a.listKind ?? '');
  }
  const requested = crd.spec.names;
  const accepted: CRDNames = crd.status?.acceptedNames ?? { plural: '', kind: '' };
  const names: CRDNames = structuredClone(accepted);
  const cond: CRDCondition = { type: 'NamesAccepted', status: 'Unknown' };
  const fail = (reason: string, message: string) => {
    cond.status = 'False';
    cond.reason = reason;
    cond.message = message;
  };
  const check = (want: string | undefined, have: string | undefined, used: Set<string>) =>
    (want ?? '') === (have ?? '') || !used.has(want ?? '') ? undefined : `"${want ?? ''}" is already in use`;

  let e = check(requested.plural, accepted.plural, resources);
  if (e) fail('PluralConflict', e);
  else names.plural = requested.plural;
  e = check(requested.singular, accepted.singular, resources);
  if (e) fail('SingularConflict', e);
  else names.singular = requested.singular;
  const want = requested.shortNames ?? [];
  if (!jsonEqual(want, accepted.shortNames ?? [])) {
    const mine = new Set(accepted.shortNames ?? []);
    const errs: string[] = [];
    for (const s of want) {
      if (mine.has(s) || s === accepted.plural || s === accepted.singular) continue;
      const se = check(s, '', resources);
      if (se) errs.push(se);
    }
    if (errs.length) fail('ShortNamesConflict', errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
    else if (want.length) names.shortNames = [...want];
    else delete names.shortNames;
  }
  e = check(requested.kind, accepted.kind, kinds);
  if (e) fail('KindConflict', e);
  else names.kind = requested.kind;
  e = check(requested.listKind, accepted.listKind, kinds);
  if (e) fail('ListKindConflict', e);
  else names.listKind = requested.listKind;
  if (requested.categories?.length) names.categories = [...requested.categories];
  else delete names.categories;
  if (cond.status === 'Unknown') {
    cond.status = 'True';
    cond.reason = 'NoConflicts';
    cond.message = 'no conflicts found';
  }
  let established: CRDCondition = findCondition(crd, 'Established') ?? {
    type: 'Established',
    status: 'False',
    reason: 'NotAccepted',
    message: 'not all names are accepted',
  };
  if (established.status !== 'True' && cond.status === 'True')
    established = {
      type: 'Established',
      status: 'False',
      reason: 'Installing',
      message: 'the initial names have been accepted',
    };
  return { names, namesAccepted: cond, established: { ...established } };
}

/** Established once NamesAccepted is true (the establishing controller). */
export const ESTABLISHED: CRDCondition = {
  type: 'Established',
  status: 'True',
  reason: 'InitialNamesAccepted',
  message: 'the initial names have been accepted',
};

/** Terminating, as the finalizer moves through the deletion of the custom resources. */
export const TERMINATING = {
  inProgress: {
    type: 'Terminating',
    status: 'True',
    reason: 'InstanceDeletionInProgress',
    message: 'CustomResource deletion is in progress',
  },
  overlapping: {
    type: 'Terminating',
    status: 'False',
    reason: 'OverlappingBuiltInResource',
    message: 'instances overlap with built-in resources in storage',
  },
  neverEstablished: {
    type: 'Terminating',
    status: 'False',
    reason: 'NeverEstablished',
    message: 'resource was never established',
  },
  completed: {
    type: 'Terminating',
    status: 'False',
    reason: 'InstanceDeletionCompleted',
    message: 'removed all instances',
  },
} satisfies Record<string, CRDCondition>;

/** Terminating stays true: the deletion failed for now (InstanceDeletionFailed, InstanceDeletionCheck). */
export const terminationFailed = (reason: string, message: string): CRDCondition => ({
  type: 'Terminating',
  status: 'True',
  reason,
  message,
});
