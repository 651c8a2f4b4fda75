// cel-go's sets extension (ext.Sets(), on in Kubernetes since 1.29): lists taken
// as sets, their elements compared with CEL's equality.
import type { Environment } from '@marcbachmann/cel-js';
import { celEquals } from './values';

/** `sets` as a namespace value, as `format` is one in format.ts. */
class SetsNamespace {}

const has = (list: unknown[], v: unknown) => list.some((x) => celEquals(x, v));

/** Whether every element of `sub` is in `list` (an empty `sub` always is). */
const setsContains = (list: unknown[], sub: unknown[]): boolean => sub.every((v) => has(list, v));

export function registerSets(env: Environment): void {
  const NS = 'ext.SetsNamespace';
  env.registerType(NS, SetsNamespace);
  env.registerConstant('sets', NS, new SetsNamespace());
  env.registerFunction(`${NS}.contains(list<A>, list<A>): bool`, (_ns: unknown, a: unknown[], b: unknown[]) =>
    setsContains(a, b),
  );
  env.registerFunction(
    `${NS}.equivalent(list<A>, list<A>): bool`,
    (_ns: unknown, a: unknown[], b: unknown[]) => setsContains(a, b) && setsContains(b, a),
  );
  env.registerFunction(
    `${NS}.intersects(list<A>, list<A>): bool`,
    (_ns: unknown, a: unknown[], b: unknown[]) => a.some((v) => has(b, v)),
  );
}
