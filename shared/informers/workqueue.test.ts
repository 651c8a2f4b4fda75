// Work queue semantics on a fake clock (client-go's workqueue tests, in spirit).
import assert from 'node:assert/strict';
import { FakeClock, flush } from '../client/clock';
import { TokenBucket } from '../client/rate-limiter';
import {
  DelayingQueue,
  forEachConcurrently,
  RateLimitingQueue,
  runWorkers,
  WorkQueue,
  yielder,
} from './workqueue';
import {
  BucketRateLimiter,
  defaultControllerRateLimiter,
  ItemExponentialFailureRateLimiter,
  ItemFastSlowRateLimiter,
  MaxOfRateLimiter,
} from './rate-limiters';

async function take<T>(q: WorkQueue<T>): Promise<T> {
  const r = await q.get();
  assert.equal(r.shutdown, false);
  return r.item as T;
}

describe('shared/informers: work queue', () => {
  it('is FIFO and holds a key once while it is queued', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    q.add('b');
    q.add('a');
    assert.equal(q.len(), 2);
    assert.equal(await take(q), 'a');
    assert.equal(await take(q), 'b');
    assert.equal(q.len(), 0);
  });

  it('never hands out a key twice at once; re-added while processing, it comes back after done', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const first = await take(q);
    q.add('a');
    q.add('a');
    assert.equal(q.len(), 0, 'not queued while processing');
    let second: string | undefined;
    void q.get().then((r) => (second = r.item));
    await flush();
    assert.equal(second, undefined, 'a waiting worker does not get the key in processing');
    q.done(first);
    await flush();
    assert.equal(second, 'a', 'processed again after done');
    q.done('a');
    assert.equal(q.len(), 0);
    assert.equal(q.processingCount(), 0);
  });

  it('wakes waiting workers in order as keys arrive', async () => {
    const q = new WorkQueue<number>();
    const got: number[] = [];
    const ws = [q.get(), q.get()].map((p) => p.then((r) => got.push(r.item!)));
    q.add(1);
    q.add(2);
    await Promise.all(ws);
    assert.deepEqual(got, [1, 2]);
  });

  it('shutDown wakes idle workers, hands out what is queued and refuses new keys', async () => {
    const q = new WorkQueue<string>();
    const idle = q.get();
    q.shutDown();
    assert.deepEqual(await idle, { item: undefined, shutdown: true });
    const q2 = new WorkQueue<string>();
    q2.add('x');
    q2.shutDown();
    q2.add('y');
    assert.equal(await take(q2), 'x');
    assert.deepEqual(await q2.get(), { item: undefined, shutdown: true });
  });

  it('shutDownWithDrain waits for keys in processing, including one re-added meanwhile', async () => {
    const q = new WorkQueue<string>();
    q.add('a');
    const a = await take(q);
    q.add('a');
    let drained = false;
    const d = q.shutDownWithDrain().then(() => (drained = true));
    await flush();
    assert.equal(drained, false);
    q.done(a);
    // The re-added key is queued again and still handed out during the drain.
    assert.equal(await take(q), 'a');
    await flush();
    assert.equal(drained, false);
    q.done('a');
    await d;
    assert.equal(drained, true);
  });
});

describe('shared/informers: delaying queue', () => {
  it('adds after the delay; the earliest requested time wins', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 100);
    q.addAfter('b', 50);
    q.addAfter('a', 300); // later: ignored
    q.addAfter('b', 20); // earlier: wins
    assert.equal(q.len(), 0);
    assert.equal(q.waitingCount(), 2);
    clock.step(19);
    assert.equal(q.len(), 0);
    clock.step(1);
    assert.equal(q.len(), 1);
    assert.equal(await take(q), 'b');
    clock.step(79);
    assert.equal(q.len(), 0);
    clock.step(1);
    assert.equal(await take(q), 'a');
    clock.step(1000);
    assert.equal(q.len(), 0, 'the ignored later request adds nothing');
    assert.equal(q.waitingCount(), 0);
  });

  it('adds at once for a zero delay, dedupes with the queue, and forgets waiters on shutdown', async () => {
    const clock = new FakeClock();
    const q = new DelayingQueue<string>({ clock });
    q.addAfter('a', 0);
    assert.equal(q.len(), 1);
    q.add('b');
    q.addAfter('b', 10);
    clock.step(10);
    assert.equal(q.len(), 2, 'b was already queued');
    q.addAfter('c', 10);
    q.shutDown();
    clock.step(100);
    assert.equal(q.len(), 2);
    assert.equal(clock.pending, 0);
  });
});

