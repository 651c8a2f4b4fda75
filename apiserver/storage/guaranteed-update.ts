// Optimistic read-modify-write on top of compare-and-swap: read (or take a
// cached suggestion), compute the new value, write if the key did not change in
// between, otherwise re-read and retry. The basis of every update in the registry.
import type { KeyValue, PutOptions, Storage } from './interface';
import { StorageError, errKeyNotFound, isStorageError } from './errors';

export interface Preconditions {
  uid?: string;
  resourceVersion?: string;
}

export interface GuaranteedUpdateOptions<T> {
  decode(kv: KeyValue): T;
  encode(obj: T): Buffer;
  /** The object's uid, for the uid precondition. */
  uidOf?(obj: T): string | undefined;
  preconditions?: Preconditions;
  /**
   * Computes the new object from the current one (null when absent and
   * ignoreNotFound is set). Throw to abort; return `current` unchanged to skip
   * the write. May be called several times when writes race.
   */
  tryUpdate(current: T | null, kv: KeyValue | null): T | Promise<T>;
  /** Treat a missing key as null instead of failing (update-or-create). */
  ignoreNotFound?: boolean;
  /** A value believed current (e.g. from a cache); a conflict falls back to a fresh read. */
  suggestion?: KeyValue;
  putOptions?(obj: T): PutOptions | undefined;
  /** Stops after this many conflicts (default 100). */
  maxAttempts?: number;
}

export interface GuaranteedUpdateResult<T> {
  obj: T;
  kv: KeyValue;
  /** False when tryUpdate produced identical bytes and nothing was written. */
  written: boolean;
}

export function checkPreconditions(
  key: string,
  kv: KeyValue,
  uid: string | undefined,
  p?: Preconditions,
): void {
  if (!p) return;
  if (p.uid !== undefined && p.uid !== '' && p.uid !== uid) {
    throw new StorageError(
      'Conflict',
      `Precondition failed: UID in precondition: ${p.uid}, UID in object meta: ${uid ?? ''}`,
      key,
      kv.modRevision,
      kv,
    );
  }
  if (
    p.resourceVersion !== undefined &&
    p.resourceVersion !== '' &&
    p.resourceVersion !== String(kv.modRevision)
  ) {
    throw new StorageError(
      'Conflict',
      `Precondition failed: ResourceVersion in precondition: ${p.resourceVersion}, ResourceVersion in object meta: ${kv.modRevision}`,
      key,
      kv.modRevision,
      kv,
    );
  }
}

export async function guaranteedUpdate<T>(
  storage: Storage,
  key: string,
  opts: GuaranteedUpdateOptions<T>,
): Promise<GuaranteedUpdateResult<T>> {
  let kv: KeyValue | null | undefined = opts.suggestion;
  const maxAttempts = opts.maxAttempts ?? 100;
  for (let attempt = 0; ; attempt++) {
    if (kv === undefined) kv = (await storage.get(key)).kv;
    if (kv === null && !opts.ignoreNotFound) throw errKeyNotFound(key);
    const current = kv ? opts.decode(kv) : null;
    if (kv && current !== null) checkPreconditions(key, kv, opts.uidOf?.(current), opts.preconditions);
    const next = await opts.tryUpdate(current, kv);
    const bytes = opts.encode(next);
    if (kv && bytes.equals(kv.value)) {
      // Nothing changed. A cached suggestion may be stale, so confirm with a read.
      if (kv === opts.suggestion && attempt === 0) {
        const fresh = (await storage.get(key)).kv;
        if (!fresh || fresh.modRevision !== kv.modRevision) {
          kv = fresh;
          continue;
        }
      }
      return { obj: next, kv, written: false };
    }
    try {
      const written = kv
        ? await storage.update(key, bytes, kv.modRevision, opts.putOptions?.(next))
        : await storage.create(key, bytes, opts.putOptions?.(next));
      return { obj: next, kv: written, written: true };
    } catch (err) {
      if (attempt + 1 >= maxAttempts) throw err;
      if (isStorageError(err, 'Conflict')) {
        kv = err.current ?? undefined;
        continue;
      }
      if (isStorageError(err, 'KeyExists') || isStorageError(err, 'KeyNotFound')) {
        kv = undefined;
        continue;
      }
      throw err;
    }
  }
}
