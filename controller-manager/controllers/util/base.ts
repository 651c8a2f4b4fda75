// What every workload controller shares: option lookup with SPEC defaults, a
// rate-limited queue of namespace/name keys drained by N workers once the
// informers a controller reads have synced, and small helpers for the objects.
import { rfc3339 as rfc3339Date } from '../../../shared/api/validation/gotime';
import type { ControllerContext } from '../../controller';
import { RateLimitingQueue, runWorkers, type SharedIndexInformer } from '../../../shared/informers';
import { DeletedFinalStateUnknown } from '../../../shared/informers';
import { isNotFound, type KubeObject, type ResourceClient } from '../../../shared/client';
import type { Logger } from '../../../shared/log';

/** An integer option of the controller manager (camelCase), or its default when absent or invalid. */
export function intOption(ctx: ControllerContext, name: string, dflt: number): number {
  const v = ctx.options?.[name];
  const n = typeof v === 'string' ? Number(v) : v;
  return typeof n === 'number' && Number.isFinite(n) ? n : dflt;
}

/** A duration option (milliseconds, as shared/options parses Go durations). */
export function durationOption(ctx: ControllerContext, name: string, dfltMs: number): number {
  return intOption(ctx, name, dfltMs);
}

export type Obj = KubeObject;

/** The object under a possible tombstone. */
export function unwrap<T>(obj: T | DeletedFinalStateUnknown<T>): T {
  return obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
}

export function keyOf(obj: { metadata?: { namespace?: string; name?: string } }): string {
  const m = obj.metadata ?? {};
  return m.namespace ? `${m.namespace}/${m.name ?? ''}` : (m.name ?? '');
}

export function splitKey(key: string): [string, string] {
  const i = key.indexOf('/');
  return i < 0 ? ['', key] : [key.slice(0, i), key.slice(i + 1)];
}

/** Re-reads obj from the apiserver (not the cache); undefined when it is gone. */
export async function getLatest<T extends Obj>(client: ResourceClient<T>, obj: Obj): Promise<T | undefined> {
  try {
    return await client.namespace(obj.metadata.namespace!).get(obj.metadata.name!);
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** RFC 3339 with second precision, as metav1.Time serializes. */
export function rfc3339(ms: number): string {
  return rfc3339Date(new Date(ms));
}

/** Parses a metav1.Time; undefined when absent or unparseable. */
export function parseTime(t: unknown): number | undefined {
  if (typeof t !== 'string' || !t) return undefined;
  const v = Date.parse(t);
  return Number.isNaN(v) ? undefined : v;
}

export function errMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** A deep copy without null object members: Go decodes null to the zero value, as if absent. */
export function withoutNullMembers<T>(v: T): T {
  if (Array.isArray(v)) return v.map(withoutNullMembers) as T;
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) if (x !== null && x !== undefined) out[k] = withoutNullMembers(x);
  return out as T;
}

export interface QueueControllerOptions {
  name: string;
  workers: number;
}

/**
 * The usual controller skeleton: informer handlers enqueue keys; after every
 * informer the controller reads has synced, `workers` workers call sync(key).
 * A failed sync is retried with the queue's per-item backoff.
 */
export abstract class QueueController {
  readonly queue: RateLimitingQueue<string>;
  protected readonly log: Logger;
  private readonly synced: SharedIndexInformer<any>[] = [];
  private running?: Promise<void>;

  constructor(
    protected readonly ctx: ControllerContext,
    protected readonly opts: QueueControllerOptions,
  ) {
    this.queue = new RateLimitingQueue<string>({ name: opts.name });
    this.log = ctx.log.child({ controller: opts.name });
  }

  /** Informers whose caches must be synced before workers start. */
  protected waitFor(...informers: SharedIndexInformer<any>[]): void {
    this.synced.push(...informers);
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  protected abstract sync(key: string): Promise<void>;

  /** Waits for the caches, then runs the workers until ctx.signal aborts. */
  run(): Promise<void> {
    if (this.running) return this.running;
    const signal = this.ctx.signal;
    this.running = (async () => {
      for (const inf of this.synced) {
        if (!(await inf.whenSynced(signal))) {
          this.queue.shutDown();
          return;
        }
      }
      this.log.v(2)?.info('starting workers', { workers: this.opts.workers });
      this.onStarted();
      await runWorkers(this.queue, (key) => this.sync(key), {
        workers: this.opts.workers,
        signal,
        onError: (key, err) => this.log.v(2)?.info('sync failed, requeued', { key, err: errMessage(err) }),
      });
    })();
    return this.running;
  }

  /** Called once the caches synced, before workers start. */
  protected onStarted(): void {}
}

/** slowStartBatch: calls fn count times in batches of 1, 2, 4 ...; stops after the first batch with an error. */
export async function slowStartBatch(
  count: number,
  initialBatchSize: number,
  fn: () => Promise<void>,
): Promise<{ successes: number; error?: unknown }> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    let error: unknown;
    for (const r of results) {
      if (r.status === 'fulfilled') successes++;
      else error ??= r.reason;
    }
    if (error !== undefined) return { successes, error };
    remaining -= batch;
  }
  return { successes };
}