describe('shared/informers: rate limiters', () => {
  it('backs off per item exponentially from 5 ms to 1000 s; forget resets', () => {
    const r = new ItemExponentialFailureRateLimiter<string>(5, 1_000_000);
    const delays = Array.from({ length: 5 }, () => r.when('a'));
    assert.deepEqual(delays, [5, 10, 20, 40, 80]);
    assert.equal(r.numRequeues('a'), 5);
    assert.equal(r.when('b'), 5, 'per item');
    for (let i = 0; i < 40; i++) r.when('a');
    assert.equal(r.when('a'), 1_000_000);
    r.forget('a');
    assert.equal(r.numRequeues('a'), 0);
    assert.equal(r.when('a'), 5);
  });

  it('fast then slow', () => {
    const r = new ItemFastSlowRateLimiter<string>(10, 1000, 2);
    assert.deepEqual([r.when('a'), r.when('a'), r.when('a')], [10, 10, 1000]);
  });

  it('the default controller limiter is the max of backoff and a 10 qps / 100 burst bucket', () => {
    const clock = new FakeClock();
    const r = defaultControllerRateLimiter<string>(clock);
    // 100 distinct items ride the burst with their 5 ms first backoff.
    for (let i = 0; i < 100; i++) assert.equal(r.when(`k${i}`), 5);
    // Then the bucket dominates: 100 ms, 200 ms ... for new items.
    assert.equal(Math.round(r.when('k100')), 100);
    assert.equal(Math.round(r.when('k101')), 200);
    const m = r as MaxOfRateLimiter<string>;
    assert.equal(m.numRequeues('k1'), 1);
  });

  it('a rate-limited queue delays by the limiter and counts requeues', async () => {
    const clock = new FakeClock();
    const q = new RateLimitingQueue<string>({
      clock,
      rateLimiter: new MaxOfRateLimiter(
        new ItemExponentialFailureRateLimiter(5, 1000),
        new BucketRateLimiter(new TokenBucket(1000, 1000, clock)),
      ),
    });
    q.addRateLimited('a');
    q.addRateLimited('a');
    assert.equal(q.numRequeues('a'), 2);
    clock.step(4);
    assert.equal(q.len(), 0);
    clock.step(1);
    assert.equal(q.len(), 1, 'the earlier of the two delays (5 ms) wins');
    q.forget('a');
    assert.equal(q.numRequeues('a'), 0);
  });
});

describe('shared/informers: runWorkers', () => {
  it('retries a failing key with backoff until it succeeds, never in parallel with itself', async () => {
    const q = new RateLimitingQueue<string>({ rateLimiter: new ItemExponentialFailureRateLimiter(1, 10) });
    const ac = new AbortController();
    const attempts = new Map<string, number>();
    let inFlight = 0;
    let maxInFlightSameKey = 0;
    const active = new Set<string>();
    const done = runWorkers(
      q,
      async (key) => {
        if (active.has(key)) maxInFlightSameKey = 2;
        active.add(key);
        inFlight++;
        await new Promise((r) => setTimeout(r, 2));
        const n = (attempts.get(key) ?? 0) + 1;
        attempts.set(key, n);
        active.delete(key);
        inFlight--;
        if (key === 'flaky' && n < 3) throw new Error('not yet');
      },
      { workers: 4, signal: ac.signal, onError: () => {} },
    );
    q.add('flaky');
    q.add('ok');
    q.add('ok');
    for (let i = 0; i < 50 && (attempts.get('flaky') ?? 0) < 3; i++)
      await new Promise((r) => setTimeout(r, 5));
    q.add('ok');
    await new Promise((r) => setTimeout(r, 20));
    ac.abort();
    await done;
    assert.equal(attempts.get('flaky'), 3);
    assert.equal(q.numRequeues('flaky'), 0, 'forgotten after success');
    assert.equal(attempts.get('ok'), 2);
    assert.equal(maxInFlightSameKey, 0);
    assert.equal(inFlight, 0);
  });
});

describe('shared/informers: yielder', () => {
  /** Runs steps that finish without I/O for ms; resolves with when a timer set at the start fired. */
  async function loop(ms: number, pause?: () => Promise<void> | undefined) {
    const start = Date.now();
    let timerAt = -1;
    setTimeout(() => (timerAt = Date.now() - start), 0);
    while (Date.now() - start < ms) {
      const turn = pause?.();
      if (turn) await turn;
      await Promise.resolve(); // a step that resumes as a microtask
    }
    const loopEnd = Date.now() - start;
    await new Promise((r) => setTimeout(r, 5));
    return { timerAt, loopEnd };
  }

  it('lets a timer run while a loop of microtask steps goes on', async () => {
    const { timerAt, loopEnd } = await loop(200, yielder(20));
    assert.ok(timerAt >= 0 && timerAt < 100, `timer at ${timerAt} ms of a ${loopEnd} ms loop`);
  });

  it('is needed: without it the timer waits for the whole loop', async () => {
    const { timerAt } = await loop(200);
    assert.ok(timerAt >= 200, `timer at ${timerAt} ms`);
  });
});

describe('forEachConcurrently', () => {
  it('calls fn once per item when every check-in lets the event loop turn', async () => {
    const items = [1, 2, 3, 4, 5];
    const seen: (number | undefined)[] = [];
    const alwaysTurn = () => new Promise<void>((r) => setImmediate(r));
    await forEachConcurrently(
      items,
      3,
      async (x) => {
        seen.push(x);
      },
      alwaysTurn,
    );
    assert.deepEqual(
      [...seen].sort((a, b) => (a ?? 0) - (b ?? 0)),
      items,
    );
  });

  it('keeps at most `workers` calls in flight', async () => {
    let inFlight = 0;
    let most = 0;
    await forEachConcurrently(
      Array.from({ length: 20 }, (_, i) => i),
      4,
      async () => {
        most = Math.max(most, ++inFlight);
        await new Promise((r) => setTimeout(r, 2));
        inFlight--;
      },
    );
    assert.equal(most, 4);
  });
});
