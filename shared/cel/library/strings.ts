// The cel-go strings extension functions Kubernetes enables (version 2) that the
// engine lacks: charAt, replace, strings.quote and format (string-format.ts). Not
// reverse: it came in version 3.
import type { Environment } from '@marcbachmann/cel-js';
import { registerStringFormat } from './string-format';

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

const QUOTE_ESCAPES: Record<string, string> = {
  '\x07': '\\a',
  '\b': '\\b',
  '\f': '\\f',
  '\n': '\\n',
  '\r': '\\r',
  '\t': '\\t',
  '\v': '\\v',
  '\\': '\\\\',
  '"': '\\"',
};

/** strings.quote: the string in double quotes, its escapes written out; other characters as they are. */
function quote(s: string): string {
  // A lone surrogate is not a rune: cel-go writes U+FFFD for an invalid one.
  const runes = s.replace(
    /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g,
    '\ufffd',
  );
  let out = '"';
  for (const c of runes) out += QUOTE_ESCAPES[c] ?? c;
  return out + '"';
}

/** `strings` as a namespace value, as `format` is one in format.ts. */
class StringsNamespace {}

export function registerStrings(env: Environment): void {
  const NS = 'ext.StringsNamespace';
  env.registerType(NS, StringsNamespace);
  env.registerConstant('strings', NS, new StringsNamespace());
  env.registerFunction(`${NS}.quote(string): string`, (_ns: unknown, s: string) => quote(s));
  registerStringFormat(env);
  env.registerFunction('string.charAt(int): string', (s: string, i: bigint) => {
    const cps = codePoints(s);
    if (i < 0n || i > BigInt(cps.length)) throw new Error(`index out of range: ${i}`);
    return cps[Number(i)] ?? '';
  });
  env.registerFunction('string.replace(string, string): string', (s: string, a: string, b: string) =>
    replace(s, a, b),
  );
  env.registerFunction('string.replace(string, string, int): string', replace);
}
