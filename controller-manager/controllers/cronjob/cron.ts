// Cron schedules as the CronJob controller reads them (robfig/cron's standard
// parser): five fields (minute hour day-of-month month day-of-week) with *, ?,
// ranges, steps, lists and month/day names; @yearly @annually @monthly @weekly
// @daily @midnight @hourly and @every <duration>; an optional CRON_TZ= or TZ=
// prefix naming the time zone. next(t) is the first activation after t.

interface Bounds {
  min: number;
  max: number;
  names?: Record<string, number>;
}

const MONTHS: Record<string, number> = {
  jan: 1,
  feb: 2,
  mar: 3,
  apr: 4,
  may: 5,
  jun: 6,
  jul: 7,
  aug: 8,
  sep: 9,
  oct: 10,
  nov: 11,
  dec: 12,
};
const DAYS: Record<string, number> = { sun: 0, mon: 1, tue: 2, wed: 3, thu: 4, fri: 5, sat: 6 };

const MINUTE: Bounds = { min: 0, max: 59 };
const HOUR: Bounds = { min: 0, max: 23 };
const DOM: Bounds = { min: 1, max: 31 };
const MONTH: Bounds = { min: 1, max: 12, names: MONTHS };
const DOW: Bounds = { min: 0, max: 6, names: DAYS };

const DESCRIPTORS: Record<string, string> = {
  '@yearly': '0 0 1 1 *',
  '@annually': '0 0 1 1 *',
  '@monthly': '0 0 1 * *',
  '@weekly': '0 0 * * 0',
  '@daily': '0 0 * * *',
  '@midnight': '0 0 * * *',
  '@hourly': '0 * * * *',
};

/** A field as a set of allowed values; `star` when written * or ? (day matching uses it). */
interface Field {
  values: Set<number>;
  star: boolean;
}

function parseNumber(s: string, b: Bounds): number {
  const named = b.names?.[s.toLowerCase()];
  if (named !== undefined) return named;
  if (!/^\d+$/.test(s))
    throw new Error(`failed to parse int from ${s}: strconv.Atoi: parsing "${s}": invalid syntax`);
  return Number(s);
}

function parseField(expr: string, b: Bounds): Field {
  const values = new Set<number>();
  let star = false;
  for (const part of expr.split(',')) {
    const [range, stepStr, extra] = part.split('/');
    if (extra !== undefined) throw new Error(`too many slashes: ${part}`);
    let start: number;
    let end: number;
    let partStar = false;
    if (range === '*' || range === '?') {
      start = b.min;
      end = b.max;
      partStar = true;
    } else {
      const lh = range.split('-');
      if (lh.length > 2) throw new Error(`too many hyphens: ${range}`);
      start = parseNumber(lh[0], b);
      end = lh.length === 2 ? parseNumber(lh[1], b) : start;
    }
    let step = 1;
    if (stepStr !== undefined) {
      step = parseNumber(stepStr, { min: 0, max: 0 });
      // "N/step" means N-max/step.
      if (range !== '*' && range !== '?' && !range.includes('-')) end = b.max;
      if (step > 1) partStar = false;
    }
    if (partStar) star = true;
    if (start < b.min) throw new Error(`beginning of range (${start}) below minimum (${b.min}): ${part}`);
    if (end > b.max) throw new Error(`end of range (${end}) above maximum (${b.max}): ${part}`);
    if (start > end) throw new Error(`beginning of range (${start}) beyond end of range (${end}): ${part}`);
    if (step === 0) throw new Error(`step of range should be a positive number: ${part}`);
    for (let v = start; v <= end; v += step) values.add(v);
  }
  return { values, star };
}

// ---- time zones -------------------------------------------------------------

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(tz: string): Intl.DateTimeFormat {
  let f = formatters.get(tz);
  if (!f) {
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: tz,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
    formatters.set(tz, f);
  }
  return f;
}

/** Throws unless tz is a known IANA zone (time.LoadLocation). */
export function checkTimeZone(tz: string): void {
  if (tz === 'UTC' || tz === 'Local') return;
  try {
    formatter(tz);
  } catch {
    throw new Error(`unknown time zone ${tz}`);
  }
}

/** The wall-clock time in tz of an instant, as milliseconds of a UTC date with the same fields. */
function wallOf(ms: number, tz: string): number {
  if (tz === 'UTC') return ms;
  const parts: Record<string, number> = {};
  for (const p of formatter(tz).formatToParts(new Date(ms)))
    if (p.type !== 'literal') parts[p.type] = Number(p.value);
  return (
    Date.UTC(parts.year, parts.month - 1, parts.day, parts.hour, parts.minute, parts.second) + (ms % 1000)
  );
}

/** The instant whose wall clock in tz reads wall (the later offset in a gap). */
function instantOf(wall: number, tz: string): number {
  if (tz === 'UTC') return wall;
  const off1 = wallOf(wall, tz) - wall;
  let t = wall - off1;
  const off2 = wallOf(t, tz) - t;
  if (off2 !== off1) t = wall - off2;
  return t;
}

export function localTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

// ---- schedules ----------------------------------------------------------------

