// The JSONPath subset kubectl and CRD printer columns use (client-go's
// jsonpath with missing keys allowed): `.a.b`, `['k']`, `[0]`, `[-1]`,
// `[1:3]`, `[*]`, `.*`, `..name`, unions `[0,2]`, and filters
// `[?(@.type=="Ready")]` with == != < > <= >= or bare existence. Paths are
// compiled once (per CRD column) and evaluated per row.

export class JSONPathError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'JSONPathError';
  }
}

type Operand = { path: Step[] } | { literal: string | number | boolean | null };

type Step =
  | { t: 'field'; name: string }
  | { t: 'wildcard' }
  | { t: 'recursive' }
  | { t: 'index'; i: number }
  | { t: 'slice'; start?: number; end?: number; step?: number }
  | { t: 'union'; parts: Step[] }
  | { t: 'filter'; left: Operand; op?: string; right?: Operand };

export interface CompiledJSONPath {
  readonly source: string;
  /** Every value the path selects, in document order; [] when nothing matches. Throws JSONPathError on type errors. */
  evaluate(root: unknown): unknown[];
}

/** Compiles `.spec.replicas` or `{.spec.replicas}`. Throws JSONPathError when the path cannot be parsed. */
export function compileJSONPath(source: string): CompiledJSONPath {
  let text = source.trim();
  if (text.startsWith('{') && text.endsWith('}')) text = text.slice(1, -1).trim();
  const p = new Parser(text);
  const steps = p.path(false);
  if (!p.done()) throw new JSONPathError(`unrecognized character in JSONPath ${JSON.stringify(source)}`);
  return { source, evaluate: (root) => run(steps, [root]) };
}

const TERMINATORS = new Set([
  '.',
  ',',
  '[',
  ']',
  '$',
  '@',
  '{',
  '}',
  '(',
  ')',
  ' ',
  '\t',
  '\n',
  '\r',
  '=',
  '!',
  '<',
  '>',
]);

class Parser {
  private i = 0;
  constructor(private readonly s: string) {}

  done(): boolean {
    return this.i >= this.s.length;
  }

  private peek(off = 0): string {
    return this.s[this.i + off] ?? '';
  }

  private fail(what: string): never {
    throw new JSONPathError(`${what} at position ${this.i} of JSONPath ${JSON.stringify(this.s)}`);
  }

  /** A path: optional $ (or @ inside filters), then steps. */
  path(relative: boolean): Step[] {
    const steps: Step[] = [];
    if (this.peek() === (relative ? '@' : '$')) this.i++;
    for (;;) {
      const c = this.peek();
      if (c === '.') {
        if (this.peek(1) === '.') {
          this.i += 2;
          steps.push({ t: 'recursive' });
          if (this.peek() === '[') continue;
          steps.push(this.member());
        } else {
          this.i++;
          if (this.done() && steps.length === 0) break; // "." alone selects the root
          steps.push(this.member());
        }
      } else if (c === '[') {
        steps.push(this.bracket());
      } else {
        break;
      }
    }
    return steps;
  }

  /** A name after a dot: `*`, or characters up to a terminator, with backslash escapes. */
  private member(): Step {
    if (this.peek() === '*') {
      this.i++;
      return { t: 'wildcard' };
    }
    let name = '';
    while (!this.done()) {
      const c = this.peek();
      if (c === '\\') {
        name += this.peek(1);
        this.i += 2;
        continue;
      }
      if (TERMINATORS.has(c)) break;
      name += c;
      this.i++;
    }
    if (name === '') this.fail('expected a field name');
    return { t: 'field', name };
  }

  private bracket(): Step {
    this.i++; // [
    this.space();
    let step: Step;
    if (this.peek() === '*') {
      this.i++;
      step = { t: 'wildcard' };
    } else if (this.peek() === '?') {
      step = this.filter();
    } else {
      const parts: Step[] = [this.item()];
      this.space();
      while (this.peek() === ',') {
        this.i++;
        this.space();
        parts.push(this.item());
        this.space();
      }
      step = parts.length === 1 ? parts[0] : { t: 'union', parts };
    }
    this.space();
    if (this.peek() !== ']') this.fail('expected ]');
    this.i++;
    return step;
  }

  private item(): Step {
    const c = this.peek();
    if (c === "'" || c === '"') return { t: 'field', name: this.quoted() };
    const m = /^(-?\d*)(?::(-?\d*))?(?::(-?\d*))?/.exec(this.s.slice(this.i));
    if (!m || m[0] === '') this.fail('expected an index, slice or quoted key');
    this.i += m[0].length;
    const num = (x: string | undefined) => (x === undefined || x === '' || x === '-' ? undefined : Number(x));
    if (m[2] === undefined && m[3] === undefined) {
      const i = num(m[1]);
      if (i === undefined) this.fail('expected an index');
      return { t: 'index', i };
    }
    return { t: 'slice', start: num(m[1]), end: num(m[2]), step: num(m[3]) };
  }

  private quoted(): string {
    const q = this.peek();
    this.i++;
    let out = '';
    while (!this.done() && this.peek() !== q) {
      if (this.peek() === '\\') this.i++;
      out += this.peek();
      this.i++;
    }
    if (this.done()) this.fail('unterminated string');
    this.i++;
    return out;
  }

  private filter(): Step {
    this.i++; // ?
    if (this.peek() !== '(') this.fail('expected ( after ?');
    this.i++;
    this.space();
    const left = this.operand();
    this.space();
    const m = /^(==|!=|<=|>=|<|>)/.exec(this.s.slice(this.i));
    let step: Step;
    if (m) {
      this.i += m[0].length;
      this.space();
      step = { t: 'filter', left, op: m[0], right: this.operand() };
    } else {
      step = { t: 'filter', left };
    }
    this.space();
    if (this.peek() !== ')') this.fail('expected )');
    this.i++;
    return step;
  }

