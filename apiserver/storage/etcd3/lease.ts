// Leases for TTL keys, shared like kube-apiserver's --lease-reuse-duration-seconds:
// instead of one LeaseGrant per write, a lease granted a little longer than the
// TTL is reused by later writes with the same TTL for as long as its remaining
// time still covers that TTL. Keys may thus live up to the extra time longer.
import type { Connection } from './connection';
import { METHOD, leaseGrantFields } from './proto';
import { decodeLeaseGrant } from './responses';
import { encode } from '../../../shared/etcd/wire';

/** Like kube: the extra time is 5% of the TTL, capped by the reuse duration. */
const REUSE_PERCENT = 0.05;
/** Like kube's default: at most this many keys on one lease. */
const MAX_OBJECTS_PER_LEASE = 1000;

interface CachedLease {
  id: bigint;
  /** When etcd expires it, at the earliest (measured from before the grant). */
  expiresAt: number;
  attached: number;
}

export class LeaseManager {
  private readonly cache = new Map<number, CachedLease>();
  private readonly inflight = new Map<number, Promise<CachedLease>>();
  /** LeaseGrant calls made (for tests and metrics). */
  granted = 0;

  constructor(
    private readonly conn: Connection,
    private readonly reuseSeconds: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** A lease under which a key lives at least ttlSeconds. */
  async get(ttlSeconds: number): Promise<bigint> {
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    const c = this.cache.get(ttl);
    if (c && this.now() + ttl * 1000 < c.expiresAt && c.attached < MAX_OBJECTS_PER_LEASE) {
      c.attached++;
      return c.id;
    }
    // Writes that arrive while a lease for their TTL is being granted share it.
    let pending = this.inflight.get(ttl);
    if (!pending) {
      pending = this.grant(ttl).finally(() => this.inflight.delete(ttl));
      this.inflight.set(ttl, pending);
    }
    const lease = await pending;
    lease.attached++;
    return lease.id;
  }

  private async grant(ttl: number): Promise<CachedLease> {
    const extra = Math.min(Math.floor(ttl * REUSE_PERCENT), Math.max(0, this.reuseSeconds));
    const start = this.now();
    const res = await this.conn.call(
      METHOD.leaseGrant,
      encode(leaseGrantFields(ttl + extra)),
      decodeLeaseGrant,
      {
        // A retried grant at worst leaves an unused lease behind, which expires.
        idempotent: true,
      },
    );
    if (res.error) throw new Error(`etcd: lease grant failed: ${res.error}`);
    this.granted++;
    // etcd may raise a TTL below its minimum; the granted TTL is what counts.
    const lease = { id: res.id, expiresAt: start + Math.max(res.ttl, ttl + extra) * 1000, attached: 0 };
    this.cache.set(ttl, lease);
    return lease;
  }

  /** Forgets a lease etcd no longer knows (revoked, or expired early). */
  invalidate(id: bigint): void {
    for (const [ttl, c] of this.cache) if (c.id === id) this.cache.delete(ttl);
  }
}
