import assert from 'node:assert/strict';
import { StatusError } from '../../shared/api/status';
import { mergePatch, parseMergePatch } from './merge-patch';

describe('JSON merge patch (RFC 7386)', () => {
  // RFC 7386 appendix A, every example.
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
    [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
    [{ a: 'b' }, { a: null }, {}],
    [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
    [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
    [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
    [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
    [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
    [
      ['a', 'b'],
      ['c', 'd'],
      ['c', 'd'],
    ],
    [{ a: 'b' }, ['c'], ['c']],
    [{ a: 'foo' }, null, null],
    [{ a: 'foo' }, 'bar', 'bar'],
    [{ e: null }, { a: 1 }, { e: null, a: 1 }],
    [[1, 2], { a: 'b', c: null }, { a: 'b' }],
    [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
  ];
  cases.forEach(([target, patch, want], i) => {
    it(`appendix A example ${i + 1}`, () => {
      const before = JSON.stringify(target);
      assert.deepEqual(mergePatch(target, patch), want);
      assert.equal(JSON.stringify(target), before, 'target untouched');
    });
  });

  it('RFC 7386 section 3 example', () => {
    const target = {
      title: 'Goodbye!',
      author: { givenName: 'John', familyName: 'Doe' },
      tags: ['example', 'sample'],
      content: 'This will be unchanged',
    };
    const patch = {
      title: 'Hello!',
      phoneNumber: '+01-123-456-7890',
      author: { familyName: null },
      tags: ['example'],
    };
    assert.deepEqual(mergePatch(target, patch), {
      title: 'Hello!',
      author: { givenName: 'John' },
      tags: ['example'],
      content: 'This will be unchanged',
      phoneNumber: '+01-123-456-7890',
    });
  });

  it('answers 400 "Invalid JSON Patch" for bodies that are not a JSON object or array', () => {
    for (const body of ['{', 'null', '5', '"x"']) {
      assert.throws(
        () => parseMergePatch(body),
        (e: unknown) => e instanceof StatusError && e.code === 400 && e.message === 'Invalid JSON Patch',
      );
    }
    assert.deepEqual(parseMergePatch('{"a":1}'), { a: 1 });
  });
});
