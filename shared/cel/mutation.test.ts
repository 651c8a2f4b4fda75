// Kubernetes' mutation CEL: JSONPatch values, object construction with dotted
// type names (rewritten for the engine), optional fields, jsonpatch.escapeKey,
// and the type-name check of nested Object initializers.
import assert from 'node:assert/strict';
import { compile, newEnvironment } from './engine';
import {
  celToJson,
  JSONPatch,
  ObjectVal,
  registerMutationLibrary,
  rewriteObjectConstruction,
  typeNameErrors,
} from './mutation';

function evaluate(src: string, object: unknown = {}): unknown {
  const env = newEnvironment();
  env.registerVariable('object', 'dyn');
  registerMutationLibrary(env);
  return compile(env, src, rewriteObjectConstruction(src)).evaluate({ object });
}

describe('cel mutation library', () => {
  it('builds JSONPatch operations, typed as list<JSONPatch>', () => {
    const env = newEnvironment();
    env.registerVariable('object', 'dyn');
    registerMutationLibrary(env);
    const src = '[JSONPatch{op: "add", path: "/metadata/labels/a", value: object.v}]';
    const p = compile(env, src, rewriteObjectConstruction(src));
    assert.equal(p.outputType, 'list<JSONPatch>');
    const out = p.evaluate({ object: { v: 3n } }) as JSONPatch[];
    assert.ok(out[0] instanceof JSONPatch);
    assert.deepEqual({ ...out[0] }, { op: 'add', path: '/metadata/labels/a', value: 3n });
  });

  it('reads fields of a JSONPatch and refuses unknown ones', () => {
    assert.equal(evaluate('JSONPatch{op: "remove", path: "/x"}.op'), 'remove');
    assert.throws(
      () => evaluate('JSONPatch{op: "remove", nope: "/x"}'),
      / ERROR: <input>:1:25: undefined field 'nope'\n/,
    );
  });

  it('constructs nested Objects with dotted type names, optional fields and lists', () => {
    const v = evaluate(
      'Object{spec: Object.spec{replicas: 3, ?paused: optional.none(), ?x: optional.of("y"), ' +
        'template: Object.spec.template{metadata: Object.spec.template.metadata{labels: {"a": "b"}}}}}',
    );
    assert.ok(v instanceof ObjectVal);
    assert.equal(v.typeName, 'Object');
    assert.deepEqual(typeNameErrors(v), []);
    assert.deepEqual(celToJson(v), {
      spec: { replicas: 3, x: 'y', template: { metadata: { labels: { a: 'b' } } } },
    });
  });

  it('reports an initializer named after the wrong field path', () => {
    const v = evaluate('Object{spec: Object.spec{selector: Object.spec.wrong{}}}');
    assert.deepEqual(typeNameErrors(v), [
      'unexpected type name "Object.spec.wrong", expected "Object.spec.selector", which matches field name path from root Object type',
    ]);
  });

  it('leaves strings, comments, map literals and `in` alone', () => {
    const src = `"Object{a: 1}" + 'x{' // Object{b: 2}\n`;
    assert.equal(rewriteObjectConstruction(src).text, src);
    assert.equal(rewriteObjectConstruction('"a" in {"a": 1}').text, '"a" in {"a": 1}');
    assert.equal(evaluate('"a" in {"a": 1} && r"Object{" == "Object{"'), true);
  });

  it('turns values into JSON as Kubernetes does', () => {
    assert.deepEqual(
      celToJson(
        evaluate(
          '{"t": dyn(timestamp("2024-01-01T00:00:00Z")), "d": dyn(duration("90s")), "b": dyn(b"ab"), ' +
            '"n": dyn(2), "f": dyn(1.5), "l": dyn([1])}',
        ),
      ),
      { t: '2024-01-01T00:00:00Z', d: '90s', b: 'YWI=', n: 2, f: 1.5, l: [1] },
    );
  });

  it('escapes JSON pointer keys', () => {
    assert.equal(evaluate(`jsonpatch.escapeKey('k8s.io/my~label')`), 'k8s.io~1my~0label');
  });
});

describe('cel mutation compile errors', () => {
  const env = () => {
    const e = newEnvironment();
    e.registerVariable('object', 'dyn');
    registerMutationLibrary(e);
    return e;
  };
  const error = (src: string) => {
    try {
      compile(env(), src, rewriteObjectConstruction(src));
    } catch (e) {
      return (e as Error).message;
    }
    return 'compiled';
  };

  it('point into the expression as written, not the rewritten one', () => {
    assert.equal(
      error('Object{spec: Object.spec{replicas: nope}}'),
      "ERROR: <input>:1:36: undeclared reference to 'nope' (in container '')\n" +
        ' | Object{spec: Object.spec{replicas: nope}}\n' +
        ' | ...................................^',
    );
    assert.match(
      error('[JSONPatch{op: "add", path: 1 +}]'),
      /^ERROR: <input>:1:\d+: Syntax error: .*\n \| \[JSONPatch\{op/,
    );
  });

  it('refuse an initializer that is not name: value', () => {
    assert.equal(
      error('Object{spec}'),
      "ERROR: <input>:1:8: Syntax error: expected a field initializer 'name: value' in Object{...}\n" +
        ' | Object{spec}\n' +
        ' | .......^',
    );
  });
});
