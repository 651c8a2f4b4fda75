// wait.NewExponentialBackoffManager as the reflector uses it: 800 ms doubling
// to 30 s with full jitter (so [30 s, 60 s) at the cap), reset after 2 min
// without a backoff.
import { realClock, type Clock } from '../client/clock';

export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  resetAfterMs?: number;
  factor?: number;
  jitter?: number;
  clock?: Clock;
  random?: () => number;
}

/** wait.Jitter: d plus up to factor × d. */
export function jitter(ms: number, factor: number, random: () => number = Math.random): number {
  return factor > 0 ? ms + random() * factor * ms : ms;
}

export class ExponentialBackoff {
  private readonly initial: number;
  private readonly max: number;
  private readonly resetAfter: number;
  private readonly factor: number;
  private readonly jitterFactor: number;
  private readonly clock: Clock;
  private readonly random: () => number;
  private current: number;
  private capped = false;
  private lastStart = -Infinity;

  constructor(o: BackoffOptions = {}) {
    this.initial = o.initialMs ?? 800;
    this.max = o.maxMs ?? 30_000;
    this.resetAfter = o.resetAfterMs ?? 120_000;
    this.factor = o.factor ?? 2;
    this.jitterFactor = o.jitter ?? 1;
    this.clock = o.clock ?? realClock;
    this.random = o.random ?? Math.random;
    this.current = this.initial;
  }

  /** The next delay (ms). */
  next(): number {
    const now = this.clock.now();
    if (now - this.lastStart > this.resetAfter) {
      this.current = this.initial;
      this.capped = false;
    }
    this.lastStart = now;
    const d = this.current;
    if (!this.capped) {
      this.current = d * this.factor;
      if (this.current > this.max) {
        this.current = this.max;
        this.capped = true;
      }
    }
    return jitter(d, this.jitterFactor, this.random);
  }

  reset(): void {
    this.current = this.initial;
    this.capped = false;
    this.lastStart = -Infinity;
  }
}
