// A watch fed straight from the store, for resources without a watch cache
// and for history older than the cache's window.
import type { KeyValue, Storage, StorageEvent } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import type { CachedObject, ObjectAttrs } from '../storage/cacher/cached-object';
import { CacheWatcher, type CacheEvent } from '../storage/cacher/watchers';
import { resourceExpired, StatusError } from '../../shared/api/status';
import type { WatchStream } from './reads';

/** A watcher fed straight from the store (no cache, or history older than the window). */
export function storageWatch(
  storage: Storage,
  wrap: (kv: KeyValue) => CachedObject,
  filter: { prefix: string; match?: (a: ObjectAttrs) => boolean },
  from: number,
  initial: CachedObject[] | undefined,
): WatchStream {
  let sw: ReturnType<Storage['watch']> | null = null;
  const w = new CacheWatcher(filter, from, 10_000, () => sw?.stop());
  if (initial)
    w.preload(
      initial
        .filter((o) => !filter.match || filter.match(o.attrs))
        .map((o) => ({ type: 'ADDED' as const, object: o, rv: o.rv })),
    );
  sw = storage.watch(filter.prefix, from);
  const pump = async () => {
    try {
      for await (const batch of sw!) for (const ev of batch) w.offer(toCacheEvent(ev, wrap));
    } catch (err) {
      const status =
        err instanceof StatusError
          ? err
          : isStorageError(err, 'Compacted')
            ? resourceExpired(`too old resource version: ${from} (${err.revision ?? 0})`)
            : null;
      if (status) w.push({ type: 'ERROR', rv: w.lastRV, error: status });
    }
    w.close();
  };
  void pump();
  return w;
}

function toCacheEvent(ev: StorageEvent, wrap: (kv: KeyValue) => CachedObject): CacheEvent {
  const prev = ev.prevKv ? wrap(ev.prevKv) : null;
  if (ev.type === 'delete') {
    return { type: 'DELETED', rv: ev.revision, key: ev.key, object: prev!.withRV(ev.revision), prev };
  }
  return {
    type: ev.type === 'create' ? 'ADDED' : 'MODIFIED',
    rv: ev.revision,
    key: ev.key,
    object: wrap(ev.kv!),
    prev,
  };
}
