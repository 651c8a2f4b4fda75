// The flag values of a component when nothing is given (for in-process use and tests).
import type { FlagSpec, FlagValues } from './flags';

const attr = (name: string) => name.replace(/-([a-z0-9])/g, (_, c: string) => c.toUpperCase());

export function defaultFlagValues(specs: FlagSpec[], overrides: FlagValues = {}): FlagValues {
  const out: FlagValues = {};
  for (const s of specs) out[attr(s.name)] = s.default ?? (s.type === 'bool' ? false : undefined);
  return { ...out, ...overrides };
}
