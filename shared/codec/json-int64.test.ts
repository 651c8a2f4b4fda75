import assert from 'node:assert/strict';
import { parseJSONInt64, stringifyJSONInt64 } from './json-int64';

describe('codec/json-int64', () => {
  it('keeps integers past 2^53 exact, both ways', () => {
    const text = '{"revision":3546343826724306001,"neg":-9223372036854775808,"small":42}';
    const v = parseJSONInt64(text) as any;
    assert.equal(v.revision, 3546343826724306001n);
    assert.equal(v.neg, -9223372036854775808n);
    assert.equal(v.small, 42);
    assert.equal(stringifyJSONInt64(v), text);
    assert.equal(stringifyJSONInt64({ a: [1n << 60n] }, 1), '{\n "a": [\n  1152921504606846976\n ]\n}');
  });

  it('leaves strings, fractions, exponents and safe integers as JSON.parse gives them', () => {
    const text =
      '{"s":"3546343826724306001","esc":"a\\"1234567890123456789","f":1234567890123456789.5,' +
      '"e":12345678901234567e3,"safe":9007199254740991}';
    assert.deepEqual(parseJSONInt64(text), JSON.parse(text));
    assert.equal(stringifyJSONInt64(JSON.parse(text)), JSON.stringify(JSON.parse(text)));
  });

  it('finds a long integer wherever it starts', () => {
    for (let at = 0; at < 40; at++) {
      const pad = ' '.repeat(at);
      assert.equal(
        (parseJSONInt64(`${pad}[9007199254740993]`) as unknown[])[0],
        9007199254740993n,
        `at ${at}`,
      );
      assert.equal((parseJSONInt64(`${pad}[900719925474099]`) as unknown[])[0], 900719925474099, `at ${at}`);
    }
  });

  it('throws on malformed text like JSON.parse', () => {
    assert.throws(() => parseJSONInt64('{"a":12345678901234567890'), SyntaxError);
  });
});
