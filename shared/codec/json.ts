// JSON request bodies: JSON.parse for the value (fast, native), an optional
// scan for duplicate keys with Kubernetes-style paths (`metadata.name`,
// `spec.containers[0].env`), and malformed input answered like kube-apiserver:
// 400 BadRequest "the object provided is unrecognized (must be of type Pod):
// couldn't get version/kind; json parse error: <Go's message> (<summary>)".
import { StatusError } from '../api/status';
import { flowDepth, MAX_YAML_DEPTH } from './yaml-depth';
import { parseJSONInt64 } from './json-int64';

export interface ParseJSONOptions {
  /** Collect paths of keys that occur twice in one object. */
  detectDuplicates?: boolean;
  /** Kind the endpoint decodes into; completes the error message like Kubernetes'. */
  kind?: string;
}

export interface ParsedJSON {
  value: unknown;
  /** Paths of duplicated keys in document order (path of the key itself). */
  duplicates: string[];
}

export function parseJSON(buf: Buffer | string, opts: ParseJSONOptions = {}): ParsedJSON {
  const text = typeof buf === 'string' ? buf : buf.toString('utf8');
  let value: unknown;
  try {
    // V8's JSON.parse is iterative: any depth parses; the recursive walks after it must not see one too deep.
    value = parseJSONInt64(text);
  } catch {
    throw flowDepth(text) > MAX_YAML_DEPTH ? tooDeep(text, opts.kind) : malformedJSON(text, opts.kind);
  }
  // The parsed value tells the depth, and its key count against the text's says whether any
  // key was repeated (JSON.parse keeps the last); only then is the text scanned for where.
  const keys = countKeys(value);
  if (keys < 0) throw tooDeep(text, opts.kind);
  const duplicates = !opts.detectDuplicates || keys === keysInText(text) ? [] : findDuplicateKeys(text);
  if (duplicates === null) throw tooDeep(text, opts.kind);
  return { value, duplicates };
}

/** Go stops at 10000 levels; tkube's walkers recurse per level and stop at MAX_YAML_DEPTH. */
function tooDeep(text: string, kind?: string): StatusError {
  return decodeFailure(
    `couldn't get version/kind; json parse error: invalid character '[' exceeded max depth`,
    text,
    kind,
  );
}

/** The 400 Kubernetes answers for a body that is not JSON. */
export function malformedJSON(text: string, kind?: string): StatusError {
  const base = `couldn't get version/kind; json parse error: ${goJSONSyntaxError(text) ?? 'unexpected end of JSON input'}`;
  return decodeFailure(base, text, kind);
}

/** transformDecodeError for a body whose kind could not be read. */
export function decodeFailure(base: string, body: string, kind?: string): StatusError {
  if (!kind) return new StatusError(400, 'BadRequest', base);
  return new StatusError(
    400,
    'BadRequest',
    `the object provided is unrecognized (must be of type ${kind}): ${base} (${summarizeData(body, 30)})`,
  );
}

/** Kubernetes' summarizeData: JSON-looking bodies shown as text, anything else as hex. */
export function summarizeData(body: string | Buffer, max: number): string {
  const data = typeof body === 'string' ? Buffer.from(body, 'utf8') : body;
  if (data.length === 0) return '<empty>';
  const cut = data.length > max;
  const part = cut ? data.subarray(0, max) : data;
  const s = data[0] === 0x7b ? part.toString('utf8') : part.toString('hex');
  return cut ? s + ' ...' : s;
}

// --- duplicate keys ----------------------------------------------------------

/** The keys of every object in a parsed value; -1 when it nests deeper than MAX_YAML_DEPTH. */
function countKeys(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  let n = 0;
  // Iterative: JSON.parse accepts any depth, and the walk must not overflow the stack on one.
  const stack: object[] = [value];
  const depths: number[] = [1];
  while (stack.length > 0) {
    const v = stack.pop()!;
    const d = depths.pop()!;
    if (d > MAX_YAML_DEPTH) return -1;
    if (Array.isArray(v)) {
      for (const x of v)
        if (x !== null && typeof x === 'object') {
          stack.push(x);
          depths.push(d + 1);
        }
    } else
      for (const k in v) {
        n++;
        const x = (v as Record<string, unknown>)[k];
        if (x !== null && typeof x === 'object') {
          stack.push(x);
          depths.push(d + 1);
        }
      }
  }
  return n;
}

