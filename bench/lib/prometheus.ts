// Reading Prometheus text exposition: one sample's value, and a histogram's
// buckets summed over the label sets a filter keeps — enough to take a
// quantile of the requests between two scrapes, as ClusterLoader2 does with
// apiserver_request_duration_seconds.

/** Cumulative counts by upper bound ("le", +Inf included), summed over the kept series. */
export type Buckets = Map<number, number>;

function labelsOf(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const m of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) out[m[1]] = m[2];
  return out;
}

/** The value of an unlabelled sample, NaN when absent. */
export function metricValue(exposition: string, name: string): number {
  const m = new RegExp(`^${name} (\\S+)$`, 'm').exec(exposition);
  return m ? Number(m[1]) : NaN;
}

export function parseHistogram(
  exposition: string,
  name: string,
  keep: (labels: Record<string, string>) => boolean,
): Buckets {
  const out: Buckets = new Map();
  const prefix = `${name}_bucket{`;
  for (const line of exposition.split('\n')) {
    if (!line.startsWith(prefix)) continue;
    const close = line.lastIndexOf('}');
    const labels = labelsOf(line.slice(prefix.length, close));
    if (!keep(labels)) continue;
    const le = labels.le === '+Inf' ? Infinity : Number(labels.le);
    out.set(le, (out.get(le) ?? 0) + Number(line.slice(close + 1).trim()));
  }
  return out;
}

/**
 * The q-quantile of the observations made between two scrapes, as the upper bound
 * of the bucket it falls in (seconds); NaN without observations.
 */
export function histogramQuantile(after: Buckets, before: Buckets, q: number): number {
  const bounds = [...after.keys()].sort((a, b) => a - b);
  const counts = bounds.map((b) => (after.get(b) ?? 0) - (before.get(b) ?? 0));
  const total = counts[counts.length - 1] ?? 0;
  if (!(total > 0)) return NaN;
  const i = counts.findIndex((c) => c >= q * total);
  return bounds[i];
}
