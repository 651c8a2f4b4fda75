// YAML output the way Kubernetes writes it (sigs.k8s.io/yaml over yaml.v2):
// the JSON value's field order kept, block sequences not indented under their
// key, no line folding, and yaml.v2's choice of scalar style — plain when a
// YAML 1.1 reader reads it back as the same string, double quotes when it
// would read another type, single quotes when plain is not allowed, a literal
// block for multi-line strings. Written here rather than through the yaml
// package: that package costs ~15 ms to load, which start-up (the kubeconfig)
// and every YAML response would pay.

/** Kubernetes' YAML output of a JSON value. */
export function toYAML(value: unknown): string {
  const out: string[] = [];
  if (isCollection(value) && !isEmpty(value)) writeBlock(value, '', out);
  else out.push(inline(value, ''));
  return out.join('\n') + '\n';
}

type Collection = Record<string, unknown> | unknown[];

const isCollection = (v: unknown): v is Collection => v !== null && typeof v === 'object';
const isEmpty = (v: Collection) => (Array.isArray(v) ? v.length === 0 : Object.keys(v).length === 0);

/** Lines of a non-empty map or sequence at the given indentation. */
function writeBlock(v: Collection, indent: string, out: string[]): void {
  if (Array.isArray(v)) {
    for (const item of v) {
      if (isCollection(item) && !isEmpty(item)) {
        // The item's first line shares the dash's line.
        const nested: string[] = [];
        writeBlock(item, indent + '  ', nested);
        out.push(`${indent}- ${nested[0].slice(indent.length + 2)}`, ...nested.slice(1));
      } else {
        out.push(`${indent}- ${inline(item, indent + '  ')}`);
      }
    }
    return;
  }
  for (const [k, item] of Object.entries(v)) {
    if (item === undefined) continue;
    const key = k.includes('\n') ? doubleQuoted(k) : scalar(k, indent);
    if (isCollection(item) && !isEmpty(item)) {
      out.push(`${indent}${key}:`);
      // yaml.v2 does not indent a sequence under its key.
      writeBlock(item, Array.isArray(item) ? indent : indent + '  ', out);
    } else {
      out.push(`${indent}${key}: ${inline(item, indent + '  ')}`);
    }
  }
}

/** A value on the rest of a line (a literal block continues on the next lines). */
function inline(v: unknown, indent: string): string {
  if (v === null || v === undefined) return 'null';
  if (typeof v === 'string') return scalar(v, indent);
  if (typeof v === 'number' || typeof v === 'boolean' || typeof v === 'bigint') return String(v);
  return Array.isArray(v) ? '[]' : '{}';
}

function scalar(s: string, indent: string): string {
  const a = analyze(s);
  if (!a.special) {
    if (s.includes('\n')) {
      if (a.literalAllowed) return literal(s, indent);
    } else if (a.plainAllowed && !readsAsNonString(s)) {
      return s;
    } else if (!readsAsNonString(s)) {
      return `'${s.replace(/'/g, "''")}'`;
    }
  }
  return doubleQuoted(s);
}

function literal(s: string, indent: string): string {
  const trailing = /\n*$/.exec(s)![0].length;
  const chomp = trailing === 0 ? '-' : trailing === 1 ? '' : '+';
  const body = trailing === 0 ? s : s.slice(0, -1);
  // A document's root block still indents, or a line of "..." would end the document.
  const pad = indent || '  ';
  const lines = body.split('\n').map((l) => (l === '' ? '' : pad + l));
  return `|${chomp}\n${lines.join('\n')}`;
}

// JSON's escapes are valid in YAML double quotes; YAML also wants these escaped.
const EXTRA_ESCAPES = /[\u007f-\u009f\u2028\u2029\ufeff]/g;
const doubleQuoted = (s: string) =>
  JSON.stringify(s).replace(EXTRA_ESCAPES, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);

