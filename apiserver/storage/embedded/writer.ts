// The write path: group commit.
//
// create/update/delete (and TTL expiries and compaction records) are queued.
// One lmdb-js transaction callback takes everything queued so far, validates
// each operation in order against the state inside the write transaction
// (create-if-absent, compare-and-swap on modRevision, delete with precondition),
// assigns consecutive revisions, writes kv + log + hist (+ ttl) and the revision
// counter, and returns. lmdb-js commits on its writer thread and fsyncs after the
// commit (overlappingSync), so the event loop never waits on the disk and the
// next batch can be built while the previous one is being flushed. Once a
// batch is flushed, watchers get its events and then every caller's promise
// settles, in revision order.
//
// The callback runs as an lmdb child transaction: if it throws half way, the
// whole batch is rolled back and its callers get 'Unavailable'.
import type { Dbs } from './dbs';
import {
  CODE_BYTES,
  codeOf,
  CREATE,
  DELETE,
  encodeKv,
  encodeLog,
  Event,
  INITIAL_REVISION,
  Kv,
  LOG_FULL,
  LOG_HEAD,
  LOG_VALUE,
  type EventCode,
  type LogHead,
  Scratch,
  UNRESOLVED,
  UPDATE,
} from './codec';
import { StorageError, errConflict, errFutureRevision, errKeyExists, errKeyNotFound } from '../errors';

export const OP_CREATE = 0;
export const OP_UPDATE = 1;
export const OP_DELETE = 2;
/** Delete the key if it still carries this deadline (TTL expiry). */
export const OP_EXPIRE = 3;
/** Record a compaction revision. */
export const OP_COMPACT = 4;

/** Operations one transaction takes at most, bounding the time the event loop spends in it. */
const MAX_BATCH_OPS = 1024;
/**
 * Log entries a transaction deletes while compacting, on top of one per write
 * it carries (so compaction outpaces any write rate). ~1-2 ms of event-loop time.
 */
const COMPACT_CHUNK = 200;
const MAX_REVISION = Number.MAX_SAFE_INTEGER;

export class WriteOp {
  result: unknown = null;
  error: StorageError | null = null;
  resolve!: (v: unknown) => void;
  reject!: (e: unknown) => void;
  constructor(
    readonly kind: number,
    readonly key: string,
    readonly value: Buffer | null,
    /** modRevision to compare (-1: none); the compaction revision for OP_COMPACT. */
    readonly expected: number,
    /** Expiry deadline in ms (0: none); for OP_EXPIRE the deadline the key must still carry. */
    readonly lease: number,
    /** Told the revision once the commit is visible to later writes, before the fsync (PutOptions). */
    readonly onCommitted?: (modRevision: number) => void,
  ) {}
}

export class Batch {
  ops: WriteOp[] = [];
  /** What the transaction callback threw (the child transaction was rolled back). */
  threw: unknown = undefined;
  events: Event[] = [];
  applied = false;
  /** Revision after the batch. */
  revision = 0;
  /** Earliest expiry deadline the batch added (Infinity: none). */
  minDeadline = Infinity;
  /** First log revision still stored after the batch. */
  logStart = 0;
}

export interface WriterHooks {
  /** After a batch is durable, before its callers' promises settle. */
  published(batch: Batch): void;
  /** A commit or flush failed; the writer refuses everything from now on. */
  failed(err: StorageError): void;
}

export class Writer {
  private pending: WriteOp[] = [];
  private txnQueued = false;
  /** Settles batches strictly in commit order. */
  private tail: Promise<void> = Promise.resolve();
  private readonly scratch = new Scratch();
  private compactWaiters: { revision: number; resolve: () => void; reject: (e: unknown) => void }[] = [];
  private closed = false;
  /** Set when a commit or flush failed: the file may not hold what was acknowledged, so stop. */
  broken: StorageError | null = null;
  /** Compacted revision (in memory; persisted in meta by the batch that records it). */
  compacted: number;
  /** First revision still in the log; below `compacted` means deletions are pending. */
  logStart: number;

  constructor(
    private readonly dbs: Dbs,
    private readonly hooks: WriterHooks,
  ) {
    this.compacted = dbs.meta.get('compacted') ?? 0;
    this.logStart = this.readLogStart();
  }

  submit(op: WriteOp): Promise<unknown> {
    const p = new Promise<unknown>((resolve, reject) => {
      op.resolve = resolve;
      op.reject = reject;
    });
    if (this.closed || this.broken) {
      op.reject(this.broken ?? new StorageError('Closed', 'storage is closed', op.key || undefined));
      return p;
    }
    this.pending.push(op);
    this.schedule();
    return p;
  }

  /** Resolves once log entries below `revision` are deleted (durably). */
  compactionDone(revision: number): Promise<void> {
    // Deleted in a batch still on its way to disk: the tail covers that batch.
    if (this.logStart >= revision) return this.tail;
    if (this.broken) return Promise.reject(this.broken);
    const p = new Promise<void>((resolve, reject) => this.compactWaiters.push({ revision, resolve, reject }));
    this.schedule();
    return p;
  }

