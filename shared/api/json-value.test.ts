import assert from 'node:assert/strict';
import { jsonClone, jsonEqual } from './json-value';

describe('shared/api: JSON values', () => {
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

  it('copies deeply: nothing of the copy is shared with the original but scalars', () => {
    const orig = { a: [1, { b: 'x' }], c: { d: null }, bytes: Buffer.from('hi'), when: new Date(0) };
    const copy = jsonClone(orig);
    assert.ok(jsonEqual({ a: copy.a, c: copy.c }, { a: orig.a, c: orig.c }));
    assert.notEqual(copy.a, orig.a);
    assert.notEqual(copy.a[1], orig.a[1]);
    assert.notEqual(copy.c, orig.c);
    copy.bytes[0] = 0;
    assert.equal(orig.bytes.toString(), 'hi', 'bytes are copied, not shared');
    assert.ok(copy.when instanceof Date && copy.when.getTime() === 0);
    assert.equal(jsonClone(undefined), undefined);
    assert.equal(jsonClone('s'), 's');
  });
});
