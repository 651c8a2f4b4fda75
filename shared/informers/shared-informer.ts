// client-go's sharedIndexInformer: one reflector feeding one indexer, and any
// number of handlers. JavaScript runs one thing at a time, so the DeltaFIFO is
// not needed: each reflector write updates the indexer and fans out the
// notification at once, in the order DeltaFIFO + processDeltas would produce
// (adds/updates of a relist first, then tombstones for what vanished).
import { logger } from '../log';
import { realClock, type Clock } from '../client/clock';
import type { KubeObject } from '../client/types';
import { Reflector, type ListerWatcher, type ReflectorOptions, type ReflectorStore } from './reflector';
import { DeletedFinalStateUnknown, Indexer, type Indexers } from './store';
import { Listener, Processor, type EventHandlerRegistration, type ResourceEventHandler } from './processor';
import { Lister } from './lister';

const log = logger('informers');

/** client-go's minimumResyncPeriod. */
const MIN_RESYNC_MS = 1000;

export interface SharedInformerOptions<T> {
  /** Default resync period of handlers (ms, 0: none). */
  resyncPeriodMs?: number;
  indexers?: Indexers<T>;
  clock?: Clock;
  /** For logs. */
  name?: string;
  /** Applied to every object before it is cached (e.g. drop managedFields). */
  transform?: (obj: T) => T;
  /** Reflector settings (watch-list, page size, watch timeout...). */
  reflector?: Omit<ReflectorOptions, 'resyncPeriodMs' | 'shouldResync' | 'clock' | 'name'>;
}

/** The reflector's store: applies writes to the indexer and tells the handlers. */
class InformerStore<T extends KubeObject> implements ReflectorStore<T> {
  populated = false;
  resourceVersion = '';

  constructor(
    private readonly indexer: Indexer<T>,
    private readonly processor: Processor<T>,
    private readonly transform: () => ((obj: T) => T) | undefined,
    private readonly onPopulated: () => void,
  ) {}

  private upsert(raw: T, initial: boolean): string {
    const t = this.transform();
    const obj = t ? t(raw) : raw;
    const key = this.indexer.keyFunc(obj);
    const old = this.indexer.set(key, obj);
    if (old === undefined) this.processor.distribute({ kind: 'add', obj, initial }, false);
    else {
      const isSync = old.metadata?.resourceVersion === obj.metadata?.resourceVersion;
      this.processor.distribute({ kind: 'update', old, obj }, isSync);
    }
    return key;
  }

  add(obj: T): void {
    this.upsert(obj, false);
  }

  update(obj: T): void {
    this.upsert(obj, false);
  }

  delete(raw: T): void {
    const t = this.transform();
    const obj = t ? t(raw) : raw;
    // A delete of something never seen is dropped, as DeltaFIFO does.
    if (this.indexer.delete(obj) === undefined) return;
    this.processor.distribute({ kind: 'delete', obj }, false);
  }

  replace(items: T[], resourceVersion: string): void {
    const initial = !this.populated;
    const seen = new Set<string>();
    for (const it of items) seen.add(this.upsert(it, initial));
    // Objects that vanished while we were not watching: tombstones with their last known state.
    for (const key of this.indexer.listKeys()) {
      if (seen.has(key)) continue;
      const old = this.indexer.deleteKey(key)!;
      this.processor.distribute({ kind: 'delete', obj: new DeletedFinalStateUnknown(key, old) }, false);
    }
    this.resourceVersion = resourceVersion;
    if (!this.populated) {
      this.populated = true;
      this.onPopulated();
    }
  }

  resync(): void {
    for (const obj of this.indexer.values())
      this.processor.distribute({ kind: 'update', old: obj, obj }, true);
  }

  updateResourceVersion(rv: string): void {
    this.resourceVersion = rv;
  }
}

