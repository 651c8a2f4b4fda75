import assert from 'node:assert/strict';
import { slowStartBatch } from './base';

describe('controllers/util: slowStartBatch', () => {
  /** Runs slowStartBatch and records how many calls each batch made at once. */
  async function batches(count: number, failFrom = Infinity) {
    const sizes: number[] = [];
    let inBatch = 0;
    let calls = 0;
    const result = await slowStartBatch(count, 1, async () => {
      const n = calls++;
      if (inBatch++ === 0) queueMicrotask(() => (sizes.push(inBatch), (inBatch = 0)));
      if (n >= failFrom) throw new Error(`call ${n} failed`);
    });
    return { sizes, calls, result };
  }

  it('calls in batches of 1, 2, 4 ... until the count is reached', async () => {
    const { sizes, calls, result } = await batches(20);
    assert.deepEqual(sizes, [1, 2, 4, 8, 5]);
    assert.equal(calls, 20);
    assert.deepEqual(result, { successes: 20 });
  });

  it('stops after the first batch with a failure, counting that batch’s successes', async () => {
    // Calls 0-2 succeed (batches of 1 and 2); the batch of 4 has one success and three failures.
    const { sizes, calls, result } = await batches(100, 4);
    assert.deepEqual(sizes, [1, 2, 4]);
    assert.equal(calls, 7);
    assert.equal(result.successes, 4);
    assert.match(String(result.error), /call 4 failed/);
  });
});
