// Service CIDR arithmetic: the `kubernetes` Service takes the first address.

export function parseIPv4(ip: string): number {
  const parts = ip.split('.').map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255))
    throw new Error(`invalid IPv4 address "${ip}"`);
  return ((parts[0] << 24) | (parts[1] << 16) | (parts[2] << 8) | parts[3]) >>> 0;
}

export const formatIPv4 = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join('.');

export interface CIDR {
  base: number;
  bits: number;
  /** Number of addresses. */
  size: number;
}

export function parseCIDR(cidr: string): CIDR {
  const [ip, bitsText] = cidr.split('/');
  const bits = Number(bitsText);
  if (!Number.isInteger(bits) || bits < 0 || bits > 32) throw new Error(`invalid CIDR "${cidr}"`);
  const mask = bits === 0 ? 0 : (~0 << (32 - bits)) >>> 0;
  return { base: (parseIPv4(ip) & mask) >>> 0, bits, size: 2 ** (32 - bits) };
}

export function firstServiceIP(range: string): string {
  const c = parseCIDR(range.split(',')[0].trim());
  return formatIPv4(c.base + 1);
}
