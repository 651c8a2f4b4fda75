// Kubernetes' CEL regex library: string.find(regex) and string.findAll(regex[, limit]).
import type { Environment } from '@marcbachmann/cel-js';

const compiled = new Map<string, RegExp>();
function re(pattern: string): RegExp {
  let r = compiled.get(pattern);
  if (!r) {
    r = new RegExp(pattern, 'gu');
    if (compiled.size > 1000) compiled.clear();
    compiled.set(pattern, r);
  }
  r.lastIndex = 0;
  return r;
}

export function registerRegex(env: Environment): void {
  env.registerFunction('string.find(string): string', (s: string, p: string) => re(p).exec(s)?.[0] ?? '');
  env.registerFunction('string.findAll(string): list<string>', (s: string, p: string) =>
    [...s.matchAll(re(p))].map((m) => m[0]),
  );
  env.registerFunction('string.findAll(string, int): list<string>', (s: string, p: string, n: bigint) => {
    const all = [...s.matchAll(re(p))].map((m) => m[0]);
    return n < 0n ? all : all.slice(0, Number(n));
  });
}
