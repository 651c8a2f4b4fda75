// `<string>.format(<list>)` as Kubernetes evaluates it: cel-go's strings extension at
// the version Kubernetes enables (2), whose formatter prints %f and %e through
// golang.org/x/text's en_US printer. So, unlike the cel-spec's later formatter:
// - %f groups thousands ("1,234.500000") and prints infinities as "∞" / "-∞";
// - %e ignores the precision asked for and writes "2.718280 × 10⁰⁰" (narrow
//   no-break spaces, superscript exponent), NaN and infinities padded to 6;
// - %s of a list or map writes CEL literals: strings quoted as Go's %q,
//   doubles as "%.6f", timestamp("…") and duration("…");
// - %d takes integers only.
// Rounding is to nearest, ties to even, on the double's exact value, as Go's strconv.
import type { Environment } from '@marcbachmann/cel-js';
import type { UnsignedInt } from '@marcbachmann/cel-js/evaluator';
import { goQuote } from '../../codec/go-strconv';
import { durationText, goShortest, timestampText } from './conversions';
import { celTypeName, isCelMap, isDuration, isUnsigned, typeValueName } from './values';

class FormatError extends Error {}

export function registerStringFormat(env: Environment): void {
  env.registerFunction('string.format(list<dyn>): string', (s: string, args: unknown[]) =>
    formatString(s, args),
  );
}

/** cel-go's parseFormatString: "%%" is a percent sign, each other clause takes the next argument. */
function formatString(template: string, args: readonly unknown[]): string {
  let out = '';
  let next = 0;
  for (let i = 0; i < template.length; i++) {
    const c = template[i];
    if (c !== '%') {
      out += c;
      continue;
    }
    if (template[i + 1] === '%') {
      out += '%';
      i++;
      continue;
    }
    if (next >= args.length) throw new FormatError(`index ${next} out of range`);
    if (i + 1 >= template.length) throw new FormatError('unexpected end of string');
    const clause = parseClause(template, i + 1);
    out += clause.format(args[next++]);
    i = clause.end - 1;
  }
  return out;
}

interface Clause {
  /** Index just past the clause's verb. */
  end: number;
  format(v: unknown): string;
}

function parseClause(t: string, at: number): Clause {
  let i = at;
  let precision: number | undefined;
  if (t[i] === '.') {
    i++;
    const from = i;
    while (i < t.length && t[i] >= '0' && t[i] <= '9') i++;
    if (i >= t.length)
      throw clauseError('error while parsing precision: could not find end of precision specifier');
    if (i === from)
      throw clauseError(
        'error while parsing precision: error while converting precision to integer: strconv.Atoi: parsing "": invalid syntax',
      );
    precision = Number(t.slice(from, i));
  }
  const verb = t[i];
  const end = i + 1;
  const during = (f: (v: unknown) => string) => ({
    end,
    format: (v: unknown) => {
      try {
        return f(v);
      } catch (e) {
        if (e instanceof FormatError) throw new FormatError(`error during formatting: ${e.message}`);
        throw e;
      }
    },
  });
  switch (verb) {
    case 's':
      return during(stringClause);
    case 'd':
      return during(decimalClause);
    case 'f':
      return during((v) => fixedClause(v, precision ?? 6));
    case 'e':
      return during(scientificClause);
    case 'b':
      return during(binaryClause);
    case 'o':
      return during(octalClause);
    case 'x':
    case 'X':
      return during((v) => hexClause(v, verb === 'X'));
    default:
      throw clauseError(`unrecognized formatting clause "${verb}"`);
  }
}

const clauseError = (msg: string) => new FormatError(`could not parse formatting clause: ${msg}`);

// --- the clauses --------------------------------------------------------------

const STRING_CLAUSE_TYPES =
  'strings, bools, bytes, ints, doubles, maps, lists, types, durations, and timestamps';

