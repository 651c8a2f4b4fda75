// The CEL engine under everything Kubernetes evaluates as CEL (CRD validation
// rules, admission policies). The language itself (parser, type checker,
// evaluator, macros, optional types) is @marcbachmann/cel-js; this file is the
// one place that builds its environments and compiles (the libraries in library/
// register functions on it and know its values). On top it sets Kubernetes' options, registers the
// Kubernetes libraries, and turns the library's errors into cel-go's wording
// ("ERROR: <input>:1:6: undefined field 'foo'") that Kubernetes quotes.
import type * as CelJs from '@marcbachmann/cel-js';
import type { Environment, Optional } from '@marcbachmann/cel-js';
import type { ASTNode } from '@marcbachmann/cel-js';
import type * as Library from './library';

export type { ASTNode };
export type CelEnvironment = Environment;

let celLib: typeof CelJs | undefined;

/**
 * cel-js and the Kubernetes libraries (~80 ms of CPU to load) are loaded with the first CEL
 * environment: an apiserver that has no CEL rule to compile does not load them at start.
 */
function celjs(): typeof CelJs {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (celLib ??= require('@marcbachmann/cel-js') as typeof CelJs);
}

/** cel-js's optional value class (optional.of, optional.none, instanceof). */
export const celOptional = (): typeof Optional => celjs().Optional;

/** Kubernetes' base environment: optional types, homogeneous literals, its libraries. */
let base: Environment | undefined;

/**
 * A fresh environment to declare variables and types in (a child of one
 * shared base, so libraries are registered once per process).
 */
export function newEnvironment(): Environment {
  if (!base) {
    base = new (celjs().Environment)({
      enableOptionalTypes: true,
      homogeneousAggregateLiterals: true,
      unlistedVariablesAreDyn: false,
    });
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    (require('./library') as typeof Library).registerKubernetesLibraries(base);
  }
  return base.clone();
}

export interface Program {
  source: string;
  ast: ASTNode;
  /** The checked type of the result ("bool", "string", ...). */
  outputType: string;
  evaluate(vars: Record<string, unknown>): unknown;
}

export class CelCompileError extends Error {}

/** An undefined field named by has(): its summary and place, for re-rendering against another source form. */
class HasFieldError extends CelCompileError {
  constructor(
    message: string,
    readonly summary: string,
    readonly at: number,
  ) {
    super(message);
  }
}
export class CelEvalError extends Error {}

/** cel-go's rendering of a compile error: location, message, the source line and a caret. */
export function syntaxError(source: string, message: string, start: number | undefined): string {
  return cgoError(source, message, start);
}

function cgoError(source: string, message: string, start: number | undefined): string {
  const pos = start ?? 0;
  const before = source.slice(0, pos);
  const line = before.split('\n').length;
  const col = pos - (before.lastIndexOf('\n') + 1);
  const text = source.split('\n')[line - 1] ?? '';
  return `ERROR: <input>:${line}:${col + 1}: ${message}\n | ${text}\n | ${'.'.repeat(col)}^`;
}

const BINARY_OPS = new Set(['+', '-', '*', '/', '%', '==', '!=', '<', '<=', '>', '>=', 'in']);
const rangeOf = (n: any): { start: number; end: number } | undefined =>
  n && typeof n === 'object' && n.range && typeof n.range.start === 'number' ? n.range : undefined;

/**
 * Where cel-go places an error: a field selection at its dot, a method call at
 * its opening parenthesis, a binary operator at the operator (the library
 * places them at the field name or the start of the expression).
 */
function cgoPosition(source: string, err: any): number | undefined {
  const node = err?.node;
  const start: number | undefined = err?.range?.start;
  if (start === undefined || !node) return start;
  const args: unknown[] = Array.isArray(node.args) ? node.args : [];
  if (node.op === '.' || node.op === '.?') {
    const dot = source.lastIndexOf('.', start - 1);
    return dot >= 0 ? dot : start;
  }
  if (node.op === 'rcall') {
    const receiver = rangeOf(args[1]);
    const open = receiver ? source.indexOf('(', receiver.end) : -1;
    return open >= 0 ? open : start;
  }
  if (BINARY_OPS.has(node.op)) {
    const l = rangeOf(args[0]);
    const r = rangeOf(args[1]);
    if (l && r) {
      const at = source.slice(l.end, r.start).indexOf(node.op);
      if (at >= 0) return l.end + at;
    }
  }
  return start;
}

