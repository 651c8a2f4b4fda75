// The watch cache of one resource: a single list+watch on the store feeds an
// in-memory map of current objects and a window of recent events. It serves
// watches (fan-out of one decoded event to every watcher), RV="0" and
// not-older-than reads, without touching the backend.
import type { Storage, StorageEvent, StorageWatch } from '../interface';
import { isStorageError, StorageError } from '../errors';
import { CachedObject, type CacheCodec } from './cached-object';
import { CacheWatcher, type CacheEvent, type WatchFilter } from './watchers';
import { EventWindow } from './event-window';
import { logger } from '../../../shared/log';

const log = logger('cacher');

export interface CacherOptions {
  /** Initial event-window capacity (--default-watch-cache-size / --watch-cache-sizes). */
  capacity: number;
  /** Events a watcher may have queued before it is closed. */
  watcherBuffer?: number;
  clock?: () => number;
}

export class Cacher {
  private readonly objects = new Map<string, CachedObject>();
  private sortedKeys: string[] | null = null;
  private readonly window: EventWindow;
  private readonly watchers = new Set<CacheWatcher>();
  private storageWatch: StorageWatch | null = null;
  private revision = 0;
  /** Revision of the newest change to the cached state (a relist counts as one). */
  private lastChange = 0;
  private readyPromise: Promise<void> | null = null;
  private readyResolve: (() => void) | null = null;
  private waiters: { rv: number; resolve: () => void }[] = [];
  private stopped = false;
  private readonly watcherBuffer: number;

  constructor(
    private readonly storage: Storage,
    /** Key prefix of the resource, ending in "/". */
    readonly prefix: string,
    private readonly codec: CacheCodec,
    opts: CacherOptions,
  ) {
    this.window = new EventWindow(Math.max(opts.capacity, 100), opts.clock ?? Date.now);
    this.watcherBuffer = opts.watcherBuffer ?? 10_000;
  }

  /** The revision up to which the cache has applied every change of its prefix. */
  get rv(): number {
    return this.revision;
  }

  /** The revision of the last change to the cached state (any later revision left it as it is). */
  get changedAt(): number {
    return this.lastChange;
  }

  /** True when the cached state is the state at rv: the cache reached rv and nothing changed since. */
  unchangedSince(rv: number): boolean {
    return this.lastChange <= rv && rv <= this.revision;
  }

  get size(): number {
    return this.objects.size;
  }

  /** Capacity of its window of recent events. */
  get capacity(): number {
    return this.window.capacity;
  }

  get watcherCount(): number {
    return this.watchers.size;
  }

  /** Starts (once) and resolves when the initial list is loaded. */
  ready(): Promise<void> {
    if (!this.readyPromise) {
      this.readyPromise = new Promise((r) => (this.readyResolve = r));
      void this.run();
    }
    return this.readyPromise;
  }

  /** True once the initial list is loaded (without starting the cache). */
  get isReady(): boolean {
    return this.readyPromise !== null && this.readyResolve === null;
  }

