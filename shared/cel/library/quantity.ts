// Kubernetes' CEL quantity library: quantity(string), isQuantity, and the
// Quantity methods (comparisons, arithmetic, conversions), exact like
// resource.Quantity.
import type { Environment } from '@marcbachmann/cel-js';
import {
  addQuantity,
  compareQuantity,
  formatQuantity,
  parseQuantity,
  subQuantity,
  type Quantity,
} from '../../api/validation/quantity';

export class CelQuantity {
  constructor(readonly q: Quantity) {}
  toString(): string {
    return formatQuantity(this.q);
  }
}

const MAX_INT64 = 2n ** 63n - 1n;
const MIN_INT64 = -(2n ** 63n);

function parse(s: string): CelQuantity {
  try {
    return new CelQuantity(parseQuantity(s));
  } catch (e) {
    throw new Error(
      `quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`,
      {
        cause: e,
      },
    );
  }
}

function exactInteger(q: Quantity): bigint | undefined {
  if (q.exp >= 0) return q.mant * 10n ** BigInt(q.exp);
  const div = 10n ** BigInt(-q.exp);
  return q.mant % div === 0n ? q.mant / div : undefined;
}

const fromInt = (n: bigint) => new CelQuantity({ mant: n, exp: 0, format: 'DecimalSI' });
const cmp = (a: CelQuantity, b: CelQuantity) => compareQuantity(a.q, b.q);

export function registerQuantity(env: Environment): void {
  env.registerType('kubernetes.Quantity', CelQuantity);
  env.registerFunction('quantity(string): kubernetes.Quantity', parse);
  env.registerFunction('isQuantity(string): bool', (s: string) => {
    try {
      parseQuantity(s);
      return true;
    } catch {
      return false;
    }
  });
  const Q = 'kubernetes.Quantity';
  env.registerFunction(`${Q}.sign(): int`, (a: CelQuantity) => BigInt(Math.sign(Number(a.q.mant))));
  env.registerFunction(`${Q}.isGreaterThan(${Q}): bool`, (a: CelQuantity, b: CelQuantity) => cmp(a, b) > 0);
  env.registerFunction(`${Q}.isLessThan(${Q}): bool`, (a: CelQuantity, b: CelQuantity) => cmp(a, b) < 0);
  env.registerFunction(`${Q}.compareTo(${Q}): int`, (a: CelQuantity, b: CelQuantity) => BigInt(cmp(a, b)));
  env.registerFunction(
    `${Q}.add(${Q}): ${Q}`,
    (a: CelQuantity, b: CelQuantity) => new CelQuantity(addQuantity(a.q, b.q)),
  );
  env.registerFunction(
    `${Q}.add(int): ${Q}`,
    (a: CelQuantity, b: bigint) => new CelQuantity(addQuantity(a.q, fromInt(b).q)),
  );
  env.registerFunction(
    `${Q}.sub(${Q}): ${Q}`,
    (a: CelQuantity, b: CelQuantity) => new CelQuantity(subQuantity(a.q, b.q)),
  );
  env.registerFunction(
    `${Q}.sub(int): ${Q}`,
    (a: CelQuantity, b: bigint) => new CelQuantity(subQuantity(a.q, fromInt(b).q)),
  );
  env.registerFunction(`${Q}.isInteger(): bool`, (a: CelQuantity) => {
    const n = exactInteger(a.q);
    return n !== undefined && n >= MIN_INT64 && n <= MAX_INT64;
  });
  env.registerFunction(`${Q}.asInteger(): int`, (a: CelQuantity) => {
    const n = exactInteger(a.q);
    if (n === undefined || n < MIN_INT64 || n > MAX_INT64) throw new Error('cannot convert value to integer');
    return n;
  });
  env.registerFunction(
    `${Q}.asApproximateFloat(): double`,
    (a: CelQuantity) => Number(a.q.mant) * 10 ** a.q.exp,
  );
  env.registerOperator(`${Q} == ${Q}`, (a: CelQuantity, b: CelQuantity) => cmp(a, b) === 0);
}
