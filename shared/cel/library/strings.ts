// The cel-go strings extension functions Kubernetes enables that the engine
// lacks: charAt, replace, reverse, strings.quote-free subset.
import type { Environment } from '@marcbachmann/cel-js';

const codePoints = (s: string) => [...s];

function replace(s: string, from: string, to: string, n = -1n): string {
  if (n === 0n) return s;
  if (n < 0n) return s.split(from).join(to);
  let out = '';
  let rest = s;
  let count = 0n;
  while (count < n) {
    const i = rest.indexOf(from);
    if (i < 0) break;
    out += rest.slice(0, i) + to;
    rest = rest.slice(i + from.length);
    count++;
    if (from === '') {
      if (!rest) break;
      out += rest[0];
      rest = rest.slice(1);
    }
  }
  return out + rest;
}

export function registerStrings(env: Environment): void {
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const cps = codePoints(s);
    if (i < 0n || i > BigInt(cps.length)) throw new Error(`index out of range: ${i}`);
    return cps[Number(i)] ?? '';
  });
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
    replace(s, a, b),
  );
  env.registerFunction('string.replace(string, string, int): string', replace);
  env.registerFunction('string.reverse(): string', (s: string) => codePoints(s).reverse().join(''));
}
