// Pod IP addresses from the node's pod CIDR (--pod-cidr, else the Node's
// spec.podCIDR), like the host-local IPAM of a bridge network: the network
// address, the first host address (the bridge/gateway) and, for IPv4, the
// broadcast address are never handed out; an address is taken per pod UID
// and given back when the pod is gone.

export interface CIDR {
  family: 4 | 6;
  base: bigint;
  bits: number;
}

function parseIPv4(s: string): bigint | undefined {
  const parts = s.split('.');
  if (parts.length !== 4) return undefined;
  let v = 0n;
  for (const p of parts) {
    if (!/^\d{1,3}$/.test(p) || Number(p) > 255) return undefined;
    v = (v << 8n) | BigInt(Number(p));
  }
  return v;
}

function parseIPv6(s: string): bigint | undefined {
  if (!/^[0-9a-fA-F:]+$/.test(s)) return undefined;
  const halves = s.split('::');
  if (halves.length > 2) return undefined;
  const head = halves[0] ? halves[0].split(':') : [];
  const tail = halves.length === 2 && halves[1] ? halves[1].split(':') : [];
  const missing = 8 - head.length - tail.length;
  if (halves.length === 1 ? head.length !== 8 : missing < 0) return undefined;
  const groups = [...head, ...Array(halves.length === 2 ? missing : 0).fill('0'), ...tail];
  let v = 0n;
  for (const g of groups) {
    if (!/^[0-9a-fA-F]{1,4}$/.test(g)) return undefined;
    v = (v << 16n) | BigInt(parseInt(g, 16));
  }
  return v;
}

export function formatIP(v: bigint, family: 4 | 6): string {
  if (family === 4) return [24n, 16n, 8n, 0n].map((s) => String((v >> s) & 255n)).join('.');
  const groups: string[] = [];
  for (let i = 7; i >= 0; i--) groups.push(((v >> BigInt(i * 16)) & 0xffffn).toString(16));
  // Compress the longest run of zero groups.
  let best = -1;
  let bestLen = 0;
  for (let i = 0; i < 8;) {
    if (groups[i] !== '0') {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === '0') j++;
    if (j - i > bestLen && j - i > 1) {
      best = i;
      bestLen = j - i;
    }
    i = j;
  }
  if (best < 0) return groups.join(':');
  return `${groups.slice(0, best).join(':')}::${groups.slice(best + bestLen).join(':')}`;
}

export function parseCIDR(text: string): CIDR {
  const [addr, len] = text.trim().split('/');
  const v4 = parseIPv4(addr);
  const family: 4 | 6 = v4 !== undefined ? 4 : 6;
  const ip = v4 ?? parseIPv6(addr);
  const max = family === 4 ? 32 : 128;
  const bits = Number(len);
  if (ip === undefined || len === undefined || !/^\d+$/.test(len) || bits > max)
    throw new Error(`invalid CIDR address: ${text}`);
  const hostBits = BigInt(max - bits);
  const base = (ip >> hostBits) << hostBits;
  return { family, base, bits };
}

export class PodIPAllocator {
  readonly cidr: CIDR;
  private readonly byPod = new Map<string, bigint>();
  private readonly used = new Set<bigint>();
  private next: bigint;
  private readonly first: bigint;
  private readonly last: bigint;

  constructor(readonly cidrText: string) {
    this.cidr = parseCIDR(cidrText);
    const max = this.cidr.family === 4 ? 32 : 128;
    const size = 1n << BigInt(max - this.cidr.bits);
    // Skip the network address and the gateway; IPv4 also keeps the broadcast address.
    this.first = this.cidr.base + 2n;
    this.last = this.cidr.base + size - (this.cidr.family === 4 ? 2n : 1n);
    if (this.first > this.last) throw new Error(`pod CIDR ${cidrText} is too small to hold pod addresses`);
    this.next = this.first;
  }

  /** The gateway address of the range (the node's bridge). */
  gateway(): string {
    return formatIP(this.cidr.base + 1n, this.cidr.family);
  }

  get size(): number {
    return Number(this.last - this.first + 1n);
  }

  get allocated(): number {
    return this.byPod.size;
  }

  /** The pod's address (the same one on every call until released). */
  allocate(podUID: string): string {
    const have = this.byPod.get(podUID);
    if (have !== undefined) return formatIP(have, this.cidr.family);
    const total = this.last - this.first + 1n;
    for (let i = 0n; i < total; i++) {
      const candidate = this.next;
      this.next = this.next >= this.last ? this.first : this.next + 1n;
      if (this.used.has(candidate)) continue;
      this.used.add(candidate);
      this.byPod.set(podUID, candidate);
      return formatIP(candidate, this.cidr.family);
    }
    throw new Error(
      `no IP addresses available in range set: ${formatIP(this.first, this.cidr.family)}-${formatIP(this.last, this.cidr.family)}`,
    );
  }

  /** Takes a known address for a pod (after a restart of the agent); false when it is not usable. */
  reserve(podUID: string, ip: string): boolean {
    const v = this.cidr.family === 4 ? parseIPv4(ip) : parseIPv6(ip);
    if (v === undefined || v < this.first || v > this.last) return false;
    const owner = [...this.byPod].find(([, x]) => x === v)?.[0];
    if (owner !== undefined) return owner === podUID;
    const had = this.byPod.get(podUID);
    if (had !== undefined) this.used.delete(had);
    this.used.add(v);
    this.byPod.set(podUID, v);
    return true;
  }

  release(podUID: string): void {
    const v = this.byPod.get(podUID);
    if (v === undefined) return;
    this.used.delete(v);
    this.byPod.delete(podUID);
  }

  addressOf(podUID: string): string | undefined {
    const v = this.byPod.get(podUID);
    return v === undefined ? undefined : formatIP(v, this.cidr.family);
  }
}