interface Analysis {
  /** Characters only double quotes can carry (tabs, control characters ...). */
  special: boolean;
  plainAllowed: boolean;
  literalAllowed: boolean;
}

const FIRST_INDICATORS = new Set([...'#,[]{}&*!|>\'"%@`']);

/** libyaml's scalar analysis, for block context. */
function analyze(s: string): Analysis {
  let special = false;
  let plainAllowed = s.length > 0 && !/^(---|\.\.\.)/.test(s);
  let spaceBreak = false;
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    const next = s[i + 1];
    const blankNext = next === undefined || next === ' ' || next === '\n';
    const code = c.charCodeAt(0);
    // YAML 1.1 also breaks lines at NEL, LS and PS: only double quotes keep them.
    if (!printable(code) || code === 0x85 || code === 0x2028 || code === 0x2029) special = true;
    if (i === 0) {
      if (FIRST_INDICATORS.has(c)) plainAllowed = false;
      if ((c === '-' || c === '?' || c === ':') && blankNext) plainAllowed = false;
    } else {
      if (c === ':' && blankNext) plainAllowed = false;
      if (c === '#' && (s[i - 1] === ' ' || s[i - 1] === '\n')) plainAllowed = false;
    }
    if (c === ' ' && next === '\n') spaceBreak = true;
  }
  const first = s[0];
  const last = s[s.length - 1];
  if (first === ' ' || last === ' ') plainAllowed = false;
  return {
    special: special || spaceBreak,
    plainAllowed,
    // A leading space or break would need an indentation indicator: double quotes instead.
    literalAllowed: last !== ' ' && first !== ' ' && first !== '\n',
  };
}

function printable(c: number): boolean {
  return (
    c === 0x0a ||
    (c >= 0x20 && c <= 0x7e) ||
    c === 0x85 ||
    (c >= 0xa0 && c <= 0xd7ff) ||
    (c >= 0xe000 && c <= 0xfffd && c !== 0xfeff) ||
    // Surrogates of characters beyond the BMP (lone ones are rare enough to ignore).
    (c >= 0xd800 && c <= 0xdfff)
  );
}

// What yaml.v2 resolves a plain scalar to, when that is not a string.
const NON_STRING_WORDS = new Set(
  (
    '~ null Null NULL y Y yes Yes YES n N no No NO true True TRUE false False FALSE ' +
    'on On ON off Off OFF .inf .Inf .INF +.inf +.Inf +.INF -.inf -.Inf -.INF .nan .NaN .NAN <<'
  ).split(' '),
);
const INT = /^[-+]?(0b[01]+|0o?[0-7]+|0x[0-9a-fA-F]+|[0-9]+)$/;
// Wider than yaml.v2's: YAML 1.1 readers (ours, PyYAML) also take "1." and "._" for floats.
const FLOAT = /^[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]*)(?:[eE][-+]?[0-9]+)?$/;
const BASE60 = /^[-+]?[0-9][0-9_]*(?::[0-5]?[0-9])+(?:\.[0-9_]*)?$/;
const TIMESTAMP =
  /^[0-9]{4}-[0-9]{1,2}-[0-9]{1,2}(?:(?:[Tt]|[ \t]+)[0-9]{1,2}:[0-9]{2}:[0-9]{2}(?:\.[0-9]*)?(?:[ \t]*(?:Z|[-+][0-9]{1,2}(?::?[0-9]{2})?))?)?$/;

/** True when a YAML 1.1 reader (yaml.v2 or another) take the plain scalar s for another type. */
function readsAsNonString(s: string): boolean {
  if (s === '' || NON_STRING_WORDS.has(s)) return true;
  const c = s.charCodeAt(0);
  const numberLike = (c >= 0x30 && c <= 0x39) || s[0] === '-' || s[0] === '+' || s[0] === '.';
  if (!numberLike) return false;
  const plain = s.replace(/_/g, '');
  return INT.test(plain) || FLOAT.test(plain) || BASE60.test(s) || TIMESTAMP.test(s);
}
