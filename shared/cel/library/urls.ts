// Kubernetes' CEL URL library: url(string), isURL, and the URL accessors.
// Like Go's url.ParseRequestURI: absolute URLs or absolute paths only.
import type { Environment } from '@marcbachmann/cel-js';

export class CelURL {
  constructor(
    readonly raw: string,
    readonly scheme: string,
    readonly host: string,
    readonly path: string,
    readonly query: string,
  ) {}
  toString(): string {
    return this.raw;
  }
}

function parseURL(s: string): CelURL | undefined {
  if (s.startsWith('/')) {
    const [path, query = ''] = s.split('?', 2);
    return new CelURL(s, '', '', path, query);
  }
  const m = /^([a-zA-Z][a-zA-Z0-9+.-]*):(\/\/([^/?#]*))?([^?#]*)(\?([^#]*))?$/.exec(s);
  if (!m) return undefined;
  return new CelURL(s, m[1], m[3] ?? '', m[4], m[6] ?? '');
}

function hostname(host: string): string {
  const h = host.replace(/^.*@/, '');
  if (h.startsWith('[')) return h.slice(1, h.indexOf(']'));
  const i = h.lastIndexOf(':');
  return i >= 0 ? h.slice(0, i) : h;
}

function port(host: string): string {
  const h = host.replace(/^.*@/, '');
  const close = h.lastIndexOf(']');
  const i = h.lastIndexOf(':');
  return i > close ? h.slice(i + 1) : '';
}

function queryMap(q: string): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const [k, v] of new URLSearchParams(q)) out.set(k, [...(out.get(k) ?? []), v]);
  return out;
}

export function registerURLs(env: Environment): void {
  const U = 'kubernetes.URL';
  env.registerType(U, CelURL);
  env.registerFunction(`url(string): ${U}`, (s: string) => {
    const u = parseURL(s);
    if (!u)
      throw new Error(`URL parse error during conversion from string: parse "${s}": invalid URI for request`);
    return u;
  });
  env.registerFunction('isURL(string): bool', (s: string) => parseURL(s) !== undefined);
  env.registerFunction(`${U}.getScheme(): string`, (u: CelURL) => u.scheme);
  env.registerFunction(`${U}.getHost(): string`, (u: CelURL) => u.host);
  env.registerFunction(`${U}.getHostname(): string`, (u: CelURL) => hostname(u.host));
  env.registerFunction(`${U}.getPort(): string`, (u: CelURL) => port(u.host));
  env.registerFunction(`${U}.getEscapedPath(): string`, (u: CelURL) => u.path);
  env.registerFunction(`${U}.getQuery(): map<string, list<string>>`, (u: CelURL) => queryMap(u.query));
}
