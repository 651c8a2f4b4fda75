// The per-watcher buffer both backends deliver through. The backend pushes
// batches of events (already filtered by prefix); the consumer iterates. A
// consumer that stops reading is cut off once `bufferSize` events wait, with a
// 'WatchOverflow' error naming the last revision it was given, so it can resume.
import type { StorageEvent, StorageWatch } from './interface';
import { StorageError, errWatchOverflow } from './errors';

export const DEFAULT_WATCH_BUFFER = 10_000;

export class WatchQueue implements StorageWatch {
  private pending: StorageEvent[] = [];
  private waiter: ((r: IteratorResult<StorageEvent[]>) => void) | null = null;
  private waiterReject: ((e: unknown) => void) | null = null;
  private failure: StorageError | null = null;
  private done = false;
  /** Callers of idle() waiting for the consumer to drain the queue. */
  private idleWaiters: ((drained: boolean) => void)[] = [];
  /** Revision of the last event handed to the consumer. */
  private delivered: number;

  constructor(
    fromRevision: number,
    private readonly bufferSize: number = DEFAULT_WATCH_BUFFER,
    private readonly onStop: () => void = () => {},
  ) {
    this.delivered = fromRevision;
  }

  /** True once stopped or failed; the backend should stop pushing. */
  get closed(): boolean {
    return this.done || this.failure !== null;
  }

  /** Sets the revision considered delivered when the watch starts "from now". */
  setStartRevision(revision: number): void {
    if (this.pending.length === 0 && this.delivered === 0) this.delivered = revision;
  }

  /**
   * Resolves true once everything pushed so far was handed to the consumer and
   * it is waiting for more (it has finished with what it got), false when the
   * queue ends first.
   */
  idle(): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (this.waiter) return Promise.resolve(true);
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  private settleIdle(drained: boolean): void {
    if (this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters;
    this.idleWaiters = [];
    for (const w of waiters) w(drained);
  }

  push(events: StorageEvent[]): void {
    if (this.closed || events.length === 0) return;
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = this.waiterReject = null;
      this.delivered = events[events.length - 1].revision;
      resolve({ value: events, done: false });
      return;
    }
    if (this.pending.length + events.length > this.bufferSize) {
      this.fail(errWatchOverflow(this.delivered));
      return;
    }
    for (const e of events) this.pending.push(e);
  }

  fail(err: StorageError): void {
    if (this.closed) return;
    this.failure = err;
    this.pending = [];
    this.onStop();
    this.settleIdle(false);
    if (this.waiterReject) {
      const reject = this.waiterReject;
      this.waiter = this.waiterReject = null;
      reject(err);
    }
  }

  stop(): void {
    if (this.done) return;
    const wasFailed = this.failure !== null;
    this.done = true;
    this.pending = [];
    if (!wasFailed) this.onStop();
    this.settleIdle(false);
    if (this.waiter) {
      const resolve = this.waiter;
      this.waiter = this.waiterReject = null;
      resolve({ value: undefined, done: true });
    }
  }

  private next(): Promise<IteratorResult<StorageEvent[]>> {
    if (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      this.delivered = batch[batch.length - 1].revision;
      return Promise.resolve({ value: batch, done: false });
    }
    if (this.failure) return Promise.reject(this.failure);
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiter = resolve;
      this.waiterReject = reject;
      this.settleIdle(true);
    });
  }

  [Symbol.asyncIterator](): AsyncIterator<StorageEvent[]> {
    return {
      next: () => this.next(),
      return: () => {
        this.stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    };
  }
}
