// Names outside the cluster's zones go to the host's resolvers (CoreDNS
// `forward . /etc/resolv.conf`), their answers cached as CoreDNS's `cache 30`
// does. The query bytes are passed through unchanged (same id); the answer
// comes back unchanged.
import { createSocket } from 'node:dgram';
import { connect, isIP } from 'node:net';
import { readFileSync } from 'node:fs';
import { decode } from 'dns-packet';
import { LRUCache } from 'lru-cache';

export interface Upstream {
  host: string;
  port: number;
}

const TIMEOUT_MS = 2000;
/** CoreDNS cache: 256 shards x 39 items; success answers at most 3600 s, denials 1800 s, at least 5 s. */
const CACHE_ITEMS = 9984;
const MAX_SUCCESS_TTL = 3600;
const MAX_DENIAL_TTL = 1800;
const MIN_TTL = 5;

/** The nameservers of a resolv.conf (CoreDNS `forward . /etc/resolv.conf`). */
export function resolvConfNameservers(text: string): Upstream[] {
  const out: Upstream[] = [];
  for (const line of text.split('\n')) {
    const m = /^\s*nameserver\s+(\S+)/.exec(line);
    if (m && isIP(m[1].replace(/%.*$/, ''))) out.push({ host: m[1].replace(/%.*$/, ''), port: 53 });
  }
  return out;
}

/** --upstream: "none", or a list of resolv.conf paths and ip[:port] / [ipv6]:port addresses. */
export function parseUpstreams(list: string[]): Upstream[] {
  if (list.length === 1 && list[0] === 'none') return [];
  const out: Upstream[] = [];
  for (const item of list) {
    if (item.startsWith('/')) {
      out.push(...resolvConfNameservers(readFileSync(item, 'utf8')));
      continue;
    }
    const m = /^\[([^\]]+)\](?::(\d+))?$/.exec(item) ?? /^([^:]+)(?::(\d+))?$/.exec(item);
    const host = m ? m[1] : item;
    if (!isIP(host))
      throw new Error(`invalid upstream ${JSON.stringify(item)}: not an IP address or a file path`);
    out.push({ host, port: m?.[2] ? Number(m[2]) : 53 });
  }
  return out;
}

export interface CacheCounters {
  hit(kind: 'success' | 'denial'): void;
  miss(): void;
}

interface Cached {
  bytes: Buffer;
  kind: 'success' | 'denial';
}

function cacheTtl(bytes: Buffer): { ttl: number; kind: 'success' | 'denial' } | undefined {
  const p = decode(bytes) as ReturnType<typeof decode> & { rcode?: string };
  if (p.flag_tc || (p.rcode !== 'NOERROR' && p.rcode !== 'NXDOMAIN')) return undefined;
  const answers = (p.answers ?? []).filter((a) => a.type !== 'OPT');
  if (answers.length) {
    const ttl = Math.min(...answers.map((a) => a.ttl ?? 0));
    return { ttl: Math.max(MIN_TTL, Math.min(MAX_SUCCESS_TTL, ttl)), kind: 'success' };
  }
  const soa = (p.authorities ?? []).find((a) => a.type === 'SOA') as any;
  const ttl = soa ? Math.min(soa.ttl ?? 0, soa.data?.minimum ?? 0) : MIN_TTL;
  return { ttl: Math.max(MIN_TTL, Math.min(MAX_DENIAL_TTL, ttl)), kind: 'denial' };
}

export class Forwarder {
  private readonly cache = new LRUCache<string, Cached>({ max: CACHE_ITEMS, ttlAutopurge: false });

  constructor(
    readonly upstreams: Upstream[],
    private readonly counters: CacheCounters,
  ) {}

  get cacheSize(): { success: number; denial: number } {
    let success = 0;
    for (const v of this.cache.values()) if (v.kind === 'success') success++;
    return { success, denial: this.cache.size - success };
  }

  /** The upstream's answer to the query bytes, or undefined when none answered. */
  async forward(query: Buffer, key: string, tcp: boolean): Promise<Buffer | undefined> {
    const hit = this.cache.get(key);
    if (hit) {
      this.counters.hit(hit.kind);
      const out = Buffer.from(hit.bytes);
      query.copy(out, 0, 0, 2);
      return out;
    }
    this.counters.miss();
    for (const u of this.upstreams) {
      try {
        const answer = tcp ? await this.askTcp(u, query) : await this.askUdp(u, query);
        const c = cacheTtl(answer);
        if (c && c.ttl > 0) this.cache.set(key, { bytes: answer, kind: c.kind }, { ttl: c.ttl * 1000 });
        return answer;
      } catch {
        // Next upstream.
      }
    }
    return undefined;
  }

  private askUdp(u: Upstream, query: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const sock = createSocket(isIP(u.host) === 6 ? 'udp6' : 'udp4');
      const done = (err?: Error, msg?: Buffer) => {
        clearTimeout(timer);
        sock.close();
        if (err) reject(err);
        else resolve(msg!);
      };
      const timer = setTimeout(() => done(new Error('timeout')), TIMEOUT_MS);
      sock.on('error', (err) => done(err));
      sock.on('message', (msg) => {
        if (msg.length >= 2 && msg.readUInt16BE(0) === query.readUInt16BE(0)) done(undefined, msg);
      });
      sock.send(query, u.port, u.host);
    });
  }

  private askTcp(u: Upstream, query: Buffer): Promise<Buffer> {
    return new Promise((resolve, reject) => {
      const sock = connect({ host: u.host, port: u.port });
      let buf = Buffer.alloc(0);
      const done = (err?: Error, msg?: Buffer) => {
        clearTimeout(timer);
        sock.destroy();
        if (err) reject(err);
        else resolve(msg!);
      };
      const timer = setTimeout(() => done(new Error('timeout')), TIMEOUT_MS);
      sock.on('error', (err) => done(err));
      sock.on('connect', () => {
        const len = Buffer.alloc(2);
        len.writeUInt16BE(query.length);
        sock.write(Buffer.concat([len, query]));
      });
      sock.on('data', (d) => {
        buf = Buffer.concat([buf, d]);
        if (buf.length >= 2 && buf.length >= 2 + buf.readUInt16BE(0))
          done(undefined, buf.subarray(2, 2 + buf.readUInt16BE(0)));
      });
    });
  }
}
