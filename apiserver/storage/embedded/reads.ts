// The read path. lmdb-js reads are synchronous and a synchronous run of reads
// shares one read snapshot, so each method here sees one consistent state.
//
// Latest reads touch only kv. A read at revision R < current takes the current
// state and replaces the keys that changed after R by their value at R: the
// prevKv of their first change after R, found through the hist index (or, when
// R is only a few revisions back, by scanning the log from R, which is cheaper).
import type { RangeOptions, RangeResult } from '../interface';
import { errCompacted, errFutureRevision, StorageError } from '../errors';
import type { Dbs } from './dbs';
import {
  CREATE,
  DELETE,
  type Event,
  histBound,
  INITIAL_REVISION,
  type Kv,
  LOG_FULL,
  LOG_HEAD,
  LOG_PREV,
  LOG_VALUE,
  type LogHead,
  MAX_KEY_BYTES,
  prefixEnd,
  UNRESOLVED,
  utf8Compare,
} from './codec';

/** A historic range scans the log instead of hist when at most this many revisions passed since. */
const LOG_SCAN_MAX = 2048;
const MAX_REVISION = Number.MAX_SAFE_INTEGER;
/** Below every key. lmdb-js starts a range without `start` at byte 0x05, not at the beginning. */
const MIN_KEY = Buffer.from([0]);

/** A key that changed after the read revision R. */
interface Changed {
  key: string;
  /** Revision of its first change after R; that event's prevKv is its value at R. */
  first: number;
  presentAtR: boolean;
  presentNow: boolean;
}

export class Reader {
  constructor(
    private readonly dbs: Dbs,
    /** The compacted revision (kept by the writer). */
    private readonly compacted: () => number,
  ) {}

  /** The revision of the current read snapshot. */
  revision(): number {
    return this.dbs.meta.get('rev') ?? INITIAL_REVISION;
  }

  /** Makes sure the read snapshot includes `rev` (published revisions always are). */
  fresh(rev: number): void {
    if (this.revision() < rev) this.dbs.env.resetReadTxn();
  }

  private check(revision: number, current: number): void {
    if (revision > current) throw errFutureRevision(current);
    const compacted = this.compacted();
    if (revision < compacted) throw errCompacted(compacted);
  }

  get(key: string, revision = 0): { kv: Kv | null; revision: number } {
    checkBound(key);
    const current = this.revision();
    if (!revision || revision === current) return { kv: this.latest(key), revision: current };
    this.check(revision, current);
    return { kv: this.at(key, revision), revision };
  }

  private latest(key: string): Kv | null {
    const kv = this.dbs.kv.get(key);
    if (!kv) return null;
    kv.key = key;
    return kv;
  }

  private at(key: string, revision: number): Kv | null {
    const now = this.latest(key);
    if (now && now.modRevision <= revision) return now;
    if (key.includes('\0')) return null; // never written
    for (const [, rev] of this.dbs.hist.getKeys({
      start: [key, revision + 1],
      end: [key, MAX_REVISION],
      limit: 1,
    })) {
      return this.prevOf(rev);
    }
    return null;
  }

  /** The prevKv of the event at `rev`. */
  private prevOf(rev: number): Kv | null {
    const { log, logCodec } = this.dbs;
    let prev: Kv | null;
    logCodec.mode = LOG_PREV;
    try {
      prev = (log.get(rev) as Kv | null | undefined) ?? null;
    } finally {
      logCodec.mode = LOG_FULL;
    }
    if (prev && prev.value === UNRESOLVED) prev.value = this.valueAt(prev.modRevision);
    return prev;
  }

  /** The value written at `rev` (a referenced previous value). */
  private valueAt(rev: number): Buffer {
    const { log, logCodec } = this.dbs;
    let value: Buffer | undefined;
    logCodec.mode = LOG_VALUE;
    try {
      value = log.get(rev) as Buffer | undefined;
    } finally {
      logCodec.mode = LOG_FULL;
    }
    if (value === undefined) throw new StorageError('Unavailable', `history is missing revision ${rev}`);
    return value;
  }

  count(prefix: string): number {
    checkBound(prefix);
    return this.dbs.kv.getCount({ start: prefix || MIN_KEY, end: prefixEnd(prefix) });
  }

  range(prefix: string, opts: RangeOptions = {}): RangeResult {
    checkBound(prefix);
    if (opts.startKey !== undefined) checkBound(opts.startKey);
    const current = this.revision();
    const revision = opts.revision || 0;
    const limit = opts.limit && opts.limit > 0 ? opts.limit : 0;
    const start =
      opts.startKey !== undefined && Buffer.compare(Buffer.from(opts.startKey), Buffer.from(prefix)) > 0
        ? opts.startKey
        : prefix;
    const end = prefixEnd(prefix);
    if (!revision || revision === current) {
      const kvs: Kv[] = [];
      const rows = this.dbs.kv.getRange({ start: start || MIN_KEY, end, limit: limit || undefined });
      for (const { key, value } of rows) {
        value.key = key;
        kvs.push(value);
      }
      const remaining =
        limit && kvs.length === limit
          ? this.dbs.kv.getCount({ start: kvs[kvs.length - 1].key, end, exclusiveStart: true })
          : 0;
      return { kvs, revision: current, more: remaining > 0, remaining };
    }
    this.check(revision, current);
    return this.rangeAt(start, end, limit, revision, current);
  }

