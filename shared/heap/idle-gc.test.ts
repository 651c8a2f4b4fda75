import assert from 'node:assert/strict';
import * as v8 from 'node:v8';
import { exposedGc, startIdleGc } from './idle-gc';

const footprint = () => {
  const h = v8.getHeapStatistics();
  return h.total_heap_size + h.external_memory;
};
const youngGeneration = () =>
  v8.getHeapSpaceStatistics().reduce((n, s) => n + (s.space_name.startsWith('new_') ? s.space_size : 0), 0);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Makes ~48 MiB of objects that reach V8's old space (what a burst leaves behind) and
 * drops them; returns the footprint while they were alive. A full collection while they
 * are alive finishes the marking the burst started: left running, it can end after the
 * drop and give the burst back itself, before the collector under test gets to it.
 */
function burst(): number {
  const objs: object[] = [];
  for (let i = 0; i < 400_000; i++)
    objs.push({ name: `object-${i}`.padEnd(64, '.'), n: i, labels: { a: String(i) } });
  exposedGc()!({ type: 'major' });
  return objs.length > 0 ? footprint() : 0;
}

describe('idle-time collection', function () {
  this.timeout(20_000);

  // The give-back tests set no bound: the whole suite's process can be past the default one.
  it('gives back what a burst left behind once the process is idle', async () => {
    const forced: string[] = [];
    const stop = startIdleGc({ maxForcedFootprintBytes: Infinity, onCollect: (kind) => forced.push(kind) });
    try {
      const peak = burst();
      // V8's own memory reducer would wait 8 s or more: this must come sooner.
      const deadline = Date.now() + 5000;
      while (footprint() > peak - 24 * 2 ** 20 && Date.now() < deadline) await sleep(100);
      assert.ok(
        footprint() <= peak - 24 * 2 ** 20,
        `footprint ${(footprint() / 2 ** 20).toFixed(0)} MiB, peak ${(peak / 2 ** 20).toFixed(0)} MiB`,
      );
      assert.ok(forced.includes('compacting'), `forced: ${forced}`);
      // Its own young collection (15-25 ms here) must not read as the process being busy again.
      assert.ok(forced.filter((k) => k === 'young').length <= 1, `forced: ${forced}`);
    } finally {
      stop();
    }
  });

  it('leaves a busy process alone', async () => {
    const stop = startIdleGc();
    try {
      const peak = burst();
      // Busy (the event loop never idle for a whole interval) for 2.5 s.
      const until = Date.now() + 2500;
      while (Date.now() < until) {
        const t = Date.now() + 50;
        while (Date.now() < t);
        await sleep(1);
      }
      assert.ok(footprint() > peak - 24 * 2 ** 20, 'collected while busy');
    } finally {
      stop();
    }
  });

  it('gives back the young generation a burst grew once the process stays quiet', async function () {
    this.timeout(30_000);
    const stop = startIdleGc({ maxForcedFootprintBytes: Infinity });
    try {
      // Short-lived objects, a tenth of them alive for a while: V8 grows its young
      // generation to its maximum (32 MB) under such allocation.
      let kept: object[] = [];
      for (let i = 0; i < 3_000_000; i++) {
        const o = { n: i, name: `object-${i}` };
        if (i % 10 === 0) kept.push(o);
        if (kept.length >= 50_000) kept = [];
      }
      const grown = youngGeneration();
      assert.ok(grown > 8 * 2 ** 20, `young generation ${(grown / 2 ** 20).toFixed(0)} MiB after the burst`);
      const deadline = Date.now() + 15_000;
      while (youngGeneration() > 4 * 2 ** 20 && Date.now() < deadline) await sleep(250);
      assert.ok(
        youngGeneration() <= 4 * 2 ** 20,
        `young generation ${(youngGeneration() / 2 ** 20).toFixed(0)} MiB, ${(grown / 2 ** 20).toFixed(0)} MiB after the burst`,
      );
    } finally {
      stop();
    }
  });

  it('forces no full collection of a heap above its bound (V8 collects that one itself)', async () => {
    const forced: string[] = [];
    const stop = startIdleGc({
      maxForcedFootprintBytes: footprint() - 1,
      onCollect: (kind) => forced.push(kind),
    });
    try {
      burst();
      // Idle for 3 s: the bound-less collector gives the burst back well within that.
      await sleep(3000);
      assert.deepEqual(
        forced.filter((k) => k !== 'young'),
        [],
      );
    } finally {
      stop();
    }
  });
});
