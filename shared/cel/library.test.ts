// The Kubernetes CEL libraries, the schema type mapping and the cost estimator.
import assert from 'node:assert/strict';
import { CelCompileError, CelEvalError, compile, newEnvironment } from './engine';
import { SchemaTypes, escapeName } from './schema';
import { estimateCost, maxSize } from './cost';

function run(expr: string, self: unknown = {}, schema?: Record<string, any>): unknown {
  const env = newEnvironment();
  const types = new SchemaTypes(env);
  env.registerVariable('self', schema ? types.declare(schema, 'Object') : 'dyn');
  return compile(env, expr).evaluate({ self: types.value(self, schema) });
}

describe('Kubernetes CEL libraries', () => {
  it('lists', () => {
    assert.equal(run('[1, 2, 3].isSorted() && ![2, 1].isSorted()'), true);
    assert.equal(run('[3, 1, 2].min()'), 1n);
    assert.equal(run('["b", "c"].max()'), 'c');
    assert.equal(run('[1, 2, 3].sum()'), 6n);
    assert.equal(run('[1, 2, 1].lastIndexOf(1)'), 2n);
  });
  it('regex and strings', () => {
    assert.equal(run('"abc 123 def 456".find("[0-9]+")'), '123');
    assert.deepEqual(run('"abc 123 def 456".findAll("[0-9]+", 1)'), ['123']);
    assert.equal(run('"a-b-c".replace("-", "_")'), 'a_b_c');
    assert.equal(run('"héllo".charAt(1)'), 'é');
    // string.reverse() is the strings library's version 3; Kubernetes enables version 2.
    assert.throws(() => run('"abc".reverse()'), CelCompileError);
  });
  it('quantity and url', () => {
    assert.equal(run('quantity("1Gi").isGreaterThan(quantity("1G"))'), true);
    assert.equal(run('quantity("1.5").add(quantity("500m")).asInteger()'), 2n);
    assert.equal(run('isQuantity("1Zi")'), false);
    assert.equal(run('url("https://example.com:8443/a?b=c").getHostname()'), 'example.com');
    assert.deepEqual(run('url("/x?a=1&a=2").getQuery()'), new Map([['a', ['1', '2']]]));
  });
  it('ip and cidr', () => {
    assert.equal(run('isIP("10.0.0.1") && !isIP("010.0.0.1") && !isIP("::ffff:1.2.3.4")'), true);
    assert.equal(run('string(ip("2001:0db8:0:0:0:0:0:1"))'), '2001:db8::1');
    assert.equal(
      run('cidr("10.0.0.0/8").containsIP(ip("10.9.8.7")) && !cidr("10.0.0.0/8").containsIP("11.0.0.1")'),
      true,
    );
    assert.equal(run('string(cidr("192.168.7.9/16").masked())'), '192.168.0.0/16');
    assert.equal(run('cidr("fd00::/8").containsCIDR("fd00:1::/32")'), true);
    assert.throws(() => run('ip("nope")'), CelEvalError);
  });
  it('semver and format', () => {
    assert.equal(
      run(
        'semver("1.2.3-rc.1").isLessThan(semver("1.2.3")) && semver("1.10.0").isGreaterThan(semver("1.9.9"))',
      ),
      true,
    );
    assert.equal(run('semver("v2", true).major()'), 2n);
    assert.equal(run('isSemver("1.2")'), false);
    assert.equal(run('format.dns1123Label().validate("ok-name").hasValue()'), false);
    assert.equal(run('format.named("dns1123Subdomain").value().validate("Bad_Name").hasValue()'), true);
    assert.equal(run('format.named("unknown").hasValue()'), false);
  });
});

