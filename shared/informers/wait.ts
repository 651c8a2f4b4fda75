// cache.WaitForCacheSync: poll (every 100 ms, like client-go) until every
// informer or handler registration reports synced, or the signal aborts.
import { logger } from '../log';
import { realClock, type Clock } from '../client/clock';

const log = logger('informers');

export type Synced = (() => boolean) | { hasSynced(): boolean };

/** True when all synced; false when signal aborted first. */
export async function waitForCacheSync(
  signal: AbortSignal | undefined,
  ...synced: Synced[]
): Promise<boolean> {
  return waitForCacheSyncWith(realClock, signal, ...synced);
}

export async function waitForCacheSyncWith(
  clock: Clock,
  signal: AbortSignal | undefined,
  ...synced: Synced[]
): Promise<boolean> {
  const fns = synced.map((s) => (typeof s === 'function' ? s : () => s.hasSynced()));
  for (;;) {
    if (fns.every((f) => f())) return true;
    if (signal?.aborted) return false;
    await clock.sleep(100, signal);
  }
}

/** waitForCacheSync with client-go's log lines for a named controller. */
export async function waitForNamedCacheSync(
  controller: string,
  signal: AbortSignal | undefined,
  ...synced: Synced[]
): Promise<boolean> {
  log.info('waiting for caches to sync', { controller });
  const ok = await waitForCacheSync(signal, ...synced);
  if (ok) log.info('caches are synced', { controller });
  else log.error('unable to sync caches', { controller });
  return ok;
}
