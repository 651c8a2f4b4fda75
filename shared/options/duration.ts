// Go time.Duration strings, as Kubernetes flags take and print them ("1m0s", "300ms", "1h0m0s").

const UNITS: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  µs: 1e-3,
  μs: 1e-3,
  ms: 1,
  s: 1000,
  m: 60_000,
  h: 3_600_000,
};

/** Parses a Go duration into milliseconds; throws on bad input. "0" is allowed. */
export function parseDuration(text: string): number {
  const s = text.trim();
  if (s === '0' || s === '+0' || s === '-0') return 0;
  const m = /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(s);
  if (!m) throw new Error(`invalid duration "${text}"`);
  let total = 0;
  const re = /(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g;
  for (let part = re.exec(s); part; part = re.exec(s)) total += parseFloat(part[1]) * UNITS[part[2]];
  return m[1] === '-' ? -total : total;
}

/** Formats milliseconds like Go's Duration.String(): 60000 → "1m0s", 1500 → "1.5s", 300 → "300ms". */
export function formatDuration(ms: number): string {
  if (ms === 0) return '0s';
  const neg = ms < 0;
  let v = Math.abs(ms);
  let out: string;
  if (v < 1000) {
    out = `${trim(v)}ms`;
  } else {
    const h = Math.floor(v / 3_600_000);
    v -= h * 3_600_000;
    const m = Math.floor(v / 60_000);
    v -= m * 60_000;
    const sec = `${trim(v / 1000)}s`;
    out = h > 0 ? `${h}h${m}m${sec}` : m > 0 ? `${m}m${sec}` : sec;
  }
  return neg ? `-${out}` : out;
}

function trim(n: number): string {
  return String(Math.round(n * 1e6) / 1e6);
}
