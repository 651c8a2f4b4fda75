import type { KeyValue } from './interface';

export type StorageErrorCode =
  | 'KeyExists'
  | 'KeyNotFound'
  | 'Conflict'
  /** The revision asked for was compacted; `revision` is the compacted revision. */
  | 'Compacted'
  /** The revision asked for is newer than the store's; `revision` is the current one. */
  | 'FutureRevision'
  /** A watcher fell too far behind; `revision` is the last one it was sent. */
  | 'WatchOverflow'
  | 'Unavailable'
  | 'Timeout'
  | 'Closed'
  | 'InvalidObject';

export class StorageError extends Error {
  constructor(
    readonly code: StorageErrorCode,
    message: string,
    readonly key?: string,
    /** Compacted/current/last-sent revision, depending on code. */
    readonly revision?: number,
    /** The current value on a 'Conflict'. */
    readonly current?: KeyValue,
  ) {
    super(message);
    this.name = 'StorageError';
  }
}

export function isStorageError(err: unknown, code?: StorageErrorCode): err is StorageError {
  return err instanceof StorageError && (code === undefined || err.code === code);
}

export const errKeyExists = (key: string) => new StorageError('KeyExists', `key exists: ${key}`, key);
export const errKeyNotFound = (key: string) => new StorageError('KeyNotFound', `key not found: ${key}`, key);
export const errConflict = (key: string, current?: KeyValue) =>
  new StorageError('Conflict', `compare failed for ${key}`, key, current?.modRevision, current);
export const errCompacted = (compacted: number) =>
  new StorageError(
    'Compacted',
    `required revision has been compacted (compacted revision ${compacted})`,
    undefined,
    compacted,
  );
export const errFutureRevision = (current: number) =>
  new StorageError(
    'FutureRevision',
    `required revision is a future revision (current revision ${current})`,
    undefined,
    current,
  );
export const errWatchOverflow = (lastSent: number) =>
  new StorageError(
    'WatchOverflow',
    `watcher fell behind and was cut off after revision ${lastSent}`,
    undefined,
    lastSent,
  );
