// Leases as etcd's lessor keeps them: granted with a TTL (at least etcd's minimum for its
// default election timeout), renewed by keep-alives, and on expiry or revoke the keys
// attached are deleted in one revision (watchers see DELETEs). Leases are durable; after a
// restart each lives its full TTL again, as etcd's new leader extends them.
import { randomBytes } from 'node:crypto';
import type { Fields } from '../shared/etcd/wire';
import { keyBytes } from './messages';
import { EtcdError } from './mvcc';
import type { EtcdStore, LeaseHooks } from './store';

/** etcd's minimum TTL: 3/2 election timeouts (10 ticks of 100 ms), rounded up to seconds. */
export const MIN_TTL_SECONDS = 2;
/** etcd's MaxLeaseTTL. */
export const MAX_TTL_SECONDS = 9_000_000_000;
/** How often expired leases are looked for (etcd's revoke loop). */
const EXPIRY_CHECK_MS = 500;

interface Lease {
  id: bigint;
  ttl: number;
  /** When it expires, in ms (performance.now()). */
  expiry: number;
  keys: Set<string>;
}

export class Lessor implements LeaseHooks {
  private readonly leases = new Map<bigint, Lease>();
  private readonly timer: NodeJS.Timeout;
  private revoking = Promise.resolve();

  constructor(
    private readonly store: EtcdStore,
    private readonly now: () => number = () => performance.now(),
  ) {
    for (const l of store.journal.storedLeases()) this.add(l.id, l.ttl);
    for (const kv of store.mvcc.range('', '\0', store.mvcc.rev)) if (kv.lease) this.attach(kv.key, kv.lease);
    store.leases = this;
    this.timer = setInterval(() => this.expire(), EXPIRY_CHECK_MS);
    this.timer.unref();
  }

  private add(id: bigint, ttl: number): Lease {
    const l: Lease = { id, ttl, expiry: this.now() + ttl * 1000, keys: new Set() };
    this.leases.set(id, l);
    return l;
  }

  exists(id: bigint): boolean {
    return this.leases.has(id);
  }

  attach(key: string, id: bigint): void {
    this.leases.get(id)?.keys.add(key);
  }

  detach(key: string, id: bigint): void {
    this.leases.get(id)?.keys.delete(key);
  }

  /** LeaseGrantResponse. */
  async grant(ttlAsked: number, idAsked: bigint): Promise<Fields> {
    if (ttlAsked > MAX_TTL_SECONDS) throw new EtcdError('leaseTtlTooLarge');
    let id = idAsked;
    if (id === 0n) {
      do id = randomBytes(8).readBigUInt64BE() >> 2n;
      while (id === 0n || this.leases.has(id));
    } else if (this.leases.has(id)) throw new EtcdError('leaseExists');
    const ttl = Math.max(ttlAsked, MIN_TTL_SECONDS);
    this.add(id, ttl);
    await this.store.journal.write({ grant: { id, ttl } });
    return [
      [1, this.store.header()],
      [2, id],
      [3, ttl],
    ];
  }

  /** LeaseRevokeResponse. */
  async revoke(id: bigint): Promise<Fields> {
    if (!this.leases.has(id)) throw new EtcdError('leaseNotFound');
    await this.drop(id);
    return [[1, this.store.header()]];
  }

  private async drop(id: bigint): Promise<void> {
    const l = this.leases.get(id);
    if (!l) return;
    this.leases.delete(id);
    await this.store.deleteKeys([...l.keys]);
    await this.store.journal.write({ revoke: id });
  }

  /** LeaseKeepAliveResponse: TTL 0 for a lease that is gone, as etcd answers. */
  keepAlive(id: bigint): Fields {
    const l = this.leases.get(id);
    if (l) l.expiry = this.now() + l.ttl * 1000;
    return [
      [1, this.store.header()],
      [2, id],
      [3, l ? l.ttl : 0],
    ];
  }

  /** LeaseTimeToLiveResponse: TTL -1 for a lease that is gone. */
  timeToLive(id: bigint, withKeys: boolean): Fields {
    const l = this.leases.get(id);
    const f: [number, number | bigint | Buffer | Fields][] = [
      [1, this.store.header()],
      [2, id],
    ];
    if (!l) {
      f.push([3, -1n]);
      return f;
    }
    f.push([3, Math.max(0, Math.ceil((l.expiry - this.now()) / 1000))], [4, l.ttl]);
    if (withKeys) for (const k of l.keys) f.push([5, keyBytes(k)]);
    return f;
  }

  /** LeaseLeasesResponse. */
  list(): Fields {
    const f: [number, Fields][] = [[1, this.store.header()]];
    for (const id of this.leases.keys()) f.push([2, [[1, id]]]);
    return f;
  }

  /** Revokes what has expired, one lease after another. */
  expire(): void {
    const now = this.now();
    for (const l of this.leases.values()) {
      if (l.expiry > now) continue;
      this.revoking = this.revoking.then(() => this.drop(l.id));
    }
  }

  close(): Promise<void> {
    clearInterval(this.timer);
    return this.revoking;
  }
}
