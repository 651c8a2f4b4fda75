import assert from 'node:assert/strict';
import { jsonEqual } from './json-equal';

describe('shared/api: jsonEqual', () => {
  it('ignores key order and undefined members, nothing else', () => {
    assert.ok(jsonEqual({ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }));
    assert.ok(jsonEqual({ a: 1, gone: undefined }, { a: 1 }));
    assert.ok(jsonEqual({ a: 1 }, { a: 1, gone: undefined }));
    assert.ok(!jsonEqual({ a: 1 }, { a: 1, b: null }), 'null is a value');
    assert.ok(!jsonEqual({ a: 1 }, { a: '1' }));
    assert.ok(!jsonEqual([1, 2], [2, 1]), 'lists keep their order');
    assert.ok(!jsonEqual({ 0: 'x' }, ['x']), 'a list is not an object');
    assert.ok(!jsonEqual({}, null));
    assert.ok(jsonEqual(null, null));
    assert.ok(!jsonEqual({ a: { b: 1 } }, { a: { b: 2 } }));
  });
});