/** cel-go's FormatString: a value's string conversion; lists and maps as CEL literals. */
function stringClause(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(literal).join(', ')}]`;
  if (typeof v === 'bigint') return v.toString();
  if (isUnsigned(v)) return v.value.toString();
  if (typeof v === 'number') return goShortest(v);
  if (typeof v === 'boolean' || typeof v === 'string') return String(v);
  if (v === null) return 'null';
  if (v instanceof Uint8Array) return Buffer.from(v).toString('utf8');
  if (v instanceof Date) return timestampText(v);
  if (isDuration(v)) return durationText(v);
  const type = typeValueName(v);
  if (type !== undefined) return type;
  if (isCelMap(v)) return mapLiteral(v);
  throw new FormatError(
    `string clause can only be used on ${STRING_CLAUSE_TYPES}, was given ${celTypeName(v)}`,
  );
}

/** A list element or map value: formatted by its type, then quoted as a CEL literal. */
function literal(v: unknown): string {
  if (typeof v === 'string') return goQuote(v);
  if (v instanceof Uint8Array) return `b${goQuote(v)}`;
  if (typeof v === 'number')
    return Number.isFinite(v) ? fixedDigits(v, 6) : `"${Number.isNaN(v) ? 'NaN' : v > 0 ? '+Inf' : '-Inf'}"`;
  if (v instanceof Date) return `timestamp("${timestampText(v)}")`;
  if (isDuration(v)) return `duration("${durationText(v)}")`;
  return stringClause(v);
}

function mapLiteral(m: Map<unknown, unknown> | Record<string, unknown>): string {
  const entries = m instanceof Map ? [...m] : Object.entries(m);
  const pairs = entries.map(([k, v]) => {
    let key: string;
    if (typeof k === 'string') key = goQuote(k);
    else if (typeof k === 'boolean' || typeof k === 'bigint') key = String(k);
    else if (isUnsigned(k)) key = k.value.toString();
    else throw new FormatError(`no formatting function for map key of type ${celTypeName(k)}`);
    return [key, literal(v)] as const;
  });
  // Go sorts the written keys as byte strings; Buffer.compare orders UTF-8 the same way.
  pairs.sort((a, b) => Buffer.compare(Buffer.from(a[0]), Buffer.from(b[0])));
  return `{${pairs.map(([k, v]) => `${k}:${v}`).join(', ')}}`;
}

function decimalClause(v: unknown): string {
  if (typeof v === 'bigint') return v.toString();
  if (isUnsigned(v)) return v.value.toString();
  throw new FormatError(`decimal clause can only be used on integers, was given ${celTypeName(v)}`);
}

/** A double, or one of the strings "NaN", "Infinity", "-Infinity" (which cel-go converts). */
function doubleArg(v: unknown, clause: string): number {
  if (typeof v === 'number') return v;
  if (v === 'NaN' || v === 'Infinity' || v === '-Infinity') return Number(v);
  throw new FormatError(`${clause} clause can only be used on doubles, was given ${celTypeName(v)}`);
}

function fixedClause(v: unknown, precision: number): string {
  const x = doubleArg(v, 'fixed-point');
  if (!Number.isFinite(x)) return nonFinite(x);
  const text = fixedDigits(x, precision);
  const neg = text.startsWith('-');
  const body = neg ? text.slice(1) : text;
  const dot = body.indexOf('.');
  const int = dot < 0 ? body : body.slice(0, dot);
  return (neg ? '-' : '') + int.replace(/\B(?=(\d{3})+$)/g, ',') + (dot < 0 ? '' : body.slice(dot));
}

const SUPERSCRIPT = '⁰¹²³⁴⁵⁶⁷⁸⁹';

/** x/text's "%6e": six decimals always, "× 10" and a superscript exponent of two digits or more. */
function scientificClause(v: unknown): string {
  const x = doubleArg(v, 'scientific');
  if (!Number.isFinite(x)) return nonFinite(x).padStart(6);
  const { digits, exp } = significant(Math.abs(x), 7);
  const e = Math.abs(exp).toString().padStart(2, '0');
  const sup = [...e].map((d) => SUPERSCRIPT[Number(d)]).join('');
  return `${x < 0 ? '-' : ''}${digits[0]}.${digits.slice(1)}\u202f×\u202f10${exp < 0 ? '⁻' : ''}${sup}`;
}

const nonFinite = (x: number) => (Number.isNaN(x) ? 'NaN' : x > 0 ? '∞' : '-∞');

function binaryClause(v: unknown): string {
  if (typeof v === 'boolean') return v ? '1' : '0';
  if (typeof v === 'bigint' || isUnsigned(v)) return radix(v, 2);
  throw new FormatError(`only integers and bools can be formatted as binary, was given ${celTypeName(v)}`);
}

function octalClause(v: unknown): string {
  if (typeof v === 'bigint' || isUnsigned(v)) return radix(v, 8);
  throw new FormatError(`octal clause can only be used on integers, was given ${celTypeName(v)}`);
}

function hexClause(v: unknown, upper: boolean): string {
  let s: string;
  if (typeof v === 'string') s = Buffer.from(v, 'utf8').toString('hex');
  else if (v instanceof Uint8Array) s = Buffer.from(v).toString('hex');
  else if (typeof v === 'bigint' || isUnsigned(v)) s = radix(v, 16);
  else
    throw new FormatError(
      `only integers, byte buffers, and strings can be formatted as hex, was given ${celTypeName(v)}`,
    );
  return upper ? s.toUpperCase() : s;
}

/** Go's %b/%o/%x of an integer: a minus sign, then the magnitude. */
function radix(v: bigint | UnsignedInt, base: number): string {
  const n = typeof v === 'bigint' ? v : v.value;
  return n < 0n ? `-${(-n).toString(base)}` : n.toString(base);
}

// --- numbers and times as Go writes them ----------------------------------------

/** A finite double as mant × 2^exp, mant an integer. */
function binaryParts(x: number): { mant: bigint; exp: number } {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, x);
  const bits = view.getBigUint64(0);
  const e = Number((bits >> 52n) & 0x7ffn);
  const frac = bits & ((1n << 52n) - 1n);
  return e === 0 ? { mant: frac, exp: -1074 } : { mant: frac | (1n << 52n), exp: e - 1075 };
}

/** |x| exactly, as an integer `digits` times 10^scale (scale ≤ 0). */
function exactDecimal(x: number): { int: bigint; scale: number } {
  const { mant, exp } = binaryParts(Math.abs(x));
  // m × 2^-k = m × 5^k / 10^k.
  return exp >= 0 ? { int: mant << BigInt(exp), scale: 0 } : { int: mant * 5n ** BigInt(-exp), scale: exp };
}

/** round(int × 10^scale × 10^places), ties to even. */
function roundAt(int: bigint, scale: number, places: number): bigint {
  const shift = scale + places;
  if (shift >= 0) return int * 10n ** BigInt(shift);
  const div = 10n ** BigInt(-shift);
  const q = int / div;
  const twice = (int % div) * 2n;
  return twice > div || (twice === div && q % 2n === 1n) ? q + 1n : q;
}

/** Go's strconv.FormatFloat(x, 'f', places): exact value, ties to even. */
function fixedDigits(x: number, places: number): string {
  const { int, scale } = exactDecimal(x);
  // A double has at most 1074 decimals: past them only zeros follow, written without arithmetic.
  const exact = Math.min(places, -scale);
  const q = roundAt(int, scale, exact)
    .toString()
    .padStart(exact + 1, '0');
  const body = exact > 0 ? `${q.slice(0, q.length - exact)}.${q.slice(q.length - exact)}` : q;
  const zeros = places - exact;
  return (x < 0 ? '-' : '') + body + (zeros > 0 ? (exact > 0 ? '' : '.') + '0'.repeat(zeros) : '');
}

/** The first n significant digits of x > 0 (or zero), ties to even, with its decimal exponent. */
function significant(x: number, n: number): { digits: string; exp: number } {
  if (x === 0) return { digits: '0'.repeat(n), exp: 0 };
  const { int, scale } = exactDecimal(x);
  let exp = int.toString().length - 1 + scale;
  let q = roundAt(int, scale, n - 1 - exp).toString();
  if (q.length > n) {
    // Rounding carried into a new digit (9.9999995 → 10.00000).
    exp++;
    q = q.slice(0, n);
  }
  return { digits: q, exp };
}
