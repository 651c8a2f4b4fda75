// client-go's Reflector (tools/cache/reflector.go, as of 1.35): keeps a store
// in step with the server by list-then-watch.
//
// - Initial state: a watch-list stream first (sendInitialEvents=true,
//   resourceVersionMatch=NotOlderThan, ended by the "k8s.io/initial-events-end"
//   bookmark; WatchListClient is on by default in client-go 1.35); on any error
//   it falls back to a paged LIST: RV="0" (any, from the watch cache) with
//   limit 500 on the first list, the last synced RV without a limit on relists,
//   RV="" (quorum) once that RV proved unavailable (410 / too large).
// - Then WATCH from the synced RV with allowWatchBookmarks and a timeout of
//   minWatchTimeout × (1 + rand); a watch that ends normally is reopened at
//   once from the last RV seen (bookmarks included); connection refused / 429
//   back off and rewatch; a 410 or any other error ends the round, and after
//   the backoff (800 ms → 30 s, jittered) the reflector lists again.
import { logger } from '../log';
import { realClock, type Clock, type Timer } from '../client/clock';
import {
  isConnectionRefused,
  isExpired,
  isInternalError,
  isTooLargeResourceVersion,
  isTooManyRequests,
  StatusError,
  statusErrorFromObject,
} from '../client/errors';
import type { KubeList, KubeObject } from '../client/types';
import type { WatchEvent } from '../client/watch';
import { isWatchClosedError } from '../client/watch';
import { ExponentialBackoff } from './backoff';
import {
  fillTypes,
  listPaged,
  PAGE_SIZE,
  type ListerWatcher,
  type ReflectorStore,
  type WatchInterface,
} from './listwatch';

export type { ListerWatcher, ReflectorStore, WatchInterface } from './listwatch';

const log = logger('reflector');

export interface ReflectorOptions {
  /** For logs. */
  name?: string;
  /** Resync period in ms (0: never). */
  resyncPeriodMs?: number;
  /** Consulted at each resync tick; resync happens when it returns true (always when unset). */
  shouldResync?: () => boolean;
  clock?: Clock;
  /** Start with a watch-list stream (client-go 1.35 default: true). */
  useWatchList?: boolean;
  /** WatchListPageSize: force this page size on lists (0: client-go's rules). */
  pageSize?: number;
  /** minWatchTimeout (5 min); watches ask for a timeout in [min, 2×min). */
  minWatchTimeoutMs?: number;
  /** MaxInternalErrorRetryDuration: how long watch 500s are retried without a relist (0: not). */
  maxInternalErrorRetryMs?: number;
  backoff?: ExponentialBackoff;
  /** Called when a list-and-watch round ends with an error (before the backoff). */
  watchErrorHandler?: (err: unknown) => void;
  random?: () => number;
}

const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

class StopRequested extends Error {
  constructor() {
    super('stop requested');
  }
}

interface ActiveWatch<T> {
  w: WatchInterface<T>;
  it: AsyncIterator<WatchEvent<T>>;
}

interface Sink<T> {
  add(obj: T): void;
  update(obj: T): void;
  delete(obj: T): void;
}

/** The standard handler: logs by error kind like client-go's DefaultWatchErrorHandler. */
function defaultWatchErrorHandler(name: string): (err: unknown) => void {
  return (err) => {
    if (isExpired(err)) log.v(4)?.info('watch closed', { reflector: name, err: String(err) });
    else log.warn('failed to list and watch', { reflector: name, err: String(err) });
  };
}

export class Reflector<T extends KubeObject = KubeObject> {
  readonly name: string;
  private readonly clock: Clock;
  private readonly backoff: ExponentialBackoff;
  private readonly random: () => number;
  private readonly useWatchList: boolean;
  private readonly pageSize: number;
  private readonly minWatchTimeoutMs: number;
  private readonly maxInternalErrorRetryMs: number;
  private readonly onError: (err: unknown) => void;
  private lastSyncRV = '';
  private rvUnavailable = false;
  private paginatedResult = false;
  private current?: WatchInterface<T>;

