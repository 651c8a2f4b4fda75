import assert from 'node:assert/strict';
import { goAtoi, goParseBool, goParseDurationNs, goParseInt64 } from './go-strconv';

describe("Go's strconv and time parsers", () => {
  it('parses booleans in exactly the forms strconv.ParseBool takes', () => {
    for (const t of ['1', 't', 'T', 'TRUE', 'true', 'True']) assert.equal(goParseBool(t), true, t);
    for (const f of ['0', 'f', 'F', 'FALSE', 'false', 'False']) assert.equal(goParseBool(f), false, f);
    for (const bad of ['', 'yes', 'tRUE', ' true', '2'])
      assert.throws(() => goParseBool(bad), {
        message: `strconv.ParseBool: parsing ${JSON.stringify(bad)}: invalid syntax`,
      });
  });

  it('parses int64 with overflow and syntax errors worded like Go', () => {
    assert.equal(goParseInt64('9223372036854775807'), 9223372036854775807n);
    assert.equal(goParseInt64('-9223372036854775808'), -9223372036854775808n);
    assert.equal(goParseInt64('+42'), 42n);
    assert.throws(() => goParseInt64('99999999999999999999'), {
      message: 'strconv.ParseInt: parsing "99999999999999999999": value out of range',
    });
    assert.throws(() => goParseInt64('9223372036854775808'), /value out of range/);
    for (const bad of ['', '1.5', '0x10', '1_000', ' 1', '1e3'])
      assert.throws(() => goParseInt64(bad), {
        message: `strconv.ParseInt: parsing ${JSON.stringify(bad)}: invalid syntax`,
      });
    assert.throws(() => goAtoi('x'), { message: 'strconv.Atoi: parsing "x": invalid syntax' });
  });

  it('parses durations like time.ParseDuration, errors included', () => {
    assert.equal(goParseDurationNs('1m30s'), 90_000_000_000n);
    assert.equal(goParseDurationNs('1.5h'), 5_400_000_000_000n);
    assert.equal(goParseDurationNs('-2ms'), -2_000_000n);
    assert.equal(goParseDurationNs('0'), 0n);
    assert.equal(goParseDurationNs('.5s'), 500_000_000n);
    assert.equal(goParseDurationNs('1µs'), 1000n);
    assert.throws(() => goParseDurationNs('5'), { message: 'time: missing unit in duration "5"' });
    assert.throws(() => goParseDurationNs('5x'), { message: 'time: unknown unit "x" in duration "5x"' });
    assert.throws(() => goParseDurationNs('abc'), { message: 'time: invalid duration "abc"' });
    assert.throws(() => goParseDurationNs(''), { message: 'time: invalid duration ""' });
    assert.throws(() => goParseDurationNs('9999999999h'), {
      message: 'time: invalid duration "9999999999h"',
    });
  });
});
