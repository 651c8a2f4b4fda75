// resource.Quantity: Kubernetes' grammar, its error messages, and the
// canonical form the apiserver writes back ("0.5" → "500m", "1024Mi" → "1Gi").
// Values are exact: mantissa × 10^exp with a bigint mantissa.
import { boundedMemo } from '../../heap/bounded-memo';

export type QuantityFormat = 'DecimalSI' | 'BinarySI' | 'DecimalExponent';

export interface Quantity {
  readonly mant: bigint;
  readonly exp: number;
  readonly format: QuantityFormat;
  /** The input kept verbatim when it was already canonical, as Kubernetes does. */
  readonly cached?: string;
}

export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";
export const QUANTITY_NUMERIC_ERROR = 'unable to parse numeric part of quantity';
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const BIN: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DEC: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const DEC_SUFFIX: Record<number, string> = Object.fromEntries(Object.entries(DEC).map(([k, v]) => [v, k]));
const BIN_SUFFIX = ['', 'Ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei'];
const SUFFIX_CHARS = 'eEinumkKMGTP';
const isDigit = (c: string | undefined) => c !== undefined && c >= '0' && c <= '9';
const MAX_INT64 = (1n << 63n) - 1n;

function interpretSuffix(s: string): { base: 2 | 10; exp: number; format: QuantityFormat } | undefined {
  if (s in BIN) return { base: 2, exp: BIN[s], format: 'BinarySI' };
  if (s in DEC) return { base: 10, exp: DEC[s], format: 'DecimalSI' };
  if (s.length > 1 && (s[0] === 'e' || s[0] === 'E') && /^[+-]?\d+$/.test(s.slice(1)))
    return { base: 10, exp: Number(s.slice(1)), format: 'DecimalExponent' };
  return undefined;
}

/** Splits a quantity string like Kubernetes' parseQuantityString; throws the format error. */
function split(str: string) {
  let positive = true;
  let pos = 0;
  const end = str.length;
  if (str[0] === '-') {
    positive = false;
    pos++;
  } else if (str[0] === '+') pos++;
  while (pos < end && str[pos] === '0') pos++;
  if (pos >= end) return { positive, num: '0', denom: '', suffix: '', value: str };
  const numStart = pos;
  while (pos < end && isDigit(str[pos])) pos++;
  let num = str.slice(numStart, pos);
  if (pos >= end) return { positive, num, denom: '', suffix: '', value: str };
  if (num === '') num = '0';
  let denom = '';
  if (str[pos] === '.') {
    pos++;
    const ds = pos;
    while (pos < end && isDigit(str[pos])) pos++;
    denom = str.slice(ds, pos);
    if (pos >= end) return { positive, num, denom, suffix: '', value: str };
  }
  const value = str.slice(0, pos);
  const suffixStart = pos;
  while (pos < end && SUFFIX_CHARS.includes(str[pos])) pos++;
  if (pos < end && (str[pos] === '-' || str[pos] === '+')) pos++;
  while (pos < end && isDigit(str[pos])) pos++;
  if (pos < end) throw new Error(QUANTITY_FORMAT_ERROR);
  return { positive, num, denom, suffix: str.slice(suffixStart), value };
}

/**
 * Quantities already parsed, by spelling: objects repeat a few ("100m", "128Mi") and each write
 * parses each several times (decode, defaults, validation). Quantity values are never mutated.
 */
const parsed = boundedMemo(4096, parseUncached);

/** Parses like resource.ParseQuantity. Throws Error with Kubernetes' message. */
export function parseQuantity(str: string): Quantity {
  return parsed(str);
}

function parseUncached(str: string): Quantity {
  if (str.length === 0) throw new Error(QUANTITY_FORMAT_ERROR);
  if (str === '0') return { mant: 0n, exp: 0, format: 'DecimalSI', cached: '0' };
  const { positive, num, denom, suffix, value } = split(str);
  const suf = interpretSuffix(suffix);
  if (!suf) throw new Error(QUANTITY_SUFFIX_ERROR);
  if (value !== '' && !/^[+-]?\d*\.?\d*$/.test(value)) throw new Error(QUANTITY_NUMERIC_ERROR);
  let digits = BigInt(num + denom);
  let exp = -denom.length;
  if (suf.base === 10) exp += suf.exp;
  else digits <<= BigInt(suf.exp);
  let mant = positive ? digits : -digits;
  let format = suf.format;

  // Inputs already in canonical form keep their spelling (Kubernetes caches the string).
  let cached: string | undefined;
  if (suf.base === 10) {
    const scale = suf.exp - denom.length;
    const shifted = num + denom;
    if (
      18 - shifted.length >= 0 &&
      scale >= -9 &&
      scale % 3 === 0 &&
      !shifted.endsWith('000') &&
      shifted[0] !== '0'
    )
      cached = str;
  } else if (denom.length === 0) {
    const precision = 15 - num.length - Math.trunc((suf.exp * 3) / 10) - 1;
    const v = BigInt(num);
    if (precision >= 0 && v << BigInt(suf.exp) <= MAX_INT64 && suf.exp % 10 === 0 && (v & 7n) !== 0n)
      cached = str;
  }

  // Round away from zero to nano precision: asking for a tiny amount gets the smallest one.
  if (exp < -9 && mant !== 0n) {
    const div = 10n ** BigInt(-9 - exp);
    const neg = mant < 0n;
    const abs = neg ? -mant : mant;
    let q = abs / div;
    if (q * div !== abs) q += 1n;
    mant = neg ? -q : q;
    exp = -9;
    cached = undefined;
  }
  if (format === 'BinarySI') {
    if (cmpAbs(mant, exp, MAX_INT64, 0) > 0 && mant > 0n) {
      mant = MAX_INT64;
      exp = 0;
    }
    // 0 < |v| < 1 in binary form is written as decimal.
    if (mant !== 0n && cmpAbs(mant, exp, 1n, 0) < 0) format = 'DecimalSI';
  }
  return { mant, exp, format, cached };
}

