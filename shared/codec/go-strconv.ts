// Go's strconv and time parsers, with their error texts, for what Kubernetes
// reads from query strings: clients send what Go accepts ("watch=True",
// "timeout=1m30s") and expect Go's refusals ("value out of range"); and
// strconv.Quote, Go's %q.

/** strconv.ParseBool: 1 t T TRUE true True / 0 f F FALSE false False. */
export function goParseBool(s: string): boolean {
  switch (s) {
    case '1':
    case 't':
    case 'T':
    case 'TRUE':
    case 'true':
    case 'True':
      return true;
    case '0':
    case 'f':
    case 'F':
    case 'FALSE':
    case 'false':
    case 'False':
      return false;
  }
  throw new Error(`strconv.ParseBool: parsing ${goQuote(s)}: invalid syntax`);
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** strconv.ParseInt(s, 10, 64) as a bigint; throws Go's error text. */
export function goParseInt64(s: string): bigint {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.ParseInt: parsing ${goQuote(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > INT64_MAX || n < INT64_MIN)
    throw new Error(`strconv.ParseInt: parsing ${goQuote(s)}: value out of range`);
  return n;
}

/** strconv.Atoi on a 64-bit platform: ParseInt with Atoi's name in the error. */
export function goAtoi(s: string): number {
  try {
    return Number(goParseInt64(s));
  } catch (e) {
    throw new Error((e as Error).message.replace('strconv.ParseInt', 'strconv.Atoi'), { cause: e });
  }
}

// Nanoseconds per unit, as time.ParseDuration knows them.
const UNIT_NS: Record<string, bigint> = {
  ns: 1n,
  us: 1000n,
  µs: 1000n, // U+00B5
  μs: 1000n, // U+03BC
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};

/** time.ParseDuration in nanoseconds; throws Go's error texts (overflow past int64 included). */
export function goParseDurationNs(orig: string): bigint {
  let s = orig;
  let neg = false;
  if (s[0] === '-' || s[0] === '+') {
    neg = s[0] === '-';
    s = s.slice(1);
  }
  if (s === '0') return 0n;
  const invalid = () => new Error(`time: invalid duration ${goQuote(orig)}`);
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const [whole, intPart, frac] = num;
    if (!intPart && !frac) throw invalid();
    s = s.slice(whole.length);
    const unit = /^[^0-9.]*/.exec(s)![0];
    if (!unit) throw new Error(`time: missing unit in duration ${goQuote(orig)}`);
    const scale = UNIT_NS[unit];
    if (scale === undefined)
      throw new Error(`time: unknown unit ${goQuote(unit)} in duration ${goQuote(orig)}`);
    s = s.slice(unit.length);
    let v = BigInt(intPart || '0') * scale;
    if (frac) {
      // Go keeps the fraction's precision to the nanosecond, truncating the rest.
      const digits = frac.replace(/0+$/, '');
      if (digits) v += (BigInt(digits) * scale) / 10n ** BigInt(digits.length);
    }
    total += v;
    if (total > INT64_MAX + (neg ? 1n : 0n)) throw invalid();
  }
  return neg ? -total : total;
}

/** time.ParseDuration in milliseconds. */
export const goParseDurationMs = (s: string): number => Number(goParseDurationNs(s)) / 1e6;

/**
 * strconv.Quote (Go's %q): printable runes as they are, the rest escaped; bytes that are
 * not UTF-8 as \x escapes (a JavaScript string is quoted as its UTF-8 bytes).
 */
export function goQuote(text: string | Uint8Array): string {
  const bytes = typeof text === 'string' ? Buffer.from(text, 'utf8') : text;
  let out = '"';
  let i = 0;
  while (i < bytes.length) {
    const { cp, size } = decodeRune(bytes, i);
    if (cp < 0) {
      out += `\\x${bytes[i].toString(16).padStart(2, '0')}`;
      i++;
      continue;
    }
    i += size;
    out += quoteRune(cp);
  }
  return out + '"';
}

const NAMED_ESCAPES: Record<number, string> = {
  7: '\\a',
  8: '\\b',
  12: '\\f',
  10: '\\n',
  13: '\\r',
  9: '\\t',
  11: '\\v',
  0x5c: '\\\\',
  0x22: '\\"',
};

/** Go's unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space. */
const PRINTABLE = /^[\p{L}\p{M}\p{N}\p{P}\p{S} ]$/u;

function quoteRune(cp: number): string {
  const named = NAMED_ESCAPES[cp];
  if (named) return named;
  const ch = String.fromCodePoint(cp);
  if (PRINTABLE.test(ch)) return ch;
  if (cp < 0x20 || cp === 0x7f) return `\\x${cp.toString(16).padStart(2, '0')}`;
  return cp < 0x10000 ? `\\u${cp.toString(16).padStart(4, '0')}` : `\\U${cp.toString(16).padStart(8, '0')}`;
}

/** One UTF-8 sequence at i: its code point and length, or cp -1 when it is not valid UTF-8. */
function decodeRune(b: Uint8Array, i: number): { cp: number; size: number } {
  const c = b[i];
  if (c < 0x80) return { cp: c, size: 1 };
  const size = c >= 0xf0 && c <= 0xf4 ? 4 : c >= 0xe0 ? 3 : c >= 0xc2 && c <= 0xdf ? 2 : 0;
  if (size === 0 || i + size > b.length) return { cp: -1, size: 1 };
  let cp = size === 2 ? c & 0x1f : size === 3 ? c & 0x0f : c & 0x07;
  for (let k = 1; k < size; k++) {
    const x = b[i + k];
    if ((x & 0xc0) !== 0x80) return { cp: -1, size: 1 };
    cp = (cp << 6) | (x & 0x3f);
  }
  const min = size === 2 ? 0x80 : size === 3 ? 0x800 : 0x10000;
  if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff)) return { cp: -1, size: 1 };
  return { cp, size };
}
