// Reads of one resource with Kubernetes' resourceVersion semantics: get, list
// (paged, with continue tokens) and watch, served from the watch cache where
// the semantics allow and from the store otherwise. The pages themselves are
// built in list-pages.ts; watches the cache cannot serve, in store-watch.ts.
import type { Storage } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import type { Cacher } from '../storage/cacher/cacher';
import { CachedObject, type ObjectAttrs } from '../storage/cacher/cached-object';
import type { CacheWatcher } from '../storage/cacher/watchers';
import {
  badRequest,
  notFound,
  resourceExpired,
  tooLargeResourceVersion,
  type GroupResource,
} from '../../shared/api/status';
import { parseLabelSelector, SelectorParseError, type LabelSelector } from '../../shared/api/labels';
import { FieldSelector, FieldSelectorParseError, parseFieldSelector } from '../../shared/api/fields';
import type { FieldLabels } from './field-labels';
import { systemContext, type RequestContext } from './context';
import type { StorageCodec } from './storage-codec';
import { keyPrefix, objectKey, type StoreResource } from './resource';
import { decodeContinue, encodeContinue } from './continue-token';
import { parseResourceVersion } from './meta';
import { ListPages } from './list-pages';
import { storageWatch } from './store-watch';

/** The selectors of a list, watch or deletecollection. */
export interface SelectorOptions {
  labelSelector?: string;
  fieldSelector?: string;
  /** The served group/version the request named: its field labels apply (else the storage version's). */
  apiVersion?: string;
}

export interface ListOptions extends SelectorOptions {
  resourceVersion?: string;
  resourceVersionMatch?: string;
  limit?: number;
  continue?: string;
}

export interface ListResult {
  items: CachedObject[];
  rv: number;
  continue: string;
  remainingItemCount?: number;
}

export interface WatchOptions extends SelectorOptions {
  resourceVersion?: string;
  resourceVersionMatch?: string;
  sendInitialEvents?: boolean;
  allowWatchBookmarks?: boolean;
}

/** A running watch as handlers consume it. */
export type WatchStream = CacheWatcher;

/** How long a read waits for a resourceVersion the store has not reached yet. */
const FRESHNESS_WAIT_MS = 3000;
/** How long a consistent read waits for the cache to catch up before it reads the store. */
const CONSISTENT_CACHE_WAIT_MS = 1000;

const EXPIRED_CONTINUE =
  'The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.';

/** Objects one snapshot keeps at most: they stay decoded while it is kept. */
const SNAPSHOT_MAX_ITEMS = 100;
/** Objects all of a resource's snapshots keep at most (one per namespace admission asks about). */
const SNAPSHOTS_MAX_ITEMS = 10_000;

export class StoreReader {
  private readonly gr: GroupResource;
  private readonly pages: ListPages;
  /** The last cachedObjects answer by namespace, with the cache's change revision it was read at. */
  private readonly snapshots = new Map<string, { at: number; objs: readonly any[] }>();
  private snapshotItems = 0;

  constructor(
    private readonly res: StoreResource,
    private readonly storage: Storage,
    private readonly codec: StorageCodec,
    private readonly cacher: Cacher | null,
    private readonly attrsOf: (obj: any) => ObjectAttrs,
    private readonly fieldLabels: FieldLabels,
  ) {
    this.gr = { group: res.group, resource: res.resource };
    this.pages = new ListPages(res, storage, cacher, (kv) => this.wrap(kv));
  }

  private wrap(kv: { key: string; value: Buffer; modRevision: number }): CachedObject {
    // A key's modRevision names one write, so the cache's object of the same key
    // and revision holds these very bytes, already decoded (and its encodings memoised).
    const cached = this.cacher?.get(kv.key);
    if (cached !== undefined && cached.rv === kv.modRevision) return cached;
    const obj = this.codec.decode(kv.value, kv.modRevision, kv.key);
    return new CachedObject(kv.key, kv.modRevision, obj, this.attrsOf(obj));
  }

