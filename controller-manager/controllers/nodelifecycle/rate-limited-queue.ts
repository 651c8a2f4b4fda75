// kube's RateLimitedTimedQueue: node names waiting for their NoExecute taint,
// in the order they were added, handed out no faster than the zone's
// eviction rate (a token bucket with burst 1; rate 0 stops everything).
import { TokenBucket } from '../../../shared/client';

export interface TimedValue {
  value: string;
  uid: string;
  addedAt: number;
  processAt: number;
}

const NEVER = { tryAccept: () => false };

export class RateLimitedTimedQueue {
  private items: TimedValue[] = [];
  private limiter: { tryAccept(): boolean };

  constructor(
    qps: number,
    private readonly now: () => number,
  ) {
    this.limiter = qps > 0 ? new TokenBucket(qps, 1) : NEVER;
  }

  /** Adds value unless it is queued; true when added. */
  add(value: string, uid: string): boolean {
    if (this.items.some((v) => v.value === value)) return false;
    const now = this.now();
    this.items.push({ value, uid, addedAt: now, processAt: now });
    return true;
  }

  remove(value: string): boolean {
    const before = this.items.length;
    this.items = this.items.filter((v) => v.value !== value);
    return this.items.length !== before;
  }

  has(value: string): boolean {
    return this.items.some((v) => v.value === value);
  }

  clear(): void {
    this.items = [];
  }

  get length(): number {
    return this.items.length;
  }

  /** Replaces the limiter (the zone's state changed). */
  swapLimiter(qps: number): void {
    this.limiter = qps > 0 ? new TokenBucket(qps, 1) : NEVER;
  }

  /**
   * Processes due values while the limiter allows: fn returns [true] when done
   * with the value, or [false, waitMs] to try it again later.
   */
  async tryEach(fn: (v: TimedValue) => Promise<[boolean, number?]>): Promise<void> {
    let head = this.items[0];
    while (head) {
      if (!this.limiter.tryAccept()) break;
      const now = this.now();
      if (now < head.processAt) break;
      const [ok, wait = 0] = await fn(head);
      if (!ok) {
        head.processAt = now + wait + 1;
        // Back of the line, ordered by processAt (kube's TimedQueue is a heap on it).
        this.items = this.items.filter((v) => v !== head);
        this.items.push(head);
        this.items.sort((a, b) => a.processAt - b.processAt);
      } else {
        this.items = this.items.filter((v) => v !== head);
      }
      head = this.items[0];
    }
  }
}
