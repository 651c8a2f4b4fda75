// The embedded Storage: LMDB in-process. See dbs.ts for the databases,
// writer.ts for the commit path, reads.ts for reads at a revision and watch.ts
// for watches.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
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
import { StorageError, errFutureRevision, isStorageError } from '../errors';
import { Compactor } from '../compactor';
import { logger } from '../../../shared/log';
import { checkKey, checkValue } from './codec';
import { openDbs, type Dbs } from './dbs';
import { Reader } from './reads';
import { EmbeddedWatch, WatchHub } from './watch';
import {
  OP_COMPACT,
  OP_CREATE,
  OP_DELETE,
  OP_EXPIRE,
  OP_UPDATE,
  type Batch,
  WriteOp,
  Writer,
} from './writer';

const log = logger('storage/embedded');

/** Longest single timer wait; a farther deadline is re-armed (setTimeout's limit is ~24.8 days). */
const MAX_TIMER_MS = 3_600_000;
/** Expiries one round queues at most. */
const EXPIRE_BATCH = 1000;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
}

export interface EmbeddedOptions {
  dataDir: string;
  /** History kept (and compaction period) in ms; default 5 minutes, 0 = no automatic compaction. */
  compactionIntervalMs?: number;
  /** Time source for TTL deadlines; tests inject one and call expireDue(). */
  clock?: Clock;
}

export interface EmbeddedStorage extends Storage {
  readonly dataDir: string;
  /** The revision below which history is gone. */
  compactedRevision(): number;
  /** Deletes every key whose TTL deadline has passed by the clock; resolves with how many. */
  expireDue(): Promise<number>;
}

export class EmbeddedStore implements EmbeddedStorage {
  readonly backend = 'embedded';
  private readonly reader: Reader;
  private readonly writer: Writer;
  private readonly hub: WatchHub;
  private readonly compactor: Compactor;
  private readonly clock: Clock;
  private ttlTimer: NodeJS.Timeout | null = null;
  private ttlTimerAt = Infinity;
  private expiring: Promise<number> | null = null;
  private closing: Promise<void> | null = null;
  private markClosed!: () => void;
  /** Resolves once close() has finished. */
  readonly closed = new Promise<void>((resolve) => (this.markClosed = resolve));

  constructor(
    private readonly dbs: Dbs,
    readonly dataDir: string,
    opts: EmbeddedOptions,
  ) {
    this.clock = opts.clock ?? Date;
    this.writer = new Writer(dbs, {
      published: (batch) => this.published(batch),
      failed: (err) => {
        log.error('write path failed; refusing further writes', { err: err.message });
        this.hub.close(err);
      },
    });
    this.reader = new Reader(dbs, () => this.writer.compacted);
    this.hub = new WatchHub(this.reader, this.reader.revision(), () => this.writer.compacted);
    this.compactor = new Compactor(this, opts.compactionIntervalMs ?? 300_000);
    this.compactor.start();
    // Deadlines persist: anything due while we were down expires now.
    this.armExpiry(this.reader.nextDeadline());
    // An interrupted compaction resumes.
    if (this.writer.compacted > this.writer.logStart)
      void this.writer.compactionDone(this.writer.compacted).catch(() => {});
  }

  private published(batch: Batch): void {
    this.hub.publish(batch.events, batch.revision);
    if (batch.minDeadline < this.ttlTimerAt) this.armExpiry(batch.minDeadline);
  }

  private guard(): void {
    if (this.closing) throw new StorageError('Closed', 'storage is closed');
  }

  // --- reads (synchronous inside; see reads.ts) ---

  async get(key: string, revision?: number): Promise<GetResult> {
    this.guard();
    return this.reader.get(key, revision);
  }

  async range(prefix: string, opts?: RangeOptions): Promise<RangeResult> {
    this.guard();
    return this.reader.range(prefix, opts);
  }

  async count(prefix: string): Promise<number> {
    this.guard();
    return this.reader.count(prefix);
  }

  async currentRevision(): Promise<number> {
    this.guard();
    return this.reader.revision();
  }

  compactedRevision(): number {
    return this.writer.compacted;
  }

  // --- writes ---

  private deadline(opts: PutOptions | undefined): number {
    const ttl = opts?.ttlSeconds;
    if (ttl === undefined || ttl === 0) return 0;
    if (!(ttl > 0) || !Number.isFinite(ttl))
      throw new StorageError('InvalidObject', `invalid ttlSeconds ${ttl}`);
    return Math.ceil(this.clock.now() + ttl * 1000);
  }

  // Values are kept by reference (in the returned KeyValue and in watch events):
  // callers must not change a Buffer after handing it over.
  private put(
    kind: number,
    key: string,
    value: Buffer,
    expected: number,
    opts?: PutOptions,
  ): Promise<KeyValue> {
    const bad = checkKey(key);
    if (bad) return Promise.reject(bad);
    const v = checkValue(value);
    if (v instanceof StorageError) return Promise.reject(v);
    try {
      return this.writer.submit(
        new WriteOp(kind, key, v, expected, this.deadline(opts), opts?.onCommitted),
      ) as Promise<KeyValue>;
    } catch (err) {
      return Promise.reject(err);
    }
  }