  private parseRV(rv: string | undefined): number | undefined {
    const n = parseResourceVersion(rv);
    if (n !== undefined && Number.isNaN(n))
      throw badRequest(`resourceVersion: Invalid value: "${rv}": must be a non-negative integer`);
    return n;
  }

  /** Waits until the store reached rv, or answers 504 "Too large resource version". */
  private async ensureReached(rv: number): Promise<void> {
    const deadline = Date.now() + FRESHNESS_WAIT_MS;
    for (;;) {
      const current = await this.storage.currentRevision();
      if (current >= rv) return;
      if (Date.now() >= deadline) throw tooLargeResourceVersion(rv, current);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /**
   * True when the cache is loaded and holds every write acknowledged so far, so a
   * consistent read (no resourceVersion) can be served from it. A cache not loaded
   * yet starts loading in the background; until it is, reads go to the store.
   */
  private async cacheIsCurrent(): Promise<boolean> {
    const cacher = this.cacher;
    if (!cacher) return false;
    if (!cacher.isReady) {
      void cacher.ready();
      return false;
    }
    return cacher.sync(CONSISTENT_CACHE_WAIT_MS);
  }

  private mapStorageError(err: unknown, rv?: number): never {
    if (isStorageError(err, 'Compacted'))
      throw resourceExpired(`too old resource version: ${rv ?? 0} (${err.revision ?? 0})`);
    if (isStorageError(err, 'FutureRevision')) throw tooLargeResourceVersion(rv ?? 0, err.revision ?? 0);
    throw err;
  }

  // ---- get ------------------------------------------------------------------

  async get(ctx: RequestContext, name: string, resourceVersion?: string): Promise<CachedObject> {
    const key = objectKey(this.res, ctx.namespace, name);
    const rv = this.parseRV(resourceVersion);
    if (rv !== undefined && this.cacher) {
      await this.cacher.ready();
      if (rv === 0 || this.cacher.rv >= rv || (await this.cacher.waitFor(rv, 100))) {
        const o = this.cacher.get(key);
        if (!o) throw notFound(this.gr, name);
        return o;
      }
    }
    if (rv === undefined && (await this.cacheIsCurrent())) {
      const o = this.cacher!.get(key);
      if (!o) throw notFound(this.gr, name);
      return o;
    }
    if (rv) await this.ensureReached(rv);
    const { kv } = await this.storage.get(key);
    if (!kv) throw notFound(this.gr, name);
    return this.wrap(kv);
  }

  // ---- selectors --------------------------------------------------------------

  selectors(opts: SelectorOptions): { labels: LabelSelector; fields: FieldSelector } {
    const { labelSelector, fieldSelector } = opts;
    let labels: LabelSelector;
    let fields: FieldSelector;
    try {
      labels = parseLabelSelector(labelSelector);
    } catch (err) {
      if (err instanceof SelectorParseError) throw badRequest(err.message);
      throw err;
    }
    try {
      fields = parseFieldSelector(fieldSelector);
    } catch (err) {
      if (err instanceof FieldSelectorParseError) throw badRequest(err.message);
      throw err;
    }
    if (fields.empty) return { labels, fields };
    // Each label becomes the selectable field it reads, as the request's version names them.
    const set = this.fieldLabels.forVersion(opts.apiVersion ?? this.res.apiVersion);
    const converted = fields.requirements.map((r) => {
      const field = set.labels[r.field];
      if (field === undefined) throw badRequest(set.refuse(r.field));
      return field === r.field ? r : { ...r, field };
    });
    return { labels, fields: new FieldSelector(converted) };
  }

  private matcher(labels: LabelSelector, fields: FieldSelector): ((a: ObjectAttrs) => boolean) | undefined {
    if (labels.empty && fields.empty) return undefined;
    return (a) => labels.matches(a.labels) && fields.matches(a.fields);
  }

  // ---- list -------------------------------------------------------------------

  async list(ctx: RequestContext, opts: ListOptions): Promise<ListResult> {
    const { labels, fields } = this.selectors(opts);
    const match = this.matcher(labels, fields);
    const rvText = opts.resourceVersion;
    const rv = this.parseRV(rvText);
    const rvMatch = opts.resourceVersionMatch;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const prefix = keyPrefix(this.res, ctx.namespace || fields.exactValue('metadata.namespace'));
    const filtered = !!match;

    if (rvMatch !== undefined && rvMatch !== '') {
      if (rvMatch !== 'Exact' && rvMatch !== 'NotOlderThan')
        throw badRequest(
          `resourceVersionMatch: Unsupported value: "${rvMatch}": supported values: "Exact", "NotOlderThan"`,
        );
      if (rvText === undefined || rvText === '')
        throw badRequest(
          'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided',
        );
      if (opts.continue)
        throw badRequest(
          'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided',
        );
      if (rvMatch === 'Exact' && rv === 0)
        throw badRequest(
          'resourceVersionMatch: Forbidden: resourceVersionMatch "exact" is forbidden for resourceVersion "0"',
        );
    }

    if (opts.continue) {
      if (rv !== undefined && rv !== 0)
        throw badRequest('specifying resource version is not allowed when using continue');
      const token = decodeContinue(opts.continue);
      const startKey = `${this.res.keyRoot}/${token.start}`;
      if (!startKey.startsWith(prefix))
        throw badRequest('continue key is not valid: the key is not within the requested scope');
      // Nothing changed since the first page: the cache holds that snapshot.
      if (token.rv > 0 && this.cacher?.isReady && this.cacher.unchangedSince(token.rv))
        return this.pages.fromCache(prefix, limit, match, filtered, { startKey, rv: token.rv });
      try {
        return await this.pages.fromStore(
          prefix,
          token.rv > 0 ? token.rv : 0,
          limit,
          startKey,
          match,
          filtered,
        );
      } catch (err) {
        if (isStorageError(err, 'Compacted')) {
          const status = resourceExpired(EXPIRED_CONTINUE);
          (status.status.metadata as any) = { continue: encodeContinue(-1, token.start) };
          throw status;
        }
        throw err;
      }
    }
    if (rvMatch === 'Exact') return this.listExact(prefix, rv!, limit, match, filtered);
    if (rvMatch === 'NotOlderThan') return this.listNotOlderThan(prefix, rv!, limit, match, filtered);
    if (rv === undefined)
      return (await this.cacheIsCurrent())
        ? this.pages.fromCache(prefix, limit, match, filtered)
        : this.latestFromStore(prefix, limit, match, filtered);
    if (rv === 0) return this.listNotOlderThan(prefix, 0, limit, match, filtered);
    return limit
      ? this.listExact(prefix, rv, limit, match, filtered)
      : this.listNotOlderThan(prefix, rv, 0, match, filtered);
  }

  /** A consistent list the cache could not prove current for: the store's latest state. */
  private latestFromStore(
    prefix: string,
    limit: number,
    match: ((a: ObjectAttrs) => boolean) | undefined,
    filtered: boolean,
  ): Promise<ListResult> {
    // A whole list from a loaded cache needs only the keys' revisions from the store.
    if (!limit && this.cacher?.isReady) return this.pages.latestViaCache(match, prefix);
    return this.pages.fromStore(prefix, 0, limit, prefix, match, filtered);
  }

  private async listExact(
    prefix: string,
    rv: number,
    limit: number,
    match: ((a: ObjectAttrs) => boolean) | undefined,
    filtered: boolean,
  ) {
    try {
      return await this.pages.fromStore(prefix, rv, limit, prefix, match, filtered);
    } catch (err) {
      return this.mapStorageError(err, rv);
    }
  }

  private async listNotOlderThan(
    prefix: string,
    rv: number,
    limit: number,
    match: ((a: ObjectAttrs) => boolean) | undefined,
    filtered: boolean,
  ): Promise<ListResult> {
    if (this.cacher) {
      await this.cacher.ready();
      if (rv === 0 || this.cacher.rv >= rv || (await this.cacher.waitFor(rv, 100))) {
        return this.pages.fromCache(prefix, limit, match, filtered);
      }
    }
    if (rv > 0) await this.ensureReached(rv);
    return this.pages.fromStore(prefix, 0, limit, prefix, match, filtered);
  }

  /**
   * Every object of a namespace ('' for all) as the watch cache holds it now, for the
   * apiserver's own readers (admission asks on every write: limit ranges, quotas, webhook
   * configurations, policy bindings). The same frozen array until the resource changes.
   */
  cachedObjects(namespace: string): readonly any[] | Promise<readonly any[]> {
    // Unchanged since the last answer: the same array, without a turn of the event loop.
    const c = this.cacher;
    if (c?.isReady) {
      const hit = this.snapshots.get(namespace);
      if (hit && hit.at === c.changedAt) return hit.objs;
    }
    return this.snapshot(namespace);
  }

  private async snapshot(namespace: string): Promise<readonly any[]> {
    const c = this.cacher;
    if (c) await c.ready();
    // Read before the list: a change landing meanwhile makes the next call read again.
    const at = c?.changedAt ?? -1;
    const hit = this.snapshots.get(namespace);
    if (hit && hit.at === at && c) return hit.objs;
    const r = await this.list(systemContext(namespace), { resourceVersion: '0' });
    const objs = Object.freeze(r.items.map((i) => i.obj));
    if (c && objs.length <= SNAPSHOT_MAX_ITEMS) {
      this.snapshotItems -= hit?.objs.length ?? 0;
      if (this.snapshotItems + objs.length > SNAPSHOTS_MAX_ITEMS) {
        this.snapshots.clear();
        this.snapshotItems = 0;
      }
      this.snapshots.set(namespace, { at, objs });
      this.snapshotItems += objs.length;
    }
    return objs;
  }

  // ---- watch ------------------------------------------------------------------

  async watch(ctx: RequestContext, opts: WatchOptions): Promise<WatchStream> {
    // The cache must be following the store before the initial state is read, so no event falls between.
    if (this.cacher) await this.cacher.ready();
    const { labels, fields } = this.selectors(opts);
    const match = this.matcher(labels, fields);
    const prefix = keyPrefix(this.res, ctx.namespace || fields.exactValue('metadata.namespace'));
    const filter = { prefix, match };
    const rvText = opts.resourceVersion;
    const rv = this.parseRV(rvText);
    if (opts.sendInitialEvents !== undefined) {
      if (opts.sendInitialEvents && !opts.allowWatchBookmarks)
        throw badRequest(
          'allowWatchBookmarks: Forbidden: sendInitialEvents requires setting allowWatchBookmarks to true',
        );
      if (opts.resourceVersionMatch !== 'NotOlderThan')
        throw badRequest(
          'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan',
        );
    } else if (opts.resourceVersionMatch) {
      throw badRequest(
        'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided',
      );
    }
    const initialWanted = opts.sendInitialEvents ?? (rv === undefined || rv === 0);

    let initial: CachedObject[] | undefined;
    let from: number;
    if (initialWanted) {
      const listed =
        rv !== undefined && this.cacher
          ? await this.listNotOlderThan(prefix, rv, 0, undefined, false)
          : rv === undefined && (await this.cacheIsCurrent())
            ? this.pages.fromCache(prefix, 0, undefined, false)
            : await this.latestFromStore(prefix, 0, undefined, false);
      initial = listed.items;
      from = listed.rv;
    } else {
      from = rv!;
      if (this.cacher) await this.cacher.ready();
      if (!this.cacher || from > this.cacher.rv) await this.ensureReached(from);
    }
    const stream = this.startWatch(filter, from, initial);
    if (opts.sendInitialEvents) stream.push({ type: 'BOOKMARK', rv: from, initialEventsEnd: true });
    return stream;
  }

  private startWatch(
    filter: { prefix: string; match?: (a: ObjectAttrs) => boolean },
    from: number,
    initial: CachedObject[] | undefined,
  ): WatchStream {
    if (this.cacher) {
      try {
        return this.cacher.watch(filter, from, initial);
      } catch (err) {
        if (!isStorageError(err, 'Compacted')) throw err;
        // Older than the cache window: replay from the store's history.
      }
    }
    return storageWatch(this.storage, (kv) => this.wrap(kv), filter, from, initial);
  }
}
