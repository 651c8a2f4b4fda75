// Per-item rate limiters of client-go's workqueue: how long an item waits
// before it is retried. DefaultControllerRateLimiter is the max of a per-item
// exponential backoff (5 ms doubling to 1000 s) and an overall token bucket
// (10 qps, burst 100) shared by all items.
import { realClock, type Clock } from '../client/clock';
import { TokenBucket } from '../client/rate-limiter';

export interface ItemRateLimiter<T> {
  /** How long (ms) item should wait now; counts a failure. */
  when(item: T): number;
  /** Stops tracking item (after it was processed successfully). */
  forget(item: T): void;
  /** Failures counted for item. */
  numRequeues(item: T): number;
}

export class ItemExponentialFailureRateLimiter<T> implements ItemRateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly baseDelayMs = 5,
    readonly maxDelayMs = 1_000_000,
  ) {}

  when(item: T): number {
    const exp = this.failures.get(item) ?? 0;
    this.failures.set(item, exp + 1);
    const backoff = this.baseDelayMs * Math.pow(2, exp);
    return !Number.isFinite(backoff) || backoff > this.maxDelayMs ? this.maxDelayMs : backoff;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** fastDelay for the first maxFastAttempts failures of an item, slowDelay after. */
export class ItemFastSlowRateLimiter<T> implements ItemRateLimiter<T> {
  private readonly failures = new Map<T, number>();

  constructor(
    readonly fastDelayMs: number,
    readonly slowDelayMs: number,
    readonly maxFastAttempts: number,
  ) {}

  when(item: T): number {
    const n = (this.failures.get(item) ?? 0) + 1;
    this.failures.set(item, n);
    return n <= this.maxFastAttempts ? this.fastDelayMs : this.slowDelayMs;
  }

  forget(item: T): void {
    this.failures.delete(item);
  }

  numRequeues(item: T): number {
    return this.failures.get(item) ?? 0;
  }
}

/** An overall token bucket: each retry reserves a token and waits for it. */
export class BucketRateLimiter<T> implements ItemRateLimiter<T> {
  constructor(readonly bucket: TokenBucket) {}

  when(_item: T): number {
    return this.bucket.reserve();
  }

  forget(_item: T): void {}

  numRequeues(_item: T): number {
    return 0;
  }
}

export class MaxOfRateLimiter<T> implements ItemRateLimiter<T> {
  readonly limiters: ItemRateLimiter<T>[];

  constructor(...limiters: ItemRateLimiter<T>[]) {
    this.limiters = limiters;
  }

  when(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.when(item));
    return max;
  }

  forget(item: T): void {
    for (const l of this.limiters) l.forget(item);
  }

  numRequeues(item: T): number {
    let max = 0;
    for (const l of this.limiters) max = Math.max(max, l.numRequeues(item));
    return max;
  }
}

/** workqueue.DefaultTypedControllerRateLimiter. */
export function defaultControllerRateLimiter<T>(clock: Clock = realClock): ItemRateLimiter<T> {
  return new MaxOfRateLimiter<T>(
    new ItemExponentialFailureRateLimiter<T>(5, 1_000_000),
    new BucketRateLimiter<T>(new TokenBucket(10, 100, clock)),
  );
}