/**
 * The keys in valid JSON text, duplicates included. Only a key's closing quote is followed by a
 * colon (whitespace between): a quote before a colon inside a string is escaped, i.e. preceded
 * by an odd run of backslashes. indexOf over the colons is 4x faster than a regex.
 */
function keysInText(text: string): number {
  let n = 0;
  for (let i = text.indexOf(':'); i >= 0; i = text.indexOf(':', i + 1)) {
    let j = i - 1;
    let c = text.charCodeAt(j);
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = text.charCodeAt(--j);
    if (c !== 0x22) continue;
    let backslashes = 0;
    while (text.charCodeAt(--j) === 0x5c) backslashes++;
    if ((backslashes & 1) === 0) n++;
  }
  return n;
}

/**
 * Paths of the keys that occur twice in one object, in document order, of valid JSON
 * text; null when it nests deeper than MAX_YAML_DEPTH. Paths are built only for the
 * duplicates: the scan keeps the keys and indexes of where it is.
 */
export function findDuplicateKeys(text: string): string[] | null {
  const out: string[] = [];
  /** Where the scan is: object keys (strings) and array indexes (numbers). */
  const at: (string | number)[] = [];
  let i = 0;
  const n = text.length;
  const ws = () => {
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
      i++;
    }
  };
  const str = (): string => {
    const start = ++i; // after the opening quote
    let escaped = false;
    while (i < n) {
      const c = text.charCodeAt(i);
      if (c === 0x5c) {
        escaped = true;
        i += 2;
        continue;
      }
      if (c === 0x22) break;
      i++;
    }
    const raw = text.slice(start, i);
    i++; // closing quote
    return escaped ? (JSON.parse(`"${raw}"`) as string) : raw;
  };
  const path = (): string => {
    let p = '';
    for (const seg of at) p += typeof seg === 'number' ? `[${seg}]` : p ? `.${seg}` : seg;
    return p;
  };
  /** false when too deep. */
  const value = (depth: number): boolean => {
    ws();
    const c = text.charCodeAt(i);
    if (c === 0x7b || c === 0x5b) {
      if (depth >= MAX_YAML_DEPTH) return false;
      i++;
      ws();
      if (text.charCodeAt(i) === (c === 0x7b ? 0x7d : 0x5d)) {
        i++;
        return true;
      }
      const seen = c === 0x7b ? new Set<string>() : null;
      for (let idx = 0; ; idx++) {
        if (seen) {
          ws();
          const key = str();
          at.push(key);
          if (seen.has(key)) out.push(path());
          else seen.add(key);
          ws();
          i++; // ':'
        } else at.push(idx);
        if (!value(depth + 1)) return false;
        at.pop();
        ws();
        if (text.charCodeAt(i++) !== 0x2c) return true; // '}' or ']'
      }
    }
    if (c === 0x22) str();
    else
      while (i < n) {
        const d = text.charCodeAt(i);
        if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x0a || d === 0x0d || d === 0x09)
          break;
        i++;
      }
    return true;
  };
  if (!value(0)) return null;
  return [...new Set(out)];
}

// --- Go's encoding/json syntax errors ---------------------------------------

/** Go's quoteChar for the scanner's messages. */
function quoteChar(c: string): string {
  if (c === "'") return `'\\''`;
  if (c === '"') return `'"'`;
  const code = c.codePointAt(0)!;
  if (c === '\n') return `'\\n'`;
  if (c === '\r') return `'\\r'`;
  if (c === '\t') return `'\\t'`;
  if (code < 0x20 || code === 0x7f) return `'\\x${code.toString(16).padStart(2, '0')}'`;
  return `'${c}'`;
}

