import assert from 'node:assert/strict';
import { StatusError } from '../../shared/api/status';
import {
  applyJSONPatch,
  applyJSONPatchOps,
  JSONPatchError,
  parsePointer,
  type JSONPatchOperation,
} from './json-patch';

const ok = (doc: unknown, ops: JSONPatchOperation[]) => applyJSONPatchOps(doc, ops);
const fails = (doc: unknown, ops: JSONPatchOperation[]) =>
  assert.throws(() => applyJSONPatchOps(doc, ops), JSONPatchError);

describe('JSON patch (RFC 6902)', () => {
  describe('appendix A', () => {
    it('A.1 adding an object member', () => {
      assert.deepEqual(ok({ foo: 'bar' }, [{ op: 'add', path: '/baz', value: 'qux' }]), {
        foo: 'bar',
        baz: 'qux',
      });
    });
    it('A.2 adding an array element', () => {
      assert.deepEqual(ok({ foo: ['bar', 'baz'] }, [{ op: 'add', path: '/foo/1', value: 'qux' }]), {
        foo: ['bar', 'qux', 'baz'],
      });
    });
    it('A.3 removing an object member', () => {
      assert.deepEqual(ok({ baz: 'qux', foo: 'bar' }, [{ op: 'remove', path: '/baz' }]), { foo: 'bar' });
    });
    it('A.4 removing an array element', () => {
      assert.deepEqual(ok({ foo: ['bar', 'qux', 'baz'] }, [{ op: 'remove', path: '/foo/1' }]), {
        foo: ['bar', 'baz'],
      });
    });
    it('A.5 replacing a value', () => {
      assert.deepEqual(ok({ baz: 'qux', foo: 'bar' }, [{ op: 'replace', path: '/baz', value: 'boo' }]), {
        baz: 'boo',
        foo: 'bar',
      });
    });
    it('A.6 moving a value', () => {
      const doc = { foo: { bar: 'baz', waldo: 'fred' }, qux: { corge: 'grault' } };
      assert.deepEqual(ok(doc, [{ op: 'move', from: '/foo/waldo', path: '/qux/thud' }]), {
        foo: { bar: 'baz' },
        qux: { corge: 'grault', thud: 'fred' },
      });
    });
    it('A.7 moving an array element', () => {
      assert.deepEqual(
        ok({ foo: ['all', 'grass', 'cows', 'eat'] }, [{ op: 'move', from: '/foo/1', path: '/foo/3' }]),
        {
          foo: ['all', 'cows', 'eat', 'grass'],
        },
      );
    });
    it('A.8 testing a value: success', () => {
      const doc = { baz: 'qux', foo: ['a', 2, 'c'] };
      assert.deepEqual(
        ok(doc, [
          { op: 'test', path: '/baz', value: 'qux' },
          { op: 'test', path: '/foo/1', value: 2 },
        ]),
        doc,
      );
    });
    it('A.9 testing a value: error', () => {
      fails({ baz: 'qux' }, [{ op: 'test', path: '/baz', value: 'bar' }]);
    });
    it('A.10 adding a nested member object', () => {
      assert.deepEqual(ok({ foo: 'bar' }, [{ op: 'add', path: '/child', value: { grandchild: {} } }]), {
        foo: 'bar',
        child: { grandchild: {} },
      });
    });
    it('A.11 ignoring unrecognized elements', () => {
      const op = { op: 'add', path: '/baz', value: 'qux', xyz: 123 } as JSONPatchOperation;
      assert.deepEqual(ok({ foo: 'bar' }, [op]), { foo: 'bar', baz: 'qux' });
    });
    it('A.12 adding to a nonexistent target', () => {
      fails({ foo: 'bar' }, [{ op: 'add', path: '/baz/bat', value: 'qux' }]);
    });
    it('A.14 ~ escape ordering', () => {
      const doc = { '/': 9, '~1': 10 };
      assert.deepEqual(ok(doc, [{ op: 'test', path: '/~01', value: 10 }]), doc);
    });
    it('A.15 comparing strings and numbers', () => {
      fails({ '/': 9, '~1': 10 }, [{ op: 'test', path: '/~01', value: '10' }]);
    });
    it('A.16 adding an array value', () => {
      assert.deepEqual(ok({ foo: ['bar'] }, [{ op: 'add', path: '/foo/-', value: ['abc', 'def'] }]), {
        foo: ['bar', ['abc', 'def']],
      });
    });
  });

  it('decodes pointers with ~0 and ~1', () => {
    assert.deepEqual(parsePointer('/a~1b/c~0d/~01'), ['a/b', 'c~d', '~1']);
    assert.deepEqual(parsePointer(''), []);
    assert.deepEqual(
      ok({ metadata: { annotations: {} } }, [
        { op: 'add', path: '/metadata/annotations/example.com~1team', value: 'x' },
      ]),
      { metadata: { annotations: { 'example.com/team': 'x' } } },
    );
  });

  it('copies, replaces the whole document, and appends with "-"', () => {
    assert.deepEqual(ok({ a: { b: [1] } }, [{ op: 'copy', from: '/a', path: '/c' }]), {
      a: { b: [1] },
      c: { b: [1] },
    });
    assert.deepEqual(ok({ a: 1 }, [{ op: 'replace', path: '', value: { b: 2 } }]), { b: 2 });
    assert.deepEqual(ok({ l: [1] }, [{ op: 'add', path: '/l/1', value: 2 }]), { l: [1, 2] });
  });

  it('fails on missing paths, bad indices, unknown ops and moves into children', () => {
    fails({ a: 1 }, [{ op: 'replace', path: '/b', value: 1 }]);
    fails({ a: 1 }, [{ op: 'remove', path: '/b' }]);
    fails({ l: [1] }, [{ op: 'add', path: '/l/2', value: 1 }]);
    fails({ l: [1] }, [{ op: 'replace', path: '/l/x', value: 1 }]);
    fails({ a: 1 }, [{ op: 'frobnicate', path: '/a' }]);
    fails({ a: { b: 1 } }, [{ op: 'move', from: '/a', path: '/a/b/c' }]);
    fails({ a: 1 }, [{ op: 'add', value: 1 } as JSONPatchOperation]);
  });

  it('follows evanphx/json-patch v4 for tests of missing values', () => {
    assert.deepEqual(ok({ a: 1 }, [{ op: 'test', path: '/b', value: null }]), { a: 1 });
    fails({ a: 1 }, [{ op: 'test', path: '/b', value: 2 }]);
  });

  it('leaves the input untouched', () => {
    const doc = { a: [1, 2] };
    ok(doc, [{ op: 'remove', path: '/a/0' }]);
    assert.deepEqual(doc, { a: [1, 2] });
  });

  describe('errors, as kube-apiserver answers them', () => {
    const status = (fn: () => unknown) => {
      try {
        fn();
      } catch (e) {
        assert.ok(e instanceof StatusError);
        return e.status;
      }
      assert.fail('expected a StatusError');
    };
    it('a failing operation is 422 Invalid without detail', () => {
      const s = status(() =>
        applyJSONPatch({ spec: { replicas: 1 } }, '[{"op":"test","path":"/spec/replicas","value":2}]'),
      );
      assert.equal(s.code, 422);
      assert.equal(s.reason, 'Invalid');
      assert.equal(s.message, 'the server rejected our request due to an error in our request');
      assert.equal(status(() => applyJSONPatch({}, '[{"op":"remove","path":"/nope"}]')).code, 422);
    });
    it('a body that does not decode is 400', () => {
      assert.equal(status(() => applyJSONPatch({}, '[{')).code, 400);
      const s = status(() => applyJSONPatch({}, '{"op":"add"}'));
      assert.equal(s.code, 400);
      assert.equal(s.message, 'json: cannot unmarshal object into Go value of type jsonpatch.Patch');
    });
    it('more than 10000 operations is 413', () => {
      const ops = Array.from({ length: 10001 }, () => ({ op: 'test', path: '/a', value: 1 }));
      const s = status(() => applyJSONPatch({ a: 1 }, JSON.stringify(ops)));
      assert.equal(s.code, 413);
      assert.equal(
        s.message,
        'Request entity too large: The allowed maximum operations in a JSON patch is 10000, got 10001',
      );
    });
  });
});
