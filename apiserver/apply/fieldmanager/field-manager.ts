// metadata.managedFields maintenance for every write, with the layers of
// Kubernetes' default field manager: strip metadata fields, record the time
// of changed entries, one Update entry per (manager, apiVersion, subresource)
// and one Apply entry per (manager, subresource), cap Update entries at 10,
// "before-first-apply" for objects that had no ownership yet, and the kubectl
// client-side -> server-side apply hand-over.
import { rfc3339 } from '../../../shared/api/validation/gotime';
import { badRequest, invalid, StatusError } from '../../../shared/api/status';
import { required } from '../../../shared/api/field-errors';
import { parseAPIVersion } from '../../../shared/api/schema';
import { isObject, type JSONObject } from '../json-util';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';
import { applyConflictError } from './conflict';
import { FieldSet } from './fieldset';
import {
  KUBECTL_MANAGER,
  allowedConflictsFromLastApplied,
  conflictsNotAllowed,
  updateLastApplied,
} from './last-applied';
import {
  capUpdateManagers,
  decodeManagedFields,
  emptyManaged,
  encodeManagedFields,
  isResetManagedFields,
  managerIdentifier,
  type Managed,
} from './managed';
import { fieldPE } from './path';
import { builtinModel, UNSTRUCTURED_WITH_METADATA } from './schema-model';
import { createdSet, TypedError, toFieldSet } from './typed';
import type { TypeModel } from './types';
import {
  ConflictsError,
  updaterApply,
  updaterUpdate,
  type FieldFilter,
  type UpdaterContext,
} from './updater';

export type KubeObject = JSONObject;

export interface FieldManagerScope {
  /** The request's group/version, e.g. "apps/v1" or "v1". */
  apiVersion: string;
  /** The kind; defaults to the object's. */
  kind?: string;
  /** '' or undefined for the main resource, else e.g. "status", "scale". */
  subresource?: string;
  /** The kind's type model; defaults to the built-in schema, else unstructured (typed metadata). */
  model?: TypeModel;
  /** Fields the write may not own (resetFieldsFor). */
  resetFields?: FieldFilter;
  /** Clock for entry times. */
  now?: Date | (() => Date);
}

export interface UpdateOptions extends FieldManagerScope {
  /** The field manager (see managerOrUserAgent); "unknown" when empty. */
  manager: string;
  /** Always an Update entry; accepted for symmetry with the entries. */
  operation?: 'Update';
}

export interface ApplyOptions extends FieldManagerScope {
  manager: string;
  force?: boolean;
}

/** Paths never recorded in ownership (stripmeta.go, plus what deletion sets). */
const STRIPPED = FieldSet.of(
  ...[
    ['apiVersion'],
    ['kind'],
    ['metadata'],
    ['metadata', 'name'],
    ['metadata', 'namespace'],
    ['metadata', 'creationTimestamp'],
    ['metadata', 'selfLink'],
    ['metadata', 'uid'],
    ['metadata', 'clusterName'],
    ['metadata', 'generation'],
    ['metadata', 'managedFields'],
    ['metadata', 'resourceVersion'],
    ['metadata', 'deletionTimestamp'],
    ['metadata', 'deletionGracePeriodSeconds'],
  ].map((p) => p.map(fieldPE)),
);

const CURRENT_OPERATION = 'current-operation';
export const BEFORE_FIRST_APPLY = 'before-first-apply';

const timeOf = (o: FieldManagerScope) =>
  rfc3339(typeof o.now === 'function' ? o.now() : (o.now ?? new Date()));

const models = new Map<string, TypeModel>();

function modelOf(o: FieldManagerScope, obj: KubeObject): TypeModel {
  if (o.model) return o.model;
  const kind = o.kind ?? (typeof obj.kind === 'string' ? obj.kind : '');
  const key = `${o.apiVersion}/${kind}`;
  let m = models.get(key);
  if (!m) {
    m = builtinModel({ ...parseAPIVersion(o.apiVersion), kind }) ?? UNSTRUCTURED_WITH_METADATA;
    models.set(key, m);
  }
  return m;
}

const metaOf = (o: unknown): JSONObject | undefined =>
  isObject(o) && isObject(o.metadata) ? o.metadata : undefined;

