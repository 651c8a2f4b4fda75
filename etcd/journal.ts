// The stand-in's durable state in --data-dir, in lmdb: every kept version of every key by
// [mod revision, key] (what etcd's bbolt "key" bucket holds by revision), the leases, and
// the compacted revision and member identity. The key space is rebuilt from it at start.
// A write resolves once its lmdb transaction is committed and synced (with
// --unsafe-no-fsync: committed), so an acknowledged write is never lost; writes issued in
// one event-loop turn share a commit.
import { mkdirSync } from 'node:fs';
import { open, type Database, type RootDatabase } from 'lmdb';
import type { Rev } from './mvcc';

interface StoredRev {
  c: number;
  n: number;
  v: Buffer;
  l: string;
}

export interface StoredLease {
  id: bigint;
  ttl: number;
}

export class Journal {
  private readonly env: RootDatabase;
  private readonly revs: Database<StoredRev, [number, string]>;
  private readonly leases: Database<number, string>;
  private readonly meta: Database<unknown, string>;
  /** The last write's commit: later reads of "everything written" wait for it. */
  last: Promise<void> = Promise.resolve();

  constructor(dataDir: string, fsync: boolean) {
    mkdirSync(dataDir, { recursive: true });
    this.env = open({
      path: dataDir,
      noSubdir: false,
      maxDbs: 4,
      // The commit promise means durable: no sync overlapping the next transaction.
      overlappingSync: false,
      noSync: !fsync,
    });
    this.revs = this.env.openDB({ name: 'revs' });
    this.leases = this.env.openDB({ name: 'leases' });
    this.meta = this.env.openDB({ name: 'meta' });
  }

  /** Every kept version in revision order. */
  *versions(): Generator<Rev> {
    for (const { key, value } of this.revs.getRange()) {
      const [mod, k] = key;
      yield { key: k, mod, create: value.c, version: value.n, value: value.v, lease: BigInt(value.l) };
    }
  }

  storedLeases(): StoredLease[] {
    return [...this.leases.getRange()].map(({ key, value }) => ({ id: BigInt(key), ttl: value }));
  }

  getMeta<T>(name: string): T | undefined {
    return this.meta.get(name) as T | undefined;
  }

  /** One atomic write: versions added, versions dropped, leases granted or gone, meta set. */
  write(w: {
    add?: readonly Rev[];
    drop?: readonly Rev[];
    grant?: StoredLease;
    revoke?: bigint;
    meta?: Record<string, unknown>;
  }): Promise<void> {
    const done = this.env.batch(() => {
      for (const r of w.add ?? [])
        void this.revs.put([r.mod, r.key], { c: r.create, n: r.version, v: r.value, l: String(r.lease) });
      for (const r of w.drop ?? []) void this.revs.remove([r.mod, r.key]);
      if (w.grant) void this.leases.put(String(w.grant.id), w.grant.ttl);
      if (w.revoke !== undefined) void this.leases.remove(String(w.revoke));
      for (const [k, v] of Object.entries(w.meta ?? {})) void this.meta.put(k, v);
    });
    const p = done.then(() => undefined);
    this.last = p;
    return p;
  }

  async close(): Promise<void> {
    await this.last.catch(() => {});
    await this.env.close();
  }
}