  private rangeAt(
    start: string,
    end: Buffer | undefined,
    limit: number,
    revision: number,
    current: number,
  ): RangeResult {
    const changed =
      current - revision <= LOG_SCAN_MAX
        ? this.changedFromLog(start, end, revision, current)
        : this.changedFromHist(start, end, revision);
    const kvs: Kv[] = [];
    let ci = 0;
    const it = this.dbs.kv.getRange({ start: start || MIN_KEY, end })[Symbol.iterator]();
    try {
      let a = it.next();
      while (!limit || kvs.length < limit) {
        const c = ci < changed.length ? changed[ci] : null;
        if (a.done && !c) break;
        const cmp = a.done ? 1 : c ? utf8Compare(a.value.key, c.key) : -1;
        if (cmp < 0) {
          // Unchanged since the revision: the current value is the value then.
          a.value.value.key = a.value.key;
          kvs.push(a.value.value);
          a = it.next();
          continue;
        }
        if (cmp === 0) a = it.next();
        ci++;
        if (c!.presentAtR) kvs.push(this.prevOf(c!.first)!);
      }
    } finally {
      it.return?.();
    }
    let remaining = 0;
    if (limit && kvs.length === limit) {
      const last = kvs[kvs.length - 1].key;
      remaining = this.dbs.kv.getCount({ start: last, end, exclusiveStart: true });
      for (const c of changed) {
        if (utf8Compare(c.key, last) > 0) remaining += Number(c.presentAtR) - Number(c.presentNow);
      }
    }
    return { kvs, revision, more: remaining > 0, remaining };
  }

  /** Keys in [start, end) changed after `revision`, in key order, from the log. */
  private changedFromLog(
    start: string,
    end: Buffer | undefined,
    revision: number,
    current: number,
  ): Changed[] {
    const { log, logCodec } = this.dbs;
    const byKey = new Map<string, Changed>();
    logCodec.mode = LOG_HEAD;
    logCodec.lo = start ? Buffer.from(start) : null;
    logCodec.hi = end ?? null;
    try {
      for (const { value } of log.getRange({ start: revision + 1, end: current + 1 })) {
        if (!value) continue;
        const h = value as LogHead;
        const c = byKey.get(h.key);
        if (c) c.presentNow = h.code !== DELETE;
        else
          byKey.set(h.key, {
            key: h.key,
            first: h.revision,
            presentAtR: h.code !== CREATE,
            presentNow: h.code !== DELETE,
          });
      }
    } finally {
      logCodec.mode = LOG_FULL;
      logCodec.lo = logCodec.hi = null;
    }
    return [...byKey.values()].sort((x, y) => utf8Compare(x.key, y.key));
  }

  /** Keys in [start, end) changed after `revision`, in key order, from the hist index. */
  private changedFromHist(start: string, end: Buffer | undefined, revision: number): Changed[] {
    const out: Changed[] = [];
    let cur: Changed | null = null;
    for (const { key, value } of this.dbs.hist.getRange({
      start: start ? histBound(start) : MIN_KEY,
      end: end ? histBound(end) : undefined,
    })) {
      const [k, rev] = key;
      if (rev <= revision) continue;
      if (cur && cur.key === k) {
        cur.presentNow = value !== DELETE;
        continue;
      }
      cur = { key: k, first: rev, presentAtR: value !== CREATE, presentNow: value !== DELETE };
      out.push(cur);
    }
    return out;
  }

  /**
   * Events under `prefix` with revision in (after, upTo], at most maxEvents of
   * them and maxScan log entries looked at. `scanned` is the last revision looked at.
   */
  events(prefix: Buffer | null, after: number, upTo: number, maxEvents: number, maxScan: number) {
    const { log, logCodec } = this.dbs;
    const events: Event[] = [];
    let scanned = upTo;
    let n = 0;
    logCodec.mode = LOG_FULL;
    logCodec.prefix = prefix && prefix.length > 0 ? prefix : null;
    try {
      for (const { key, value } of log.getRange({ start: after + 1, end: upTo + 1 })) {
        if (value) events.push(value as Event);
        if (events.length >= maxEvents || ++n >= maxScan) {
          scanned = key;
          break;
        }
      }
    } finally {
      logCodec.prefix = null;
    }
    // Previous values by reference: usually an earlier event of this same read.
    let byRev: Map<number, Buffer> | null = null;
    for (const e of events) {
      const prev = e.prevKv;
      if (!prev || prev.value !== UNRESOLVED) continue;
      if (!byRev) byRev = new Map(events.filter((x) => x.kv).map((x) => [x.revision, x.kv!.value]));
      prev.value = byRev.get(prev.modRevision) ?? this.valueAt(prev.modRevision);
    }
    return { events, scanned };
  }

  /** Up to `limit` expiry entries due at `now`. */
  due(now: number, limit: number): [deadline: number, key: string][] {
    const out: [number, string][] = [];
    for (const k of this.dbs.ttl.getKeys({ start: [0, ''], limit })) {
      if (k[0] > now) break;
      out.push(k);
    }
    return out;
  }

  /** The earliest expiry deadline (Infinity: none). */
  nextDeadline(): number {
    for (const k of this.dbs.ttl.getKeys({ start: [0, ''], limit: 1 })) return k[0];
    return Infinity;
  }
}

function checkBound(s: string): void {
  if (typeof s !== 'string') throw new StorageError('InvalidObject', 'key must be a string');
  if (s.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(s) > MAX_KEY_BYTES) {
    throw new StorageError('InvalidObject', `key longer than ${MAX_KEY_BYTES} bytes`);
  }
}