function strip(m: Managed, id: string): void {
  const vs = m.fields.get(id);
  if (!vs) return;
  const set = vs.set.difference(STRIPPED);
  if (set.isEmpty()) m.fields.delete(id);
  else if (set !== vs.set) m.fields.set(id, { set, apiVersion: vs.apiVersion, applied: vs.applied });
}

/** The Update layers: record under a scratch name, then merge into the manager's entry and stamp it if it changed. */
function updateManaged(
  live: unknown,
  next: unknown,
  managed: Managed,
  manager: string,
  o: FieldManagerScope,
  ctx: UpdaterContext,
): Managed {
  const id = managerIdentifier({
    manager: manager || 'unknown',
    operation: 'Update',
    apiVersion: o.apiVersion,
    subresource: o.subresource,
  });
  const created =
    managed.fields.size === 0 && isObject(live) && Object.keys(live).length === 0
      ? createdSet(next, ctx.type)
      : undefined;
  let m: Managed;
  if (created) {
    // A create with no ownership yet: what it set, without comparing against nothing path by path.
    const set = ctx.ignore ? ctx.ignore(created) : created;
    m = { fields: new Map(), times: managed.times };
    if (!set.isEmpty()) m.fields.set(CURRENT_OPERATION, { set, apiVersion: ctx.version, applied: false });
  } else m = updaterUpdate(live, next, managed, CURRENT_OPERATION, ctx);
  strip(m, CURRENT_OPERATION);
  const cur = m.fields.get(CURRENT_OPERATION);
  if (cur) {
    m.fields.delete(CURRENT_OPERATION);
    const prev = m.fields.get(id);
    m.fields.set(id, {
      set: prev ? cur.set.union(prev.set) : cur.set,
      apiVersion: cur.apiVersion,
      applied: false,
    });
    m.times = new Map(m.times).set(id, timeOf(o));
  }
  capUpdateManagers(m);
  return m;
}

function setManagedFields(obj: KubeObject, m: Managed): void {
  const meta = metaOf(obj);
  const entries = encodeManagedFields(m);
  if (entries) {
    if (meta) meta.managedFields = entries as unknown as JSONObject[];
    else obj.metadata = { managedFields: entries as unknown as JSONObject[] };
  } else if (meta) delete meta.managedFields;
}

function decodeOrEmpty(v: unknown): Managed {
  try {
    return decodeManagedFields(v);
  } catch {
    return emptyManaged();
  }
}

/**
 * Records ownership for a non-apply write (create, update, patch): the writer
 * takes what it changed, others lose it without conflict. `next` is the object
 * about to be stored (after defaulting); its metadata.managedFields is set in
 * place and it is returned. Like Kubernetes' UpdateNoErrors, this never
 * throws: on an internal error the live entries are kept.
 *
 * managedFields in `next` replace the live ones when they decode (a client
 * may write them), `[{}]` resets them first (the writer then owns what it
 * changed), and an empty list or none keeps the live ones. Writes to a
 * subresource always keep the live ones.
 */
export function update(live: KubeObject | null, next: KubeObject, o: UpdateOptions): KubeObject {
  const meta = metaOf(next);
  if (!meta) return next;
  const liveEntries = metaOf(live)?.managedFields;
  let managed: Managed;
  let reset = false;
  if (o.subresource) managed = decodeOrEmpty(liveEntries);
  else if (isResetManagedFields(meta.managedFields)) {
    managed = emptyManaged();
    reset = true;
  } else if (liveEntries !== undefined && jsonEqual(meta.managedFields, liveEntries)) {
    // The usual read-modify-write sends the entries back unchanged: reuse the live ones (decoded once, cached).
    managed = decodeOrEmpty(liveEntries);
  } else {
    try {
      managed = decodeManagedFields(meta.managedFields);
      if (managed.fields.size === 0) managed = decodeOrEmpty(liveEntries);
    } catch {
      managed = decodeOrEmpty(liveEntries);
    }
  }
  delete meta.managedFields;

  // Objects that exist without ownership stay untracked until applied to (skipnonapplied.go).
  const creating = !live || !metaOf(live)?.uid;
  if (managed.fields.size === 0 && !creating && !reset) return next;

  try {
    const ctx: UpdaterContext = {
      type: modelOf(o, next).root(),
      version: o.apiVersion,
      ignore: o.resetFields,
    };
    managed = updateManaged(live ?? {}, next, managed, o.manager, o, ctx);
  } catch (e) {
    if (!(e instanceof TypedError)) throw e;
    if (liveEntries !== undefined) meta.managedFields = liveEntries;
    return next;
  }
  setManagedFields(next, managed);
  return next;
}

