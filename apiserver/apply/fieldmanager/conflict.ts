// The 409 an apply answers on conflicts, worded as kube-apiserver words it:
//   Apply failed with 1 conflict: conflict with "mgr" using apps/v1: .spec.replicas
//   Apply failed with 2 conflicts: conflicts with "a":\n- .spec.x\n- .spec.y
// with one cause per conflicting field and manager.
import { StatusError, type StatusCause } from '../../../shared/api/status';
import type { ManagedFieldsEntry } from './managed';
import { pathString } from './path';
import type { Conflict } from './updater';

/** How a manager is named in conflicts: "mgr", "mgr" with subresource "status", "mgr" using apps/v1. */
export function printManager(id: string): string {
  let e: ManagedFieldsEntry;
  try {
    e = JSON.parse(id) as ManagedFieldsEntry;
    if (typeof e !== 'object' || e === null) throw new Error();
  } catch {
    return JSON.stringify(id);
  }
  let s = JSON.stringify(e.manager ?? '');
  if (e.subresource) s += ` with subresource ${JSON.stringify(e.subresource)}`;
  if (e.operation === 'Update') s += ` using ${e.apiVersion ?? ''}`;
  return s;
}

export function conflictMessage(conflicts: Conflict[]): string {
  if (conflicts.length === 1) {
    const c = conflicts[0];
    return `Apply failed with 1 conflict: conflict with ${printManager(c.manager)}: ${pathString(c.path)}`;
  }
  const byManager = new Map<string, string[]>();
  for (const c of conflicts) {
    const l = byManager.get(c.manager);
    if (l) l.push(pathString(c.path));
    else byManager.set(c.manager, [pathString(c.path)]);
  }
  const lines: string[] = [];
  for (const m of [...byManager.keys()].sort()) {
    lines.push(`conflicts with ${printManager(m)}:`);
    for (const p of byManager.get(m) as string[]) lines.push(`- ${p}`);
  }
  return `Apply failed with ${conflicts.length} conflicts: ${lines.join('\n')}`;
}

/** 409 Conflict with a FieldManagerConflict cause per conflict (errors.NewApplyConflict). */
export function applyConflictError(conflicts: Conflict[]): StatusError {
  const causes: StatusCause[] = conflicts.map((c) => ({
    reason: 'FieldManagerConflict',
    message: `conflict with ${printManager(c.manager)}`,
    field: pathString(c.path),
  }));
  return new StatusError(409, 'Conflict', conflictMessage(conflicts), { causes });
}