  constructor(
    private readonly lw: ListerWatcher<T>,
    private readonly store: ReflectorStore<T>,
    private readonly opts: ReflectorOptions = {},
  ) {
    this.name = opts.name ?? 'reflector';
    this.clock = opts.clock ?? realClock;
    this.random = opts.random ?? Math.random;
    this.backoff = opts.backoff ?? new ExponentialBackoff({ clock: this.clock, random: this.random });
    this.useWatchList = opts.useWatchList ?? true;
    this.pageSize = opts.pageSize ?? 0;
    this.minWatchTimeoutMs = opts.minWatchTimeoutMs ?? 5 * 60_000;
    this.maxInternalErrorRetryMs = opts.maxInternalErrorRetryMs ?? 0;
    this.onError = opts.watchErrorHandler ?? defaultWatchErrorHandler(this.name);
  }

  /** The resourceVersion of the last list or watch event seen. */
  get lastSyncResourceVersion(): string {
    return this.lastSyncRV;
  }

  /** Lists and watches until signal aborts, backing off between rounds. */
  async run(signal: AbortSignal): Promise<void> {
    log.v(3)?.info('starting reflector', { reflector: this.name });
    const onAbort = () => this.current?.stop();
    signal.addEventListener('abort', onAbort, { once: true });
    try {
      while (!signal.aborted) {
        try {
          await this.listAndWatch(signal);
        } catch (err) {
          if (!signal.aborted && !(err instanceof StopRequested)) this.onError(err);
        }
        if (signal.aborted) break;
        await this.clock.sleep(this.backoff.next(), signal);
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      log.v(3)?.info('stopping reflector', { reflector: this.name });
    }
  }

  /** One round: initial state (watch-list or list), then watches until one fails. */
  async listAndWatch(signal: AbortSignal): Promise<void> {
    let aw: ActiveWatch<T> | undefined;
    let fallback = !this.useWatchList;
    if (this.useWatchList) {
      try {
        aw = await this.watchList(signal);
        if (!aw) return;
      } catch (err) {
        if (signal.aborted) return;
        log
          .v(2)
          ?.info(
            'the watch-list request ended with an error, falling back to the standard LIST/WATCH semantics because making progress is better than deadlocking',
            { reflector: this.name, err: String(err) },
          );
        fallback = true;
      }
    }
    if (fallback) await this.list(signal);
    const stopResync = this.startResync(signal);
    try {
      await this.watch(aw, signal);
    } finally {
      stopResync();
    }
  }

  // ---- initial state --------------------------------------------------------

  private relistResourceVersion(): string {
    if (this.rvUnavailable) return '';
    return this.lastSyncRV === '' ? '0' : this.lastSyncRV;
  }

  private rewatchResourceVersion(): string {
    return this.rvUnavailable ? '' : this.lastSyncRV;
  }

  private setLastSync(rv: string): void {
    if (!rv) return;
    this.lastSyncRV = rv;
    this.store.updateResourceVersion?.(rv);
  }

  private watchTimeoutSeconds(): number {
    return Math.floor((this.minWatchTimeoutMs / 1000) * (1 + this.random()));
  }

  /** Retriable errors of the watch-list: back off on refused/429, go consistent on 410 or too-large RV. */
  private async retriableWithSideEffects(err: unknown, signal: AbortSignal): Promise<boolean> {
    if (isConnectionRefused(err) || isTooManyRequests(err)) {
      await this.clock.sleep(this.backoff.next(), signal);
      return true;
    }
    if (isExpired(err) || isTooLargeResourceVersion(err)) {
      this.rvUnavailable = true;
      return true;
    }
    return false;
  }

  private async watchList(signal: AbortSignal): Promise<ActiveWatch<T> | undefined> {
    for (;;) {
      if (signal.aborted) return undefined;
      const rv = this.rewatchResourceVersion();
      const temp = new Map<string, T>();
      const sink: Sink<T> = {
        add: (o) => temp.set(keyOf(o), o),
        update: (o) => temp.set(keyOf(o), o),
        delete: (o) => temp.delete(keyOf(o)),
      };
      const start = this.clock.now();
      let aw: ActiveWatch<T>;
      try {
        aw = this.open(
          await this.lw.watch({
            resourceVersion: rv || undefined,
            resourceVersionMatch: 'NotOlderThan',
            sendInitialEvents: true,
            allowWatchBookmarks: true,
            timeoutSeconds: this.watchTimeoutSeconds(),
            signal,
          }),
        );
      } catch (err) {
        if (signal.aborted) return undefined;
        if (await this.retriableWithSideEffects(err, signal)) continue;
        throw err;
      }
      let endRV: string | undefined;
      try {
        endRV = await this.handleWatch(aw, start, sink, true, signal);
      } catch (err) {
        aw.w.stop();
        if (signal.aborted || err instanceof StopRequested) return undefined;
        if (await this.retriableWithSideEffects(err, signal)) continue;
        throw err;
      }
      if (endRV !== undefined) {
        this.rvUnavailable = false;
        this.store.replace([...temp.values()], endRV);
        this.setLastSync(endRV);
        return aw;
      }
      aw.w.stop();
    }
  }

  private async list(signal: AbortSignal): Promise<void> {
    let list: KubeList<T>;
    try {
      list = await this.pagedList(this.relistResourceVersion(), signal);
    } catch (err) {
      if (!isExpired(err) && !isTooLargeResourceVersion(err)) throw err;
      // The RV is gone or ahead of the server: a consistent list from etcd instead.
      this.rvUnavailable = true;
      list = await this.pagedList(this.relistResourceVersion(), signal);
    }
    const rv = list.metadata?.resourceVersion ?? '';
    this.rvUnavailable = false;
    const items = list.items ?? [];
    fillTypes(list);
    this.store.replace(items, rv);
    this.setLastSync(rv);
  }

  /** client-go's pager with the reflector's page-size rules. */
  private async pagedList(rv: string, signal: AbortSignal): Promise<KubeList<T>> {
    let limit = PAGE_SIZE;
    if (this.pageSize) limit = this.pageSize;
    else if (this.paginatedResult) limit = PAGE_SIZE;
    // Lists at a specific RV go unpaged so the watch cache can serve them.
    else if (rv !== '' && rv !== '0') limit = 0;
    const { list, paginated } = await listPaged(this.lw, rv, limit, signal);
    if (rv === '0' && paginated) this.paginatedResult = true;
    return list;
  }

  // ---- watching -------------------------------------------------------------

  private open(w: WatchInterface<T>): ActiveWatch<T> {
    this.current = w;
    return { w, it: w[Symbol.asyncIterator]() };
  }

  private async watch(aw: ActiveWatch<T> | undefined, signal: AbortSignal): Promise<void> {
    let internalErrorsSince: number | undefined;
    for (;;) {
      if (signal.aborted) return;
      const start = this.clock.now();
      if (!aw) {
        try {
          aw = this.open(
            await this.lw.watch({
              resourceVersion: this.lastSyncRV || undefined,
              timeoutSeconds: this.watchTimeoutSeconds(),
              allowWatchBookmarks: true,
              signal,
            }),
          );
        } catch (err) {
          if (signal.aborted) return;
          // The server is likely just restarting: wait and rewatch rather than relist everything.
          if (isConnectionRefused(err) || isTooManyRequests(err)) {
            log.v(4)?.info('watch failed, backing off', { reflector: this.name, err: String(err) });
            await this.clock.sleep(this.backoff.next(), signal);
            continue;
          }
          throw err;
        }
      }
      let err: unknown;
      try {
        await this.handleWatch(aw, start, this.store, false, signal);
      } catch (e) {
        err = e;
      }
      aw.w.stop();
      aw = undefined;
      if (err === undefined) {
        internalErrorsSince = undefined;
        continue;
      }
      if (signal.aborted || err instanceof StopRequested) return;
      if (isExpired(err)) {
        // A relist at the last RV ("not older than") comes next, after the backoff.
        log.v(4)?.info('watch closed', { reflector: this.name, err: String(err) });
      } else if (isTooManyRequests(err)) {
        await this.clock.sleep(this.backoff.next(), signal);
        continue;
      } else if (isInternalError(err) && this.maxInternalErrorRetryMs > 0) {
        internalErrorsSince ??= this.clock.now();
        if (this.clock.now() - internalErrorsSince < this.maxInternalErrorRetryMs) continue;
        log.warn('watch ended with an internal error', { reflector: this.name, err: String(err) });
      } else {
        log.warn('watch ended with an error', { reflector: this.name, err: String(err) });
      }
      return;
    }
  }

  /**
   * Feeds watch events into sink. With untilInitialEnd, returns the RV of the
   * initial-events-end bookmark (the stream stays open); otherwise returns when
   * the stream ends. Throws the Status of an ERROR event.
   */
  private async handleWatch(
    aw: ActiveWatch<T>,
    start: number,
    sink: Sink<T>,
    untilInitialEnd: boolean,
    signal: AbortSignal,
  ): Promise<string | undefined> {
    let count = 0;
    for (;;) {
      let r: IteratorResult<WatchEvent<T>>;
      try {
        r = await aw.it.next();
      } catch (err) {
        if (signal.aborted) throw new StopRequested();
        // A broken connection is a closed watch, as client-go's StreamWatcher treats it.
        if (!(err instanceof StatusError) && isWatchClosedError(err)) {
          log.v(1)?.info('watch closed with an unexpected error', { reflector: this.name, err: String(err) });
          break;
        }
        throw err;
      }
      if (r.done) break;
      if (signal.aborted) throw new StopRequested();
      const { type, object } = r.value;
      if (type === 'ERROR') throw statusErrorFromObject(object);
      const rv = (object as KubeObject)?.metadata?.resourceVersion ?? '';
      switch (type) {
        case 'ADDED':
          sink.add(object);
          break;
        case 'MODIFIED':
          sink.update(object);
          break;
        case 'DELETED':
          sink.delete(object);
          break;
        case 'BOOKMARK':
          if (
            untilInitialEnd &&
            (object as KubeObject)?.metadata?.annotations?.[INITIAL_EVENTS_END] === 'true'
          ) {
            return rv;
          }
          break;
        default:
          log.error('unknown watch event type', { reflector: this.name, type });
          continue;
      }
      if (!untilInitialEnd) this.setLastSync(rv);
      count++;
    }
    if (signal.aborted) throw new StopRequested();
    if (this.clock.now() - start < 1000 && count === 0) {
      throw new Error(
        `very short watch: ${this.name}: unexpected watch close - watch lasted less than a second and no items received`,
      );
    }
    return undefined;
  }

  private startResync(signal: AbortSignal): () => void {
    const period = this.opts.resyncPeriodMs ?? 0;
    if (!period) return () => {};
    let timer: Timer | undefined;
    const tick = () => {
      if (signal.aborted) return;
      if (!this.opts.shouldResync || this.opts.shouldResync()) {
        log.v(4)?.info('forcing resync', { reflector: this.name });
        this.store.resync();
      }
      timer = this.clock.setTimer(tick, period);
    };
    timer = this.clock.setTimer(tick, period);
    return () => timer?.cancel();
  }
}

function keyOf(o: KubeObject): string {
  const m = o.metadata;
  return m?.namespace ? `${m.namespace}/${m.name}` : (m?.name ?? '');
}
