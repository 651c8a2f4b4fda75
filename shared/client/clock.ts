// An injectable clock for everything in the client stack whose behaviour
// depends on time (rate limiters, backoff, work queue delays, leases, event
// series), so tests can step time instead of sleeping.

export interface Timer {
  cancel(): void;
  /** Lets the process exit while only this timer is pending (housekeeping timers). */
  unref?(): void;
}

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Calls fn once after ms milliseconds. */
  setTimer(fn: () => void, ms: number): Timer;
  /** Resolves after ms milliseconds, or early (without rejecting) when signal aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

function sleepWith(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      timer.cancel();
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const timer = clock.setTimer(done, ms);
    signal?.addEventListener('abort', done, { once: true });
  });
}

class RealClock implements Clock {
  now(): number {
    return Date.now();
  }
  setTimer(fn: () => void, ms: number): Timer {
    const t = setTimeout(fn, Math.max(0, ms));
    return { cancel: () => clearTimeout(t), unref: () => void t.unref() };
  }
  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }
}

export const realClock: Clock = new RealClock();

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that only moves when told to; timers fire in order of their due time. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = Date.UTC(2025, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimer(fn: () => void, ms: number): Timer {
    const timer: FakeTimer = { at: this.t + Math.max(0, ms), seq: this.seq++, fn, cancelled: false };
    this.timers.push(timer);
    return {
      cancel: () => {
        timer.cancelled = true;
      },
    };
  }

  sleep(ms: number, signal?: AbortSignal): Promise<void> {
    return sleepWith(this, ms, signal);
  }

  /** Timers not yet fired or cancelled. */
  get pending(): number {
    return this.timers.filter((x) => !x.cancelled).length;
  }

  private nextDue(until: number): FakeTimer | undefined {
    this.timers = this.timers.filter((x) => !x.cancelled);
    let best: FakeTimer | undefined;
    for (const x of this.timers) {
      if (x.at <= until && (!best || x.at < best.at || (x.at === best.at && x.seq < best.seq))) best = x;
    }
    return best;
  }

  /** Moves time forward synchronously, firing due timers (promise continuations run later). */
  step(ms: number): void {
    const until = this.t + ms;
    for (let x = this.nextDue(until); x; x = this.nextDue(until)) {
      x.cancelled = true;
      this.t = Math.max(this.t, x.at);
      x.fn();
    }
    this.t = until;
  }

  /**
   * Moves time forward, letting promise continuations run after each timer, so
   * code that awaits a sleep and then sets a new timer sees it fire in the same call.
   */
  async advance(ms: number): Promise<void> {
    const until = this.t + ms;
    await flush();
    for (let x = this.nextDue(until); x; x = this.nextDue(until)) {
      x.cancelled = true;
      this.t = Math.max(this.t, x.at);
      x.fn();
      await flush();
    }
    this.t = until;
    await flush();
  }
}

/** Lets queued microtasks and immediate callbacks run. */
export function flush(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