function align(am: bigint, ae: number, bm: bigint, be: number): [bigint, bigint] {
  const e = Math.min(ae, be);
  return [am * 10n ** BigInt(ae - e), bm * 10n ** BigInt(be - e)];
}

function cmpAbs(am: bigint, ae: number, bm: bigint, be: number): number {
  const [a, b] = align(am < 0n ? -am : am, ae, bm < 0n ? -bm : bm, be);
  return a < b ? -1 : a > b ? 1 : 0;
}

/** -1, 0, 1 like Quantity.Cmp. */
export function compareQuantity(a: Quantity, b: Quantity): number {
  const [x, y] = align(a.mant, a.exp, b.mant, b.exp);
  return x < y ? -1 : x > y ? 1 : 0;
}

export const isZeroQuantity = (q: Quantity) => q.mant === 0n;

/** a + b like Quantity.Add: a zero a takes b's format. */
export function addQuantity(a: Quantity, b: Quantity): Quantity {
  const [x, y] = align(a.mant, a.exp, b.mant, b.exp);
  let mant = x + y;
  let exp = Math.min(a.exp, b.exp);
  const format = a.mant === 0n ? b.format : a.format;
  if (mant === 0n) return { mant, exp: 0, format };
  while (mant % 10n === 0n && exp < 0) {
    mant /= 10n;
    exp++;
  }
  return { mant, exp, format };
}

/** a - b like Quantity.Sub. */
export function subQuantity(a: Quantity, b: Quantity): Quantity {
  return addQuantity(a, { mant: -b.mant, exp: b.exp, format: b.format });
}

/** The canonical string (Quantity.String()). */
export function formatQuantity(q: Quantity): string {
  if (q.cached !== undefined) return q.cached;
  if (q.mant === 0n) return '0';
  let format = q.format;
  if (format === 'BinarySI') {
    const small = cmpAbs(q.mant, q.exp, 1024n, 0) < 0;
    if (small || !isInteger(q)) format = 'DecimalSI';
  }
  if (format === 'BinarySI') {
    let v = toInteger(q);
    let e = 0;
    while (e < 6 && v % 1024n === 0n) {
      v /= 1024n;
      e++;
    }
    return v.toString() + BIN_SUFFIX[e];
  }
  let mant = q.mant;
  let exp = q.exp;
  while (mant % 10n === 0n) {
    mant /= 10n;
    exp++;
  }
  const r = ((exp % 3) + 3) % 3;
  if (r) {
    mant *= 10n ** BigInt(r);
    exp -= r;
  }
  const s = mant.toString();
  if (format === 'DecimalExponent') return exp === 0 ? s : `${s}e${exp}`;
  return s + (DEC_SUFFIX[exp] ?? '');
}

function isInteger(q: Quantity): boolean {
  if (q.exp >= 0) return true;
  return q.mant % 10n ** BigInt(-q.exp) === 0n;
}

function toInteger(q: Quantity): bigint {
  return q.exp >= 0 ? q.mant * 10n ** BigInt(q.exp) : q.mant / 10n ** BigInt(-q.exp);
}

/** Rounds away from zero to 10^scale, like Quantity.RoundUp (ResourceList defaulting uses -3). */
export function roundUpQuantity(q: Quantity, scale: number): Quantity {
  if (q.exp >= scale) return q;
  const div = 10n ** BigInt(scale - q.exp);
  const neg = q.mant < 0n;
  const abs = neg ? -q.mant : q.mant;
  let v = abs / div;
  if (v * div !== abs) v += 1n;
  return { mant: neg ? -v : v, exp: scale, format: q.format };
}

/** Milli-units, as Quantity.MilliValue (truncated towards +inf like Kubernetes' ceil). */
export function milliValue(q: Quantity): bigint {
  const e = q.exp + 3;
  if (e >= 0) return q.mant * 10n ** BigInt(e);
  const div = 10n ** BigInt(-e);
  const r = q.mant / div;
  return r * div === q.mant || q.mant < 0n ? r : r + 1n;
}

/** Parses a JSON value as Quantity.UnmarshalJSON does (strings and bare numbers). */
export function quantityFromJSON(v: unknown): Quantity {
  if (typeof v === 'string') return parseQuantity(v.trim());
  if (typeof v === 'number' && Number.isFinite(v)) return parseQuantity(String(v));
  throw new Error(QUANTITY_FORMAT_ERROR);
}
