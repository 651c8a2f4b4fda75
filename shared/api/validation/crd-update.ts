// What an update of a CustomResourceDefinition may not change, on top of the
// rules every CRD follows (crd-object.ts): group and plural never; scope and
// kind once established (they decide where and what is stored); stored
// versions stay versions of the spec; the API approval is checked again
// only when it changes or was valid before.
import type { FieldError } from '../field-errors';
import { invalid } from '../field-errors';
import { validateObjectMetaUpdate } from './metadata';
import { asArr, asObj, asStr, index, type Obj } from './path';
import { APPROVAL, validateAPIApproval, validateCRDSpec, validateCRDStatus } from './crd-object';

/** Every stored version must still be a version of the spec. */
function validateStoredVersions(o: Obj): FieldError[] {
  const names = new Set(asArr(asObj(o.spec)?.versions).map((v) => asStr(asObj(v)?.name)));
  const errs: FieldError[] = [];
  asArr(asObj(o.status)?.storedVersions).forEach((v, i) => {
    if (!names.has(asStr(v)))
      errs.push(invalid(index('status.storedVersions', i), v, 'must appear in spec.versions'));
  });
  return errs;
}

export function validateCRDUpdate(o: Obj, old: Obj): FieldError[] {
  const s = asObj(o.spec) ?? {};
  const os = asObj(old.spec) ?? {};
  const errs = [...validateObjectMetaUpdate(asObj(o.metadata), asObj(old.metadata)), ...validateCRDSpec(s)];
  const n = asObj(s.names) ?? {};
  const on = asObj(os.names) ?? {};
  const established = asArr(asObj(old.status)?.conditions).some(
    (c) => asObj(c)?.type === 'Established' && asObj(c)?.status === 'True',
  );
  if (established) {
    // These decide where and what is stored.
    if (s.scope !== os.scope) errs.push(invalid('spec.scope', s.scope ?? '', 'field is immutable'));
    if (n.kind !== on.kind) errs.push(invalid('spec.names.kind', n.kind ?? '', 'field is immutable'));
  }
  if (s.group !== os.group) errs.push(invalid('spec.group', s.group ?? '', 'field is immutable'));
  if (n.plural !== on.plural) errs.push(invalid('spec.names.plural', n.plural ?? '', 'field is immutable'));
  errs.push(...validateCRDStatus(o));
  errs.push(...validateStoredVersions(o));
  const oldApproval = asStr(asObj(asObj(old.metadata)?.annotations)?.[APPROVAL]);
  const newApproval = asStr(asObj(asObj(o.metadata)?.annotations)?.[APPROVAL]);
  if (oldApproval !== newApproval || !validateAPIApproval(old).length) errs.push(...validateAPIApproval(o));
  return errs;
}