describe('schema types', () => {
  const schema = {
    type: 'object',
    properties: {
      replicas: { type: 'integer' },
      'dash-name': { type: 'string' },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      port: { 'x-kubernetes-int-or-string': true },
      items: { type: 'array', items: { type: 'object', properties: { n: { type: 'integer' } } } },
    },
  };
  it('optionals: optMap, optFlatMap and optional.ofNonZeroValue over a typed self', () => {
    const schema = {
      type: 'object',
      properties: {
        replicas: { type: 'integer' },
        name: { type: 'string' },
        limits: { type: 'object', additionalProperties: { type: 'string' } },
      },
    };
    const doubled = 'self.?replicas.optMap(r, r * 2).orValue(-1)';
    assert.equal(run(doubled, { replicas: 3 }, schema), 6n);
    assert.equal(run(doubled, {}, schema), -1n);
    const cpu = "self.?limits.optFlatMap(l, l[?'cpu']).orValue('none')";
    assert.equal(run(cpu, { limits: { cpu: '2' } }, schema), '2');
    assert.equal(run(cpu, { limits: {} }, schema), 'none');
    assert.equal(run(cpu, {}, schema), 'none');
    const named = "optional.ofNonZeroValue(self.name).orValue('unnamed')";
    assert.equal(run(named, { name: '' }, schema), 'unnamed');
    assert.equal(run(named, { name: 'a' }, schema), 'a');
    assert.equal(
      run('optional.ofNonZeroValue(0).hasValue() || optional.ofNonZeroValue([]).hasValue()'),
      false,
    );
    assert.equal(run('optional.ofNonZeroValue(duration("1s")).hasValue()'), true);
    // The body's type is checked against the optional's value type.
    assert.throws(() => run("self.?replicas.optMap(r, r + 'x')", {}, schema), CelCompileError);
    assert.throws(() => run('self.?replicas.optFlatMap(r, r + 1)', {}, schema), CelCompileError);
  });
  it('conversions cel-go has: string() of timestamps and durations, int() of uints and timestamps, bytes ordering', () => {
    const schema = { type: 'object', properties: { at: { type: 'string', format: 'date-time' } } };
    assert.equal(
      run("'at ' + string(self.at)", { at: '2024-05-06T07:08:09.5Z' }, schema),
      'at 2024-05-06T07:08:09.5Z',
    );
    assert.equal(run('int(self.at)', { at: '1969-12-31T23:59:59.5Z' }, schema), -1n);
    assert.equal(
      run('string(duration("1h1m0.25s")) + " " + string(duration("-2ns"))'),
      '3660.25s -0.000000002s',
    );
    assert.equal(run('int(42u) + int(timestamp("1970-01-02T00:00:00Z"))'), 86442n);
    assert.throws(() => run('int(9223372036854775808u)'), /integer overflow/);
    assert.equal(
      run('timestamp(timestamp(7)) == timestamp(7) && duration(duration("5s")) == duration("5s")'),
      true,
    );
    assert.equal(run("b'a' < b'ab' && b'\\xff' > b'a' && b'' <= b'' && !(b'b' >= b'c')"), true);
  });
  it('sets: contains, equivalent and intersects over lists, with CEL equality', () => {
    const schema = {
      type: 'object',
      properties: { finalizers: { type: 'array', items: { type: 'string' } } },
    };
    const self = { finalizers: ['a.io/x', 'b.io/y', 'a.io/x'] };
    assert.equal(run("sets.contains(self.finalizers, ['b.io/y', 'a.io/x'])", self, schema), true);
    assert.equal(run("sets.contains(self.finalizers, ['c.io/z'])", self, schema), false);
    assert.equal(run('sets.contains(self.finalizers, [])', self, schema), true);
    assert.equal(run("sets.equivalent(self.finalizers, ['b.io/y', 'a.io/x'])", self, schema), true);
    assert.equal(run("sets.equivalent(self.finalizers, ['b.io/y'])", self, schema), false);
    assert.equal(run("sets.intersects(self.finalizers, ['c.io/z', 'b.io/y'])", self, schema), true);
    assert.equal(run('sets.intersects([1, 2], [])'), false);
    assert.equal(run('sets.contains([[1], [2, 3]], [[2, 3]])'), true);
    assert.equal(run('sets.contains(self.a, self.b)', { a: [1], b: [1.0] }), true);
    // One element type for both lists, as cel-go's list(T) overloads.
    assert.throws(() => run("sets.contains([1], ['a'])"), CelCompileError);
  });
  it('list extensions: slice, flatten, reverse, distinct, sort, sortBy, lists.range', () => {
    assert.deepEqual(run('lists.range(4)'), [0n, 1n, 2n, 3n]);
    assert.deepEqual(run('lists.range(0)'), []);
    assert.deepEqual(run('[1, 2, 3, 4].slice(1, 3)'), [2n, 3n]);
    assert.throws(() => run('[1, 2].slice(1, 3)'), /cannot slice\(1, 3\), list is length 2/);
    assert.throws(() => run('[1, 2].slice(-1, 1)'), /negative indexes not supported/);
    assert.deepEqual(run('[[1], [2, 3], []].flatten()'), [1n, 2n, 3n]);
    assert.deepEqual(run('self.flatten(2)', [1, [2, [3, [4]]]]), [1n, 2n, 3n, [4n]]);
    assert.throws(() => run('[[1]].flatten(-1)'), /level must be non-negative/);
    assert.deepEqual(run('[5, 3, 1, 2].reverse()'), [2n, 1n, 3n, 5n]);
    assert.deepEqual(run('["b", "b", "c", "a", "c"].distinct()'), ['b', 'c', 'a']);
    assert.deepEqual(run('[3, 1, 2].sort()'), [1n, 2n, 3n]);
    assert.deepEqual(run('["b", "c", "a"].sort()'), ['a', 'b', 'c']);
    assert.equal(run('[duration("2s"), duration("1s")].sort() == [duration("1s"), duration("2s")]'), true);
    assert.throws(() => run('[dyn(1), dyn("b")].sort()'), /list elements must have the same type/);
    assert.throws(() => run('[[1, 2, 3]].sort()'), /list elements must be comparable/);
    const schema = {
      type: 'object',
      properties: {
        ports: {
          type: 'array',
          items: { type: 'object', properties: { name: { type: 'string' }, port: { type: 'integer' } } },
        },
      },
    };
    const self = {
      ports: [
        { name: 'web', port: 8080 },
        { name: 'admin', port: 22 },
        { name: 'db', port: 5432 },
      ],
    };
    assert.deepEqual(run('self.ports.sortBy(p, p.port).map(p, p.name)', self, schema), [
      'admin',
      'db',
      'web',
    ]);
    assert.equal(run('self.ports.sortBy(p, -p.port)[0].name', self, schema), 'web');
  });
  it('two-variable comprehensions over a typed list and map', () => {
    const schema = {
      type: 'object',
      properties: {
        ports: { type: 'array', items: { type: 'integer' } },
        labels: { type: 'object', additionalProperties: { type: 'string' } },
        weights: { type: 'object', additionalProperties: { type: 'integer' } },
      },
    };
    const self = { ports: [80, 443, 8080], labels: { app: 'web', tier: '' }, weights: { a: 1, b: 2 } };
    const ev = (expr: string) => run(expr, self, schema);
    assert.equal(ev('self.ports.all(i, p, p > i)'), true);
    assert.equal(ev('self.ports.exists(i, p, i == 2 && p == 8080)'), true);
    assert.equal(ev('self.ports.existsOne(i, p, p > 100)'), false);
    assert.equal(ev("self.labels.all(k, v, k.size() > 0 && v != '')"), false);
    assert.equal(ev("self.labels.existsOne(k, v, v == '')"), true);
    assert.deepEqual(ev('self.ports.transformList(i, p, p + i)'), [80n, 444n, 8082n]);
    assert.deepEqual(ev('self.ports.transformList(i, p, p < 1000, p * 2)'), [160n, 886n]);
    assert.deepEqual(
      ev('self.weights.transformMap(k, v, v * 10)'),
      new Map([
        ['a', 10n],
        ['b', 20n],
      ]),
    );
    assert.equal(ev("self.weights.transformMap(k, v, k != 'a', v)['b']"), 2n);
    assert.deepEqual(
      ev('self.labels.transformMapEntry(k, v, {v: k})'),
      new Map([
        ['web', 'app'],
        ['', 'tier'],
      ]),
    );
    assert.throws(() => ev("{'a': 1, 'b': 1}.transformMapEntry(k, v, {'x': v})"), /already exists/);
    // The predicate must be a bool, and the two names must differ.
    assert.throws(() => ev('self.ports.all(i, p, p)'), CelCompileError);
    assert.throws(() => ev('self.ports.all(p, p, p > 0)'), CelCompileError);
  });
  it('escapes property names like Kubernetes', () => {
    assert.equal(escapeName('foo-bar'), 'foo__dash__bar');
    assert.equal(escapeName('a.b/c'), 'a__dot__b__slash__c');
    assert.equal(escapeName('x__y'), 'x__underscores__y');
    assert.equal(escapeName('namespace'), '__namespace__');
    assert.equal(escapeName('1abc'), undefined);
  });
  it('types self from the schema: undefined fields fail to compile, values evaluate', () => {
    const obj = { replicas: 2, 'dash-name': 'x', labels: { a: 'b' }, port: 'http', items: [{ n: 1 }] };
    assert.equal(run('self.replicas + self.items[0].n', obj, schema), 3n);
    assert.equal(run('self.dash__dash__name == "x" && self.labels["a"] == "b"', obj, schema), true);
    assert.equal(run('self.port == "http"', obj, schema), true);
    assert.equal(
      run('self.ratio > 0.5', { ratio: 1 }, { type: 'object', properties: { ratio: { type: 'number' } } }),
      true,
    );
    const env = newEnvironment();
    const types = new SchemaTypes(env);
    env.registerVariable('self', types.declare(schema, 'Object'));
    assert.throws(
      () => compile(env, 'self.nope == 1'),
      (e: Error) => e instanceof CelCompileError && e.message.includes("undefined field 'nope'"),
    );
    assert.throws(() => compile(env, 'self.replicas == "a"'), CelCompileError);
    assert.throws(
      () => compile(env, 'self.items[1].n == 1').evaluate({ self: types.value(obj, schema) }),
      CelEvalError,
    );
  });

  it("reports compile errors where cel-go does, in cel-go's words", () => {
    const env = newEnvironment();
    env.registerVariable('self', new SchemaTypes(env).declare(schema, 'Object'));
    const error = (expr: string) => {
      try {
        compile(env, expr);
      } catch (e) {
        if (e instanceof CelCompileError) return e.message;
        throw e;
      }
      assert.fail(`${expr} compiled`);
    };
    // A field selection at its dot, an operator at the operator, a method call at its parenthesis.
    assert.equal(
      error('self.nope == 1'),
      "ERROR: <input>:1:5: undefined field 'nope'\n | self.nope == 1\n | ....^",
    );
    assert.equal(
      error('self.replicas + "a"'),
      "ERROR: <input>:1:15: found no matching overload for '_+_' applied to '(int, string)'\n | self.replicas + \"a\"\n | ..............^",
    );
    assert.match(error('1 + self.replicas.size()'), /^ERROR: <input>:1:23: found no matching overload/);
    // has() names a field of a declared type: checked like a selection; maps and loop variables are not.
    assert.equal(
      error('has(self.nope)'),
      "ERROR: <input>:1:9: undefined field 'nope'\n | has(self.nope)\n | ........^",
    );
    assert.equal(compile(env, 'has(self.labels.x) && has(self.replicas)').outputType, 'bool');
    assert.equal(compile(env, 'self.items.all(i, has(i.n))').outputType, 'bool');
    assert.match(error('self.items.all(i, has(self.nope))'), /1:27: undefined field 'nope'/);
  });
});

