// Ownership bookkeeping of structured-merge-diff's merge.Updater: which
// manager owns which fields after an update (non-apply write) or an apply,
// conflicts, and pruning of fields an applier stopped applying.
import { jsonEqual } from '../../../shared/api/json-value';
import { FieldSet } from './fieldset';
import type { Managed, VersionedSet } from './managed';
import type { Path } from './path';
import { ensureNamedFieldsAreMembers, reconcileWithSchema } from './reconcile';
import { compare, toFieldSet, type Comparison } from './typed';
import { merge, removeItems } from './typed-merge';
import type { TypeNode } from './types';

/** Drops the fields a write may not own (reset fields); see reset-fields.ts. */
export type FieldFilter = (s: FieldSet) => FieldSet;

export interface Conflict {
  /** The conflicting manager's identifier. */
  manager: string;
  path: Path;
}

export class ConflictsError extends Error {
  override name = 'ConflictsError';
  constructor(readonly conflicts: Conflict[]) {
    super(`${conflicts.length} conflict(s)`);
  }
}

export interface UpdaterContext {
  type: TypeNode;
  /** The request's group/version. */
  version: string;
  ignore?: FieldFilter;
}

const filtered = (c: Comparison, f: FieldFilter | undefined): Comparison =>
  f ? { added: f(c.added), modified: f(c.modified), removed: f(c.removed) } : c;

/** Adjusts every manager's set to the current schema (topology changes). */
function reconcileAll(fields: Map<string, VersionedSet>, type: TypeNode): Map<string, VersionedSet> {
  const out = new Map(fields);
  for (const [id, vs] of fields) {
    const r = reconcileWithSchema(vs.set, type);
    if (r) out.set(id, { set: r, apiVersion: vs.apiVersion, applied: vs.applied });
  }
  return out;
}

/**
 * Takes from every manager but `workflow` the fields that changed (a conflict
 * unless forced) and the fields that went away.
 */
function update(
  oldObj: unknown,
  newObj: unknown,
  fields: Map<string, VersionedSet>,
  workflow: string,
  force: boolean,
  ctx: UpdaterContext,
): Comparison {
  const c = filtered(compare(oldObj, newObj, ctx.type), ctx.ignore);
  const changed = c.modified.union(c.added);
  const conflicts = new Map<string, FieldSet>();
  for (const [id, vs] of fields) {
    if (id === workflow) continue;
    const inConflict = vs.set.intersection(changed);
    if (!inConflict.isEmpty()) conflicts.set(id, inConflict);
  }
  if (!force && conflicts.size > 0) {
    const list: Conflict[] = [];
    for (const id of [...conflicts.keys()].sort()) {
      (conflicts.get(id) as FieldSet).forEachPath((path) => list.push({ manager: id, path }));
    }
    throw new ConflictsError(list);
  }
  for (const [id, vs] of fields) {
    if (id === workflow) continue;
    const taken = conflicts.get(id);
    let set = taken ? vs.set.difference(taken) : vs.set;
    set = set.difference(c.removed);
    if (set !== vs.set) fields.set(id, { set, apiVersion: vs.apiVersion, applied: vs.applied });
  }
  for (const [id, vs] of fields) if (vs.set.isEmpty()) fields.delete(id);
  return c;
}

/** A non-apply write by `manager`: it owns what it changed; others lose it without conflict. */
export function updaterUpdate(
  live: unknown,
  next: unknown,
  managed: Managed,
  manager: string,
  ctx: UpdaterContext,
): Managed {
  const fields = reconcileAll(managed.fields, ctx.type);
  const c = update(live, next, fields, manager, true, ctx);
  const prev = fields.get(manager)?.set ?? FieldSet.EMPTY;
  let set = prev.union(c.modified).union(c.added).difference(c.removed);
  if (ctx.ignore) set = ctx.ignore(set);
  if (set.isEmpty()) fields.delete(manager);
  else fields.set(manager, { set, apiVersion: ctx.version, applied: false });
  return { fields, times: managed.times };
}

export interface ApplyResult {
  /** The merged object, or undefined when the apply changes nothing. */
  object: unknown;
  managed: Managed;
}

/** An apply by `manager` of `config` (whose field set is `configSet`). */
export function updaterApply(
  live: unknown,
  config: unknown,
  configSet: FieldSet,
  managed: Managed,
  manager: string,
  force: boolean,
  ctx: UpdaterContext,
): ApplyResult {
  const fields = reconcileAll(managed.fields, ctx.type);
  let merged = merge(live, config, ctx.type);
  const last = fields.get(manager);
  const set = ctx.ignore ? ctx.ignore(configSet) : configSet;
  fields.set(manager, { set, apiVersion: ctx.version, applied: true });
  merged = prune(merged, fields, last, ctx.type);
  update(live, merged, fields, manager, force, ctx);
  return { object: jsonEqual(live, merged) ? undefined : merged, managed: { fields, times: managed.times } };
}

/**
 * Removes what the applier applied last time, no longer applies, and nobody
 * else owns (merge.Updater.prune with addBackOwnedItems/addBackDanglingItems).
 */
function prune(
  merged: unknown,
  fields: Map<string, VersionedSet>,
  last: VersionedSet | undefined,
  t: TypeNode,
) {
  if (!last || last.set.isEmpty()) return merged;
  const named = (s: FieldSet) => ensureNamedFieldsAreMembers(s, t);
  const lastSet = named(last.set);
  let pruned = removeItems(merged, lastSet, t);
  if (pruned === merged) return merged;
  let owned = FieldSet.EMPTY;
  for (const vs of fields.values()) owned = owned.union(vs.set);
  const mergedSet = named(toFieldSet(merged, t));
  pruned = removeItems(merged, mergedSet.difference(named(toFieldSet(pruned, t)).union(named(owned))), t);
  const prunedSet = named(toFieldSet(pruned, t));
  return removeItems(merged, mergedSet.difference(prunedSet).intersection(lastSet), t);
}
