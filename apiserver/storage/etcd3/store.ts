// Storage on etcd v3: reads are Range calls, writes are Txns comparing
// create_revision / mod_revision, so a create, a compare-and-swap or a guarded
// delete is one round trip that also returns the current value when it fails.
import type {
  GetResult,
  KeyValue,
  PutOptions,
  RangeOptions,
  RangeResult,
  Storage,
  StorageWatch,
  WatchOptions,
} from '../interface';
import {
  StorageError,
  errCompacted,
  errConflict,
  errFutureRevision,
  errKeyExists,
  errKeyNotFound,
} from '../errors';
import type { Connection } from './connection';
import { EtcdCompactor, compactTo } from './compaction';
import { isCompactedError, isFutureRevisionError, isLeaseNotFoundError, toStorageError } from './etcd-errors';
import { LeaseManager } from './lease';
import { RevisionFence } from './revision-fence';
import {
  CmpResult,
  METHOD,
  type RangeReq,
  Target,
  compare,
  opDelete,
  opPut,
  opRange,
  prefixEnd,
  rangeFields,
  txnFields,
  deleteRangeFields,
} from './proto';
import {
  EtcdKeyValue,
  type RangeResp,
  decodeDelete,
  decodeRange,
  decodeStatus,
  decodeTxn,
  type TxnResp,
} from './responses';
import { WatchManager } from './watcher';
import { encode } from '../../../shared/etcd/wire';

/** The key kube-apiserver's etcd health check reads. */
const HEALTH_KEY = 'health';

export interface EtcdStorageOptions {
  compactionIntervalMs: number;
  leaseReuseDurationSeconds: number;
}

function written(
  key: string,
  value: Buffer,
  revision: number,
  lease: bigint,
  prev?: EtcdKeyValue | null,
): KeyValue {
  const created = prev ? prev.createRevision : revision;
  return new EtcdKeyValue(key, value, created, revision, Number(lease), (prev?.version ?? 0) + 1, lease);
}

export class EtcdStorage implements Storage {
  readonly backend = 'etcd3';
  readonly watches: WatchManager;
  readonly leases: LeaseManager;
  readonly compactor: EtcdCompactor;
  /** Shared reads of the current revision behind consistent reads from the watch cache. */
  readonly fence: RevisionFence;
  private closed = false;

  constructor(
    readonly conn: Connection,
    opts: EtcdStorageOptions,
  ) {
    this.fence = new RevisionFence(() => this.currentRevision());
    this.watches = new WatchManager(conn, this.fence);
    this.leases = new LeaseManager(conn, opts.leaseReuseDurationSeconds);
    this.compactor = new EtcdCompactor(conn, opts.compactionIntervalMs);
    this.compactor.start();
  }

  private check(): void {
    if (this.closed) throw new StorageError('Closed', 'etcd3 storage is closed');
  }

  /** Maps a failed read at `revision`, asking etcd for the numbers its errors leave out. */
  private async readError(err: unknown, revision: number | undefined, key?: string): Promise<Error> {
    if (isCompactedError(err)) {
      const compacted = await this.watches.probeCompactRevision(revision ?? 0);
      return errCompacted(compacted ?? revision ?? 0);
    }
    if (isFutureRevisionError(err)) {
      const current = await this.currentRevision().catch(() => revision ?? 0);
      return errFutureRevision(current);
    }
    return toStorageError(err, key);
  }

  private async rangeCall(req: RangeReq, key?: string): Promise<RangeResp> {
    this.check();
    try {
      return await this.conn.call(METHOD.range, encode(rangeFields(req)), decodeRange, { idempotent: true });
    } catch (err) {
      throw await this.readError(err, req.revision, key);
    }
  }

  async get(key: string, revision?: number): Promise<GetResult> {
    const res = await this.rangeCall({ key, revision }, key);
    // etcd's header names its current revision; an exact read is served at the one asked for.
    return { kv: res.kvs[0] ?? null, revision: revision && revision > 0 ? revision : res.revision };
  }

  async range(prefix: string, opts: RangeOptions = {}): Promise<RangeResult> {
    const res = await this.rangeCall({
      key: opts.startKey ?? prefix,
      rangeEnd: prefixEnd(prefix),
      limit: opts.limit,
      revision: opts.revision,
      keysOnly: opts.keysOnly,
    });
    const kvs: KeyValue[] = res.kvs;
    return {
      kvs,
      revision: opts.revision && opts.revision > 0 ? opts.revision : res.revision,
      more: res.more,
      // etcd counts every key in [start, end) regardless of the limit.
      remaining: Math.max(0, res.count - kvs.length),
    };
  }

  async count(prefix: string): Promise<number> {
    return (await this.rangeCall({ key: prefix, rangeEnd: prefixEnd(prefix), countOnly: true })).count;
  }

  /** Runs a write that may carry a lease, retrying once when etcd forgot the lease. */
  private async withLease<T>(opts: PutOptions | undefined, write: (lease: bigint) => Promise<T>): Promise<T> {
    this.check();
    if (!opts?.ttlSeconds || opts.ttlSeconds <= 0) return write(0n);
    for (let attempt = 0; ; attempt++) {
      let lease: bigint;
      try {
        lease = await this.leases.get(opts.ttlSeconds);
      } catch (err) {
        throw toStorageError(err);
      }
      try {
        return await write(lease);
      } catch (err) {
        if (attempt > 0 || !(err instanceof LeaseGone)) throw err instanceof LeaseGone ? err.cause : err;
        this.leases.invalidate(lease);
      }
    }
  }

