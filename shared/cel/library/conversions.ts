// cel-go's conversions and comparisons the engine lacks, and the texts cel-go gives
// values (also what string.format's %s writes): string(timestamp), string(duration),
// int(uint), int(timestamp), the identity conversions of timestamps and durations,
// and the ordering of bytes.
import type { Environment } from '@marcbachmann/cel-js';
import type { Duration, UnsignedInt } from '@marcbachmann/cel-js/evaluator';

const INT64_MAX = (1n << 63n) - 1n;

export function registerConversions(env: Environment): void {
  const TS = 'google.protobuf.Timestamp';
  const DUR = 'google.protobuf.Duration';
  env.registerFunction(`string(${TS}): string`, timestampText);
  env.registerFunction(`string(${DUR}): string`, durationText);
  env.registerFunction(`timestamp(${TS}): ${TS}`, (t: Date) => t);
  env.registerFunction(`duration(${DUR}): ${DUR}`, (d: Duration) => d);
  // Seconds since the epoch, rounded down as Go's Time.Unix.
  env.registerFunction(`int(${TS}): int`, (t: Date) => BigInt(Math.floor(t.getTime() / 1000)));
  env.registerFunction('int(uint): int', (u: UnsignedInt) => {
    if (u.value > INT64_MAX) throw new Error('integer overflow');
    return u.value;
  });
  // Bytes order as Go's bytes.Compare: byte by byte, a prefix first.
  const cmp = (a: Uint8Array, b: Uint8Array) => Buffer.compare(a, b);
  env.registerOperator('bytes < bytes', (a, b) => cmp(a, b) < 0);
  env.registerOperator('bytes <= bytes', (a, b) => cmp(a, b) <= 0);
  env.registerOperator('bytes > bytes', (a, b) => cmp(a, b) > 0);
  env.registerOperator('bytes >= bytes', (a, b) => cmp(a, b) >= 0);
}

/** Go's fmt "%g": the shortest digits that read back as x, as %e below 1e-4 and from 1e6. */
export function goShortest(x: number): string {
  if (Number.isNaN(x)) return 'NaN';
  if (!Number.isFinite(x)) return x > 0 ? '+Inf' : '-Inf';
  return shortestLayout(x, false);
}

/** x ≠ 0 finite in its shortest digits (JavaScript's are Go's too), laid out as %g or always as %f. */
function shortestLayout(x: number, fixed: boolean): string {
  if (x === 0) return Object.is(x, -0) ? '-0' : '0';
  const [m, e] = Math.abs(x).toExponential().split('e');
  const digits = m.replace('.', '');
  const exp = Number(e);
  const sign = x < 0 ? '-' : '';
  if (!fixed && (exp < -4 || exp >= 6)) {
    const abs = Math.abs(exp).toString().padStart(2, '0');
    return `${sign}${digits[0]}${digits.length > 1 ? '.' + digits.slice(1) : ''}e${exp < 0 ? '-' : '+'}${abs}`;
  }
  if (exp < 0) return `${sign}0.${'0'.repeat(-exp - 1)}${digits}`;
  if (digits.length <= exp + 1) return sign + digits + '0'.repeat(exp + 1 - digits.length);
  return `${sign}${digits.slice(0, exp + 1)}.${digits.slice(exp + 1)}`;
}

/** time.RFC3339Nano in UTC: fractional seconds without trailing zeros. */
export function timestampText(t: Date): string {
  return t.toISOString().replace(/\.?0*Z$/, 'Z');
}

/** cel-go's string(duration): strconv.FormatFloat(seconds, 'f', -1) and an "s". */
export function durationText(d: Duration): string {
  return `${shortestLayout(Number(d.seconds) + d.nanos / 1e9, true)}s`;
}
