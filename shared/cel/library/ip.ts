// Kubernetes' CEL IP and CIDR libraries: ip(string), isIP, cidr(string),
// isCIDR and their methods, with Go's netip rules (no IPv4-mapped IPv6, no
// zones, canonical forms from string()).
import { isIP } from 'node:net';
import type { Environment } from '@marcbachmann/cel-js';

/** An address as 4 or 16 bytes. */
export class CelIP {
  constructor(readonly bytes: Uint8Array) {}
  get family(): 4 | 6 {
    return this.bytes.length === 4 ? 4 : 6;
  }
  toString(): string {
    if (this.family === 4) return [...this.bytes].join('.');
    const groups: number[] = [];
    for (let i = 0; i < 16; i += 2) groups.push((this.bytes[i] << 8) | this.bytes[i + 1]);
    // RFC 5952: the longest run (2+) of zero groups becomes "::".
    let best = -1;
    let bestLen = 1;
    for (let i = 0; i < 8;) {
      if (groups[i] !== 0) {
        i++;
        continue;
      }
      let j = i;
      while (j < 8 && groups[j] === 0) j++;
      if (j - i > bestLen) [best, bestLen] = [i, j - i];
      i = j;
    }
    const hex = groups.map((g) => g.toString(16));
    if (best < 0) return hex.join(':');
    return `${hex.slice(0, best).join(':')}::${hex.slice(best + bestLen).join(':')}`;
  }
}

export class CelCIDR {
  constructor(
    readonly ip: CelIP,
    readonly prefix: number,
  ) {}
  toString(): string {
    return `${this.ip}/${this.prefix}`;
  }
}

