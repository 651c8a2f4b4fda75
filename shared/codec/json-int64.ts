// JSON with int64s exact. Kubernetes' int64 fields (ControllerRevision.revision,
// metadata.generation, observedGeneration ...) are Go int64s: a JSON number past
// 2^53 round-trips exactly there, while JSON.parse rounds it to a double. Here an
// integer that is not a safe JS integer becomes a bigint on the way in and is
// written back as its digits on the way out. Both stay native-fast for the usual
// text: only a run of 16 digits (no safe integer has more than 16) sends a parse
// to the slow path, and only a bigint in the value (JSON.stringify then throws) a
// stringify.
/** Marks a big integer while it passes through JSON.parse / JSON.stringify as a string. */
const MARK = `\u0000int64:${Math.random().toString(36).slice(2)}:`;
const MARK_IN_TEXT = JSON.stringify(MARK).slice(1, -1);
const MARKED_IN_TEXT = new RegExp(`"${MARK_IN_TEXT.replace(/\\/g, '\\\\')}(-?\\d+)"`, 'g');

/** JSON.parse, with integers beyond 2^53 as bigints. Throws as JSON.parse does. */
export function parseJSONInt64(text: string): unknown {
  const value = JSON.parse(text);
  if (!hasLongDigitRun(text)) return value;
  const marked = markBigIntegers(text);
  return marked === text ? value : JSON.parse(marked, reviveMarked);
}

/** JSON.stringify, writing bigints as JSON numbers (undefined for undefined, typed as JSON.stringify is). */
export function stringifyJSONInt64(value: unknown, indent?: number): string {
  try {
    return JSON.stringify(value, null, indent);
  } catch (err) {
    if (!(err instanceof TypeError) || !/BigInt/i.test(err.message)) throw err;
  }
  return JSON.stringify(value, markBigInt, indent)?.replace(MARKED_IN_TEXT, '$1');
}

/** An int64 field's value for arithmetic: the number or bigint the codecs give, 0n when unset. */
export const int64Of = (v: unknown): bigint =>
  typeof v === 'bigint' ? v : typeof v === 'number' && Number.isInteger(v) ? BigInt(v) : 0n;

/** An int64 as the codecs give it back: a number while that is exact, else the bigint. */
export const int64Value = (v: bigint): number | bigint => {
  const n = Number(v);
  return Number.isSafeInteger(n) ? n : v;
};

/**
 * Whether the text has 16 digits in a row (integers past Number.MAX_SAFE_INTEGER do). Every
 * such run covers a position 15 mod 16, so only those are read until a digit turns up: a
 * fraction of what a regex scan costs on every decode of the hot path.
 */
function hasLongDigitRun(text: string): boolean {
  const n = text.length;
  const isDigit = (i: number) => {
    const c = text.charCodeAt(i);
    return c >= 0x30 && c <= 0x39;
  };
  for (let i = 15; i < n; i += 16) {
    if (!isDigit(i)) continue;
    let start = i;
    while (start > 0 && isDigit(start - 1)) start--;
    let end = i + 1;
    while (end < n && isDigit(end)) end++;
    if (end - start >= 16) return true;
    i = end - 1;
  }
  return false;
}

function markBigInt(_key: string, v: unknown): unknown {
  return typeof v === 'bigint' ? MARK + v.toString() : v;
}

function reviveMarked(_key: string, v: unknown): unknown {
  return typeof v === 'string' && v.startsWith(MARK) ? BigInt(v.slice(MARK.length)) : v;
}

/** The text with every unsafe integer literal (outside strings) turned into a marked string. */
function markBigIntegers(text: string): string {
  let out = '';
  let last = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === 0x5c /* \ */) i++;
        else if (d === 0x22) break;
      }
      continue;
    }
    if (c !== 0x2d /* - */ && (c < 0x30 || c > 0x39)) continue;
    let j = i + 1;
    while (j < n && text.charCodeAt(j) >= 0x30 && text.charCodeAt(j) <= 0x39) j++;
    const e = text.charCodeAt(j);
    const integer = e !== 0x2e /* . */ && e !== 0x65 /* e */ && e !== 0x45; /* E */
    if (integer && j - i >= 16) {
      const literal = text.slice(i, j);
      if (!Number.isSafeInteger(Number(literal))) {
        out += `${text.slice(last, i)}"${MARK_IN_TEXT}${BigInt(literal).toString()}"`;
        last = j;
      }
    }
    // Skip the rest of a fraction or exponent so its digits are not read as a number.
    while (j < n && /[0-9.eE+-]/.test(text[j])) j++;
    i = j - 1;
  }
  return last === 0 ? text : out + text.slice(last);
}
