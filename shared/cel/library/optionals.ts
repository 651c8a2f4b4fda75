// The parts of cel-go's optional types (cel.OptionalTypes(), on in Kubernetes since
// 1.28) that the engine lacks: the optMap and optFlatMap macros, and
// optional.ofNonZeroValue.
import type { Environment } from '@marcbachmann/cel-js';
import { Optional } from '@marcbachmann/cel-js';
import { isDuration, isUnsigned } from './values';
import {
  boundName,
  markSync,
  type Checker,
  type CheckedType,
  type Context,
  type Evaluator,
  type Node,
} from './macro';

interface OptMacro {
  ast: Node;
  receiver: Node;
  variable: Node;
  body: Node;
  bodyCtx?: Context;
}

export function registerOptionals(env: Environment): void {
  env.registerFunction('optional.optMap(ast, ast): optional<dyn>', optMacro('optMap'));
  env.registerFunction('optional.optFlatMap(ast, ast): optional<dyn>', optMacro('optFlatMap'));
  env.registerFunction('OptionalNamespace.ofNonZeroValue(A): optional<A>', (_ns: unknown, v: unknown) =>
    isZeroValue(v) ? Optional.none() : Optional.of(v),
  );
}

/**
 * `opt.optMap(x, e)`: none stays none, of(v) becomes of(e with x = v). optFlatMap's `e` is an
 * optional itself and is the result as it is.
 */
function optMacro(name: 'optMap' | 'optFlatMap') {
  const flat = name === 'optFlatMap';
  return ({ ast, args, receiver }: { ast: Node; args: Node[]; receiver: Node }) => ({
    ast,
    receiver,
    variable: args[0],
    body: args[1],
    typeCheck(checker: Checker, m: OptMacro, ctx: Context): CheckedType {
      const variable = boundName(checker, m.variable, `${name}()`);
      const rt = checker.check(m.receiver, ctx);
      if (rt.kind !== 'optional' && rt.kind !== 'dyn')
        throw checker.createError(
          'optional_expected',
          `${name}() receiver must be optional, got '${rt}'`,
          m.receiver,
        );
      const valueType = rt.kind === 'optional' && rt.valueType ? rt.valueType : checker.getType('dyn');
      m.bodyCtx = ctx.forkWithVariable(variable, valueType);
      const bt = checker.check(m.body, m.bodyCtx);
      markSync(m.ast, [m.receiver, m.body]);
      if (!flat) return checker.registry.getOptionalType(bt);
      if (bt.kind === 'optional') return bt;
      if (bt.kind === 'dyn') return checker.getType('optional');
      throw checker.createError(
        'optional_expected',
        `${name}() expression must be optional, got '${bt}'`,
        m.body,
      );
    },
    evaluate(ev: Evaluator, m: OptMacro, ctx: Context): unknown {
      const apply = (v: unknown): unknown => {
        if (!(v instanceof Optional)) throw new Error(`${name}() receiver must be optional`);
        if (!v.hasValue()) return Optional.none();
        const r = ev.run(m.body, m.bodyCtx!.reuse(ctx).setIterValue(v.value(), ev));
        const wrap = (x: unknown) => {
          if (!flat) return Optional.of(x);
          if (!(x instanceof Optional)) throw new Error(`${name}() expression must be optional`);
          return x;
        };
        return r instanceof Promise ? r.then(wrap) : wrap(r);
      };
      const v = ev.run(m.receiver, ctx);
      return v instanceof Promise ? v.then(apply) : apply(v);
    },
  });
}

/** Go's zero time, CEL's earliest timestamp (0001-01-01T00:00:00Z). */
const ZERO_TIME_MS = -62_135_596_800_000;

/** cel-go's IsZeroValue: the zero of each type, and empty strings, bytes, lists and maps. */
function isZeroValue(v: unknown): boolean {
  if (v === null || v === false || v === 0 || v === 0n || v === '') return true;
  if (v instanceof Uint8Array || Array.isArray(v)) return v.length === 0;
  if (v instanceof Map) return v.size === 0;
  if (v instanceof Date) return v.getTime() === ZERO_TIME_MS;
  if (isDuration(v)) return v.seconds === 0n && v.nanos === 0;
  if (isUnsigned(v)) return v.value === 0n;
  if (typeof v !== 'object') return false;
  if (Object.getPrototypeOf(v) === Object.prototype) return Object.keys(v).length === 0;
  return false;
}
