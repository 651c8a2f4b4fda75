// client-go's token bucket (flowcontrol.NewTokenBucketRateLimiter, on top of
// golang.org/x/time/rate): the bucket starts full with `burst` tokens and
// refills at `qps`. A waiter reserves a token at once, possibly driving the
// count negative, so waiters are served in arrival order without polling.
import { realClock, type Clock } from './clock';

export interface RateLimiter {
  /** Takes a token if one is available now. */
  tryAccept(): boolean;
  /** Waits for a token; rejects with the signal's reason when aborted while waiting. */
  wait(signal?: AbortSignal): Promise<void>;
  /** Reserves a token and returns how long (ms) the caller must wait before using it. */
  reserve(): number;
  readonly qps: number;
}

export class TokenBucket implements RateLimiter {
  private tokens: number;
  private last: number;

  constructor(
    readonly qps: number,
    readonly burst: number,
    private readonly clock: Clock = realClock,
  ) {
    if (!(qps > 0)) throw new Error(`token bucket: qps must be positive, got ${qps}`);
    if (!(burst >= 1)) throw new Error(`token bucket: burst must be at least 1, got ${burst}`);
    this.tokens = burst;
    this.last = clock.now();
  }

  private advance(): void {
    const now = this.clock.now();
    if (now > this.last) {
      this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.qps);
      this.last = now;
    }
  }

  tryAccept(): boolean {
    this.advance();
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return true;
    }
    return false;
  }

  reserve(): number {
    this.advance();
    this.tokens -= 1;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.qps) * 1000;
  }

  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
    const delay = this.reserve();
    if (delay <= 0) return;
    await this.clock.sleep(delay, signal);
    if (signal?.aborted) {
      // Give the unused reservation back, as rate.Reservation.Cancel does.
      this.tokens = Math.min(this.burst, this.tokens + 1);
      signal.throwIfAborted();
    }
  }
}

/** No limit (client-go: a negative QPS). */
export class Unlimited implements RateLimiter {
  readonly qps = Infinity;
  tryAccept(): boolean {
    return true;
  }
  reserve(): number {
    return 0;
  }
  async wait(signal?: AbortSignal): Promise<void> {
    signal?.throwIfAborted();
  }
}

/** client-go's defaults when a rest.Config leaves QPS and Burst at 0. */
export const DEFAULT_QPS = 5;
export const DEFAULT_BURST = 10;

/** The limiter for --kube-api-qps/--kube-api-burst: 0 means the default, negative means none. */
export function newRateLimiter(qps = 0, burst = 0, clock: Clock = realClock): RateLimiter {
  if (qps < 0) return new Unlimited();
  const q = qps === 0 ? DEFAULT_QPS : qps;
  const b = burst <= 0 ? DEFAULT_BURST : burst;
  return new TokenBucket(q, b, clock);
}