  create(key: string, value: Buffer, opts?: PutOptions): Promise<KeyValue> {
    return this.put(OP_CREATE, key, value, -1, opts);
  }

  update(key: string, value: Buffer, expectedModRevision: number, opts?: PutOptions): Promise<KeyValue> {
    if (!Number.isSafeInteger(expectedModRevision)) {
      return Promise.reject(
        new StorageError('InvalidObject', `invalid modRevision ${expectedModRevision}`, key),
      );
    }
    return this.put(OP_UPDATE, key, value, expectedModRevision, opts);
  }

  delete(key: string, expectedModRevision?: number): Promise<{ revision: number; prevKv: KeyValue }> {
    const bad = checkKey(key);
    if (bad) return Promise.reject(bad);
    const op = new WriteOp(OP_DELETE, key, null, expectedModRevision ?? -1, 0);
    return this.writer.submit(op) as Promise<{ revision: number; prevKv: KeyValue }>;
  }

  // --- watch ---

  watch(prefix: string, fromRevision: number, opts?: WatchOptions): StorageWatch {
    return new EmbeddedWatch(this.hub, prefix, fromRevision > 0 ? fromRevision : 0, opts?.bufferSize);
  }

  // --- compaction ---

  async compact(revision: number): Promise<void> {
    this.guard();
    if (revision <= this.writer.compacted) return;
    const current = this.reader.revision();
    if (revision > current) throw errFutureRevision(current);
    await this.writer.submit(new WriteOp(OP_COMPACT, '', null, revision, 0));
    await this.writer.compactionDone(revision);
  }

  // --- TTL ---

  private armExpiry(deadline: number): void {
    if (this.closing || deadline >= this.ttlTimerAt) return;
    if (this.ttlTimer) clearTimeout(this.ttlTimer);
    this.ttlTimer = null;
    this.ttlTimerAt = deadline;
    if (deadline === Infinity) return;
    const wait = Math.min(Math.max(0, deadline - this.clock.now()), MAX_TIMER_MS);
    this.ttlTimer = setTimeout(() => {
      this.ttlTimer = null;
      this.ttlTimerAt = Infinity;
      this.expireDue().catch((err: unknown) => {
        if (!isStorageError(err, 'Closed')) log.warn('expiry failed', { err: String(err) });
      });
    }, wait);
    this.ttlTimer.unref();
  }

  expireDue(): Promise<number> {
    this.expiring ??= this.runExpiry().finally(() => {
      this.expiring = null;
      if (!this.closing) this.armExpiry(this.reader.nextDeadline());
    });
    return this.expiring;
  }

  private async runExpiry(): Promise<number> {
    let expired = 0;
    for (;;) {
      if (this.closing) return expired;
      const due = this.reader.due(this.clock.now(), EXPIRE_BATCH);
      if (due.length === 0) return expired;
      const results = await Promise.all(
        due.map(([deadline, key]) => this.writer.submit(new WriteOp(OP_EXPIRE, key, null, -1, deadline))),
      );
      expired += results.filter((r) => r !== null).length;
      if (due.length < EXPIRE_BATCH) return expired;
    }
  }

  // --- health, size, close ---

  async dbSize(): Promise<number> {
    return (await fs.stat(path.join(this.dataDir, 'data.mdb'))).size;
  }

  async checkHealth(timeoutMs: number): Promise<void> {
    this.guard();
    if (this.writer.broken) throw this.writer.broken;
    this.reader.revision();
    // The write path answers when everything queued so far is durable.
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new StorageError('Timeout', `storage did not answer within ${timeoutMs} ms`)),
        timeoutMs,
      );
    });
    try {
      await Promise.race([this.writer.drain(), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      this.compactor.stop();
      if (this.ttlTimer) clearTimeout(this.ttlTimer);
      this.ttlTimer = null;
      this.ttlTimerAt = -Infinity; // never re-armed
      await this.expiring?.catch(() => 0);
      await this.writer.close();
      this.hub.close();
      await this.dbs.env.close();
      this.markClosed();
    })();
    return this.closing;
  }
}

/** Directories open in this process: a second store on one directory would not see the first's writes in its watches. */
const openDirs = new Set<string>();

export async function openEmbeddedStorage(opts: EmbeddedOptions): Promise<EmbeddedStorage> {
  const dataDir = path.resolve(opts.dataDir);
  if (openDirs.has(dataDir))
    throw new StorageError('Unavailable', `${dataDir} is already open in this process`);
  openDirs.add(dataDir);
  let dbs: Dbs | null = null;
  try {
    dbs = openDbs(dataDir);
    const store = new EmbeddedStore(dbs, dataDir, opts);
    void store.closed.then(() => openDirs.delete(dataDir));
    return store;
  } catch (err) {
    await dbs?.env.close();
    openDirs.delete(dataDir);
    throw err;
  }
}
