// Small numeric helpers shared by the benchmark driver and its workers.

/** A growable list of samples (milliseconds), cheap to append and to send to the parent. */
export class Samples {
  private buf: Float64Array;
  length = 0;

  constructor(capacity = 1024) {
    this.buf = new Float64Array(capacity);
  }

  push(v: number): void {
    if (this.length === this.buf.length) {
      const bigger = new Float64Array(this.buf.length * 2);
      bigger.set(this.buf);
      this.buf = bigger;
    }
    this.buf[this.length++] = v;
  }

  /** The samples as a fresh array (what goes over IPC). */
  toArray(): Float64Array {
    return this.buf.slice(0, this.length);
  }
}

/** Sorted copy of all the given sample arrays. */
export function merged(parts: ArrayLike<number>[]): Float64Array {
  let n = 0;
  for (const p of parts) n += p.length;
  const out = new Float64Array(n);
  let o = 0;
  for (const p of parts) {
    out.set(p as Float64Array, o);
    o += p.length;
  }
  return out.sort();
}

/** Nearest-rank quantile of an ascending array; NaN when empty. */
export function quantile(sorted: ArrayLike<number>, q: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1));
  return sorted[i];
}

export function median(xs: number[]): number {
  if (!xs.length) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[s.length >> 1] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}

export interface LatencySummary {
  count: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

export function summarize(sorted: ArrayLike<number>): LatencySummary {
  let sum = 0;
  for (let i = 0; i < sorted.length; i++) sum += sorted[i];
  return {
    count: sorted.length,
    p50: quantile(sorted, 0.5),
    p90: quantile(sorted, 0.9),
    p99: quantile(sorted, 0.99),
    max: sorted.length ? sorted[sorted.length - 1] : NaN,
    mean: sorted.length ? sum / sorted.length : NaN,
  };
}

/** 1234567 -> "1,234,567"; small values keep a few significant digits. */
export function num(n: number | undefined, digits = 2): string {
  if (n === undefined || !Number.isFinite(n)) return '–';
  if (Math.abs(n) >= 100) return Math.round(n).toLocaleString('en-US');
  if (digits === 0 || Number.isInteger(n)) return n.toFixed(0);
  if (Math.abs(n) >= 10) return n.toFixed(1);
  return n.toFixed(digits);
}

export function ms(n: number | undefined): string {
  return n === undefined || !Number.isFinite(n) ? '–' : `${num(n)} ms`;
}

export function mb(bytes: number | undefined): string {
  return bytes === undefined || !Number.isFinite(bytes) ? '–' : `${(bytes / 1048576).toFixed(1)} MiB`;
}

export function kib(bytes: number | undefined): string {
  return bytes === undefined || !Number.isFinite(bytes) ? '–' : `${(bytes / 1024).toFixed(2)} KiB`;
}

export function pct(ratio: number | undefined): string {
  return ratio === undefined || !Number.isFinite(ratio) ? '–' : `${(ratio * 100).toFixed(0)}%`;
}

export const sleep = (msec: number) => new Promise<void>((r) => setTimeout(r, msec));

/** Wall clock in ms with sub-millisecond resolution, comparable across processes on one machine. */
export function wallNow(): number {
  return performance.timeOrigin + performance.now();
}
