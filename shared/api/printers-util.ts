// Shared pieces of the server-side printers: the column and row shapes of a
// meta.k8s.io Table, Kubernetes' human durations ("3m2s", "2d3h"), and the
// string forms kubectl users know for labels, selectors and container lists.
// Everything here runs once per row of a list, so it stays allocation-light.

/** One cell of a Table row: Kubernetes sends strings, int64s, booleans or null. */
export type Cell = string | number | boolean | null;

/** metav1.TableColumnDefinition; every field is always present on the wire. */
export interface TableColumnDefinition {
  name: string;
  /** string, integer, number, boolean or date (OpenAPI-style type). */
  type: string;
  /** name for the object name column, otherwise usually empty. */
  format: string;
  description: string;
  /** 0 shows by default; 1 only with `-o wide`. */
  priority: number;
}

/** metav1.TableRowCondition (pods that finished carry type Completed). */
export interface TableRowCondition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
}

/**
 * How one kind prints. The server always renders the wide cells; kubectl hides
 * priority-1 columns itself unless asked for `-o wide`.
 */
export interface Printer {
  readonly columns: readonly TableColumnDefinition[];
  /** The cells of one object's row, in column order. `now` is epoch milliseconds. */
  cells(obj: any, now: number): Cell[];
  /** Row conditions, when the kind has any. */
  conditions?(obj: any): TableRowCondition[] | undefined;
  /** Reorders the items of a list before printing (flow schemas print in matching order). */
  order?(items: readonly any[]): readonly any[];
  /** Column definitions even when headers are suppressed (the aggregator's APIService table does this). */
  alwaysHeaders?: boolean;
}

export interface ColumnOptions {
  format?: string;
  priority?: number;
}

export function column(
  name: string,
  type: string,
  description: string,
  opts?: ColumnOptions,
): TableColumnDefinition {
  return { name, type, format: opts?.format ?? '', description, priority: opts?.priority ?? 0 };
}

export const nameColumn = (description = 'Name of the object.') =>
  column('Name', 'string', description, { format: 'name' });
export const ageColumn = () => column('Age', 'string', 'Time since the object was created.');
export const wide = (name: string, type: string, description: string) =>
  column(name, type, description, { priority: 1 });

// ---------------------------------------------------------------------------
// Time

const ZERO_TIME = -62135596800000; // 0001-01-01T00:00:00Z, Go's zero time.Time

/** Epoch ms of an RFC 3339 timestamp, or undefined for absent, zero or unparseable ones. */
export function parseTime(ts: unknown): number | undefined {
  if (typeof ts !== 'string' || ts === '') return undefined;
  const ms = Date.parse(ts);
  if (Number.isNaN(ms) || ms <= ZERO_TIME) return undefined;
  return ms;
}

/**
 * apimachinery's duration.HumanDuration: about two significant figures,
 * "<invalid>" for more than a second in the future (clock skew is tolerated).
 */
export function humanDuration(ms: number): string {
  const seconds = Math.trunc(ms / 1000);
  if (seconds < -1) return '<invalid>';
  if (seconds < 0) return '0s';
  if (seconds < 120) return `${seconds}s`;
  const minutes = Math.trunc(ms / 60000);
  if (minutes < 10) {
    const s = seconds % 60;
    return s === 0 ? `${minutes}m` : `${minutes}m${s}s`;
  }
  if (minutes < 180) return `${minutes}m`;
  const hours = Math.trunc(ms / 3600000);
  if (hours < 8) {
    const m = minutes % 60;
    return m === 0 ? `${hours}h` : `${hours}h${m}m`;
  }
  if (hours < 48) return `${hours}h`;
  const days = Math.trunc(hours / 24);
  if (hours < 24 * 8) {
    const h = hours % 24;
    return h === 0 ? `${days}d` : `${days}d${h}h`;
  }
  if (hours < 24 * 365 * 2) return `${days}d`;
  const years = Math.trunc(days / 365);
  if (hours < 24 * 365 * 8) {
    const dy = days % 365;
    return dy === 0 ? `${years}y` : `${years}y${dy}d`;
  }
  return `${years}y`;
}

/** translateTimestampSince: the age of a timestamp, "<unknown>" when unset. */
export function since(ts: unknown, now: number): string {
  const t = parseTime(ts);
  return t === undefined ? '<unknown>' : humanDuration(now - t);
}

/** The Age cell of an object. */
export const age = (obj: any, now: number): string => since(obj?.metadata?.creationTimestamp, now);

/** Go's time.Format(time.RFC3339) in UTC, as the default table prints Created At. */
export function rfc3339(ts: unknown): string {
  if (typeof ts === 'string' && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/.test(ts)) return ts;
  const t = parseTime(ts);
  if (t === undefined) return '0001-01-01T00:00:00Z';
  return new Date(t).toISOString().slice(0, 19) + 'Z';
}