  /** Resolves when everything submitted so far has settled. */
  drain(): Promise<void> {
    return this.tail;
  }

  /** Refuses new operations; queued ones still commit. Pending compaction waiters fail. */
  async close(): Promise<void> {
    this.closed = true;
    while (this.pending.length > 0 || this.txnQueued) {
      this.schedule();
      await this.tail;
      await new Promise((r) => setImmediate(r));
    }
    await this.tail;
    for (const w of this.compactWaiters.splice(0)) w.reject(new StorageError('Closed', 'storage is closed'));
  }

  private schedule(): void {
    if (this.txnQueued || this.broken) return;
    const compacting = !this.closed && this.compacted > this.logStart;
    if (this.pending.length === 0 && !compacting) return;
    this.txnQueued = true;
    const batch = new Batch();
    let committed: Promise<unknown>;
    let flushed: Promise<unknown>;
    try {
      committed = this.dbs.env.childTransaction(() => this.apply(batch));
      // Ask for the flush of this very transaction now: `flushed` looks up the
      // transaction being built when `then` is called.
      flushed = new Promise((resolve, reject) => this.dbs.env.flushed.then(resolve, reject));
    } catch (err) {
      committed = flushed = Promise.reject(err);
    }
    // Later writes see the batch once it is committed; its callers hear only once it is flushed.
    void committed.then(
      () => this.committed(batch),
      () => {},
    );
    const done = Promise.all([committed, flushed]);
    this.tail = this.tail
      .then(() => done)
      .then(
        () => this.finish(batch),
        (err: unknown) => this.fail(batch, err),
      );
  }

  private committed(batch: Batch): void {
    if (batch.threw !== undefined) return; // rolled back: nothing of it is visible
    for (const op of batch.ops) {
      if (!op.onCommitted || op.error || !op.result) continue;
      try {
        op.onCommitted((op.result as Kv).modRevision);
      } catch {
        // A caller's hook must not fail the batch of others.
      }
    }
  }

  /** Runs inside the write transaction, on the main thread. */
  private apply(batch: Batch): void {
    this.txnQueued = false;
    const ops = this.pending.length <= MAX_BATCH_OPS ? this.pending : this.pending.slice(0, MAX_BATCH_OPS);
    this.pending = ops === this.pending ? [] : this.pending.slice(MAX_BATCH_OPS);
    batch.ops = ops;
    batch.applied = true;
    const { compacted, logStart } = this;
    try {
      this.applyOps(batch, ops);
    } catch (err) {
      // The child transaction is rolled back: undo in-memory moves now, before
      // the next batch's callback can run on them.
      this.compacted = compacted;
      this.logStart = logStart;
      batch.threw = err;
      throw err;
    } finally {
      // More queued than one batch takes, or compaction left: go again once this
      // callback has returned (a transaction queued from inside it would join it).
      if (this.pending.length > 0 || this.compacted > this.logStart) setImmediate(() => this.schedule());
    }
  }

  private applyOps(batch: Batch, ops: WriteOp[]): void {
    const { kv, meta } = this.dbs;
    const start = meta.get('rev') ?? INITIAL_REVISION;
    let rev = start;
    for (const op of ops) {
      const key = op.key;
      switch (op.kind) {
        case OP_CREATE: {
          const next = new Kv(key, op.value!, rev + 1, rev + 1, op.lease);
          // One lookup: LMDB refuses to overwrite and the rest is written only after.
          if (kv.put(key, encodeKv(this.scratch, next), { noOverwrite: true }).result === false) {
            op.error = errKeyExists(key);
            break;
          }
          rev++;
          this.write(batch, CREATE, key, rev, next, null, true);
          op.result = next;
          break;
        }
        case OP_UPDATE: {
          const cur = kv.get(key);
          if (!cur) {
            op.error = errKeyNotFound(key);
            break;
          }
          cur.key = key;
          if (cur.modRevision !== op.expected) {
            op.error = errConflict(key, cur);
            break;
          }
          rev++;
          const next = new Kv(key, op.value!, cur.createRevision, rev, op.lease);
          this.write(batch, UPDATE, key, rev, next, cur, false);
          op.result = next;
          break;
        }
        case OP_DELETE:
        case OP_EXPIRE: {
          const cur = kv.get(key);
          if (cur) cur.key = key;
          if (op.kind === OP_EXPIRE && (!cur || cur.lease !== op.lease)) {
            // Rewritten or deleted since: drop the stale queue entry, if any.
            this.dbs.ttl.remove([op.lease, key]);
            break;
          }
          if (!cur) {
            op.error = errKeyNotFound(key);
            break;
          }
          if (op.expected >= 0 && cur.modRevision !== op.expected) {
            op.error = errConflict(key, cur);
            break;
          }
          rev++;
          this.write(batch, DELETE, key, rev, null, cur, false);
          op.result = { revision: rev, prevKv: cur };
          break;
        }
        case OP_COMPACT:
          if (op.expected > rev) op.error = errFutureRevision(rev);
          else if (op.expected > this.compacted) {
            this.compacted = op.expected;
            meta.put('compacted', op.expected);
          }
          break;
      }
    }
    if (rev !== start) meta.put('rev', rev);
    batch.revision = rev;
    if (this.compacted > this.logStart) this.deleteHistory(COMPACT_CHUNK + ops.length);
    batch.logStart = this.logStart;
  }

