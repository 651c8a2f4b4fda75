// The window of recent events the cache keeps for watchers that start from a
// resourceVersion in the past. It grows while its oldest event is fresh (like
// kube-apiserver's dynamic watch cache sizing) so bursts do not force relists.
import type { CacheEvent } from './watchers';

const FRESH_MS = 75_000;
const MAX_CAPACITY = 100 * 1024;

export class EventWindow {
  private buf: (CacheEvent | undefined)[];
  private times: number[];
  private start = 0;
  private count = 0;
  /** Events with revision <= this are not in the window. */
  private floorRV = 0;

  constructor(
    capacity: number,
    private readonly now: () => number,
  ) {
    this.buf = new Array(capacity);
    this.times = new Array(capacity);
  }

  /** Events it holds before it grows or drops the oldest. */
  get capacity(): number {
    return this.buf.length;
  }

  /** The oldest revision a watcher can start from (exclusive lower bound). */
  get oldestRV(): number {
    return this.floorRV;
  }

  clear(rv: number): void {
    this.buf = new Array(this.buf.length);
    this.times = new Array(this.buf.length);
    this.start = 0;
    this.count = 0;
    this.floorRV = rv;
  }

  add(ev: CacheEvent): void {
    const cap = this.buf.length;
    const t = this.now();
    if (this.count === cap) {
      if (t - this.times[this.start] < FRESH_MS && cap < MAX_CAPACITY)
        this.grow(Math.min(cap * 2, MAX_CAPACITY));
      else {
        this.floorRV = this.buf[this.start]!.rv;
        this.buf[this.start] = undefined;
        this.start = (this.start + 1) % cap;
        this.count--;
      }
    }
    const i = (this.start + this.count) % this.buf.length;
    this.buf[i] = ev;
    this.times[i] = t;
    this.count++;
  }

  private grow(capacity: number): void {
    const nb: (CacheEvent | undefined)[] = new Array(capacity);
    const nt: number[] = new Array(capacity);
    for (let i = 0; i < this.count; i++) {
      const j = (this.start + i) % this.buf.length;
      nb[i] = this.buf[j];
      nt[i] = this.times[j];
    }
    this.buf = nb;
    this.times = nt;
    this.start = 0;
  }

  /** Events with revision > rv, oldest first. */
  *since(rv: number): Generator<CacheEvent> {
    // Binary search the first event after rv.
    let lo = 0;
    let hi = this.count;
    const cap = this.buf.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.buf[(this.start + mid) % cap]!.rv <= rv) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < this.count; i++) yield this.buf[(this.start + i) % cap]!;
  }
}
