// IPv4 helpers of the rule generation: the proxy programs the ip family.
import { isIPv4 } from 'node:net';

export { isIPv4 };

function toInt(ip: string): number {
  return ip.split('.').reduce((n, o) => n * 256 + Number(o), 0);
}

/** A "a.b.c.d/n" CIDR, checked; throws on anything else. */
export function parseCIDR(cidr: string): { base: number; bits: number } {
  const m = /^([^/]+)\/(\d{1,2})$/.exec(cidr.trim());
  if (!m || !isIPv4(m[1]) || Number(m[2]) > 32) throw new Error(`invalid CIDR address: ${cidr}`);
  return { base: toInt(m[1]), bits: Number(m[2]) };
}

export function cidrContains(cidr: string, ip: string): boolean {
  const { base, bits } = parseCIDR(cidr);
  if (bits === 0) return true;
  const shift = 32 - bits;
  return Math.floor(toInt(ip) / 2 ** shift) === Math.floor(base / 2 ** shift);
}

/** Numeric order of dotted quads (for stable output). */
export function compareIPv4(a: string, b: string): number {
  return toInt(a) - toInt(b);
}
