// The token bucket on a fake clock, and the watch stream decoders.
import assert from 'node:assert/strict';
import { FakeClock } from './clock';
import { newRateLimiter, TokenBucket, Unlimited } from './rate-limiter';
import { JsonLineDecoder } from './watch';
import { encodeObject, encodeWatchFrame, WatchFrameDecoder } from '../codec/protobuf';

describe('shared/client: token bucket', () => {
  it('lets a burst through, then one token per 1/qps, in arrival order', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(10, 3, clock);
    const done: number[] = [];
    const t0 = clock.now();
    const waits = Array.from({ length: 6 }, (_, i) =>
      b.wait().then(() => done.push(clock.now() - t0 + i / 1000)),
    );
    await clock.advance(0);
    assert.equal(done.length, 3, 'the burst is immediate');
    await clock.advance(99);
    assert.equal(done.length, 3);
    await clock.advance(1);
    assert.equal(done.length, 4);
    await clock.advance(200);
    await Promise.all(waits);
    assert.deepEqual(
      done.map((x) => Math.floor(x)),
      [0, 0, 0, 100, 200, 300],
    );
  });

  it('refills up to burst only', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(5, 2, clock);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), false);
    clock.step(10_000);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), true);
    assert.equal(b.tryAccept(), false);
    clock.step(200);
    assert.equal(b.tryAccept(), true);
  });

  it('gives the reservation back when the wait is aborted', async () => {
    const clock = new FakeClock();
    const b = new TokenBucket(1, 1, clock);
    await b.wait();
    const ac = new AbortController();
    const p = b.wait(ac.signal);
    ac.abort(new Error('stop'));
    await assert.rejects(p, /stop/);
    clock.step(1000);
    assert.equal(b.tryAccept(), true, 'the aborted waiter did not keep the token');
  });

  it('maps --kube-api-qps like client-go: 0 is the default, negative is unlimited', () => {
    const d = newRateLimiter(0, 0) as TokenBucket;
    assert.equal(d.qps, 5);
    assert.equal(d.burst, 10);
    const custom = newRateLimiter(20, 30) as TokenBucket;
    assert.equal(custom.qps, 20);
    assert.equal(custom.burst, 30);
    assert.ok(newRateLimiter(-1, 0) instanceof Unlimited);
  });
});

describe('shared/client: watch stream decoders', () => {
  it('splits JSON lines across arbitrary chunk boundaries', () => {
    const events = [
      { type: 'ADDED', object: { metadata: { name: 'a', annotations: { x: 'ü'.repeat(3000) } } } },
      { type: 'MODIFIED', object: { metadata: { name: 'b' } } },
      { type: 'BOOKMARK', object: { metadata: { resourceVersion: '9' } } },
    ];
    const bytes = Buffer.from(events.map((e) => JSON.stringify(e) + '\n').join(''));
    for (const size of [1, 7, 4096, bytes.length]) {
      const d = new JsonLineDecoder();
      const out: any[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)));
      out.push(...d.end());
      assert.deepEqual(out, events, `chunk size ${size}`);
    }
  });

  it('splits Protobuf frames across chunk boundaries', () => {
    const objs = [1, 2, 3].map((i) => ({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: `c${i}`, resourceVersion: String(i) },
      data: { i: String(i) },
    }));
    const bytes = Buffer.concat(objs.map((o) => encodeWatchFrame('ADDED', encodeObject(o))));
    for (const size of [1, 5, bytes.length]) {
      const d = new WatchFrameDecoder();
      const out: any[] = [];
      for (let i = 0; i < bytes.length; i += size) out.push(...d.push(bytes.subarray(i, i + size)));
      d.end();
      assert.deepEqual(
        out.map((e) => [e.type, e.object]),
        objs.map((o) => ['ADDED', o]),
      );
    }
  });
});