  /** One Txn; a write whose lease etcd no longer knows fails with LeaseGone. */
  private async txn(cmp: Parameters<typeof txnFields>, key: string): Promise<TxnResp> {
    this.check();
    try {
      return await this.conn.call(METHOD.txn, encode(txnFields(...cmp)), decodeTxn, { idempotent: false });
    } catch (err) {
      if (isLeaseNotFoundError(err)) throw new LeaseGone(toStorageError(err, key));
      throw toStorageError(err, key);
    }
  }

  create(key: string, value: Buffer, opts?: PutOptions): Promise<KeyValue> {
    return this.withLease(opts, async (lease) => {
      const res = await this.txn(
        [
          [compare(key, Target.Create, CmpResult.Equal, 0)],
          [opPut({ key, value, lease })],
          [opRange({ key })],
        ],
        key,
      );
      if (!res.succeeded) throw errKeyExists(key);
      this.watches.noteWrite(res.revision, key);
      return written(key, value, res.revision, lease);
    });
  }

  update(key: string, value: Buffer, expectedModRevision: number, opts?: PutOptions): Promise<KeyValue> {
    if (!(expectedModRevision > 0)) {
      // mod_revision == 0 would match an absent key and create it.
      return this.get(key).then(({ kv }) => {
        throw kv ? errConflict(key, kv) : errKeyNotFound(key);
      });
    }
    return this.withLease(opts, async (lease) => {
      const res = await this.txn(
        [
          [compare(key, Target.Mod, CmpResult.Equal, expectedModRevision)],
          [opPut({ key, value, lease, prevKv: true })],
          [opRange({ key })],
        ],
        key,
      );
      if (!res.succeeded) throw this.casFailure(key, res);
      this.watches.noteWrite(res.revision, key);
      const op = res.responses[0];
      const prev = op?.kind === 'put' ? op.put.prevKv : null;
      return written(key, value, res.revision, lease, prev);
    });
  }

  private casFailure(key: string, res: TxnResp): StorageError {
    const op = res.responses[0];
    const current: EtcdKeyValue | undefined = op?.kind === 'range' ? op.range.kvs[0] : undefined;
    return current ? errConflict(key, current) : errKeyNotFound(key);
  }

  async delete(key: string, expectedModRevision?: number): Promise<{ revision: number; prevKv: KeyValue }> {
    if (expectedModRevision === undefined) {
      this.check();
      let res;
      try {
        res = await this.conn.call(METHOD.deleteRange, encode(deleteRangeFields(key)), decodeDelete, {
          idempotent: false,
        });
      } catch (err) {
        throw toStorageError(err, key);
      }
      if (res.deleted === 0 || !res.prevKvs[0]) throw errKeyNotFound(key);
      this.watches.noteWrite(res.revision, key);
      return { revision: res.revision, prevKv: res.prevKvs[0] };
    }
    const res = await this.txn(
      [[compare(key, Target.Mod, CmpResult.Equal, expectedModRevision)], [opDelete(key)], [opRange({ key })]],
      key,
    );
    if (!res.succeeded) throw this.casFailure(key, res);
    this.watches.noteWrite(res.revision, key);
    const op = res.responses[0];
    const prev = op?.kind === 'delete' ? op.del.prevKvs[0] : undefined;
    if (!prev) throw errKeyNotFound(key);
    return { revision: res.revision, prevKv: prev };
  }

  watch(prefix: string, fromRevision: number, opts?: WatchOptions): StorageWatch {
    return this.watches.watch(prefix, fromRevision, opts?.bufferSize, opts?.prevKv ?? true);
  }

  async currentRevision(): Promise<number> {
    // A linearizable count on one key: cheap, and its header is the latest revision.
    return (await this.rangeCall({ key: HEALTH_KEY, countOnly: true })).revision;
  }

  async compact(revision: number): Promise<void> {
    this.check();
    try {
      await compactTo(this.conn, revision);
    } catch (err) {
      throw await this.readError(err, revision);
    }
  }

  async dbSize(): Promise<number> {
    this.check();
    try {
      return (await this.conn.call(METHOD.status, encode([]), decodeStatus, { idempotent: true })).dbSize;
    } catch (err) {
      throw toStorageError(err);
    }
  }

  async checkHealth(timeoutMs: number): Promise<void> {
    this.check();
    // Like kube-apiserver's etcd check: one linearizable read, so it needs a leader.
    try {
      await this.conn.call(
        METHOD.range,
        encode(rangeFields({ key: HEALTH_KEY, countOnly: true })),
        decodeRange,
        {
          idempotent: true,
          timeoutMs,
        },
      );
    } catch (err) {
      throw toStorageError(err);
    }
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.compactor.stop();
    this.watches.close();
    this.conn.close();
  }
}

/** A write failed because its lease is gone; retried once with a fresh lease. */
class LeaseGone extends Error {
  constructor(override readonly cause: Error) {
    super(cause.message);
  }
}
