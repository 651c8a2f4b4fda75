// intstr.GetScaledValueFromIntOrPercent: 3 stays 3, "25%" of total is rounded up or down.

export type IntOrString = number | string | undefined | null;

export function scaledValue(v: IntOrString, total: number, roundUp: boolean): number {
  if (v === undefined || v === null) return 0;
  if (typeof v === 'number') return v;
  const s = v.trim();
  if (/^-?\d+$/.test(s)) {
    // An int given as a string is not a percentage (Kubernetes rejects it).
    throw new Error(`invalid value for IntOrString: invalid type: string is not a percentage`);
  }
  const m = /^(-?\d+)%$/.exec(s);
  if (!m) throw new Error(`invalid value "${s}": must be an integer or percentage (e.g. '5%')`);
  const pct = Number(m[1]);
  const raw = (pct * total) / 100;
  return roundUp ? Math.ceil(raw) : Math.floor(raw);
}

export function isPercent(v: IntOrString): boolean {
  return typeof v === 'string' && v.trim().endsWith('%');
}
