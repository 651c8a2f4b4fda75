// cel-go's lists extension at the version Kubernetes enables (ext.Lists(3), since
// 1.34): slice, flatten, reverse, distinct, sort, the sortBy macro and lists.range.
// (Kubernetes' own list library, isSorted/sum/min/max/indexOf, is lists.ts.)
import type { Environment } from '@marcbachmann/cel-js';
import { celCompare, celEquals, celTypeName } from './values';
import {
  boundName,
  markSync,
  type Checker,
  type CheckedType,
  type Context,
  type Evaluator,
  type Node,
} from './macro';

/** `lists` as a namespace value, as `format` is one in format.ts. */
class ListsNamespace {}

export function registerListExtensions(env: Environment): void {
  const NS = 'ext.ListsNamespace';
  env.registerType(NS, ListsNamespace);
  env.registerConstant('lists', NS, new ListsNamespace());
  env.registerFunction(`${NS}.range(int): list<int>`, (_ns: unknown, n: bigint) => {
    const out: bigint[] = [];
    for (let i = 0n; i < n; i++) out.push(i);
    return out;
  });
  env.registerFunction('list<A>.slice(int, int): list<A>', slice);
  env.registerFunction('list<list<A>>.flatten(): list<A>', (l: unknown[]) => flatten(l, 1n));
  env.registerFunction('list<dyn>.flatten(int): list<dyn>', flatten);
  env.registerFunction('list<A>.reverse(): list<A>', (l: unknown[]) => [...l].reverse());
  env.registerFunction('list<A>.distinct(): list<A>', distinct);
  env.registerFunction('list<A>.sort(): list<A>', (l: unknown[]) => sortByKeys(l, l));
  env.registerFunction('list.sortBy(ast, ast): list<dyn>', sortByMacro);
}

function slice(list: unknown[], start: bigint, end: bigint): unknown[] {
  if (start < 0n || end < 0n)
    throw new Error(`cannot slice(${start}, ${end}), negative indexes not supported`);
  if (start > end)
    throw new Error(`cannot slice(${start}, ${end}), start index must be less than or equal to end index`);
  if (BigInt(list.length) < end)
    throw new Error(`cannot slice(${start}, ${end}), list is length ${list.length}`);
  return list.slice(Number(start), Number(end));
}

function flatten(list: unknown[], depth: bigint): unknown[] {
  if (depth < 0n) throw new Error('level must be non-negative');
  const out: unknown[] = [];
  for (const v of list) {
    if (Array.isArray(v) && depth > 0n) out.push(...flatten(v, depth - 1n));
    else out.push(v);
  }
  return out;
}

function distinct(list: unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of list) if (!out.some((x) => celEquals(x, v))) out.push(v);
  return out;
}

/** The types cel-go can order (its Comparer types). */
const COMPARABLE = new Set([
  'int',
  'uint',
  'double',
  'string',
  'bool',
  'bytes',
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
]);

/** `list` ordered by `keys` (one per element): all of one comparable type, as cel-go requires. */
function sortByKeys(list: unknown[], keys: unknown[]): unknown[] {
  if (list.length === 0) return list;
  const type = celTypeName(keys[0]);
  if (!COMPARABLE.has(type)) throw new Error('list elements must be comparable');
  if (keys.some((k) => celTypeName(k) !== type)) throw new Error('list elements must have the same type');
  const order = keys.map((_, i) => i).sort((i, j) => celCompare(keys[i], keys[j]));
  return order.map((i) => list[i]);
}

/** `l.sortBy(e, key)`: l ordered by key evaluated with e bound to each element. */
function sortByMacro({ ast, args, receiver }: { ast: Node; args: Node[]; receiver: Node }) {
  let bodyCtx: Context | undefined;
  return {
    typeCheck(checker: Checker, _m: unknown, ctx: Context): CheckedType {
      const [variable, key] = args;
      const name = boundName(checker, variable, 'sortBy()');
      const lt = checker.check(receiver, ctx);
      if (lt.kind !== 'list' && lt.kind !== 'dyn')
        throw checker.createError(
          'invalid_argument',
          `sortBy() receiver must be a list, got '${lt}'`,
          receiver,
        );
      const elem = lt.kind === 'list' && lt.valueType ? lt.valueType : checker.getType('dyn');
      bodyCtx = ctx.forkWithVariable(name, elem);
      checker.check(key, bodyCtx);
      markSync(ast, [receiver, key]);
      return lt.kind === 'list' ? lt : checker.getType('list');
    },
    evaluate(ev: Evaluator, _m: unknown, ctx: Context): unknown {
      const list = ev.run(receiver, ctx);
      if (!Array.isArray(list)) throw new Error('sortBy() receiver must be a list');
      const keys = list.map((v) => ev.run(args[1], bodyCtx!.reuse(ctx).setIterValue(v, ev)));
      if (keys.some((k) => k instanceof Promise)) throw new Error('sortBy() key must not be asynchronous');
      return sortByKeys(list, keys);
    },
  };
}