  private operand(): Operand {
    const c = this.peek();
    if (c === '@' || c === '$') return { path: this.path(c === '@') };
    if (c === "'" || c === '"') return { literal: this.quoted() };
    const m = /^(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|true|false|null)/.exec(this.s.slice(this.i));
    if (!m) this.fail('expected a value');
    this.i += m[0].length;
    const v = m[0];
    return { literal: v === 'true' ? true : v === 'false' ? false : v === 'null' ? null : Number(v) };
  }

  private space(): void {
    while (this.peek() === ' ' || this.peek() === '\t') this.i++;
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

function run(steps: readonly Step[], input: unknown[]): unknown[] {
  let cur = input;
  for (const step of steps) {
    if (cur.length === 0) return cur;
    cur = apply(step, cur);
  }
  return cur;
}

function apply(step: Step, input: unknown[]): unknown[] {
  const out: unknown[] = [];
  switch (step.t) {
    case 'field':
      for (const v of input) {
        if (isObject(v) && Object.prototype.hasOwnProperty.call(v, step.name)) out.push(v[step.name]);
      }
      return out;
    case 'wildcard':
      for (const v of input) {
        if (Array.isArray(v)) out.push(...v);
        else if (isObject(v)) for (const k of Object.keys(v)) out.push(v[k]);
      }
      return out;
    case 'recursive':
      for (const v of input) descend(v, out);
      return out;
    case 'index':
      for (const v of input) {
        if (!Array.isArray(v)) continue;
        const i = step.i < 0 ? v.length + step.i : step.i;
        if (i >= 0 && i < v.length) out.push(v[i]);
      }
      return out;
    case 'slice':
      for (const v of input) {
        if (!Array.isArray(v)) continue;
        const n = v.length;
        const norm = (x: number | undefined, dflt: number) =>
          x === undefined ? dflt : Math.min(Math.max(x < 0 ? n + x : x, 0), n);
        const by = step.step ?? 1;
        if (by <= 0) continue;
        for (let i = norm(step.start, 0), end = norm(step.end, n); i < end; i += by) out.push(v[i]);
      }
      return out;
    case 'union':
      for (const part of step.parts) out.push(...apply(part, input));
      return out;
    case 'filter':
      for (const v of input) {
        if (!Array.isArray(v)) throw new JSONPathError('only arrays and slices can be filtered');
        for (const el of v) if (passes(step, el)) out.push(el);
      }
      return out;
  }
}

function descend(v: unknown, out: unknown[]): void {
  out.push(v);
  if (Array.isArray(v)) for (const x of v) descend(x, out);
  else if (isObject(v)) for (const k of Object.keys(v)) descend(v[k], out);
}

function operandValues(o: Operand, el: unknown): unknown[] {
  return 'path' in o ? run(o.path, [el]) : [o.literal];
}

function passes(f: Extract<Step, { t: 'filter' }>, el: unknown): boolean {
  const lefts = operandValues(f.left, el);
  if (lefts.length === 0) return false;
  if (f.op === undefined) return true; // existence
  if (lefts.length > 1) throw new JSONPathError('can only compare one element at a time');
  const rights = operandValues(f.right!, el);
  if (rights.length === 0) return false;
  if (rights.length > 1) throw new JSONPathError('can only compare one element at a time');
  return compare(f.op, lefts[0], rights[0]);
}

function compare(op: string, a: unknown, b: unknown): boolean {
  const ta = typeof a;
  if (
    a === null ||
    b === null ||
    ta !== typeof b ||
    (ta !== 'number' && ta !== 'string' && ta !== 'boolean')
  ) {
    throw new JSONPathError('incompatible types for comparison');
  }
  if (ta === 'boolean' && op !== '==' && op !== '!=') throw new JSONPathError('invalid type for comparison');
  const x = a as number | string;
  const y = b as number | string;
  switch (op) {
    case '==':
      return x === y;
    case '!=':
      return x !== y;
    case '<':
      return x < y;
    case '>':
      return x > y;
    case '<=':
      return x <= y;
    default:
      return x >= y;
  }
}

/**
 * A JSON value as Go's fmt prints it (what kubectl shows for a jsonpath
 * result): maps as `map[k:v]` with sorted keys, slices as `[a b]`, integers
 * plainly and other numbers in Go's %v float form (1e+06, 1.5, 1e-05).
 */
export function goFormat(v: unknown): string {
  if (v === null || v === undefined) return '<nil>';
  switch (typeof v) {
    case 'string':
      return v;
    case 'boolean':
      return v ? 'true' : 'false';
    case 'number':
      return goNumber(v);
    default:
      break;
  }
  if (Array.isArray(v)) return `[${v.map(goFormat).join(' ')}]`;
  if (isObject(v)) {
    const keys = Object.keys(v).sort();
    return `map[${keys.map((k) => `${k}:${goFormat(v[k])}`).join(' ')}]`;
  }
  return String(v);
}

function goNumber(n: number): string {
  // Whole numbers decode to int64 in Kubernetes' unstructured objects.
  if (Number.isInteger(n) && Math.abs(n) < 2 ** 63) return String(n);
  if (Number.isNaN(n)) return 'NaN';
  if (!Number.isFinite(n)) return n > 0 ? '+Inf' : '-Inf';
  // Go's shortest %v switches to exponent form below 1e-4 and from 1e6 on.
  const [mant, expText] = n.toExponential().split('e');
  const exp = Number(expText);
  if (exp < -4 || exp >= 6) {
    const abs = Math.abs(exp);
    return `${mant}e${exp < 0 ? '-' : '+'}${abs < 10 ? '0' : ''}${abs}`;
  }
  return String(n);
}