// ---------------------------------------------------------------------------
// Labels and selectors

/** labels.FormatLabels: sorted `k=v` pairs joined by commas, "<none>" when empty. */
export function formatLabels(labels: Record<string, string> | null | undefined): string {
  const s = labelsString(labels);
  return s === '' ? '<none>' : s;
}

/** labels.Set.String(): the `k=v` pairs sorted as strings. */
export function labelsString(labels: Record<string, string> | null | undefined): string {
  if (!labels) return '';
  const keys = Object.keys(labels);
  if (keys.length === 0) return '';
  const pairs = keys.map((k) => `${k}=${labels[k]}`);
  pairs.sort(byCodePoint);
  return pairs.join(',');
}

const byCodePoint = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

interface SelectorRequirement {
  key: string;
  text: string;
}

/**
 * metav1.LabelSelectorAsSelector(sel).String(): requirements sorted by key,
 * `k=v`, `k in (a,b)`, `k notin (a)`, `k`, `!k`. A nil selector selects
 * nothing and an empty one everything; both print as "". Returns undefined
 * for a selector Kubernetes could not convert.
 */
export function labelSelectorString(sel: any): string | undefined {
  if (!sel) return '';
  const reqs: SelectorRequirement[] = [];
  const ml = sel.matchLabels as Record<string, string> | undefined;
  if (ml) for (const k of Object.keys(ml)) reqs.push({ key: k, text: `${k}=${ml[k]}` });
  for (const e of (sel.matchExpressions as any[] | undefined) ?? []) {
    const values: string[] = Array.isArray(e?.values) ? [...e.values] : [];
    switch (e?.operator) {
      case 'In':
      case 'NotIn':
        if (values.length === 0) return undefined;
        values.sort(byCodePoint);
        reqs.push({
          key: e.key,
          text: `${e.key} ${e.operator === 'In' ? 'in' : 'notin'} (${values.join(',')})`,
        });
        break;
      case 'Exists':
      case 'DoesNotExist':
        if (values.length !== 0) return undefined;
        reqs.push({ key: e.key, text: e.operator === 'Exists' ? e.key : `!${e.key}` });
        break;
      default:
        return undefined;
    }
  }
  // Array.prototype.sort is stable, like the order Kubernetes keeps for equal keys.
  reqs.sort((a, b) => byCodePoint(a.key, b.key));
  return reqs.map((r) => r.text).join(',');
}

/** metav1.FormatLabelSelector: "<none>" for empty, "<error>" for unconvertible. */
export function formatLabelSelector(sel: any): string {
  const s = labelSelectorString(sel);
  if (s === undefined) return '<error>';
  return s === '' ? '<none>' : s;
}

// ---------------------------------------------------------------------------
// Small formatting helpers shared by several kinds

/** Container names and images, each joined by commas (the wide Containers/Images cells). */
export function containerCells(containers: any[] | null | undefined): [string, string] {
  if (!containers || containers.length === 0) return ['', ''];
  let names = '';
  let images = '';
  for (let i = 0; i < containers.length; i++) {
    if (i > 0) {
      names += ',';
      images += ',';
    }
    names += containers[i]?.name ?? '';
    images += containers[i]?.image ?? '';
  }
  return [names, images];
}

/** "a,b,c + 2 more..." or "<unset>" for an empty list. */
export function listWithMore(list: string[], more: boolean, count: number, max: number): string {
  const s = list.join(',');
  if (more) return `${s} + ${count - max} more...`;
  return s === '' ? '<unset>' : s;
}

/** An IntOrString as Go's IntOrString.String() prints it. */
export const intOrString = (v: unknown): string =>
  typeof v === 'number' ? String(Math.trunc(v)) : String(v);

/** A resource.Quantity cell: the stored string, "0" when absent (Go's zero Quantity). */
export const quantity = (v: unknown): string => (v === undefined || v === null || v === '' ? '0' : String(v));

/** An int32/int64 field that JSON omits when zero. */
export const int = (v: unknown): number => (typeof v === 'number' ? Math.trunc(v) : 0);

/** `*bool` printed as "True", "False" or "<unset>". */
export const boolPtr = (v: unknown): string => (v === true ? 'True' : v === false ? 'False' : '<unset>');

/** The status of the first condition of the given type, or undefined. */
export function conditionStatus(conditions: any[] | null | undefined, type: string): string | undefined {
  if (!conditions) return undefined;
  for (const c of conditions) if (c?.type === type) return c.status;
  return undefined;
}

/** Go's net.JoinHostPort: brackets around IPv6 hosts. */
export const joinHostPort = (host: string, port: number | string): string =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