class SyntaxErr extends Error {}
const bad = (c: string, ctx: string) => new SyntaxErr(`invalid character ${quoteChar(c)} ${ctx}`);
const eof = () => new SyntaxErr('unexpected end of JSON input');

/**
 * The message Go's encoding/json gives for malformed text, or undefined when
 * the text is valid. Only used on the error path.
 */
export function goJSONSyntaxError(text: string): string | undefined {
  let i = 0;
  const n = text.length;
  const isWS = (c: string) => c === ' ' || c === '\t' || c === '\n' || c === '\r';
  const ws = () => {
    while (i < n && isWS(text[i])) i++;
  };
  const digits = (ctx: string, first: boolean) => {
    if (first) {
      if (i >= n) throw eof();
      if (text[i] < '0' || text[i] > '9') throw bad(text[i], ctx);
    }
    while (i < n && text[i] >= '0' && text[i] <= '9') i++;
  };
  const literal = (word: string) => {
    for (let k = 1; k < word.length; k++) {
      i++;
      if (i >= n) throw eof();
      if (text[i] !== word[k]) throw bad(text[i], `in literal ${word} (expecting ${quoteChar(word[k])})`);
    }
    i++;
  };
  const string = () => {
    i++;
    for (;;) {
      if (i >= n) throw eof();
      const c = text[i];
      if (c === '"') {
        i++;
        return;
      }
      if (c === '\\') {
        i++;
        if (i >= n) throw eof();
        const e = text[i];
        if (e === 'u') {
          for (let k = 0; k < 4; k++) {
            i++;
            if (i >= n) throw eof();
            if (!/[0-9a-fA-F]/.test(text[i])) throw bad(text[i], 'in \\u hexadecimal character escape');
          }
        } else if (!'"\\/bfnrt'.includes(e)) throw bad(e, 'in string escape code');
        i++;
        continue;
      }
      if (c.charCodeAt(0) < 0x20) throw bad(c, 'in string literal');
      i++;
    }
  };
  const value = (ctx: string): void => {
    ws();
    if (i >= n) throw eof();
    const c = text[i];
    if (c === '{') {
      i++;
      ws();
      if (i >= n) throw eof();
      if (text[i] === '}') {
        i++;
        return;
      }
      for (;;) {
        ws();
        if (i >= n) throw eof();
        if (text[i] !== '"') throw bad(text[i], 'looking for beginning of object key string');
        string();
        ws();
        if (i >= n) throw eof();
        if (text[i] !== ':') throw bad(text[i], 'after object key');
        i++;
        value('looking for beginning of value');
        ws();
        if (i >= n) throw eof();
        if (text[i] === '}') {
          i++;
          return;
        }
        if (text[i] !== ',') throw bad(text[i], 'after object key:value pair');
        i++;
      }
    }
    if (c === '[') {
      i++;
      ws();
      if (i >= n) throw eof();
      if (text[i] === ']') {
        i++;
        return;
      }
      for (;;) {
        value('looking for beginning of value');
        ws();
        if (i >= n) throw eof();
        if (text[i] === ']') {
          i++;
          return;
        }
        if (text[i] !== ',') throw bad(text[i], 'after array element');
        i++;
      }
    }
    if (c === '"') return string();
    if (c === 't') return literal('true');
    if (c === 'f') return literal('false');
    if (c === 'n') return literal('null');
    if (c === '-' || (c >= '0' && c <= '9')) {
      if (c === '-') {
        i++;
        digits('in numeric literal', true);
      } else if (c === '0') i++;
      else digits('', false);
      if (i < n && text[i] === '.') {
        i++;
        digits('after decimal point in numeric literal', true);
      }
      if (i < n && (text[i] === 'e' || text[i] === 'E')) {
        i++;
        if (i < n && (text[i] === '+' || text[i] === '-')) i++;
        digits('in exponent of numeric literal', true);
      }
      return;
    }
    throw bad(c, ctx);
  };
  try {
    value('looking for beginning of value');
    ws();
    if (i < n) throw bad(text[i], 'after top-level value');
    return undefined;
  } catch (e) {
    if (e instanceof SyntaxErr) return e.message;
    throw e;
  }
}