/** The library's summaries in cel-go's words where Kubernetes users meet them. */
function cgoMessage(summary: string): string {
  if (summary.startsWith('no such overload: ')) {
    const rest = summary.slice('no such overload: '.length);
    for (const op of BINARY_OPS) {
      const at = rest.indexOf(` ${op} `);
      if (at < 0) continue;
      const fn = op === 'in' ? '@in' : `_${op}_`;
      return `found no matching overload for '${fn}' applied to '(${rest.slice(0, at)}, ${rest.slice(at + op.length + 2)})'`;
    }
  }
  let m = /^No such key: (.*)$/.exec(summary);
  if (m) return `undefined field '${m[1]}'`;
  m = /^Unknown variable: (.*)$/.exec(summary);
  if (m) return `undeclared reference to '${m[1]}' (in container '')`;
  m = /^found no matching overload for '(.*)'$/.exec(summary);
  if (m) return `found no matching overload for '${m[1]}'`;
  return summary;
}

function summaryOf(err: any): string {
  const msg = String(err?.summary ?? err?.message ?? err);
  return msg.split('\n')[0];
}

/** Every node of an AST (the library keeps operands in args, nested in arrays for calls). */
function* nodesOf(n: unknown): Generator<any> {
  if (Array.isArray(n)) {
    for (const x of n) yield* nodesOf(x);
  } else if (n && typeof n === 'object' && typeof (n as any).op === 'string') {
    yield n;
    yield* nodesOf((n as any).args);
  }
}

/**
 * cel-go type-checks the field a has() test names: has(self.nope) on a declared
 * object type is "undefined field 'nope'". The library leaves has() arguments
 * unchecked, so each one is checked on its own here (arguments naming
 * comprehension variables cannot be, and are left alone).
 */
function checkHasFields(env: Environment, source: string, ast: unknown): void {
  for (const n of nodesOf(ast)) {
    if (n.op !== 'call' || n.args?.[0] !== 'has') continue;
    const arg = [n.args[1]].flat()[0];
    const r = rangeOf(arg);
    if (arg?.op !== '.' || !r) continue;
    const sub = source.slice(r.start, r.end);
    let checked: { valid: boolean; error?: any };
    try {
      checked = env.parse(sub).check();
    } catch {
      continue;
    }
    if (checked.valid || !/^No such key: /.test(summaryOf(checked.error))) continue;
    const at = cgoPosition(sub, checked.error);
    const summary = cgoMessage(summaryOf(checked.error));
    const pos = at === undefined ? r.start : r.start + at;
    throw new HasFieldError(cgoError(source, summary, pos), summary, pos);
  }
}

/** An expression the engine sees in another form than its author wrote it (see cel/mutation.ts). */
export interface SourceForm {
  /** What the engine parses. */
  text: string;
  /** The position in the author's expression of a position in text. */
  position(p: number): number;
}

/**
 * Parses and type-checks an expression; throws CelCompileError with cel-go's
 * message. A rewritten expression's errors point into the author's source.
 */
export function compile(env: Environment, source: string, form?: SourceForm): Program {
  const text = form?.text ?? source;
  const error = (message: string, at: number | undefined) =>
    new CelCompileError(cgoError(source, message, form && at !== undefined ? form.position(at) : at));
  let parsed: ReturnType<Environment['parse']>;
  try {
    parsed = env.parse(text);
  } catch (e: any) {
    throw error(`Syntax error: ${summaryOf(e)}`, e?.range?.start);
  }
  const checked = parsed.check();
  if (!checked.valid) {
    const e: any = checked.error;
    throw error(cgoMessage(summaryOf(e)), cgoPosition(text, e));
  }
  try {
    checkHasFields(env, text, parsed.ast);
  } catch (e) {
    if (!form || !(e instanceof HasFieldError)) throw e;
    throw error(e.summary, e.at);
  }
  return {
    source: text,
    ast: parsed.ast as ASTNode,
    outputType: String(checked.type),
    evaluate(vars) {
      try {
        return parsed(vars);
      } catch (e: any) {
        throw new CelEvalError(runtimeMessage(summaryOf(e)));
      }
    },
  };
}

/** cel-go's runtime error texts (Kubernetes prefixes them to "evaluating rule: ..."). */
function runtimeMessage(summary: string): string {
  const m = /^No such key: (.*)$/.exec(summary);
  if (m) return `no such key: ${m[1]}`;
  if (summary === 'division by zero') return 'division by zero';
  if (/^integer overflow/.test(summary)) return 'integer overflow';
  return summary;
}