const gvkString = (apiVersion: unknown, kind: unknown) => {
  const gv = parseAPIVersion(typeof apiVersion === 'string' ? apiVersion : '');
  return `${gv.group}/${gv.version}, Kind=${typeof kind === 'string' ? kind : ''}`;
};

/** 422 as ValidatePatchOptions answers an apply without fieldManager. */
export const fieldManagerRequired = () =>
  invalid({ group: 'meta.k8s.io', kind: 'PatchOptions' }, '', [
    required('fieldManager', 'is required for apply patch'),
  ]);

/**
 * Server-side apply of `applied` by `o.manager` onto `live` (null: create).
 * Returns the merged object with metadata.managedFields (defaulting runs
 * after), or throws a StatusError: 409 on conflicts, 400 for a wrong kind or
 * managedFields in the configuration, 500 for a configuration the schema
 * rejects, 422 without a field manager.
 */
export function apply(live: KubeObject | null, applied: KubeObject, o: ApplyOptions): KubeObject {
  if (!o.manager) throw fieldManagerRequired();
  const kind = o.kind ?? (typeof live?.kind === 'string' ? live.kind : applied.kind);
  if (applied.apiVersion !== o.apiVersion || applied.kind !== kind) {
    throw badRequest(`invalid object type: ${gvkString(applied.apiVersion, applied.kind)}`);
  }
  if (Array.isArray(metaOf(applied)?.managedFields)) throw badRequest('metadata.managedFields must be nil');

  const liveObj: KubeObject = live ?? {};
  const type = modelOf({ ...o, kind: kind as string }, applied).root();
  const ctx: UpdaterContext = { type, version: o.apiVersion, ignore: o.resetFields };
  let managed: Managed;
  try {
    managed = decodeManagedFields(metaOf(liveObj)?.managedFields);
  } catch (e) {
    throw new StatusError(500, '', `failed to decode managed fields: ${(e as Error).message}`);
  }
  let configSet: FieldSet;
  try {
    configSet = toFieldSet(applied, type, true);
  } catch (e) {
    if (!(e instanceof TypedError)) throw e;
    const m = metaOf(applied);
    const nn = `${String(m?.namespace ?? '')}/${String(m?.name ?? '')}`;
    throw new StatusError(
      500,
      '',
      `failed to create typed patch object (${nn}; ${gvkString(applied.apiVersion, applied.kind)}): ${e.message}`,
    );
  }

  const id = managerIdentifier({ manager: o.manager, operation: 'Apply', subresource: o.subresource });
  const run = (force: boolean) => {
    let m: Managed = { fields: new Map(managed.fields), times: new Map(managed.times) };
    if (m.fields.size === 0) {
      // Attribute what the object already has to a manager of its own before the first apply.
      m = updateManaged({}, liveObj, m, BEFORE_FIRST_APPLY, o, ctx);
    }
    const r = updaterApply(liveObj, applied, configSet, m, id, force, ctx);
    strip(r.managed, id);
    let object: KubeObject;
    if (r.object !== undefined) {
      object = r.object as KubeObject;
      r.managed.times = new Map(r.managed.times).set(id, timeOf(o));
    } else {
      object = jsonClone(liveObj);
    }
    return { object, managed: r.managed };
  };

  let result: { object: KubeObject; managed: Managed };
  try {
    result = run(!!o.force);
  } catch (e) {
    if (!(e instanceof ConflictsError)) throw e;
    let conflicts = e.conflicts;
    if (o.manager === KUBECTL_MANAGER) {
      const allowed = allowedConflictsFromLastApplied(liveObj, o.apiVersion, type);
      if (allowed) conflicts = conflictsNotAllowed(conflicts, allowed);
      if (allowed && conflicts.length === 0) result = run(true);
      else throw applyConflictError(conflicts);
    } else throw applyConflictError(conflicts);
  }
  if (o.manager === KUBECTL_MANAGER) updateLastApplied(result.object, applied);
  const meta = metaOf(result.object);
  if (meta) delete meta.managedFields;
  setManagedFields(result.object, result.managed);
  return result.object;
}
