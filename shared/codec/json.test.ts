import assert from 'node:assert/strict';
import { StatusError } from '../api/status';
import { findDuplicateKeys, goJSONSyntaxError, parseJSON, summarizeData } from './json';

describe('codec/json', () => {
  it('parses with JSON.parse and reports no duplicates unless asked', () => {
    const r = parseJSON(Buffer.from('{"a":1,"a":2}'));
    assert.deepEqual(r, { value: { a: 2 }, duplicates: [] });
  });

  it('finds duplicate keys with Kubernetes paths: nested, in lists, in maps, escaped keys', () => {
    const text =
      '{"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},' +
      '"spec":{"containers":[{"name":"c"},{"name":"d","env":[{"name":"A","name":"B"}]}],"k\\"q":1,"k\\"q":2},' +
      '"list":[[{"z":1,"z":2}]]}';
    assert.deepEqual(parseJSON(text, { detectDuplicates: true }).duplicates, [
      'metadata.name',
      'metadata.labels.x',
      'spec.containers[1].env[0].name',
      'spec.k"q',
      'list[0][0].z',
    ]);
  });

  it('tells texts with and without repeated keys apart when keys and strings hold quotes, colons and backslashes', () => {
    const tricky = {
      'a\\': 'x":y',
      b: '":"',
      'c"': { d: 'e\\":f', '\\\\': '\\' },
      e: ['":', { '"f"': 1, g: '\\\\":' }],
    };
    for (const indent of [undefined, 1]) {
      const text = JSON.stringify(tricky, null, indent);
      assert.deepEqual(parseJSON(text, { detectDuplicates: true }).duplicates, [], text);
      const twice = `${text.slice(0, -1)}, "b" :"again", "e":[]}`;
      assert.deepEqual(parseJSON(twice, { detectDuplicates: true }).duplicates, ['b', 'e'], twice);
      const inner = text.replace('"d":', '"d":1,"d":');
      assert.deepEqual(parseJSON(inner, { detectDuplicates: true }).duplicates, ['c".d'], inner);
    }
  });

  it('reports a repeated duplicate once and ignores repeats across objects', () => {
    assert.deepEqual(findDuplicateKeys('{"a":1,"a":2,"a":3}'), ['a']);
    assert.deepEqual(findDuplicateKeys('[{"a":1},{"a":2}]'), []);
    assert.deepEqual(findDuplicateKeys(' { "a" : { } , "b" : [ ] , "c" : "}" } '), []);
  });

  it('refuses nesting deeper than 500 levels, with or without the duplicate scan', () => {
    const nest = (n: number, inner = '1') => '{"a":'.repeat(n - 1) + '[' + inner + ']' + '}'.repeat(n - 1);
    for (const detectDuplicates of [false, true]) {
      assert.deepEqual(parseJSON(nest(500), { detectDuplicates }).duplicates, []);
      for (const text of [nest(501), nest(100_000), nest(600, '1,')])
        assert.throws(
          () => parseJSON(text, { detectDuplicates, kind: 'Pod' }),
          (e: StatusError) => e.code === 400 && /exceeded max depth/.test(e.message),
        );
    }
    assert.equal(findDuplicateKeys(nest(501)), null);
    assert.deepEqual(findDuplicateKeys('{"a":[{"b":1,"b":2},[{"c":1,"c":1}]]}'), ['a[0].b', 'a[1][0].c']);
  });

  it("answers malformed JSON like kube-apiserver (400, Go's message, summary)", () => {
    try {
      parseJSON('{"apiVersion":"v1","kind":"Pod",}', { kind: 'Pod' });
      assert.fail('expected an error');
    } catch (e) {
      assert.ok(e instanceof StatusError);
      assert.equal(e.code, 400);
      assert.equal(e.reason, 'BadRequest');
      assert.equal(
        e.message,
        `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: invalid character '}' looking for beginning of object key string ({"apiVersion":"v1","kind":"Pod ...)`,
      );
    }
  });

  it('empty and non-JSON bodies', () => {
    assert.throws(
      () => parseJSON('', { kind: 'Pod' }),
      (e: StatusError) =>
        e.message ===
        `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: unexpected end of JSON input (<empty>)`,
    );
    assert.throws(
      () => parseJSON('kind: Pod'),
      (e: StatusError) =>
        e.message ===
        "couldn't get version/kind; json parse error: invalid character 'k' looking for beginning of value",
    );
  });

  it("reproduces Go's scanner messages", () => {
    const cases: [string, string | undefined][] = [
      ['{"a":1}', undefined],
      ['{"a" 1}', "invalid character '1' after object key"],
      ['{"a":1 "b":2}', `invalid character '"' after object key:value pair`],
      ['[1 2]', "invalid character '2' after array element"],
      ['{"a":tru}', "invalid character '}' in literal true (expecting 'e')"],
      ['{"a":-x}', "invalid character 'x' in numeric literal"],
      ['{"a":1.}', "invalid character '}' after decimal point in numeric literal"],
      ['{"a":1e}', "invalid character '}' in exponent of numeric literal"],
      ['{"a":"\\q"}', "invalid character 'q' in string escape code"],
      ['{"a":"x\ny"}', "invalid character '\\n' in string literal"],
      ['{"a":1} x', "invalid character 'x' after top-level value"],
      ['{"a":01}', "invalid character '1' after object key:value pair"],
      ['{"a":', 'unexpected end of JSON input'],
      ["{'a':1}", "invalid character '\\'' looking for beginning of object key string"],
    ];
    for (const [text, msg] of cases) assert.equal(goJSONSyntaxError(text), msg, text);
  });

  it('summarizes bodies like Kubernetes: text for JSON objects, hex otherwise', () => {
    assert.equal(summarizeData('{"a":1}', 30), '{"a":1}');
    assert.equal(summarizeData('abc', 30), '616263');
    assert.equal(summarizeData('x'.repeat(40), 30), '78'.repeat(30) + ' ...');
  });
});