describe('string formats', () => {
  it('date-time, date, duration and byte strings are timestamps, durations and bytes', () => {
    const schema = {
      type: 'object',
      properties: {
        t: { type: 'string', format: 'date-time' },
        d: { type: 'string', format: 'duration' },
        b: { type: 'string', format: 'byte' },
      },
    };
    const obj = { t: '2024-01-02T03:04:05Z', d: '1h30m', b: 'aGVsbG8=' };
    assert.equal(run('self.t + self.d == timestamp("2024-01-02T04:34:05Z")', obj, schema), true);
    assert.equal(run('self.b == b"hello"', obj, schema), true);
  });
});

describe('cost estimation', () => {
  const env = newEnvironment();
  env.registerVariable('self', 'dyn');
  const list = (extra: Record<string, unknown>) => ({ type: 'array', items: { type: 'string', ...extra } });
  it('bounds sizes by maxItems/maxLength, else by the largest request', () => {
    assert.equal(maxSize({ type: 'array', maxItems: 5 }), 5);
    assert.ok(maxSize(list({})) > 1_000_000 / 3);
    const nested = compile(env, 'self.all(a, self.all(b, a == b))').ast;
    assert.ok(estimateCost(nested, list({})) > 10_000_000);
    assert.ok(estimateCost(nested, { ...list({ maxLength: 10 }), maxItems: 10 }) < 10_000);
  });
  it('charges a scan for strings and lists, not for numbers, and the extensions by their lists', () => {
    const schema = {
      type: 'object',
      properties: {
        items: {
          type: 'array',
          maxItems: 1000,
          items: { type: 'object', properties: { x: { type: 'integer' } } },
        },
        names: { type: 'array', maxItems: 20, items: { type: 'string', maxLength: 10 } },
        text: { type: 'string' },
      },
    };
    const typed = newEnvironment();
    typed.registerVariable('self', new SchemaTypes(typed).declare(schema, 'Object'));
    const est = (expr: string) => estimateCost(compile(typed, expr).ast, schema);
    // Ints compared per item: a few units per item, as cel-go estimates it (a computed int
    // was charged a scan of the largest request, 314,573, and the rule went over budget).
    assert.ok(
      est('self.items.all(i, i.x + 1 == 2)') < 10_000,
      String(est('self.items.all(i, i.x + 1 == 2)')),
    );
    assert.ok(est('self.names.size() == 2') < 10);
    // An unbounded string compared is a scan of the largest request.
    assert.ok(est('self.text == "a" || self.text == self.text') > 100_000);
    // sets.* by the product of the sizes; sort and distinct by the square of the list.
    const contains = est('sets.contains(self.names, self.names)');
    const equivalent = est('sets.equivalent(self.names, self.names)');
    assert.ok(contains >= 400 && contains < 1_000, String(contains));
    assert.ok(equivalent >= 800 && equivalent < 2_000, String(equivalent));
    assert.ok(est('self.names.sort().size() > 0') >= 800);
    assert.ok(est('lists.range(5).size() == 5') < 100);
    // all(k, v, ...) over a map binds v to the map's values: bounded strings, a small scan.
    const labels = (maxLength?: number) => ({
      type: 'object',
      properties: {
        labels: {
          type: 'object',
          maxProperties: 10,
          additionalProperties: { type: 'string', ...(maxLength ? { maxLength } : {}) },
        },
      },
    });
    const byLabels = (s: Record<string, unknown>) => {
      const e = newEnvironment();
      e.registerVariable('self', new SchemaTypes(e).declare(s, 'Object'));
      return estimateCost(compile(e, "self.labels.all(k, v, v.contains('x'))").ast, s);
    };
    assert.ok(byLabels(labels(63)) < 200, String(byLabels(labels(63))));
    assert.ok(byLabels(labels()) > 100_000);
  });
});
