// The engine's macro interface (a registered function taking `ast` arguments), which its
// declarations leave untyped: the parts tkube's macros use, and what every macro checks.
export interface Node {
  op: string;
  args: unknown;
  maybeAsync?: boolean;
  setMeta(key: string, value: unknown): void;
}
export interface CheckedType {
  kind: string;
  name?: string;
  keyType?: CheckedType;
  valueType?: CheckedType;
  /** Whether the type still has an unresolved parameter (the element type of `[]`). */
  hasPlaceholderType?: boolean;
}
export interface Checker {
  check(node: Node, ctx: Context): CheckedType;
  getType(name: string): CheckedType;
  registry: { getOptionalType(t: CheckedType): CheckedType };
  createError(code: string, message: string, node: Node): Error;
}
export interface Context {
  forkWithVariable(name: string, t: CheckedType): Context;
  reuse(ctx: Context): Context;
  setIterValue(v: unknown, ev: Evaluator): Context;
}
export interface Evaluator {
  run(node: Node, ctx: Context): unknown;
}

/** The name a macro's variable argument binds: it must be a plain identifier, as cel-go requires. */
export function boundName(checker: Checker, node: Node, macro: string): string {
  if (node.op !== 'id')
    throw checker.createError(
      'invalid_macro_argument',
      `${macro} variable name must be a simple identifier`,
      node,
    );
  return node.args as string;
}

/** Marks a checked macro synchronous unless one of its parts may be asynchronous. */
export function markSync(ast: Node, parts: Node[]): void {
  if (!parts.some((n) => n.maybeAsync)) ast.setMeta('async', false);
}
