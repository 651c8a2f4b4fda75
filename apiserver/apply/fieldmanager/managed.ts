// metadata.managedFields <-> per-manager field sets, as Kubernetes'
// managedfields package encodes them: managers are identified by the JSON of
// their entry without time and fields (and without apiVersion for appliers),
// entries are sorted by operation, time, manager, apiVersion, subresource.
import { FieldSet, fromFieldsV1 } from './fieldset';
import { setJSONTextSource } from '../../../shared/codec/json-text';

export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  time?: string;
  fieldsType?: string;
  fieldsV1?: Record<string, unknown>;
  subresource?: string;
}

export interface VersionedSet {
  readonly set: FieldSet;
  readonly apiVersion: string;
  readonly applied: boolean;
}

/** Field sets and entry times by manager identifier. */
export interface Managed {
  fields: Map<string, VersionedSet>;
  times: Map<string, string | undefined>;
}

export const emptyManaged = (): Managed => ({ fields: new Map(), times: new Map() });

export class ManagedFieldsDecodeError extends Error {
  override name = 'ManagedFieldsDecodeError';
}

/** The identifier of a manager: its entry's JSON in Go field order, without time and fields. */
export function managerIdentifier(e: {
  manager?: string;
  operation?: string;
  apiVersion?: string;
  subresource?: string;
}): string {
  const o: Record<string, string> = {};
  if (e.manager) o.manager = e.manager;
  if (e.operation) o.operation = e.operation;
  if (e.apiVersion && e.operation !== 'Apply') o.apiVersion = e.apiVersion;
  if (e.subresource) o.subresource = e.subresource;
  return JSON.stringify(o);
}

/** The parts of an identifier (the inverse of managerIdentifier). */
export function parseIdentifier(id: string): ManagedFieldsEntry {
  return JSON.parse(id) as ManagedFieldsEntry;
}

/** Decodes metadata.managedFields; throws ManagedFieldsDecodeError with Kubernetes' wording. */
export function decodeManagedFields(entries: unknown): Managed {
  const m = emptyManaged();
  if (entries === undefined || entries === null) return m;
  if (!Array.isArray(entries)) throw new ManagedFieldsDecodeError('managedFields must be a list');
  entries.forEach((raw, i) => {
    const e = (raw ?? {}) as ManagedFieldsEntry;
    if (e.operation !== 'Apply' && e.operation !== 'Update') {
      throw new ManagedFieldsDecodeError('operation must be `Apply` or `Update`');
    }
    if (!e.apiVersion) throw new ManagedFieldsDecodeError('apiVersion must not be empty');
    if (!e.fieldsType) throw new ManagedFieldsDecodeError(`missing fieldsType in managed fields entry ${i}`);
    if (e.fieldsType !== 'FieldsV1') {
      throw new ManagedFieldsDecodeError(
        `invalid fieldsType ${JSON.stringify(e.fieldsType)} in managed fields entry ${i}`,
      );
    }
    const id = managerIdentifier(e);
    let set: FieldSet;
    try {
      set = fromFieldsV1(e.fieldsV1);
    } catch (err) {
      throw new ManagedFieldsDecodeError(
        `error decoding versioned set: error decoding set: ${(err as Error).message}`,
      );
    }
    m.fields.set(id, { set, apiVersion: e.apiVersion, applied: e.operation === 'Apply' });
    m.times.set(id, typeof e.time === 'string' ? e.time : undefined);
  });
  return m;
}

const encoded = new WeakMap<FieldSet, Record<string, unknown>>();

/** The FieldsV1 object of a set (cached per set, so unchanged entries keep their object). */
export function fieldsV1Of(set: FieldSet): Record<string, unknown> {
  let v = encoded.get(set);
  if (!v) {
    v = set.toFieldsV1();
    encoded.set(set, v);
    setJSONTextSource(v, set);
  }
  return v;
}

const seconds = (t: string | undefined) => {
  if (!t) return 0;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? 0 : Math.floor(ms / 1000);
};

const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Encodes the sets as managedFields entries in Kubernetes' order; undefined when there are none. */
export function encodeManagedFields(m: Managed): ManagedFieldsEntry[] | undefined {
  if (m.fields.size === 0) return undefined;
  const out: ManagedFieldsEntry[] = [];
  for (const [id, vs] of m.fields) {
    const who = parseIdentifier(id);
    const e: ManagedFieldsEntry = {};
    if (who.manager) e.manager = who.manager;
    const operation = vs.applied ? 'Apply' : (who.operation ?? 'Update');
    e.operation = operation;
    if (vs.apiVersion) e.apiVersion = vs.apiVersion;
    const t = m.times.get(id);
    if (t) e.time = t;
    e.fieldsType = 'FieldsV1';
    e.fieldsV1 = fieldsV1Of(vs.set);
    if (who.subresource) e.subresource = who.subresource;
    out.push(e);
  }
  return out.sort(
    (p, q) =>
      cmp(p.operation ?? '', q.operation ?? '') ||
      seconds(p.time) - seconds(q.time) ||
      cmp(p.manager ?? '', q.manager ?? '') ||
      cmp(p.apiVersion ?? '', q.apiVersion ?? '') ||
      cmp(p.subresource ?? '', q.subresource ?? ''),
  );
}

/** Whether managedFields is the reset marker: a list holding one empty entry. */
export function isResetManagedFields(v: unknown): boolean {
  if (!Array.isArray(v) || v.length !== 1) return false;
  const e = v[0];
  return typeof e === 'object' && e !== null && !Array.isArray(e) && Object.keys(e).length === 0;
}

export const DEFAULT_MAX_UPDATE_MANAGERS = 10;
const ANCIENT = 'ancient-changes';

/**
 * Keeps at most `max` Update entries by merging the oldest into per-version
 * "ancient-changes" buckets (capmanagers.go).
 */
export function capUpdateManagers(m: Managed, max = DEFAULT_MAX_UPDATE_MANAGERS): void {
  const updaters = [...m.fields.entries()].filter(([, vs]) => !vs.applied).map(([id]) => id);
  if (updaters.length <= max) return;
  updaters.sort((a, b) => seconds(m.times.get(a)) - seconds(m.times.get(b)) || cmp(a, b));
  const firstByVersion = new Map<string, string>();
  let length = updaters.length;
  for (let i = 0; i < updaters.length && length > max; i++) {
    const id = updaters[i];
    const vs = m.fields.get(id) as VersionedSet;
    const time = m.times.get(id);
    const bucket = managerIdentifier({ manager: ANCIENT, operation: 'Update', apiVersion: vs.apiVersion });
    const first = firstByVersion.get(vs.apiVersion);
    if (first === undefined) {
      firstByVersion.set(vs.apiVersion, id);
      continue;
    }
    if (!m.fields.has(bucket)) {
      m.fields.set(bucket, m.fields.get(first) as VersionedSet);
      m.fields.delete(first);
      m.times.delete(first);
    }
    const b = m.fields.get(bucket) as VersionedSet;
    m.fields.set(bucket, { set: vs.set.union(b.set), apiVersion: vs.apiVersion, applied: false });
    m.fields.delete(id);
    m.times.delete(id);
    m.times.set(bucket, time);
    length--;
  }
}
