// metav1.Time and metav1.MicroTime as the apiserver parses and writes them:
// Go's time.Parse with layouts RFC3339 / RFC3339Micro (same error messages),
// written back in UTC, seconds (Time) or exactly six fractional digits (MicroTime).

export const RFC3339 = '2006-01-02T15:04:05Z07:00';
export const RFC3339_MICRO = '2006-01-02T15:04:05.000000Z07:00';

export interface ParsedTime {
  /** Milliseconds since the epoch (whole seconds part only). */
  seconds: number;
  nanos: number;
}

/** Go's time package quote(). */
function goQuote(s: string): string {
  let out = '"';
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === '"' || ch === '\\') out += '\\' + ch;
    else if (c < 0x20) out += '\\x' + c.toString(16).padStart(2, '0');
    else out += ch;
  }
  return out + '"';
}

class ParseError extends Error {}

const cannotParse = (layout: string, value: string, rest: string, elem: string) =>
  new ParseError(
    `parsing time ${goQuote(value)} as ${goQuote(layout)}: cannot parse ${goQuote(rest)} as ${goQuote(elem)}`,
  );
const withMessage = (value: string, msg: string) => new ParseError(`parsing time ${goQuote(value)}${msg}`);

const isDigit = (s: string, i: number) => i < s.length && s[i] >= '0' && s[i] <= '9';

function getnum(s: string, fixed: boolean): [number, string] | undefined {
  if (!isDigit(s, 0)) return undefined;
  if (!isDigit(s, 1)) return fixed ? undefined : [s.charCodeAt(0) - 48, s.slice(1)];
  return [(s.charCodeAt(0) - 48) * 10 + (s.charCodeAt(1) - 48), s.slice(2)];
}

function daysIn(month: number, year: number): number {
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  return [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1];
}

/**
 * Parses an RFC 3339 timestamp like Go's time.Parse; `micro` requires exactly six
 * fractional digits (RFC3339Micro). Throws Error with Go's message.
 */
export function parseGoTime(value: string, micro: boolean): ParsedTime {
  const layout = micro ? RFC3339_MICRO : RFC3339;
  let v = value;
  const lit = (p: string) => {
    if (!v.startsWith(p)) throw cannotParse(layout, value, v, p);
    v = v.slice(p.length);
  };
  const num = (elem: string, fixed: boolean, max: number, name: string, min = 0): number => {
    const r = getnum(v, fixed);
    if (!r) throw cannotParse(layout, value, v, elem);
    v = r[1];
    if (r[0] < min || r[0] > max) throw withMessage(value, `: ${name} out of range`);
    return r[0];
  };
  if (v.length < 4 || !isDigit(v, 0) || !/^\d{4}/.test(v)) throw cannotParse(layout, value, v, '2006');
  const year = Number(v.slice(0, 4));
  v = v.slice(4);
  lit('-');
  const month = num('01', true, 12, 'month', 1);
  lit('-');
  // Go checks the day against the month only at the end.
  const day = num('02', true, 99, 'day');
  lit('T');
  const hour = num('15', false, 23, 'hour');
  lit(':');
  const minute = num('04', true, 59, 'minute');
  lit(':');
  const second = num('05', true, 59, 'second');
  let nanos = 0;
  if (micro) {
    if (v.length < 7 || (v[0] !== '.' && v[0] !== ',') || !/^\d{6}$/.test(v.slice(1, 7)))
      throw cannotParse(layout, value, v, '.000000');
    nanos = Number(v.slice(1, 7)) * 1000;
    v = v.slice(7);
  } else if (v.length >= 2 && (v[0] === '.' || v[0] === ',') && isDigit(v, 1)) {
    // Go accepts a fractional second the layout does not mention.
    let n = 2;
    while (n < v.length && isDigit(v, n)) n++;
    nanos = Number((v.slice(1, Math.min(n, 10)) + '000000000').slice(0, 9));
    v = v.slice(n);
  }
  let offset = 0;
  if (v[0] === 'Z') {
    v = v.slice(1);
  } else {
    if (v.length < 6 || v[3] !== ':' || (v[0] !== '+' && v[0] !== '-'))
      throw cannotParse(layout, value, v, 'Z07:00');
    const hh = getnum(v.slice(1, 3), true);
    const mm = getnum(v.slice(4, 6), true);
    if (!hh || !mm) throw cannotParse(layout, value, v, 'Z07:00');
    if (hh[0] > 24) throw withMessage(value, ': time zone offset hour out of range');
    if (mm[0] > 60) throw withMessage(value, ': time zone offset minute out of range');
    offset = (hh[0] * 60 + mm[0]) * 60 * (v[0] === '-' ? -1 : 1);
    v = v.slice(6);
  }
  if (v.length > 0) throw withMessage(value, `: extra text: ${goQuote(v)}`);
  if (day < 1 || day > daysIn(month, year)) throw withMessage(value, ': day out of range');
  const d = new Date(0);
  d.setUTCFullYear(year, month - 1, day);
  d.setUTCHours(hour, minute, second, 0);
  return { seconds: d.getTime() / 1000 - offset, nanos };
}

const pad = (n: number, w = 2) => String(n).padStart(w, '0');

/** Formats in UTC like Go's Format(RFC3339) or Format(RFC3339Micro). */
export function formatGoTime(t: ParsedTime, micro: boolean): string {
  const d = new Date(t.seconds * 1000);
  let s =
    `${pad(d.getUTCFullYear(), 4)}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}` +
    `T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  if (micro) s += '.' + pad(Math.floor(t.nanos / 1000), 6);
  return s + 'Z';
}

let lastSecond = NaN;
let lastText = '';

/** A moment as metav1.Time writes it: RFC 3339, seconds, UTC (each write stamps a few: made once a second). */
export function rfc3339(d: Date): string {
  const second = Math.floor(d.getTime() / 1000);
  if (second !== lastSecond) {
    lastText = d.toISOString().replace(/\.\d{3}Z$/, 'Z');
    lastSecond = second;
  }
  return lastText;
}

/** A moment as metav1.MicroTime writes it: RFC 3339 with microseconds, UTC. */
export function rfc3339Micro(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

/** A zero Go time (0001-01-01T00:00:00Z), which metav1 encodes as null. */
export const isZeroGoTime = (t: ParsedTime) => t.seconds === -62135596800 && t.nanos === 0;
