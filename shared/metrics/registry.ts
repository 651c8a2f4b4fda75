// Prometheus metrics for every executable: counters, gauges and histograms
// with labels, exposed in the text format on /metrics, with Kubernetes'
// stability and deprecation rules (SPEC.md Versioning, facts 4):
// deprecated metrics say "(Deprecated from x.y)"; those deprecated three minor
// releases ago are hidden unless --show-hidden-metrics-for-version names the
// previous minor release; --disabled-metrics outranks everything.
import { compareKeys } from '../codec/protobuf-wire';

export type Stability = 'ALPHA' | 'BETA' | 'STABLE';

export interface MetricOptions {
  name: string;
  help: string;
  labels?: string[];
  stability?: Stability;
  /** "1.33": the release the metric was deprecated in. */
  deprecatedVersion?: string;
}

type Labels = Record<string, string>;

const escapeLabel = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n').replace(/"/g, '\\"');
const escapeHelp = (v: string) => v.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');

function formatNumber(n: number): string {
  if (n === Infinity) return '+Inf';
  if (n === -Infinity) return '-Inf';
  if (Number.isNaN(n)) return 'NaN';
  return String(n);
}

export abstract class Metric {
  readonly labelNames: string[];
  constructor(readonly opts: MetricOptions) {
    this.labelNames = opts.labels ?? [];
  }
  abstract readonly type: 'counter' | 'gauge' | 'histogram';
  protected key(labels: Labels = {}): string {
    return Metric.keyOf(this.labelNames.map((l) => labels[l] ?? ''));
  }
  /** The series key of label values given in labelNames' order (for callers on a hot path). */
  static keyOf(values: string[]): string {
    return values.join('\u0000');
  }
  /** Sample timestamps (ms since the epoch) by series key: values read at a known time, as kubelet's
   * resource metrics carry; most series have none and are stamped by the scraper on receipt. */
  private times?: Map<string, number>;
  protected stamp(k: string, timeMs: number | undefined): void {
    if (timeMs !== undefined) (this.times ??= new Map()).set(k, Math.round(timeMs));
  }
  protected unstamp(k?: string): void {
    if (k === undefined) this.times = undefined;
    else this.times?.delete(k);
  }
  /** One sample line: `name{labels} value [timestamp]`. */
  protected line(k: string, v: number): string {
    const t = this.times?.get(k);
    const line = `${this.opts.name}${this.labelText(k)} ${formatNumber(v)}`;
    return t === undefined ? line : `${line} ${t}`;
  }
  protected labelText(key: string, extra?: [string, string]): string {
    const values = key === '' && this.labelNames.length === 0 ? [] : key.split('\u0000');
    const pairs = this.labelNames.map((n, i) => `${n}="${escapeLabel(values[i] ?? '')}"`);
    if (extra) pairs.push(`${extra[0]}="${escapeLabel(extra[1])}"`);
    return pairs.length ? `{${pairs.join(',')}}` : '';
  }
  abstract samples(): string[];
  abstract reset(): void;
}