  /**
   * Brings the cache up to the store's current revision for a consistent read
   * (kube's consistent reads from the watch cache): resolves true once every
   * write acknowledged before the call is applied, false when the store's watch
   * cannot say so within timeoutMs (the caller then reads the store).
   */
  async sync(timeoutMs: number): Promise<boolean> {
    const sw = this.storageWatch;
    if (!sw?.progress || !this.isReady || this.needRelist || this.stopped) return false;
    let timer: NodeJS.Timeout | undefined;
    const revision = await Promise.race([
      sw.progress(),
      new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), timeoutMs))),
    ]);
    clearTimeout(timer);
    if (revision === undefined || sw !== this.storageWatch) return false;
    // No change under the prefix lies between the last applied event and `revision`.
    if (revision > this.revision) {
      this.revision = revision;
      this.releaseWaiters();
    }
    return true;
  }

  stop(): void {
    this.stopped = true;
    this.storageWatch?.stop();
    for (const w of [...this.watchers]) w.close();
  }

  /** List + watch loop; relists when the watch cannot resume (compaction, overflow of our own queue). */
  private async run(): Promise<void> {
    let backoff = 100;
    while (!this.stopped) {
      try {
        if (this.revision === 0 || this.needRelist) await this.relist();
        this.readyResolve?.();
        this.readyResolve = null;
        backoff = 100;
        // The cache holds every previous value itself: etcd need not send them.
        this.storageWatch = this.storage.watch(this.prefix, this.revision, {
          bufferSize: 1_000_000,
          prevKv: false,
        });
        for await (const batch of this.storageWatch) {
          for (const ev of batch) this.apply(ev);
          this.releaseWaiters();
        }
        if (this.stopped) return;
      } catch (err) {
        if (this.stopped) return;
        if (isStorageError(err, 'Compacted')) {
          this.needRelist = true;
        } else if (isStorageError(err, 'WatchOverflow')) {
          // Resume from what we applied; the store still has the history.
        } else {
          log.warn('watch of the store failed, retrying', { prefix: this.prefix, err: String(err) });
          await new Promise((r) => setTimeout(r, backoff));
          backoff = Math.min(backoff * 2, 5000);
        }
      }
    }
  }

  private needRelist = false;

  private async relist(): Promise<void> {
    const res = await this.storage.range(this.prefix);
    const fresh = new Map<string, CachedObject>();
    for (const kv of res.kvs) {
      const prev = this.objects.get(kv.key);
      fresh.set(kv.key, prev && prev.rv === kv.modRevision ? prev : CachedObject.fromKV(kv, this.codec));
    }
    const hadState = this.revision > 0;
    this.objects.clear();
    for (const [k, v] of fresh) this.objects.set(k, v);
    this.sortedKeys = null;
    this.revision = res.revision;
    this.lastChange = res.revision;
    this.needRelist = false;
    if (hadState) {
      // History is gone: watchers cannot be told what changed in between; end them so clients relist.
      this.window.clear(res.revision);
      for (const w of [...this.watchers]) w.close('overflow');
    } else this.window.clear(res.revision);
  }

  private apply(ev: StorageEvent): void {
    let cev: CacheEvent;
    if (ev.type === 'delete') {
      const prev =
        this.objects.get(ev.key) ?? (ev.prevKv ? CachedObject.fromKV(ev.prevKv, this.codec) : null);
      if (!prev) {
        this.revision = ev.revision;
        return;
      }
      this.objects.delete(ev.key);
      this.sortedKeys = null;
      cev = { type: 'DELETED', rv: ev.revision, key: prev.key, object: prev.withRV(ev.revision), prev };
    } else {
      const prev = this.objects.get(ev.key) ?? null;
      const obj = CachedObject.fromKV(ev.kv!, this.codec, prev);
      if (!prev) this.sortedKeys = null;
      this.objects.set(ev.key, obj);
      // The key as the cache holds it already (each event brings a string of its own).
      cev = { type: prev ? 'MODIFIED' : 'ADDED', rv: ev.revision, key: obj.key, object: obj, prev };
    }
    this.revision = ev.revision;
    this.lastChange = ev.revision;
    this.window.add(cev);
    for (const w of this.watchers) w.offer(cev);
    // The items (and the frames encoded on them) serve this fan-out; the window keeps only the event.
    cev.items = undefined;
  }

  private releaseWaiters(): void {
    if (!this.waiters.length) return;
    const still: typeof this.waiters = [];
    for (const w of this.waiters) {
      if (w.rv <= this.revision) w.resolve();
      else still.push(w);
    }
    this.waiters = still;
  }

  /** Resolves true once the cache reached rv, false after timeoutMs. */
  waitFor(rv: number, timeoutMs: number): Promise<boolean> {
    if (rv <= this.revision) return Promise.resolve(true);
    return new Promise((resolve) => {
      const entry = { rv, resolve: () => (clearTimeout(t), resolve(true)) };
      const t = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== entry);
        resolve(false);
      }, timeoutMs);
      this.waiters.push(entry);
    });
  }

  get(key: string): CachedObject | undefined {
    return this.objects.get(key);
  }

  /**
   * Current objects under prefix (a namespace or the whole resource), in key order;
   * with startKey (under prefix), only those from it on.
   */
  list(prefix: string = this.prefix, startKey?: string): CachedObject[] {
    if (!this.sortedKeys) this.sortedKeys = [...this.objects.keys()].sort(compareKeys);
    const keys = this.sortedKeys;
    const from = startKey ?? prefix;
    let lo = 0;
    if (from !== this.prefix) {
      let hi = keys.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (compareKeys(keys[mid], from) < 0) lo = mid + 1;
        else hi = mid;
      }
    }
    const out: CachedObject[] = [];
    for (let i = lo; i < keys.length && keys[i].startsWith(prefix); i++) out.push(this.objects.get(keys[i])!);
    return out;
  }

  /**
   * Watches changes with revision > fromRV under filter.prefix. When `initial`
   * is given, those objects are sent first as ADDED (then events after `fromRV`).
   * Throws a StorageError 'Compacted' when fromRV is older than the window; the
   * caller then watches the store directly.
   */
  watch(filter: WatchFilter, fromRV: number, initial?: CachedObject[]): CacheWatcher {
    if (fromRV < this.window.oldestRV && fromRV < this.revision) {
      throw new StorageError(
        'Compacted',
        `too old resource version: ${fromRV} (${this.window.oldestRV})`,
        undefined,
        this.window.oldestRV,
      );
    }
    const w = new CacheWatcher(
      filter,
      initial ? 0 : fromRV,
      this.watcherBuffer,
      (x) => this.watchers.delete(x),
      () => this.revision,
    );
    if (initial) {
      const match = filter.match;
      w.preload(
        initial
          .filter((o) => !match || match(o.attrs))
          .map((o) => ({ type: 'ADDED' as const, object: o, rv: o.rv })),
      );
      w.lastRV = fromRV;
    }
    // Replay what the window holds after fromRV, then go live; all synchronous, so nothing slips between.
    for (const ev of this.window.since(fromRV)) {
      w.offer(ev);
      ev.items = undefined;
    }
    w.lastRV = Math.max(w.lastRV, fromRV);
    this.watchers.add(w);
    return w;
  }

  /** Sends every watcher a bookmark at the cache's revision. */
  bookmarkAll(): void {
    for (const w of this.watchers) w.bookmark();
  }
}

/** Store key order (bytewise for ASCII keys), as etcd returns ranges. */
export function compareKeys(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
