// Field-set walks against the type model that do not need the object:
// adjusting ownership recorded before a topology change, and listing named
// struct fields as members (used when pruning).
import { FieldSet } from './fieldset';
import type { PathElement } from './path';
import { DEDUCED, fieldType, type TypeNode } from './types';

function childType(t: TypeNode, pe: PathElement): TypeNode | undefined {
  switch (t.kind) {
    case 'map':
      return pe.t === 'f' ? fieldType(t, pe.name) : undefined;
    case 'list':
      return t.element();
    case 'deduced':
      return DEDUCED;
    default:
      return undefined;
  }
}

/**
 * Reconciles a manager's set with the current schema (ReconcileFieldSetWithSchema):
 * where a granular node became atomic, the whole node is owned instead of its
 * parts; atomic to granular changes nothing (the owner keeps the top-level
 * field only). Returns undefined when nothing changes.
 */
export function reconcileWithSchema(set: FieldSet, root: TypeNode): FieldSet | undefined {
  if (root.kind === 'deduced') return undefined;
  const toReplace: PathElement[][] = [];
  const path: PathElement[] = [];
  const walk = (s: FieldSet, t: TypeNode) => {
    for (const e of s.rawEntries()) {
      const ct = childType(t, e.pe);
      if (!ct || !e.children || e.children.isEmpty()) continue;
      path.push(e.pe);
      const atomic = (ct.kind === 'list' && ct.listType === 'atomic') || (ct.kind === 'map' && ct.atomic);
      if (atomic) toReplace.push([...path]);
      else if (ct.kind !== 'scalar') walk(e.children, ct);
      path.pop();
    }
  };
  walk(set, root);
  if (toReplace.length === 0) return undefined;
  const atomicRoots = FieldSet.of(...toReplace);
  return set.recursiveDifference(atomicRoots).union(atomicRoots);
}

/**
 * The set plus, as members, every declared struct field that has something
 * below it in the set (fieldpath.Set.EnsureNamedFieldsAreMembers).
 */
export function ensureNamedFieldsAreMembers(set: FieldSet, t: TypeNode): FieldSet {
  if (set.isEmpty()) return set;
  const extra: PathElement[][] = [];
  const path: PathElement[] = [];
  const walk = (s: FieldSet, t: TypeNode) => {
    for (const e of s.rawEntries()) {
      if (!e.children || e.children.isEmpty()) continue;
      path.push(e.pe);
      if (!e.member && t.kind === 'map' && e.pe.t === 'f' && t.field(e.pe.name)) extra.push([...path]);
      const ct = childType(t, e.pe);
      if (ct) walk(e.children, ct);
      path.pop();
    }
  };
  walk(set, t);
  return extra.length === 0 ? set : set.union(FieldSet.of(...extra));
}
