// What Kubernetes answers for string.format and strings.quote: cel-go's strings
// extension at version 2, whose %f and %e go through x/text's en_US printer.
// Expected texts are cel-go's (its formatting tests, and Go 1.19 with x/text run
// on the values that they do not cover).
import assert from 'node:assert/strict';
import { newEnvironment } from '../engine';

const env = newEnvironment();
const ev = (expr: string): unknown => env.evaluate(expr, {});
const SCI = '\u202f×\u202f10';

describe('CEL string.format, as Kubernetes formats', () => {
  const cases: [string, string][] = [
    ['"no substitution".format([])', 'no substitution'],
    ['"%%%s%%, %% and %%".format(["text"])', '%text%, % and %'],
    ['"%d %x %X %o %b".format([30, 30, 30, 11, 5])', '30 1e 1E 13 101'],
    ['"%d %b %o %x".format([-7, -5, -11, -30])', '-7 -101 -13 -1e'],
    ['"%d %b %o %X".format([uint(64), uint(64), uint(65535), uint(6000)])', '64 1000000 177777 1770'],
    ['"%b%b".format([true, false])', '10'],
    ['"%x %X".format(["Hello world!", "Hello world!"])', '48656c6c6f20776f726c6421 48656C6C6F20776F726C6421'],
    ['"%x".format([b"\\x00\\x00byte string\\x00"])', '00006279746520737472696e6700'],
    // %f: thousands grouped, ties to even on the double's exact value, infinities as x/text writes them.
    ['"%.3f".format([1.2345])', '1.234'],
    ['"%f".format([2.71828])', '2.718280'],
    ['"%.3f|%.0f|%f".format([1234567.891, 1234567.891, 1234.5])', '1,234,567.891|1,234,568|1,234.500000'],
    ['"%.0f %.0f %.0f %.0f".format([0.5, 1.5, 2.5, 3.5001])', '0 2 2 4'],
    ['"%.3f %.3f %.5f".format([-123.4994, -0.0004, -1.2])', '-123.499 -0.000 -1.20000'],
    ['"%.0f".format([1e21])', '1,000,000,000,000,000,000,000'],
    ['"%f %f %f".format([double("NaN"), double("Infinity"), double("-Infinity")])', 'NaN ∞ -∞'],
    ['"%f|%.2f".format(["-Infinity", "NaN"])', '-∞|NaN'],
    ['"%.200f".format([1.0])', `1.${'0'.repeat(200)}`],
    // %e: always six decimals (cel-go passes the precision as a width), superscript exponent.
    ['"%e".format([2.71828])', `2.718280${SCI}⁰⁰`],
    ['"%.2e".format([1052.032911275])', `1.052033${SCI}⁰³`],
    [
      '"%e|%e|%e".format([0.001, -123.4994, 5e-324])',
      `1.000000${SCI}⁻⁰³|-1.234994${SCI}⁰²|4.940656${SCI}⁻³²⁴`,
    ],
    ['"%e|%e".format([999999.9999999, 0.0])', `1.000000${SCI}⁰⁶|0.000000${SCI}⁰⁰`],
    [
      '"[%e][%e][%e]".format([double("NaN"), double("Infinity"), double("-Infinity")])',
      '[   NaN][     ∞][    -∞]',
    ],
    // %s: Go's %g for a double, CEL's string conversions for the rest.
    ['"%s %s %s %s".format([2.71, 0.000000002, 1234567.891, 100000.0])', '2.71 2e-09 1.234567891e+06 100000'],
    ['"%s %s".format([double("Inf"), double("-Inf")])', '+Inf -Inf'],
    ['"%s %s %s".format([dyn(999999999999), dyn(true), dyn(null)])', '999999999999 true null'],
    ['"%s|%s".format([b"xyz", b"\\xe2\\x82\\xac"])', 'xyz|€'],
    ['"%s %s".format([type("x"), type(1)])', 'string int'],
    ['"%s".format([timestamp("2023-02-03T23:31:20+00:00")])', '2023-02-03T23:31:20Z'],
    ['"%s".format([timestamp("2023-02-03T23:31:20.25Z")])', '2023-02-03T23:31:20.25Z'],
    ['"%s %s".format([duration("1h45m47s"), duration("2ns")])', '6347s 0.000000002s'],
    // Lists and maps: CEL literals, strings quoted as Go's %q, doubles as %.6f, map keys sorted.
    [
      '"%s".format([[dyn("abc"), dyn(3.14), dyn(null), dyn([9, 8]), dyn(timestamp("2023-02-03T23:31:20Z"))]])',
      '["abc", 3.140000, null, [9, 8], timestamp("2023-02-03T23:31:20Z")]',
    ],
    [
      '"%s".format([{"key1": dyn(b"xyz"), "key5": dyn(null), "key2": dyn(duration("2h")), "key4": dyn(true), "key3": dyn(2.71828)}])',
      '{"key1":b"xyz", "key2":duration("7200s"), "key3":2.718280, "key4":true, "key5":null}',
    ],
    ['"%s".format([[double("NaN"), double("+Inf"), double("-Inf")]])', '["NaN", "+Inf", "-Inf"]'],
    ['"%s".format([["a\\"b\\\\c\\n\\t\\a\\x01é😀\\u2028"]])', '["a\\"b\\\\c\\n\\t\\a\\x01é😀\\u2028"]'],
    ['"%s".format([[b"\\xffa"]])', '[b"\\xffa"]'],
  ];
  for (const [expr, want] of cases)
    it(expr, () => {
      assert.equal(ev(expr), want);
    });

  const errors: [string, string][] = [
    ['"%a".format([1])', 'could not parse formatting clause: unrecognized formatting clause "a"'],
    ['"double is %E".format([0.5])', 'could not parse formatting clause: unrecognized formatting clause "E"'],
    ['"%d %d %d".format([0, 1])', 'index 2 out of range'],
    ['"filler %".format([1])', 'unexpected end of string'],
    ['"filler %".format([])', 'index 0 out of range'],
    [
      '"double is %.34".format([5.0])',
      'could not parse formatting clause: error while parsing precision: could not find end of precision specifier',
    ],
    [
      '"string is %b".format(["abc"])',
      'error during formatting: only integers and bools can be formatted as binary, was given string',
    ],
    [
      '"%d".format([duration("30m2s")])',
      'error during formatting: decimal clause can only be used on integers, was given google.protobuf.Duration',
    ],
    [
      '"%d".format([double("NaN")])',
      'error during formatting: decimal clause can only be used on integers, was given double',
    ],
    [
      '"octal: %o".format(["a string"])',
      'error during formatting: octal clause can only be used on integers, was given string',
    ],
    [
      '"double is %x".format([0.5])',
      'error during formatting: only integers, byte buffers, and strings can be formatted as hex, was given double',
    ],
    [
      '"null: %e".format([null])',
      'error during formatting: scientific clause can only be used on doubles, was given null_type',
    ],
    [
      '"%f".format([1])',
      'error during formatting: fixed-point clause can only be used on doubles, was given int',
    ],
    [
      '"%s".format([optional.none()])',
      'error during formatting: string clause can only be used on strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps, was given optional_type',
    ],
  ];
  for (const [expr, message] of errors)
    it(`${expr} fails: ${message}`, () => {
      assert.throws(
        () => ev(expr),
        (e: Error) => e.message.includes(message),
      );
    });

  it('takes the list literal as Kubernetes does: one element type, or dyn()', () => {
    assert.throws(() => ev('"%s is %d".format(["a", 1])'), /List elements must have the same type/);
    assert.equal(ev('"%s is %d".format([dyn("a"), dyn(1)])'), 'a is 1');
  });
});

describe('CEL strings.quote', () => {
  const cases: [string, string][] = [
    ['strings.quote("verbatim")', '"verbatim"'],
    ['strings.quote("")', '""'],
    ['strings.quote("first\\nsecond")', '"first\\nsecond"'],
    ['strings.quote("\\a\\b\\f\\r\\t\\v")', '"\\a\\b\\f\\r\\t\\v"'],
    ['strings.quote("two escape sequences \\\\a\\\\n")', '"two escape sequences \\\\a\\\\n"'],
    ['strings.quote(\'single-quote with "double quote"\')', '"single-quote with \\"double quote\\""'],
    ['strings.quote("завтра 🐱 ta©o")', '"завтра 🐱 ta©o"'],
    ['strings.quote("%s %s").format(["hello", "world"])', '"hello world"'],
  ];
  for (const [expr, want] of cases)
    it(expr, () => {
      assert.equal(ev(expr), want);
    });
});
