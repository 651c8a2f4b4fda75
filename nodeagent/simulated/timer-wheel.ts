// One timer for every simulated node's periodic work (lease renewals, status
// reports): tasks sit in slots of a wheel turned by a single interval, so N
// nodes cost N slot entries, not N timers each with an abort listener on the
// host's signal (an EventTarget's listeners are a list: with thousands on one
// signal every add and remove walks it, which at 5,000 nodes took the agent's
// whole CPU). A task returns when it wants to run next; it never runs twice at once.
export type PeriodicTask = () => Promise<number>;

/** The wheel's resolution: a task runs at most this late. */
export const WHEEL_TICK_MS = 100;

export class TimerWheel {
  private readonly slots = new Map<number, PeriodicTask[]>();
  private readonly running = new Set<Promise<void>>();
  private tick: number;
  private interval?: NodeJS.Timeout;
  private stopped = false;

  constructor(private readonly now: () => number = Date.now) {
    this.tick = Math.floor(now() / WHEEL_TICK_MS);
  }

  /** Runs task after delayMs, then again after whatever delay each run resolves to. */
  schedule(task: PeriodicTask, delayMs: number): void {
    if (this.stopped) return;
    const at = Math.max(this.tick + 1, Math.ceil((this.now() + delayMs) / WHEEL_TICK_MS));
    const slot = this.slots.get(at);
    if (slot) slot.push(task);
    else this.slots.set(at, [task]);
    this.interval ??= setInterval(() => this.turn(), WHEEL_TICK_MS);
  }

  /** Runs every slot that is due (several when the event loop was late). */
  private turn(): void {
    const due = Math.floor(this.now() / WHEEL_TICK_MS);
    for (; this.tick < due;) {
      this.tick++;
      const tasks = this.slots.get(this.tick);
      if (!tasks) continue;
      this.slots.delete(this.tick);
      for (const task of tasks) this.run(task);
    }
  }

  private run(task: PeriodicTask): void {
    const p = task().then(
      (next) => this.schedule(task, next),
      // A task handles its own failures; one that throws is not run again.
      () => {},
    );
    const tracked = p.finally(() => this.running.delete(tracked));
    this.running.add(tracked);
  }

  /** Tasks scheduled and not yet due (for tests). */
  get pending(): number {
    let n = 0;
    for (const tasks of this.slots.values()) n += tasks.length;
    return n;
  }

  /** Runs nothing more and waits for the runs in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.interval) clearInterval(this.interval);
    this.slots.clear();
    await Promise.allSettled([...this.running]);
  }
}
