// Watchers of the cache: each has a filter and a bounded queue; the cache
// dispatches every event to every matching watcher synchronously, in order.
// A reader either iterates (a promise per batch) or listens: it is told when
// the queue stops being empty and takes what is queued when it can write.
import type { CachedObject, ObjectAttrs } from './cached-object';

export type WatchEventType = 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';

export interface WatchItem {
  type: WatchEventType;
  /** Absent for BOOKMARK and ERROR. */
  object?: CachedObject;
  /** The revision this item brings the watcher to. */
  rv: number;
  /** For ERROR: the reason the watch ended. */
  error?: Error;
  /** A BOOKMARK that ends the initial events of a sendInitialEvents watch. */
  initialEventsEnd?: boolean;
  /** Shared by every watcher receiving this same item: encoders memoise frames here. */
  frames?: Map<string, Buffer>;
}

export interface WatchFilter {
  /** Key prefix the watcher is interested in (resource root or namespace). */
  prefix: string;
  /** Extra predicate on labels/fields; undefined means everything. */
  match?(attrs: ObjectAttrs): boolean;
}

/** One change as the cache saw it, before per-watcher filtering. */
export interface CacheEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  rv: number;
  key: string;
  /** The new state; for DELETED the last state at the delete's revision. */
  object: CachedObject;
  prev: CachedObject | null;
  /** Items derived from this event, shared across watchers (by transition). */
  items?: Partial<Record<'ADDED' | 'MODIFIED' | 'DELETED', WatchItem>>;
}

export class CacheWatcher implements AsyncIterable<WatchItem[]> {
  private queue: WatchItem[] = [];
  private wake: ((r: IteratorResult<WatchItem[]>) => void) | null = null;
  private closedReason: 'stopped' | 'overflow' | null = null;
  /** A listening reader (instead of an iterating one). */
  private listener: (() => void) | null = null;
  /** Revision of the last item queued (events below it are not for us). */
  lastRV: number;

  constructor(
    readonly filter: WatchFilter,
    fromRV: number,
    private readonly bufferSize: number,
    private readonly onClose: (w: CacheWatcher) => void,
    /** The revision a bookmark may claim (the cache's); defaults to the last queued. */
    private readonly currentRV: () => number = () => this.lastRV,
  ) {
    this.lastRV = fromRV;
  }

  get closed(): boolean {
    return this.closedReason !== null;
  }

  /** Items queued but not yet taken by the reader. */
  get backlog(): number {
    return this.queue.length;
  }

  /** Offers an event; filters it, converts transitions, and queues the result. */
  offer(ev: CacheEvent): void {
    if (this.closed || ev.rv <= this.lastRV) return;
    if (!ev.key.startsWith(this.filter.prefix)) return;
    const match = this.filter.match;
    let type: 'ADDED' | 'MODIFIED' | 'DELETED' | null;
    let object = ev.object;
    if (!match) type = ev.type;
    else {
      const cur = ev.type !== 'DELETED' && match(ev.object.attrs);
      const old = ev.prev !== null && match(ev.prev.attrs);
      if (ev.type === 'DELETED') type = old ? 'DELETED' : null;
      else if (cur && old) type = 'MODIFIED';
      else if (cur) type = 'ADDED';
      else if (old) {
        // Left the selection: Kubernetes sends DELETED with the previous content at this revision.
        type = 'DELETED';
        object = ev.prev!.withRV(ev.rv);
      } else type = null;
    }
    if (type === null) return;
    const items = (ev.items ??= {});
    let item = items[type];
    if (!item || item.object !== object) item = items[type] = { type, object, rv: ev.rv };
    this.push(item);
  }

  push(item: WatchItem): void {
    if (this.closed) return;
    this.lastRV = Math.max(this.lastRV, item.rv);
    if (this.wake) {
      const w = this.wake;
      this.wake = null;
      w({ value: [item], done: false });
      return;
    }
    if (this.queue.length >= this.bufferSize) {
      // A reader this far behind would stall memory; end it so the client re-watches from its last RV.
      this.close('overflow');
      return;
    }
    this.queue.push(item);
    if (this.listener && this.queue.length === 1) this.listener();
  }

  /**
   * Listens instead of iterating: onReady is called whenever the queue goes from
   * empty to not empty, and once when the watcher closes; the reader then takes
   * what is queued with takeQueued() (and checks `closed` once it is empty).
   */
  listen(onReady: () => void): void {
    this.listener = onReady;
    if (this.queue.length || this.closed) onReady();
  }

  /** Takes what is queued now without waiting (a writer gathering a window's events). */
  takeQueued(): WatchItem[] {
    const q = this.queue;
    this.queue = [];
    return q;
  }

  /** Queues the initial state (synthetic ADDED events); never counts against the buffer. */
  preload(items: WatchItem[]): void {
    this.queue = items.concat(this.queue);
  }

  /** Queues a bookmark: every change up to its revision has been queued before it. */
  bookmark(): void {
    this.push({ type: 'BOOKMARK', rv: Math.max(this.currentRV(), this.lastRV) });
  }

  close(reason: 'stopped' | 'overflow' = 'stopped'): void {
    if (this.closed) return;
    this.closedReason = reason;
    this.onClose(this);
    this.listener?.();
    if (this.wake) {
      const w = this.wake;
      this.wake = null;
      w({ value: undefined, done: true });
    }
  }

  get overflowed(): boolean {
    return this.closedReason === 'overflow';
  }

  [Symbol.asyncIterator](): AsyncIterator<WatchItem[]> {
    return {
      next: () => {
        if (this.queue.length) {
          const batch = this.queue;
          this.queue = [];
          return Promise.resolve({ value: batch, done: false });
        }
        if (this.closed) return Promise.resolve({ value: undefined, done: true });
        return new Promise((r) => (this.wake = r));
      },
      return: () => {
        this.close();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
