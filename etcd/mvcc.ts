// The multi-version key space of tkube's etcd stand-in, as etcd's mvcc package keeps it:
// one global revision, per key create_revision / mod_revision / version, a delete is a
// tombstone that bumps the revision and resets the version, a transaction's changes share
// one revision, and history stays readable (and watchable) until compacted.
//
// Everything lives in memory (envtest data is small); durability is the journal's job
// (journal.ts). Keys are latin1 strings: one char per byte, so JS string order is etcd's
// byte order and any key bytes round-trip.
import { ETCD_ERROR, EventType, type EtcdErrorName } from '../shared/etcd/rpc';

/** One version of a key; a tombstone (a delete) has version 0. */
export interface Rev {
  readonly key: string;
  readonly create: number;
  readonly mod: number;
  readonly version: number;
  readonly value: Buffer;
  readonly lease: bigint;
}

export interface MvccEvent {
  readonly type: EventType;
  readonly kv: Rev;
  /** The key's live version before this change, if any. */
  readonly prev: Rev | null;
}

export class EtcdError extends Error {
  readonly code: number;
  constructor(readonly name_: EtcdErrorName) {
    super(ETCD_ERROR[name_].message);
    this.code = ETCD_ERROR[name_].code;
  }
}

export const isTombstone = (r: Rev): boolean => r.version === 0;

const EMPTY = Buffer.alloc(0);

/** Index of the first element of sorted `a` that is >= k. */
function lowerBound(a: readonly string[], k: string): number {
  let lo = 0;
  let hi = a.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (a[mid] < k) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** The latest of revs (ascending by mod) with mod <= rev. */
function atRevision(revs: readonly Rev[], rev: number): Rev | undefined {
  for (let i = revs.length - 1; i >= 0; i--) if (revs[i].mod <= rev) return revs[i];
  return undefined;
}

export interface RangeOptions {
  /** "" = the one key; "\0" = every key from key on. */
  end: string;
  /** 0 = the current revision. */
  revision: number;
  limit: number;
}

export class Mvcc {
  /** The revision of the last change (etcd starts at 1). */
  rev = 1;
  compacted = 0;
  private readonly keys = new Map<string, Rev[]>();
  /** Keys with any version still kept, sorted. */
  private readonly sorted: string[] = [];
  /** Every change after `compacted`, in revision order (watch history). */
  private readonly log: MvccEvent[] = [];

  /** The live version of key at the current revision. */
  get(key: string): Rev | undefined {
    const revs = this.keys.get(key);
    const r = revs?.[revs.length - 1];
    return r && !isTombstone(r) ? r : undefined;
  }

  /** Checks a revision to read at; 0 = current. */
  readRevision(revision: number, current = this.rev): number {
    if (revision > current) throw new EtcdError('futureRev');
    if (revision <= 0) return current;
    if (revision < this.compacted) throw new EtcdError('compacted');
    return revision;
  }

  /** The live versions of the keys in [key, end) at a revision (checked by readRevision), in key order. */
  range(key: string, end: string, rev: number): Rev[] {
    const out: Rev[] = [];
    if (end === '') {
      const revs = this.keys.get(key);
      const r = revs && atRevision(revs, rev);
      if (r && !isTombstone(r)) out.push(r);
      return out;
    }
    const all = end === '\0';
    for (let i = lowerBound(this.sorted, key); i < this.sorted.length; i++) {
      const k = this.sorted[i];
      if (!all && k >= end) break;
      const r = atRevision(this.keys.get(k)!, rev);
      if (r && !isTombstone(r)) out.push(r);
    }
    return out;
  }

  /** Writes one version of key at revision rev (the caller's transaction revision). */
  put(key: string, value: Buffer, lease: bigint, rev: number): MvccEvent {
    const prev = this.get(key) ?? null;
    const kv: Rev = {
      key,
      create: prev ? prev.create : rev,
      mod: rev,
      version: prev ? prev.version + 1 : 1,
      value,
      lease,
    };
    return this.append(kv, prev, EventType.Put);
  }

  /** Deletes key (live, checked by the caller) at revision rev. */
  delete(key: string, rev: number): MvccEvent {
    const prev = this.get(key)!;
    const kv: Rev = { key, create: 0, mod: rev, version: 0, value: EMPTY, lease: 0n };
    return this.append(kv, prev, EventType.Delete);
  }

  private append(kv: Rev, prev: Rev | null, type: EventType): MvccEvent {
    let revs = this.keys.get(kv.key);
    if (!revs) {
      revs = [];
      this.keys.set(kv.key, revs);
      this.sorted.splice(lowerBound(this.sorted, kv.key), 0, kv.key);
    }
    revs.push(kv);
    if (kv.mod > this.rev) this.rev = kv.mod;
    const ev: MvccEvent = { type, kv, prev };
    this.log.push(ev);
    return ev;
  }

  /** Changes with revision >= from, up to (and including) `to`. */
  eventsSince(from: number, to: number): MvccEvent[] {
    let lo = 0;
    let hi = this.log.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.log[mid].kv.mod < from) lo = mid + 1;
      else hi = mid;
    }
    const out: MvccEvent[] = [];
    for (let i = lo; i < this.log.length && this.log[i].kv.mod <= to; i++) out.push(this.log[i]);
    return out;
  }

  /**
   * Forgets history before rev as etcd's compaction does: per key, every version older than
   * the latest one at rev, and that one too when it is a tombstone. Returns the versions
   * dropped (for the journal).
   */
  compact(rev: number): Rev[] {
    const dropped: Rev[] = [];
    for (const [key, revs] of this.keys) {
      let keep = 0;
      while (keep < revs.length && revs[keep].mod <= rev) keep++;
      // revs[keep - 1] is the latest at rev: it stays unless it is a tombstone.
      let cut = keep - 1;
      if (cut >= 0 && isTombstone(revs[cut])) cut++;
      if (cut <= 0) continue;
      dropped.push(...revs.splice(0, cut));
      if (revs.length === 0) {
        this.keys.delete(key);
        this.sorted.splice(lowerBound(this.sorted, key), 1);
      }
    }
    let n = 0;
    while (n < this.log.length && this.log[n].kv.mod < rev) n++;
    this.log.splice(0, n);
    this.compacted = rev;
    return dropped;
  }

  /** Rebuilds from journal records in revision order (each record: the version and whether it is a delete). */
  load(records: Iterable<Rev>, compacted: number, rev: number): void {
    for (const kv of records) {
      const live = this.get(kv.key) ?? null;
      this.append(kv, live, isTombstone(kv) ? EventType.Delete : EventType.Put);
    }
    this.compacted = compacted;
    this.rev = Math.max(this.rev, rev, compacted);
  }

  /** Keys kept (any version), for status. */
  get size(): number {
    return this.keys.size;
  }
}