export interface Schedule {
  /** The first activation strictly after t (ms), or undefined within 5 years. */
  next(t: number): number | undefined;
}

class SpecSchedule implements Schedule {
  constructor(
    private readonly minute: Field,
    private readonly hour: Field,
    private readonly dom: Field,
    private readonly month: Field,
    private readonly dow: Field,
    readonly tz: string,
  ) {}

  private dayMatches(d: Date): boolean {
    const domMatch = this.dom.values.has(d.getUTCDate());
    const dowMatch = this.dow.values.has(d.getUTCDay());
    if (this.dom.star || this.dow.star) return domMatch && dowMatch;
    return domMatch || dowMatch;
  }

  next(after: number): number | undefined {
    // Wall-clock arithmetic on a UTC Date holding the zone's fields.
    const d = new Date(wallOf(after, this.tz));
    d.setUTCSeconds(0, 0);
    d.setUTCMinutes(d.getUTCMinutes() + 1);
    const yearLimit = d.getUTCFullYear() + 5;
    wrap: for (;;) {
      if (d.getUTCFullYear() > yearLimit) return undefined;
      while (!this.month.values.has(d.getUTCMonth() + 1)) {
        d.setUTCMonth(d.getUTCMonth() + 1, 1);
        d.setUTCHours(0, 0, 0, 0);
        if (d.getUTCMonth() === 0) continue wrap;
      }
      while (!this.dayMatches(d)) {
        d.setUTCDate(d.getUTCDate() + 1);
        d.setUTCHours(0, 0, 0, 0);
        if (d.getUTCDate() === 1) continue wrap;
      }
      while (!this.hour.values.has(d.getUTCHours())) {
        d.setUTCHours(d.getUTCHours() + 1, 0, 0, 0);
        if (d.getUTCHours() === 0) continue wrap;
      }
      while (!this.minute.values.has(d.getUTCMinutes())) {
        d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
        if (d.getUTCMinutes() === 0) continue wrap;
      }
      const t = instantOf(d.getTime(), this.tz);
      // A wall time that maps to an instant not after `after` (DST fold): keep looking.
      if (t <= after) {
        d.setUTCMinutes(d.getUTCMinutes() + 1, 0, 0);
        continue;
      }
      return t;
    }
  }
}

class EverySchedule implements Schedule {
  constructor(private readonly delayMs: number) {}
  next(t: number): number {
    // ConstantDelaySchedule: rounded to the second.
    return Math.floor((t + this.delayMs) / 1000) * 1000;
  }
}

function parseGoDuration(s: string): number {
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/g;
  const units: Record<string, number> = {
    ns: 1e-6,
    us: 1e-3,
    µs: 1e-3,
    ms: 1,
    s: 1000,
    m: 60_000,
    h: 3_600_000,
  };
  let total = 0;
  let consumed = 0;
  for (let m = re.exec(s); m; m = re.exec(s)) {
    total += Number(m[1]) * units[m[2]];
    consumed += m[0].length;
  }
  if (!s || consumed !== s.length) throw new Error(`time: invalid duration "${s}"`);
  return total;
}

/**
 * cron.ParseStandard. defaultTz applies when the spec names none (the
 * CronJob's timeZone, else the controller's local zone).
 */
export function parseSchedule(spec: string, defaultTz = localTimeZone()): Schedule {
  let s = spec.trim();
  if (!s) throw new Error('empty spec string');
  let tz = defaultTz;
  const m = /^(CRON_TZ|TZ)=(\S+)\s+/.exec(s);
  if (m) {
    tz = m[2];
    try {
      checkTimeZone(tz);
    } catch {
      throw new Error(`provided bad location ${tz}: unknown time zone ${tz}`);
    }
    s = s.slice(m[0].length).trim();
  }
  if (s.startsWith('@')) {
    if (s.startsWith('@every ')) {
      const ms = parseGoDuration(s.slice(7).trim());
      if (ms < 1000) return new EverySchedule(1000);
      return new EverySchedule(ms);
    }
    const expanded = DESCRIPTORS[s];
    if (!expanded) throw new Error(`unrecognized descriptor: ${s}`);
    s = expanded;
  }
  const fields = s.split(/\s+/);
  if (fields.length !== 5) throw new Error(`expected exactly 5 fields, found ${fields.length}: ${s}`);
  return new SpecSchedule(
    parseField(fields[0], MINUTE),
    parseField(fields[1], HOUR),
    parseField(fields[2], DOM),
    parseField(fields[3], MONTH),
    parseField(fields[4], DOW),
    tz === 'Local' ? localTimeZone() : tz,
  );
}

/** The wall clock of an instant in tz, formatted as RFC 3339 with the zone's offset. */
export function formatInZone(ms: number, tz: string): string {
  const wall = wallOf(ms, tz === 'Local' ? localTimeZone() : tz);
  const off = Math.round((wall - ms) / 60_000);
  const base = new Date(wall).toISOString().replace(/\.\d{3}Z$/, '');
  if (off === 0) return `${base}Z`;
  const sign = off < 0 ? '-' : '+';
  const a = Math.abs(off);
  return `${base}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}
