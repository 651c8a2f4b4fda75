// client-go's workqueue: a FIFO of keys where
// - a key queued twice is queued once (dirty set),
// - a key is never handed to two workers at once: re-added while being
//   processed, it is queued again only after done(),
// - addAfter() delays an item (the earliest requested time wins),
// - addRateLimited() delays by the item's rate limiter; forget() resets it,
// - shutDown() wakes idle workers; queued items are still handed out;
//   shutDownWithDrain() also waits for items in processing to be done.
import { logger } from '../log';
import { realClock, type Clock, type Timer } from '../client/clock';
import { defaultControllerRateLimiter, type ItemRateLimiter } from './rate-limiters';

const log = logger('workqueue');

export type GetResult<T> = { item: T; shutdown: false } | { item: undefined; shutdown: true };

export interface QueueOptions {
  name?: string;
  clock?: Clock;
}

export class WorkQueue<T> {
  readonly name: string;
  protected readonly clock: Clock;
  private queue: T[] = [];
  private head = 0;
  private readonly dirty = new Set<T>();
  private readonly processing = new Set<T>();
  private waiters: ((r: GetResult<T>) => void)[] = [];
  private wakeScheduled = false;
  private drainWaiters: (() => void)[] = [];
  private shutting = false;

  constructor(opts: QueueOptions = {}) {
    this.name = opts.name ?? '';
    this.clock = opts.clock ?? realClock;
  }

  /** Queues item unless it is already queued; an item in processing is requeued after done(). */
  add(item: T): void {
    if (this.shutting) return;
    if (this.dirty.has(item)) return;
    this.dirty.add(item);
    if (this.processing.has(item)) return;
    this.enqueue(item);
  }

  /**
   * Queues a dirty item and wakes an idle worker in a microtask, so adds of the
   * same key in one burst still collapse into one hand-out.
   */
  private enqueue(item: T): void {
    this.queue.push(item);
    if (this.waiters.length && !this.wakeScheduled) {
      this.wakeScheduled = true;
      queueMicrotask(() => {
        this.wakeScheduled = false;
        while (this.waiters.length && this.head < this.queue.length) this.waiters.shift()!(this.takeNext());
      });
    }
  }

  private takeNext(): GetResult<T> {
    const item = this.queue[this.head];
    this.queue[this.head++] = undefined as never;
    if (this.head === this.queue.length) {
      this.queue = [];
      this.head = 0;
    } else if (this.head > 1024 && this.head * 2 > this.queue.length) {
      this.queue = this.queue.slice(this.head);
      this.head = 0;
    }
    this.dirty.delete(item);
    this.processing.add(item);
    return { item, shutdown: false };
  }

  /** Items waiting to be handed out. */
  len(): number {
    return this.queue.length - this.head;
  }

  /** The next item (mark it done() when finished), or shutdown once the queue is shut down and empty. */
  get(): Promise<GetResult<T>> {
    // Waiters first: a queued item may already be promised to one of them.
    if (this.head < this.queue.length && !this.wakeScheduled) return Promise.resolve(this.takeNext());
    if (this.shutting) return Promise.resolve({ item: undefined, shutdown: true });
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends the processing of item; if it was added meanwhile it is queued again. */
  done(item: T): void {
    this.processing.delete(item);
    if (this.dirty.has(item)) {
      // Requeued even while shutting down, so a drain still processes it.
      this.enqueue(item);
      return;
    }
    if (this.processing.size === 0 && this.drainWaiters.length) {
      const ws = this.drainWaiters;
      this.drainWaiters = [];
      for (const f of ws) f();
    }
  }

  /** Stops accepting items and wakes idle get() callers with shutdown. */
  shutDown(): void {
    if (this.shutting) return;
    this.shutting = true;
    // Idle workers still get what is queued; the rest learn about the shutdown.
    while (this.waiters.length && this.head < this.queue.length) this.waiters.shift()!(this.takeNext());
    const ws = this.waiters;
    this.waiters = [];
    for (const w of ws) w({ item: undefined, shutdown: true });
    this.onShutDown();
  }

  /** shutDown(), then waits until every item in processing has been marked done. */
  async shutDownWithDrain(): Promise<void> {
    this.shutDown();
    while (this.processing.size > 0) await new Promise<void>((r) => this.drainWaiters.push(r));
  }

  shuttingDown(): boolean {
    return this.shutting;
  }

  /** Items handed out and not yet done. */
  processingCount(): number {
    return this.processing.size;
  }

  protected onShutDown(): void {}
}

interface Waiting<T> {
  item: T;
  at: number;
}

export class DelayingQueue<T> extends WorkQueue<T> {
  private readonly readyAt = new Map<T, number>();
  /** Binary min-heap on `at`; entries whose time no longer matches readyAt are stale. */
  private heap: Waiting<T>[] = [];
  private timer?: Timer;
  private timerAt = Infinity;

  /** Adds item after ms; if it is already waiting, the earlier time wins. */
  addAfter(item: T, ms: number): void {
    if (this.shuttingDown()) return;
    if (!(ms > 0)) {
      this.add(item);
      return;
    }
    const at = this.clock.now() + ms;
    const existing = this.readyAt.get(item);
    if (existing !== undefined && existing <= at) return;
    this.readyAt.set(item, at);
    this.push({ item, at });
    this.schedule();
  }

  /** Items waiting for their time. */
  waitingCount(): number {
    return this.readyAt.size;
  }

  private schedule(): void {
    this.dropStale();
    const next = this.heap[0];
    if (!next) {
      this.timer?.cancel();
      this.timer = undefined;
      this.timerAt = Infinity;
      return;
    }
    if (this.timer && this.timerAt <= next.at) return;
    this.timer?.cancel();
    this.timerAt = next.at;
    this.timer = this.clock.setTimer(() => this.fire(), next.at - this.clock.now());
  }

