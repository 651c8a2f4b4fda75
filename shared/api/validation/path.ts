// Field paths as Kubernetes prints them (field.Path): `spec.containers[0].image`,
// map keys in brackets without quotes: `metadata.labels[app]`.
export const child = (p: string, name: string) => (p ? `${p}.${name}` : name);
export const index = (p: string, i: number) => `${p}[${i}]`;
export const key = (p: string, k: string) => `${p}[${k}]`;

export type Obj = Record<string, unknown>;

/** The value as an object, or undefined. */
export const asObj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;
export const asArr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
export const asStr = (v: unknown): string => (typeof v === 'string' ? v : '');
export const asStrMap = (v: unknown): Record<string, string> => (asObj(v) as Record<string, string>) ?? {};
export const isSet = (v: unknown) => v !== undefined && v !== null;