export class Counter extends Metric {
  readonly type = 'counter';
  private readonly values = new Map<string, number>();
  /** timeMs: when the value was read, written as the sample's timestamp. */
  inc(labels?: Labels, by = 1, timeMs?: number): void {
    const k = this.key(labels);
    this.incKey(k, by);
    this.stamp(k, timeMs);
  }
  /** inc() of the series Metric.keyOf names. */
  incKey(k: string, by = 1): void {
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  get(labels?: Labels): number {
    return this.values.get(this.key(labels)) ?? 0;
  }
  samples(): string[] {
    return [...this.values].map(([k, v]) => this.line(k, v));
  }
  reset(): void {
    this.values.clear();
    this.unstamp();
  }
}

export class Gauge extends Metric {
  readonly type = 'gauge';
  private readonly values = new Map<string, number>();
  /** timeMs: when the value was read, written as the sample's timestamp. */
  set(labels: Labels | undefined, v: number, timeMs?: number): void {
    const k = this.key(labels);
    this.values.set(k, v);
    this.stamp(k, timeMs);
  }
  inc(labels?: Labels, by = 1): void {
    const k = this.key(labels);
    this.values.set(k, (this.values.get(k) ?? 0) + by);
  }
  dec(labels?: Labels, by = 1): void {
    this.inc(labels, -by);
  }
  get(labels?: Labels): number {
    return this.values.get(this.key(labels)) ?? 0;
  }
  /** Drops one series (what it measured is gone). */
  delete(labels?: Labels): void {
    const k = this.key(labels);
    this.values.delete(k);
    this.unstamp(k);
  }
  samples(): string[] {
    return [...this.values].map(([k, v]) => this.line(k, v));
  }
  reset(): void {
    this.values.clear();
    this.unstamp();
  }
}

export const DEFAULT_BUCKETS = [
  0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60,
];

export class Histogram extends Metric {
  readonly type = 'histogram';
  private readonly series = new Map<string, { counts: number[]; sum: number; count: number }>();
  constructor(
    opts: MetricOptions,
    readonly buckets: number[] = DEFAULT_BUCKETS,
  ) {
    super(opts);
  }
  observe(labels: Labels | undefined, v: number): void {
    this.observeKey(this.key(labels), v);
  }
  /** observe() of the series Metric.keyOf names. */
  observeKey(k: string, v: number): void {
    let s = this.series.get(k);
    if (!s) this.series.set(k, (s = { counts: new Array(this.buckets.length).fill(0), sum: 0, count: 0 }));
    for (let i = 0; i < this.buckets.length; i++) if (v <= this.buckets[i]) s.counts[i]++;
    s.sum += v;
    s.count++;
  }
  count(labels?: Labels): number {
    return this.series.get(this.key(labels))?.count ?? 0;
  }
  samples(): string[] {
    const out: string[] = [];
    const n = this.opts.name;
    for (const [k, s] of this.series) {
      this.buckets.forEach((b, i) =>
        out.push(`${n}_bucket${this.labelText(k, ['le', formatNumber(b)])} ${s.counts[i]}`),
      );
      out.push(`${n}_bucket${this.labelText(k, ['le', '+Inf'])} ${s.count}`);
      out.push(`${n}_sum${this.labelText(k)} ${formatNumber(s.sum)}`);
      out.push(`${n}_count${this.labelText(k)} ${s.count}`);
    }
    return out;
  }
  reset(): void {
    this.series.clear();
  }
}

export interface ExposeOptions {
  /** The component's release, "1.36". */
  currentVersion: string;
  /** --show-hidden-metrics-for-version */
  showHiddenFor?: string;
  /** --disabled-metrics */
  disabled?: string[];
}

const minorOf = (v: string) => Number(/^\d+\.(\d+)/.exec(v)?.[1] ?? NaN);

/** Validates --show-hidden-metrics-for-version: only the previous minor release is meaningful. */
export function checkShowHiddenVersion(value: string | undefined, currentVersion: string): void {
  if (!value) return;
  const m = /^(\d+)\.(\d+)$/.exec(value);
  const [cMajor, cMinor] = currentVersion.split('.').map(Number);
  if (!m || Number(m[1]) !== cMajor || Number(m[2]) !== cMinor - 1) {
    throw new Error(
      `--show-hidden-metrics-for-version must be omitted or have the value '${cMajor}.${cMinor - 1}'. Only the previous minor version is allowed`,
    );
  }
}

export class MetricsRegistry {
  private readonly metrics = new Map<string, Metric>();
  private readonly collectors: (() => void)[] = [];
  private opts: ExposeOptions;

  constructor(opts: ExposeOptions) {
    this.opts = opts;
  }

  configure(opts: Partial<ExposeOptions>): void {
    this.opts = { ...this.opts, ...opts };
  }

  private add<T extends Metric>(m: T): T {
    const existing = this.metrics.get(m.opts.name);
    if (existing) return existing as T;
    this.metrics.set(m.opts.name, m);
    return m;
  }

  counter(o: MetricOptions): Counter {
    return this.add(new Counter(o));
  }
  gauge(o: MetricOptions): Gauge {
    return this.add(new Gauge(o));
  }
  histogram(o: MetricOptions, buckets?: number[]): Histogram {
    return this.add(new Histogram(o, buckets));
  }

  /** Hidden: deprecated three minor releases ago (SPEC.md), unless shown explicitly. */
  private visible(m: Metric): boolean {
    if (this.opts.disabled?.includes(m.opts.name)) return false;
    const d = m.opts.deprecatedVersion;
    if (!d) return true;
    const age = minorOf(this.opts.currentVersion) - minorOf(d);
    if (age > 3) return false;
    if (age === 3) return !!this.opts.showHiddenFor;
    return true;
  }

  /** Runs before every exposition, for metrics sampled when scraped. */
  addCollector(fn: () => void): void {
    this.collectors.push(fn);
  }

  /** The Prometheus text format (version 0.0.4). */
  expose(): string {
    for (const c of this.collectors) c();
    const lines: string[] = [];
    // Go's byte order, as client_golang sorts families (and no ICU collation data made resident).
    for (const m of [...this.metrics.values()].sort((a, b) => compareKeys(a.opts.name, b.opts.name))) {
      if (!this.visible(m)) continue;
      const samples = m.samples();
      const stability = m.opts.stability ?? 'ALPHA';
      const deprecated = m.opts.deprecatedVersion ? `(Deprecated from ${m.opts.deprecatedVersion}) ` : '';
      lines.push(`# HELP ${m.opts.name} [${stability}] ${deprecated}${escapeHelp(m.opts.help)}`);
      lines.push(`# TYPE ${m.opts.name} ${m.type}`);
      lines.push(...samples);
    }
    return lines.join('\n') + '\n';
  }
}

export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';