  private fire(): void {
    this.timer = undefined;
    this.timerAt = Infinity;
    const now = this.clock.now();
    for (;;) {
      this.dropStale();
      const top = this.heap[0];
      if (!top || top.at > now) break;
      this.pop();
      this.readyAt.delete(top.item);
      this.add(top.item);
    }
    this.schedule();
  }

  private dropStale(): void {
    while (this.heap.length && this.readyAt.get(this.heap[0].item) !== this.heap[0].at) this.pop();
  }

  private push(w: Waiting<T>): void {
    const h = this.heap;
    h.push(w);
    let i = h.length - 1;
    while (i > 0) {
      const p = (i - 1) >> 1;
      if (h[p].at <= h[i].at) break;
      [h[p], h[i]] = [h[i], h[p]];
      i = p;
    }
  }

  private pop(): Waiting<T> | undefined {
    const h = this.heap;
    const top = h[0];
    const last = h.pop();
    if (h.length && last) {
      h[0] = last;
      let i = 0;
      for (;;) {
        const l = 2 * i + 1;
        const r = l + 1;
        let m = i;
        if (l < h.length && h[l].at < h[m].at) m = l;
        if (r < h.length && h[r].at < h[m].at) m = r;
        if (m === i) break;
        [h[m], h[i]] = [h[i], h[m]];
        i = m;
      }
    }
    return top;
  }

  protected override onShutDown(): void {
    this.timer?.cancel();
    this.timer = undefined;
    this.timerAt = Infinity;
    this.heap = [];
    this.readyAt.clear();
  }
}

export class RateLimitingQueue<T> extends DelayingQueue<T> {
  readonly rateLimiter: ItemRateLimiter<T>;

  constructor(opts: QueueOptions & { rateLimiter?: ItemRateLimiter<T> } = {}) {
    super(opts);
    this.rateLimiter = opts.rateLimiter ?? defaultControllerRateLimiter<T>(this.clock);
  }

  /** Adds item when its rate limiter says it may be retried. */
  addRateLimited(item: T): void {
    this.addAfter(item, this.rateLimiter.when(item));
  }

  /** Resets item's backoff (call after a successful sync). */
  forget(item: T): void {
    this.rateLimiter.forget(item);
  }

  numRequeues(item: T): number {
    return this.rateLimiter.numRequeues(item);
  }
}

export interface WorkerOptions<T> {
  /** Concurrent workers (a key is still never processed twice at once). */
  workers: number;
  /** Aborting shuts the queue down (with drain) and ends the workers. */
  signal: AbortSignal;
  /** Give up on an item after this many requeues (default: never). */
  maxRetries?: number;
  /** Called when sync fails (after the item was requeued or dropped). */
  onError?: (item: T, err: unknown, requeued: boolean) => void;
}

/** How long a worker may run items back to back before it lets the event loop turn. */
const WORKER_YIELD_MS = 20;

/**
 * A loop's check-in: call it before each step; after ms of steps back to back it returns a
 * promise that lets the event loop turn once (timers, sockets), else undefined. Steps that finish
 * without real I/O (a scheduling decision, a cache hit, a healthy node) resume the loop as
 * microtasks, which would otherwise starve everything else for as long as the loop runs.
 */
export function yielder(ms = WORKER_YIELD_MS): () => Promise<void> | undefined {
  let turn = Date.now();
  return () => {
    if (Date.now() - turn < ms) return undefined;
    return new Promise<void>((r) =>
      setImmediate(() => {
        turn = Date.now();
        r();
      }),
    );
  };
}

/**
 * Calls fn on every item with up to `workers` calls in flight, letting the event loop turn
 * when `pause` says so.
 */
export async function forEachConcurrently<T>(
  items: readonly T[],
  workers: number,
  fn: (item: T) => Promise<void>,
  pause = yielder(),
): Promise<void> {
  let next = 0;
  const worker = async () => {
    for (;;) {
      const turn = pause();
      if (turn) await turn;
      // Checked after the turn: another worker may have taken the last item meanwhile.
      if (next >= items.length) return;
      await fn(items[next++]);
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, items.length) }, worker));
}

/**
 * Runs the usual controller loop on a rate-limited queue: get, sync, forget on
 * success or addRateLimited on failure, done. Resolves when the queue is shut down.
 */
export async function runWorkers<T>(
  queue: RateLimitingQueue<T>,
  sync: (item: T) => Promise<void>,
  opts: WorkerOptions<T>,
): Promise<void> {
  const stop = () => void queue.shutDownWithDrain();
  if (opts.signal.aborted) stop();
  else opts.signal.addEventListener('abort', stop, { once: true });
  const worker = async () => {
    const pause = yielder();
    for (;;) {
      const turn = pause();
      if (turn) await turn;
      const r = await queue.get();
      if (r.shutdown) return;
      const item = r.item;
      try {
        await sync(item);
        queue.forget(item);
      } catch (err) {
        const requeue = opts.maxRetries === undefined || queue.numRequeues(item) < opts.maxRetries;
        if (requeue) queue.addRateLimited(item);
        else queue.forget(item);
        if (opts.onError) opts.onError(item, err, requeue);
        else
          log.warn(requeue ? 'sync failed, requeued' : 'sync failed, dropping item', {
            queue: queue.name,
            item: String(item),
            err: err instanceof Error ? err.message : String(err),
          });
      } finally {
        queue.done(item);
      }
    }
  };
  try {
    await Promise.all(Array.from({ length: Math.max(1, opts.workers) }, worker));
  } finally {
    opts.signal.removeEventListener('abort', stop);
  }
}
