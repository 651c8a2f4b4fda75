// What a reflector reads from and writes to, and client-go's pager on top of
// a ListerWatcher.
import { isExpired } from '../client/errors';
import type { KubeList, KubeObject, ListOptions, WatchOptions } from '../client/types';
import type { WatchEvent } from '../client/watch';

/** client-go's pager page size. */
export const PAGE_SIZE = 500;

/** A watch as the reflector consumes it (shared/client's Watch satisfies it). */
export interface WatchInterface<T> extends AsyncIterable<WatchEvent<T>> {
  stop(): void;
}

export interface ListerWatcher<T> {
  list(opts: ListOptions): Promise<KubeList<T>>;
  watch(opts: WatchOptions): Promise<WatchInterface<T>>;
}

/** What the reflector writes into (the informer's store, or a plain Indexer adapter). */
export interface ReflectorStore<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
  /** The full state at resourceVersion (after a list or the watch-list's initial events). */
  replace(items: T[], resourceVersion: string): void;
  /** Periodic resync: re-deliver what is cached. */
  resync(): void;
  /** Every resourceVersion the reflector moves to, bookmarks included. */
  updateResourceVersion?(resourceVersion: string): void;
}

/**
 * Lists in pages of limit (0: one unpaged list), following continue tokens
 * (later pages drop resourceVersion); an expired token falls back to one full
 * list at the original resourceVersion (pager.FullListIfExpired).
 */
export async function listPaged<T>(
  lw: ListerWatcher<T>,
  rv: string,
  limit: number,
  signal: AbortSignal,
): Promise<{ list: KubeList<T>; paginated: boolean }> {
  const first = await lw.list({ resourceVersion: rv || undefined, limit: limit || undefined, signal });
  if (!first.metadata?.continue) return { list: first, paginated: false };
  let cont = first.metadata.continue;
  const items = first.items ?? [];
  while (cont) {
    let page: KubeList<T>;
    try {
      page = await lw.list({ limit, continue: cont, signal });
    } catch (err) {
      if (!isExpired(err)) throw err;
      return { list: await lw.list({ resourceVersion: rv || undefined, signal }), paginated: true };
    }
    for (const it of page.items ?? []) items.push(it);
    cont = page.metadata?.continue ?? '';
  }
  first.items = items;
  first.metadata = { ...first.metadata, continue: '' };
  return { list: first, paginated: true };
}

/** Sets apiVersion and kind on items that came without them (Protobuf lists). */
export function fillTypes(list: KubeList<KubeObject>): void {
  const kind = list.kind?.endsWith('List') ? list.kind.slice(0, -4) : undefined;
  if (!kind || !list.apiVersion) return;
  for (const it of list.items ?? []) {
    if (!it.kind) {
      it.apiVersion = list.apiVersion;
      it.kind = kind;
    }
  }
}