function parseIP(s: string): CelIP | undefined {
  const fam = isIP(s);
  if (fam === 4) {
    const parts = s.split('.');
    if (parts.some((p) => p.length > 1 && p.startsWith('0'))) return undefined; // Go rejects leading zeros
    return new CelIP(Uint8Array.from(parts.map(Number)));
  }
  if (fam === 6) {
    if (s.includes('%') || (/\d+\.\d+\.\d+\.\d+$/.test(s) && /^::ffff:/i.test(s))) return undefined;
    const bytes = new Uint8Array(16);
    let head = s;
    let tail = '';
    if (s.includes('::')) [head, tail] = s.split('::');
    const expand = (part: string): number[] => {
      if (!part) return [];
      const out: number[] = [];
      for (const g of part.split(':')) {
        if (g.includes('.')) {
          const v4 = g.split('.').map(Number);
          out.push((v4[0] << 8) | v4[1], (v4[2] << 8) | v4[3]);
        } else out.push(parseInt(g, 16));
      }
      return out;
    };
    const h = expand(head);
    const t = expand(tail);
    const groups = [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
    groups.forEach((g, i) => {
      bytes[i * 2] = g >> 8;
      bytes[i * 2 + 1] = g & 0xff;
    });
    return new CelIP(bytes);
  }
  return undefined;
}

function parseCIDR(s: string): CelCIDR | undefined {
  const i = s.indexOf('/');
  if (i < 0) return undefined;
  const ip = parseIP(s.slice(0, i));
  const p = s.slice(i + 1);
  if (!ip || !/^\d{1,3}$/.test(p) || (p.length > 1 && p.startsWith('0'))) return undefined;
  const prefix = Number(p);
  if (prefix > ip.bytes.length * 8) return undefined;
  return new CelCIDR(ip, prefix);
}

function masked(ip: CelIP, prefix: number): CelIP {
  const out = Uint8Array.from(ip.bytes);
  for (let bit = prefix; bit < out.length * 8; bit++) out[bit >> 3] &= ~(0x80 >> (bit & 7));
  return new CelIP(out);
}

function contains(c: CelCIDR, ip: CelIP): boolean {
  if (ip.family !== c.ip.family) return false;
  return masked(ip, c.prefix).toString() === masked(c.ip, c.prefix).toString();
}

const must = <T>(v: T | undefined, what: string, s: string): T => {
  if (v === undefined)
    throw new Error(`${what} parse error during conversion from string: ${JSON.stringify(s)}`);
  return v;
};

const startsWith = (ip: CelIP, ...prefix: number[]) => prefix.every((b, i) => ip.bytes[i] === b);

export function registerIP(env: Environment): void {
  const IP = 'net.IP';
  const CIDR = 'net.CIDR';
  env.registerType(IP, CelIP);
  env.registerType(CIDR, CelCIDR);
  env.registerFunction(`ip(string): ${IP}`, (s: string) => must(parseIP(s), 'IP Address', s));
  env.registerFunction('isIP(string): bool', (s: string) => parseIP(s) !== undefined);
  env.registerFunction(`string(${IP}): string`, (ip: CelIP) => ip.toString());
  env.registerFunction(`${IP}.family(): int`, (ip: CelIP) => BigInt(ip.family));
  env.registerFunction(`${IP}.isUnspecified(): bool`, (ip: CelIP) => ip.bytes.every((b) => b === 0));
  env.registerFunction(`${IP}.isLoopback(): bool`, (ip: CelIP) =>
    ip.family === 4 ? ip.bytes[0] === 127 : ip.toString() === '::1',
  );
  env.registerFunction(`${IP}.isLinkLocalMulticast(): bool`, (ip: CelIP) =>
    ip.family === 4 ? startsWith(ip, 224, 0, 0) : ip.bytes[0] === 0xff && (ip.bytes[1] & 0x0f) === 0x02,
  );
  env.registerFunction(`${IP}.isLinkLocalUnicast(): bool`, (ip: CelIP) =>
    ip.family === 4 ? startsWith(ip, 169, 254) : ip.bytes[0] === 0xfe && (ip.bytes[1] & 0xc0) === 0x80,
  );
  env.registerFunction(`${IP}.isGlobalUnicast(): bool`, (ip: CelIP) => {
    if (ip.family === 4) {
      const all = ip.bytes.every((b) => b === 255);
      return (
        !all &&
        !ip.bytes.every((b) => b === 0) &&
        ip.bytes[0] !== 127 &&
        ip.bytes[0] < 224 &&
        !startsWith(ip, 169, 254)
      );
    }
    return (
      !ip.bytes.every((b) => b === 0) &&
      ip.toString() !== '::1' &&
      ip.bytes[0] !== 0xff &&
      !(ip.bytes[0] === 0xfe && (ip.bytes[1] & 0xc0) === 0x80)
    );
  });
  env.registerOperator(`${IP} == ${IP}`, (a: CelIP, b: CelIP) => a.toString() === b.toString());

  env.registerFunction(`cidr(string): ${CIDR}`, (s: string) => must(parseCIDR(s), 'network address', s));
  env.registerFunction('isCIDR(string): bool', (s: string) => parseCIDR(s) !== undefined);
  env.registerFunction(`string(${CIDR}): string`, (c: CelCIDR) => c.toString());
  env.registerFunction(`${CIDR}.containsIP(${IP}): bool`, contains);
  env.registerFunction(`${CIDR}.containsIP(string): bool`, (c: CelCIDR, s: string) =>
    contains(c, must(parseIP(s), 'IP Address', s)),
  );
  env.registerFunction(
    `${CIDR}.containsCIDR(${CIDR}): bool`,
    (c: CelCIDR, o: CelCIDR) => o.prefix >= c.prefix && contains(c, o.ip),
  );
  env.registerFunction(`${CIDR}.containsCIDR(string): bool`, (c: CelCIDR, s: string) => {
    const o = must(parseCIDR(s), 'network address', s);
    return o.prefix >= c.prefix && contains(c, o.ip);
  });
  env.registerFunction(`${CIDR}.ip(): ${IP}`, (c: CelCIDR) => c.ip);
  env.registerFunction(
    `${CIDR}.masked(): ${CIDR}`,
    (c: CelCIDR) => new CelCIDR(masked(c.ip, c.prefix), c.prefix),
  );
  env.registerFunction(`${CIDR}.prefixLength(): int`, (c: CelCIDR) => BigInt(c.prefix));
  env.registerOperator(`${CIDR} == ${CIDR}`, (a: CelCIDR, b: CelCIDR) => a.toString() === b.toString());
}