  private write(
    batch: Batch,
    code: EventCode,
    key: string,
    rev: number,
    next: Kv | null,
    prev: Kv | null,
    kvWritten: boolean,
  ): void {
    const { kv, log, hist, ttl } = this.dbs;
    const s = this.scratch;
    if (!kvWritten) {
      if (next) kv.put(key, encodeKv(s, next));
      else kv.remove(key);
    }
    // The previous value is referenced by revision while its own log entry exists.
    const inline = prev !== null && prev.modRevision < this.logStart;
    // Appending keeps log pages full; a failed append would mean a revision went backwards.
    const appended = log.put(rev, encodeLog(s, code, key, rev, next, prev, inline), { append: true });
    if (appended.result === false) throw new Error(`log append failed at revision ${rev}`);
    hist.put([key, rev], CODE_BYTES[code]);
    if (prev && prev.lease) ttl.remove([prev.lease, key]);
    if (next && next.lease) {
      ttl.put([next.lease, key], CODE_BYTES[0]);
      if (next.lease < batch.minDeadline) batch.minDeadline = next.lease;
    }
    batch.events.push(new Event(code, key, rev, next, prev));
  }

  /**
   * Deletes the next chunk of log entries below the compacted revision, with
   * their hist entries. A kept entry whose previous value lives in a deleted
   * one gets that value copied in first.
   */
  private deleteHistory(max: number): void {
    const { log, hist, logCodec } = this.dbs;
    const end = Math.min(this.compacted, this.logStart + max);
    const heads: LogHead[] = [];
    logCodec.mode = LOG_HEAD;
    try {
      for (const { value } of log.getRange({ start: this.logStart, end })) heads.push(value as LogHead);
    } finally {
      logCodec.mode = LOG_FULL;
    }
    // Only a key's last entry in the chunk can be the predecessor of an entry kept.
    const last = new Map<string, LogHead>();
    for (const h of heads) last.set(h.key, h);
    for (const h of last.values()) {
      if (h.code === DELETE) continue; // what follows a delete is a create: no previous value
      for (const [, next] of hist.getKeys({
        start: [h.key, h.revision + 1],
        end: [h.key, MAX_REVISION],
        limit: 1,
      })) {
        if (next >= this.compacted) this.inlinePrev(next, h.revision);
      }
    }
    for (const h of heads) {
      log.remove(h.revision);
      hist.remove([h.key, h.revision]);
    }
    this.logStart = end;
  }

  /** Rewrites the log entry at `rev` with the value of its predecessor at `prevRev` copied in. */
  private inlinePrev(rev: number, prevRev: number): void {
    const { log, logCodec } = this.dbs;
    let ev: Event | undefined;
    let value: Buffer | undefined;
    try {
      logCodec.mode = LOG_FULL;
      ev = log.get(rev) as Event | undefined;
      logCodec.mode = LOG_VALUE;
      value = log.get(prevRev) as Buffer | undefined;
    } finally {
      logCodec.mode = LOG_FULL;
    }
    const prev = ev?.prevKv;
    if (!ev || !prev || value === undefined || prev.value !== UNRESOLVED) return;
    prev.value = value;
    log.put(rev, encodeLog(this.scratch, codeOf(ev.type), ev.key, rev, ev.kv, prev, true));
  }

  private finish(batch: Batch): void {
    this.hooks.published(batch);
    for (const op of batch.ops) {
      if (op.error) op.reject(op.error);
      else op.resolve(op.result);
    }
    if (this.compactWaiters.length > 0) {
      this.compactWaiters = this.compactWaiters.filter((w) => {
        if (w.revision > batch.logStart) return true;
        w.resolve();
        return false;
      });
    }
  }

  private fail(batch: Batch, err: unknown): void {
    const cause = new StorageError('Unavailable', `write failed: ${String(err)}`);
    if (batch.threw !== undefined) {
      // Rolled back (see apply): nothing of the batch reached the file.
      for (const op of batch.ops) op.reject(cause);
      return;
    }
    // The commit or its fsync failed: what is on disk is unknown, and watchers
    // would see a gap. Refuse everything from now on.
    this.broken = cause;
    if (!batch.applied) this.txnQueued = false;
    for (const op of batch.ops) op.reject(cause);
    for (const op of this.pending.splice(0)) op.reject(cause);
    for (const w of this.compactWaiters.splice(0)) w.reject(cause);
    this.hooks.failed(cause);
  }

  private readLogStart(): number {
    // An explicit start: lmdb-js would otherwise begin at byte 0x05.
    for (const k of this.dbs.log.getKeys({ start: 0, limit: 1 })) return k;
    return (this.dbs.meta.get('rev') ?? INITIAL_REVISION) + 1;
  }
}