export class SharedIndexInformer<T extends KubeObject = KubeObject> {
  readonly indexer: Indexer<T>;
  readonly name: string;
  private readonly processor: Processor<T>;
  private readonly store: InformerStore<T>;
  private readonly clock: Clock;
  private readonly defaultResyncMs: number;
  private resyncCheckMs: number;
  private transformFn?: (obj: T) => T;
  private reflector?: Reflector<T>;
  private abort?: AbortController;
  private running?: Promise<void>;
  private started = false;
  private stopped = false;
  private syncedWaiters: (() => void)[] = [];
  private listerCache?: Lister<T>;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly opts: SharedInformerOptions<T> = {},
  ) {
    this.clock = opts.clock ?? realClock;
    this.name = opts.name ?? 'informer';
    this.indexer = new Indexer<T>(undefined, opts.indexers);
    this.processor = new Processor<T>(this.clock);
    this.store = new InformerStore<T>(
      this.indexer,
      this.processor,
      () => this.transformFn,
      () => this.wakeWaiters(),
    );
    this.defaultResyncMs = opts.resyncPeriodMs ?? 0;
    this.resyncCheckMs = this.defaultResyncMs;
    this.transformFn = opts.transform;
  }

  /** True once the first list (or watch-list) has been applied to the cache. */
  hasSynced(): boolean {
    return this.store.populated;
  }

  /** Resolves true when synced, false if signal aborts or the informer stops first. */
  whenSynced(signal?: AbortSignal): Promise<boolean> {
    if (this.hasSynced()) return Promise.resolve(true);
    if (signal?.aborted || this.stopped) return Promise.resolve(false);
    return new Promise((resolve) => {
      const done = (v: boolean) => {
        signal?.removeEventListener('abort', onAbort);
        resolve(v);
      };
      const onAbort = () => done(false);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.syncedWaiters.push(() => done(this.hasSynced()));
    });
  }

  isStopped(): boolean {
    return this.stopped;
  }

  /** The resourceVersion the cache is at. */
  lastSyncResourceVersion(): string {
    return this.store.resourceVersion;
  }

  /** Set before start(): applied to each object before it is cached and handed to handlers. */
  setTransform(fn: (obj: T) => T): void {
    if (this.started) throw new Error('informer has already started');
    this.transformFn = fn;
  }

  addIndexers(indexers: Indexers<T>): void {
    this.indexer.addIndexers(indexers);
  }

  lister(): Lister<T> {
    return (this.listerCache ??= new Lister<T>(this.indexer));
  }

  /**
   * Adds a handler. It gets the current content as adds (isInInitialList=true)
   * when the informer is already running, then every change.
   */
  addEventHandler(
    handler: ResourceEventHandler<T>,
    resyncPeriodMs = this.defaultResyncMs,
  ): EventHandlerRegistration {
    if (this.stopped) throw new Error(`handler added to the stopped informer ${this.name}`);
    let resync = resyncPeriodMs;
    if (resync > 0) {
      if (resync < MIN_RESYNC_MS) resync = MIN_RESYNC_MS;
      if (resync < this.resyncCheckMs) {
        if (this.started) resync = this.resyncCheckMs;
        else this.resyncCheckMs = resync;
      } else if (this.resyncCheckMs === 0 && !this.started) this.resyncCheckMs = resync;
    }
    const l = new Listener<T>(handler, resync, () => this.hasSynced(), this.clock);
    this.processor.add(l);
    // Late handlers get the cache replayed; earlier ones get the first replace like everyone.
    if (this.hasSynced()) for (const obj of this.indexer.values()) l.add({ kind: 'add', obj, initial: true });
    l.markInitialQueued();
    return l;
  }

  removeEventHandler(reg: EventHandlerRegistration): void {
    this.processor.remove(reg as Listener<T>);
  }

  /** Starts the reflector; resolves when stopped (by signal or stop()). */
  run(signal?: AbortSignal): Promise<void> {
    if (this.started) return this.running ?? Promise.resolve();
    if (this.stopped) return Promise.resolve();
    this.started = true;
    const ac = new AbortController();
    this.abort = ac;
    if (signal) {
      if (signal.aborted) ac.abort();
      else signal.addEventListener('abort', () => ac.abort(), { once: true });
    }
    this.reflector = new Reflector<T>(this.lw, this.store, {
      ...this.opts.reflector,
      name: this.name,
      clock: this.clock,
      resyncPeriodMs: this.resyncCheckMs,
      shouldResync: () => this.processor.shouldResync(),
    });
    this.running = this.reflector.run(ac.signal).finally(() => {
      this.stopped = true;
      this.processor.stop();
      this.wakeWaiters();
      log.v(3)?.info('informer stopped', { informer: this.name });
    });
    return this.running;
  }

  private wakeWaiters(): void {
    const w = this.syncedWaiters;
    this.syncedWaiters = [];
    for (const f of w) f();
  }

  /** Stops the reflector and the handlers' delivery; resolves once stopped. */
  async stop(): Promise<void> {
    if (!this.started) {
      this.stopped = true;
      return;
    }
    this.abort?.abort();
    await this.running;
  }
}
