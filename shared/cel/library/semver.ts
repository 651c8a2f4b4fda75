// Kubernetes' CEL semver library: semver(string[, normalize]), isSemver and
// the Semver methods (major, minor, patch, comparisons), with semver 2.0
// precedence.
import type { Environment } from '@marcbachmann/cel-js';

export class CelSemver {
  constructor(
    readonly major: bigint,
    readonly minor: bigint,
    readonly patch: bigint,
    readonly pre: string[],
    readonly raw: string,
  ) {}
  toString(): string {
    return this.raw;
  }
}

const NUM = '(0|[1-9]\\d*)';
const IDENT = '(?:0|[1-9]\\d*|\\d*[a-zA-Z-][0-9a-zA-Z-]*)';
const SEMVER = new RegExp(
  `^${NUM}\\.${NUM}\\.${NUM}(?:-(${IDENT}(?:\\.${IDENT})*))?(?:\\+([0-9a-zA-Z-]+(?:\\.[0-9a-zA-Z-]+)*))?$`,
);

function parse(s: string, normalize = false): CelSemver | undefined {
  let v = s;
  if (normalize) {
    v = v.replace(/^v/, '');
    const m = /^(\d+)(?:\.(\d+))?(?:\.(\d+))?(.*)$/.exec(v);
    if (m) v = `${BigInt(m[1])}.${BigInt(m[2] ?? 0)}.${BigInt(m[3] ?? 0)}${m[4]}`;
  }
  const m = SEMVER.exec(v);
  if (!m) return undefined;
  return new CelSemver(BigInt(m[1]), BigInt(m[2]), BigInt(m[3]), m[4] ? m[4].split('.') : [], v);
}

function compare(a: CelSemver, b: CelSemver): number {
  for (const k of ['major', 'minor', 'patch'] as const) if (a[k] !== b[k]) return a[k] < b[k] ? -1 : 1;
  if (!a.pre.length || !b.pre.length) return a.pre.length === b.pre.length ? 0 : a.pre.length ? -1 : 1;
  for (let i = 0; i < Math.max(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i];
    const y = b.pre[i];
    if (x === undefined) return -1;
    if (y === undefined) return 1;
    if (x === y) continue;
    const nx = /^\d+$/.test(x);
    const ny = /^\d+$/.test(y);
    if (nx && ny) return BigInt(x) < BigInt(y) ? -1 : 1;
    if (nx !== ny) return nx ? -1 : 1;
    return x < y ? -1 : 1;
  }
  return 0;
}

export function registerSemver(env: Environment): void {
  const S = 'kubernetes.Semver';
  const must = (s: string, normalize: boolean) => {
    const v = parse(s, normalize);
    if (!v) throw new Error(`could not parse semver: ${s}`);
    return v;
  };
  env.registerType(S, CelSemver);
  env.registerFunction(`semver(string): ${S}`, (s: string) => must(s, false));
  env.registerFunction(`semver(string, bool): ${S}`, (s: string, n: boolean) => must(s, n));
  env.registerFunction('isSemver(string): bool', (s: string) => parse(s) !== undefined);
  env.registerFunction('isSemver(string, bool): bool', (s: string, n: boolean) => parse(s, n) !== undefined);
  env.registerFunction(`${S}.major(): int`, (v: CelSemver) => v.major);
  env.registerFunction(`${S}.minor(): int`, (v: CelSemver) => v.minor);
  env.registerFunction(`${S}.patch(): int`, (v: CelSemver) => v.patch);
  env.registerFunction(`${S}.isLessThan(${S}): bool`, (a: CelSemver, b: CelSemver) => compare(a, b) < 0);
  env.registerFunction(`${S}.isGreaterThan(${S}): bool`, (a: CelSemver, b: CelSemver) => compare(a, b) > 0);
  env.registerFunction(`${S}.compareTo(${S}): int`, (a: CelSemver, b: CelSemver) => BigInt(compare(a, b)));
  env.registerOperator(`${S} == ${S}`, (a: CelSemver, b: CelSemver) => compare(a, b) === 0);
}
