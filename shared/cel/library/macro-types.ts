// The engine's macro interface (a registered function taking `ast` arguments), which its
// declarations leave untyped: the parts tkube's macros use.
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
