import assert from 'node:assert/strict';
import { boundedMemo } from './bounded-memo';

describe('bounded memo', () => {
  it('computes once per key, undefined results included', () => {
    const calls: string[] = [];
    const f = boundedMemo(10, (k) => (calls.push(k), k === 'zero' ? undefined : k.length));
    assert.equal(f('abc'), 3);
    assert.equal(f('abc'), 3);
    assert.equal(f('zero'), undefined);
    assert.equal(f('zero'), undefined);
    assert.deepEqual(calls, ['abc', 'zero']);
  });

  it('starts over once full, and never holds more than its bound', () => {
    const calls: string[] = [];
    const f = boundedMemo(3, (k) => (calls.push(k), k));
    for (const k of ['a', 'b', 'c', 'd']) f(k);
    // 'd' came when three were held: the memo started over with it alone.
    f('d');
    f('a');
    assert.deepEqual(calls, ['a', 'b', 'c', 'd', 'a']);
  });

  it('remembers nothing of a key whose computation threw', () => {
    let n = 0;
    const f = boundedMemo(3, (k) => {
      n++;
      if (k === 'bad') throw new Error('bad');
      return k;
    });
    assert.throws(() => f('bad'), /bad/);
    assert.throws(() => f('bad'), /bad/);
    assert.equal(n, 2);
  });
});
