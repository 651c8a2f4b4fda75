// Kubernetes' CEL list library: isSorted, sum, min, max, indexOf, lastIndexOf.
import type { Environment } from '@marcbachmann/cel-js';
import { celCompare, celEquals } from './values';

function isSorted(list: unknown[]): boolean {
  for (let i = 1; i < list.length; i++) if (celCompare(list[i - 1], list[i]) > 0) return false;
  return true;
}

function sum(list: unknown[]): unknown {
  if (!list.length) return 0n;
  let acc: any = list[0];
  for (let i = 1; i < list.length; i++) acc = acc + (list[i] as any);
  return acc;
}

function extreme(list: unknown[], sign: number, name: string): unknown {
  if (!list.length) throw new Error(`${name}(list) called on empty list`);
  let best = list[0];
  for (const v of list.slice(1)) if (celCompare(v, best) * sign > 0) best = v;
  return best;
}

const indexOf = (list: unknown[], v: unknown) => BigInt(list.findIndex((x) => celEquals(x, v)));
function lastIndexOf(list: unknown[], v: unknown): bigint {
  for (let i = list.length - 1; i >= 0; i--) if (celEquals(list[i], v)) return BigInt(i);
  return -1n;
}

export function registerLists(env: Environment): void {
  for (const t of [
    'int',
    'uint',
    'double',
    'string',
    'bool',
    'bytes',
    'google.protobuf.Duration',
    'google.protobuf.Timestamp',
  ]) {
    env.registerFunction(`list<${t}>.isSorted(): bool`, isSorted);
    env.registerFunction(`list<${t}>.min(): ${t}`, (l: unknown[]) => extreme(l, -1, 'min'));
    env.registerFunction(`list<${t}>.max(): ${t}`, (l: unknown[]) => extreme(l, 1, 'max'));
    env.registerFunction(`list<${t}>.indexOf(${t}): int`, indexOf);
    env.registerFunction(`list<${t}>.lastIndexOf(${t}): int`, lastIndexOf);
  }
  for (const t of ['int', 'uint', 'double']) env.registerFunction(`list<${t}>.sum(): ${t}`, sum);
}
