// Status writes: PUT .../status with the cached object's resourceVersion, and on
// a conflict once more on a fresh copy (like the controllers' retry loops).
import { isConflict, isNotFound, type ResourceClient } from '../../../shared/client';
import { getLatest, type Obj } from './base';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';

/**
 * Writes status (computed for obj) unless it equals obj.status. Returns the
 * written object, obj when nothing changed, undefined when obj is gone.
 *
 * A conflict (the cache was behind) is thrown, so the key is synced again from
 * a fresh cache — status that carries state (Job counts, CronJob active list,
 * Deployment conditions) must never be written from a stale copy. Status that
 * is derived from other objects alone may be written over the fresh copy
 * (retryOnConflict).
 */
export async function updateStatus<T extends Obj>(
  client: ResourceClient<T>,
  obj: T,
  status: any,
  opts: { retryOnConflict?: boolean } = {},
): Promise<T | undefined> {
  if (jsonEqual(obj.status ?? {}, status)) return obj;
  const rc = client.namespace(obj.metadata.namespace!);
  const body = { ...jsonClone(obj), status };
  try {
    return await rc.updateStatus(body as T);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    if (!isConflict(err) || !opts.retryOnConflict) throw err;
  }
  const fresh = await getLatest(client, obj);
  if (!fresh || fresh.metadata.uid !== obj.metadata.uid) return undefined;
  return rc.updateStatus({ ...fresh, status } as T);
}

export interface DeleteParams {
  gracePeriodSeconds?: number;
  propagationPolicy?: 'Orphan' | 'Background' | 'Foreground';
}

/** DELETE with DeleteOptions (grace period, propagation). */
export async function deleteWith(rc: ResourceClient<any>, name: string, p: DeleteParams = {}): Promise<void> {
  await rc.delete(name, { gracePeriodSeconds: p.gracePeriodSeconds, propagationPolicy: p.propagationPolicy });
}
