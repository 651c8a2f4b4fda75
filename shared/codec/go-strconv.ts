// Go's strconv and time parsers, with their error texts, for what Kubernetes
// reads from query strings: clients send what Go accepts ("watch=True",
// "timeout=1m30s") and expect Go's refusals ("value out of range").

/** strconv.Quote for the ASCII texts these errors carry. */
const quote = (s: string) => JSON.stringify(s);

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
  throw new Error(`strconv.ParseBool: parsing ${quote(s)}: invalid syntax`);
}

const INT64_MAX = (1n << 63n) - 1n;
const INT64_MIN = -(1n << 63n);

/** strconv.ParseInt(s, 10, 64) as a bigint; throws Go's error text. */
export function goParseInt64(s: string): bigint {
  if (!/^[+-]?\d+$/.test(s)) throw new Error(`strconv.ParseInt: parsing ${quote(s)}: invalid syntax`);
  const n = BigInt(s);
  if (n > INT64_MAX || n < INT64_MIN)
    throw new Error(`strconv.ParseInt: parsing ${quote(s)}: value out of range`);
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
  const invalid = () => new Error(`time: invalid duration ${quote(orig)}`);
  if (s === '') throw invalid();
  let total = 0n;
  while (s !== '') {
    const num = /^(\d*)(?:\.(\d*))?/.exec(s)!;
    const [whole, intPart, frac] = num;
    if (!intPart && !frac) throw invalid();
    s = s.slice(whole.length);
    const unit = /^[^0-9.]*/.exec(s)![0];
    if (!unit) throw new Error(`time: missing unit in duration ${quote(orig)}`);
    const scale = UNIT_NS[unit];
    if (scale === undefined) throw new Error(`time: unknown unit ${quote(unit)} in duration ${quote(orig)}`);
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
