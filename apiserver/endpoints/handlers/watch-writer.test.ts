// The shared flush scheduler of watch writes: every ready watch written once
// per pass, passes that let I/O in, and no watch always served last.
import assert from 'node:assert/strict';
import { FlushScheduler, MAX_WAIT_MS, type WatchSink } from './watch-writer';

/** Busy for ms of CPU, as a write to a slow socket is. */
function spin(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** Resolves once every sink in `sinks` has flushed `times` times. */
function recording(n: number, flushMs = 0) {
  const order: number[] = [];
  let waiting: { count: number; resolve: () => void } | null = null;
  const sinks: WatchSink[] = Array.from({ length: n }, (_, i) => ({
    flush() {
      if (flushMs) spin(flushMs);
      order.push(i);
      if (waiting && order.length >= waiting.count) waiting.resolve();
    },
  }));
  const until = (count: number) =>
    new Promise<void>((resolve) => {
      if (order.length >= count) resolve();
      else waiting = { count, resolve };
    });
  return { sinks, order, until };
}

describe('watch flush scheduler', () => {
  it('flushes each marked watch once, in a later turn, and those marked meanwhile in a later pass', async () => {
    const fs = new FlushScheduler();
    const { sinks, order, until } = recording(5);
    for (const s of sinks) fs.mark(s);
    assert.equal(order.length, 0, 'nothing is written in the turn that queued the events');
    await until(5);
    assert.deepEqual([...order].sort(), [0, 1, 2, 3, 4]);
    fs.mark(sinks[2]);
    await until(6);
    assert.equal(order[5], 2);
    await new Promise((r) => setTimeout(r, 20));
    assert.equal(order.length, 6, 'no watch is written twice for one mark');
  });

  it('lets timers and I/O run between the slices of a long pass', async () => {
    const fs = new FlushScheduler();
    const { sinks, order, until } = recording(64, 0.25);
    let timerAt = -1;
    // The timer is set at the pass's first write (on a slow host a timer set before the pass may
    // be due before the pass starts): it must then run before the pass ends, not after.
    let set = false;
    const timed = sinks.map((s) => ({
      flush() {
        if (!set) {
          set = true;
          setTimeout(() => (timerAt = order.length), 0);
        }
        s.flush();
      },
    }));
    for (const s of timed) fs.mark(s);
    await until(64);
    assert.ok(timerAt > 0 && timerAt < 64, `the timer ran in the pass, after ${timerAt} of 64 writes`);
  });

  it('does not serve the same watch last on every pass', async () => {
    const fs = new FlushScheduler();
    const { sinks, order, until } = recording(10);
    const lasts = new Set<number>();
    for (let pass = 1; pass <= 20; pass++) {
      for (const s of sinks) fs.mark(s);
      await until(pass * 10);
      lasts.add(order[pass * 10 - 1]);
    }
    assert.ok(lasts.size > 1, `the last watch written was always ${[...lasts][0]}`);
  });

  it('paces passes: after a long pass the next waits, at most MAX_WAIT_MS', async () => {
    const fs = new FlushScheduler();
    const { sinks, until } = recording(40, 0.5);
    for (const s of sinks) fs.mark(s);
    await until(40);
    const passEnd = performance.now();
    let at = 0;
    fs.mark({ flush: () => (at = performance.now()) });
    await new Promise((r) => setTimeout(r, 60));
    assert.ok(at > 0, 'the next pass ran');
    // The pass spun 40 x 0.5 ms, longer than the cap: the next starts no sooner than the cap after it ended.
    assert.ok(
      at - passEnd >= MAX_WAIT_MS - 1,
      `next pass ${(at - passEnd).toFixed(1)} ms after the long one`,
    );
  });
});
