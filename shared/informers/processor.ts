// client-go's sharedProcessor / processorListener: every handler gets its own
// FIFO of notifications, delivered asynchronously and in order, so a slow
// handler delays only itself. Resync notifications go only to listeners whose
// own resync period is due.
import { logger } from '../log';
import { realClock, type Clock } from '../client/clock';
import type { DeletedFinalStateUnknown } from './store';

const log = logger('informers');

export interface ResourceEventHandler<T> {
  /** isInInitialList: the object came with the informer's first list (or was replayed to a late handler). */
  onAdd?(obj: T, isInInitialList: boolean): void;
  /** Also called on resync and on relists with an unchanged object (then oldObj has the same resourceVersion). */
  onUpdate?(oldObj: T, newObj: T): void;
  /** obj is a DeletedFinalStateUnknown when the delete was only noticed at a relist. */
  onDelete?(obj: T | DeletedFinalStateUnknown<T>): void;
}

export type Notification<T> =
  | { kind: 'add'; obj: T; initial: boolean }
  | { kind: 'update'; old: T; obj: T }
  | { kind: 'delete'; obj: T | DeletedFinalStateUnknown<T> };

/** Handed back by addEventHandler. */
export interface EventHandlerRegistration {
  /** True once the informer synced and this handler has been given every object of the initial list. */
  hasSynced(): boolean;
}

/** Notifications delivered per turn of the event loop, so a huge initial list does not starve I/O. */
const BATCH = 1000;

export class Listener<T> implements EventHandlerRegistration {
  private queue: Notification<T>[] = [];
  private head = 0;
  private scheduled = false;
  private stopped = false;
  /** Initial notifications queued but not yet delivered. */
  private initialPending = 0;
  private initialQueued = false;
  nextResync = 0;

  constructor(
    readonly handler: ResourceEventHandler<T>,
    readonly resyncPeriodMs: number,
    private readonly upstreamSynced: () => boolean,
    private readonly clock: Clock = realClock,
  ) {
    this.determineNextResync();
  }

  hasSynced(): boolean {
    return this.upstreamSynced() && this.initialQueued && this.initialPending === 0;
  }

  /** Marks that the initial list (possibly empty) has been queued for this listener. */
  markInitialQueued(): void {
    this.initialQueued = true;
  }

  add(n: Notification<T>): void {
    if (this.stopped) return;
    if (n.kind === 'add' && n.initial) this.initialPending++;
    this.queue.push(n);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  stop(): void {
    this.stopped = true;
    this.queue = [];
    this.head = 0;
  }

  shouldResync(now: number): boolean {
    if (this.resyncPeriodMs <= 0) return false;
    if (now >= this.nextResync) {
      this.determineNextResync(now);
      return true;
    }
    return false;
  }

  determineNextResync(now = this.clock.now()): void {
    this.nextResync = now + this.resyncPeriodMs;
  }

  private drain(): void {
    this.scheduled = false;
    let n = 0;
    while (this.head < this.queue.length && n < BATCH && !this.stopped) {
      const item = this.queue[this.head];
      this.queue[this.head++] = undefined as never;
      n++;
      this.deliver(item);
    }
    if (this.head >= this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (!this.stopped) {
      if (this.head > 4096) {
        this.queue = this.queue.slice(this.head);
        this.head = 0;
      }
      this.scheduled = true;
      setImmediate(() => this.drain());
    }
  }

  private deliver(n: Notification<T>): void {
    const h = this.handler;
    try {
      switch (n.kind) {
        case 'add':
          h.onAdd?.(n.obj, n.initial);
          break;
        case 'update':
          h.onUpdate?.(n.old, n.obj);
          break;
        case 'delete':
          h.onDelete?.(n.obj);
          break;
      }
    } catch (err) {
      log.error('event handler failed', {
        err: err instanceof Error ? (err.stack ?? err.message) : String(err),
      });
    } finally {
      if (n.kind === 'add' && n.initial) this.initialPending--;
    }
  }
}

export class Processor<T> {
  readonly listeners = new Set<Listener<T>>();
  private syncing: Listener<T>[] = [];

  constructor(private readonly clock: Clock = realClock) {}

  add(l: Listener<T>): void {
    this.listeners.add(l);
  }

  remove(l: Listener<T>): void {
    l.stop();
    this.listeners.delete(l);
    this.syncing = this.syncing.filter((x) => x !== l);
  }

  /** Resync notifications go to the listeners found due by the last shouldResync(). */
  distribute(n: Notification<T>, isSync: boolean): void {
    if (isSync) for (const l of this.syncing) l.add(n);
    else for (const l of this.listeners) l.add(n);
  }

  /** Picks the listeners whose resync is due; true when there is any. */
  shouldResync(): boolean {
    const now = this.clock.now();
    this.syncing = [];
    for (const l of this.listeners) if (l.shouldResync(now)) this.syncing.push(l);
    return this.syncing.length > 0;
  }

  stop(): void {
    for (const l of this.listeners) l.stop();
  }
}
