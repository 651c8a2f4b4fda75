// Pages of a list: a page of the cache's current state or a (paged) range of
// the store, with the continue token of the next page. Which of them serves a
// list, and at which revision, is StoreReader's choice (reads.ts).
import type { KeyValue, Storage } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import type { Cacher } from '../storage/cacher/cacher';
import type { CachedObject, ObjectAttrs } from '../storage/cacher/cached-object';
import type { StoreResource } from './resource';
import { encodeContinue } from './continue-token';
import type { ListResult } from './reads';

/** Above this many keys the cache does not hold as listed, latestViaCache reads the whole range. */
const MAX_SINGLE_READS = 64;

export class ListPages {
  constructor(
    private readonly res: StoreResource,
    private readonly storage: Storage,
    private readonly cacher: Cacher | null,
    private readonly wrap: (kv: KeyValue) => CachedObject,
  ) {}

  /** A page of the cache's current state; `from` continues a list whose snapshot it still is. */
  fromCache(
    prefix: string,
    limit: number,
    match: ((a: ObjectAttrs) => boolean) | undefined,
    filtered: boolean,
    from?: { startKey: string; rv: number },
  ): ListResult {
    const cacher = this.cacher!;
    const rv = from?.rv ?? cacher.rv;
    const all = cacher.list(prefix, from?.startKey);
    const items: CachedObject[] = [];
    let i = 0;
    for (; i < all.length; i++) {
      const o = all[i];
      if (match && !match(o.attrs)) continue;
      if (limit && items.length === limit) break;
      items.push(o);
    }
    if (limit && i < all.length) {
      // The next page is of this same revision: from the cache while that is still its state,
      // else from the store.
      const next = this.relative(items[items.length - 1].key) + '\x00';
      return {
        items,
        rv,
        continue: encodeContinue(rv, next),
        remainingItemCount: filtered ? undefined : all.length - i,
      };
    }
    return { items, rv, continue: '' };
  }

  /**
   * The store's latest state, whole, assembled from the cache's objects: one
   * keys-only range names each key's modRevision at revision R, and a key's
   * modRevision names one write, so the cache's object of that key and revision
   * holds the stored bytes. Keys the cache holds at another revision are read at
   * R; when many are, one full range at R is cheaper. Spares etcd sending every
   * value and this server decoding and encoding each again.
   */
  async latestViaCache(
    match: ((a: ObjectAttrs) => boolean) | undefined,
    prefix: string,
  ): Promise<ListResult> {
    const cacher = this.cacher!;
    const r = await this.storage.range(prefix, { keysOnly: true });
    const all: (CachedObject | undefined)[] = new Array(r.kvs.length);
    const stale: number[] = [];
    for (let i = 0; i < r.kvs.length; i++) {
      const kv = r.kvs[i];
      const o = cacher.get(kv.key);
      if (o !== undefined && o.rv === kv.modRevision) all[i] = o;
      else stale.push(i);
    }
    try {
      if (stale.length > MAX_SINGLE_READS)
        return await this.fromStore(prefix, r.revision, 0, prefix, match, !!match);
      await Promise.all(
        stale.map(async (i) => {
          const { kv } = await this.storage.get(r.kvs[i].key, r.revision);
          if (!kv) throw new Error(`etcd listed ${r.kvs[i].key} at ${r.revision} but did not read it there`);
          all[i] = this.wrap(kv);
        }),
      );
    } catch (err) {
      // Compacted past R meanwhile: list the latest state the plain way.
      if (!isStorageError(err, 'Compacted')) throw err;
      return this.fromStore(prefix, 0, 0, prefix, match, !!match);
    }
    const items: CachedObject[] = [];
    for (const o of all) if (!match || match(o!.attrs)) items.push(o!);
    return { items, rv: r.revision, continue: '' };
  }

  private relative(key: string): string {
    return key.slice(this.res.keyRoot.length + 1);
  }

  /** A (paged) range of the store at revision (0 = latest), filtered, filling up to limit. */
  async fromStore(
    prefix: string,
    revision: number,
    limit: number,
    startKey: string,
    match: ((a: ObjectAttrs) => boolean) | undefined,
    filtered: boolean,
  ): Promise<ListResult> {
    const items: CachedObject[] = [];
    let rev = revision;
    let start = startKey;
    let more: boolean;
    let remaining: number;
    let lastKey = '';
    for (;;) {
      const want = limit ? Math.max(limit - items.length, filtered ? 100 : 0) : 0;
      const r = await this.storage.range(prefix, {
        revision: rev || undefined,
        limit: want,
        startKey: start,
      });
      rev = r.revision;
      let consumed = 0;
      for (const kv of r.kvs) {
        consumed++;
        const o = this.wrap(kv);
        if (match && !match(o.attrs)) {
          lastKey = kv.key;
          continue;
        }
        items.push(o);
        lastKey = kv.key;
        if (limit && items.length === limit) break;
      }
      more = r.more || consumed < r.kvs.length;
      remaining = r.remaining + (r.kvs.length - consumed);
      if (!limit || items.length >= limit || !r.more) break;
      start = r.kvs[r.kvs.length - 1].key + '\x00';
    }
    if (limit && more) {
      return {
        items,
        rv: rev,
        continue: encodeContinue(rev, this.relative(lastKey) + '\x00'),
        remainingItemCount: filtered ? undefined : remaining,
      };
    }
    return { items, rv: rev, continue: '' };
  }
}
