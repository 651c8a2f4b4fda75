// The storage contract every backend implements (embedded LMDB, etcd3).
// It is etcd-shaped and knows nothing of kinds: keys are strings, values bytes.
//
// Revisions: one global, strictly increasing counter; every write gets the next
// one. Compaction at revision C drops history below C: reads at a revision < C
// and watches that need events before C fail with code 'Compacted'.

export interface KeyValue {
  readonly key: string;
  readonly value: Buffer;
  /** Revision at which the key was (last) created. */
  readonly createRevision: number;
  /** Revision of the last change to the key. */
  readonly modRevision: number;
  /** Non-zero when the key expires (a TTL was given); a flag: exact lease IDs are backend specific. */
  readonly lease: number;
}

export type StorageEventType = 'create' | 'update' | 'delete';

export interface StorageEvent {
  readonly type: StorageEventType;
  readonly key: string;
  /** The revision of this change. */
  readonly revision: number;
  /** The value after the change; null for a delete. */
  readonly kv: KeyValue | null;
  /** The value before the change; null for a create. */
  readonly prevKv: KeyValue | null;
}

export interface RangeOptions {
  /** Read the state as of this revision; 0 or absent means the latest. */
  revision?: number;
  /** At most this many keys; 0 or absent means no limit. */
  limit?: number;
  /** Start at this key (inclusive) instead of the prefix itself; used to continue a paged range. */
  startKey?: string;
  /**
   * Only keys and revisions are needed: a backend may leave values empty (etcd
   * then does not send them), or send them anyway.
   */
  keysOnly?: boolean;
}

export interface RangeResult {
  readonly kvs: KeyValue[];
  /** The revision the range was served at (the store's current revision for latest reads). */
  readonly revision: number;
  /** True when keys under the prefix remain after the last returned one. */
  readonly more: boolean;
  /** How many keys under the prefix follow the last returned one. */
  readonly remaining: number;
}

export interface GetResult {
  readonly kv: KeyValue | null;
  /** The revision the read was served at. */
  readonly revision: number;
}

export interface PutOptions {
  /** The key is deleted (with a delete event) this many seconds after the write. */
  ttlSeconds?: number;
  /**
   * Called with the write's revision once later writes see it, which may come before it is
   * durable (the embedded store's commit, ahead of its fsync; etcd answers once durable, and
   * calls nothing). The write's own promise still settles only once it is durable.
   */
  onCommitted?(modRevision: number): void;
}

export interface WatchOptions {
  /**
   * Events a watcher may have waiting before it is cut off with a 'WatchOverflow'
   * error (a slow reader must never stall the store or other watchers).
   */
  bufferSize?: number;
  /**
   * False when the consumer keeps the previous values itself (a watch cache):
   * events may then come without prevKv, sparing etcd a read of the old value
   * per update and delete. Default true.
   */
  prevKv?: boolean;
}

/**
 * A watch: iterate it for batches of events in revision order, without gaps.
 * Iteration throws a StorageError when the watch cannot go on ('Compacted',
 * 'WatchOverflow', 'Unavailable'); the error's `revision` tells where to resume.
 */
export interface StorageWatch extends AsyncIterable<StorageEvent[]> {
  /** Ends the watch; a pending or later iteration step finishes with done. */
  stop(): void;
  /**
   * A progress notification: resolves with a revision R once the consumer has
   * been handed every event up to R and asked for more, so a consumer that
   * applies each batch before asking for the next has seen everything up to R.
   * R is at least the revision of every write acknowledged before the call.
   * Resolves undefined when the watch cannot tell yet (still replaying, ended).
   * Optional: a backend without it leaves consistent reads to the store.
   */
  progress?(): Promise<number | undefined>;
}

export interface Storage {
  /** 'embedded' or 'etcd3'; for health checks and metrics. */
  readonly backend: string;

  get(key: string, revision?: number): Promise<GetResult>;
  range(prefix: string, opts?: RangeOptions): Promise<RangeResult>;
  count(prefix: string): Promise<number>;

  /** Writes a new key; 'KeyExists' when it is present. */
  create(key: string, value: Buffer, opts?: PutOptions): Promise<KeyValue>;
  /**
   * Replaces the value when the key's modRevision equals expectedModRevision.
   * 'Conflict' (with `current`) when it does not, 'KeyNotFound' when absent.
   */
  update(key: string, value: Buffer, expectedModRevision: number, opts?: PutOptions): Promise<KeyValue>;
  /**
   * Deletes the key, when given only if its modRevision matches. Returns the
   * deletion's revision and the last value. 'KeyNotFound' or 'Conflict'.
   */
  delete(key: string, expectedModRevision?: number): Promise<{ revision: number; prevKv: KeyValue }>;

  /** Every change under prefix with revision > fromRevision; 0 means from now on. */
  watch(prefix: string, fromRevision: number, opts?: WatchOptions): StorageWatch;

  currentRevision(): Promise<number>;
  /** Drops history below revision. */
  compact(revision: number): Promise<void>;
  /** Size of the database in bytes (for metrics and the compaction bound). */
  dbSize(): Promise<number>;
  /** Resolves when the backend answers within timeoutMs. */
  checkHealth(timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}
