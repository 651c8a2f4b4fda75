// Helpers the core controllers share: metered queues, cache-sync waits,
// metadata-only list/watch (as=PartialObjectMetadata, like client-go's
// metadata client), conflict retries and conditions.
import type { ControllerContext } from '../controller';
import {
  RateLimitingQueue,
  waitForNamedCacheSync,
  type ItemRateLimiter,
  type ListerWatcher,
  type Synced,
  type WatchInterface,
} from '../../shared/informers';
import {
  isConflict,
  Watch,
  type Client,
  type KubeList,
  type KubeObject,
  type ListOptions,
  type ResolvedResource,
  type WatchOptions,
} from '../../shared/client';
import { groupVersionPath } from '../../shared/client/gvr';

/** ctx.newQueue when the manager provides it, else a plain rate-limited queue. */
export function queueFor<T>(
  ctx: ControllerContext,
  name: string,
  rateLimiter?: ItemRateLimiter<T>,
): RateLimitingQueue<T> {
  return ctx.newQueue ? ctx.newQueue<T>(name, rateLimiter) : new RateLimitingQueue<T>({ name, rateLimiter });
}

/** Waits for caches (false when the controller is stopping). */
export function cachesSynced(
  ctx: ControllerContext,
  controller: string,
  ...synced: Synced[]
): Promise<boolean> {
  return waitForNamedCacheSync(controller, ctx.signal, ...synced);
}

/** Runs fn in the background, logging a crash instead of an unhandled rejection. */
export function go(ctx: ControllerContext, what: string, fn: () => Promise<void>): void {
  fn().catch((err) => {
    if (!ctx.signal.aborted) ctx.log.error(`${what} stopped with an error`, { err: String(err) });
  });
}

/** Calls fn every periodMs until the signal aborts (wait.Until: the next round starts after fn ends). */
export function every(
  ctx: ControllerContext,
  periodMs: number,
  what: string,
  fn: () => Promise<void> | void,
): void {
  go(ctx, what, async () => {
    while (!ctx.signal.aborted) {
      try {
        await fn();
      } catch (err) {
        if (!ctx.signal.aborted) ctx.log.error(`${what} failed`, { err: String(err) });
      }
      await sleep(periodMs, ctx.signal);
    }
  });
}

/** Resolves after ms, or at once when signal aborts. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (signal?.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(t);
      signal?.removeEventListener('abort', done);
      resolve();
    };
    const t = setTimeout(done, Math.max(0, ms));
    signal?.addEventListener('abort', done, { once: true });
  });
}

/** retry.RetryOnConflict with client-go's DefaultRetry (5 steps). */
export async function retryOnConflict<T>(fn: () => Promise<T>, attempts = 5): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await fn();
    } catch (err) {
      if (!isConflict(err) || i >= attempts) throw err;
      await sleep(10 * i);
    }
  }
}

export const PARTIAL_LIST =
  'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json';
export const PARTIAL_OBJECT = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json';

function collectionPath(r: ResolvedResource, namespace: string): string {
  const base = groupVersionPath(r.group, r.version);
  return r.namespaced && namespace
    ? `${base}/namespaces/${encodeURIComponent(namespace)}/${r.resource}`
    : `${base}/${r.resource}`;
}

function listQuery(o: ListOptions | WatchOptions): Record<string, string | number | boolean | undefined> {
  return {
    labelSelector: typeof o.labelSelector === 'string' ? o.labelSelector : undefined,
    fieldSelector: typeof o.fieldSelector === 'string' ? o.fieldSelector : undefined,
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    timeoutSeconds: o.timeoutSeconds,
    limit: 'limit' in o && o.limit ? o.limit : undefined,
    continue: 'continue' in o && o.continue ? o.continue : undefined,
  };
}

/**
 * The metadata client of one resource: objects come as PartialObjectMetadata
 * (metadata only) with apiVersion/kind of the resource filled in.
 */
export class MetadataClient {
  constructor(
    private readonly client: Client,
    readonly resource: ResolvedResource,
  ) {}

  private typed<T extends KubeObject>(o: T): T {
    o.apiVersion = this.resource.apiVersion;
    o.kind = this.resource.kind;
    return o;
  }

  async list(namespace: string, o: ListOptions = {}): Promise<KubeList<KubeObject>> {
    const list = await this.client.rest.request<KubeList<KubeObject>>({
      method: 'GET',
      path: collectionPath(this.resource, namespace),
      query: listQuery(o),
      accept: PARTIAL_LIST,
      signal: o.signal,
    });
    list.items ??= [];
    for (const it of list.items) this.typed(it);
    return list;
  }

  async get(namespace: string, name: string, signal?: AbortSignal): Promise<KubeObject> {
    const path = `${collectionPath(this.resource, namespace)}/${encodeURIComponent(name)}`;
    return this.typed(
      await this.client.rest.request<KubeObject>({ method: 'GET', path, accept: PARTIAL_OBJECT, signal }),
    );
  }

  async watch(namespace: string, o: WatchOptions = {}): Promise<WatchInterface<KubeObject>> {
    const q: Record<string, string | number | boolean | undefined> = { ...listQuery(o), watch: 1 };
    if (o.allowWatchBookmarks) q.allowWatchBookmarks = true;
    if (o.sendInitialEvents !== undefined) q.sendInitialEvents = o.sendInitialEvents;
    const res = await this.client.rest.stream({
      method: 'GET',
      path: collectionPath(this.resource, namespace),
      query: q,
      accept: PARTIAL_OBJECT,
      signal: o.signal,
    });
    const w = new Watch<KubeObject>(res);
    const typed = (o2: KubeObject) => this.typed(o2);
    return {
      stop: () => w.stop(),
      async *[Symbol.asyncIterator]() {
        for await (const ev of w) {
          if ((ev.type === 'ADDED' || ev.type === 'MODIFIED' || ev.type === 'DELETED') && ev.object)
            typed(ev.object);
          yield ev;
        }
      },
    };
  }

  /** A ListerWatcher for a metadata-only informer over all namespaces. */
  listerWatcher(): ListerWatcher<KubeObject> {
    return { list: (o) => this.list('', o), watch: (o) => this.watch('', o) };
  }
}

export interface Condition {
  type: string;
  status: string;
  reason?: string;
  message?: string;
  lastTransitionTime?: string;
  lastHeartbeatTime?: string;
  lastProbeTime?: string | null;
  [k: string]: unknown;
}

export function getCondition<C extends { type: string }>(
  conds: C[] | undefined,
  type: string,
): C | undefined {
  return conds?.find((c) => c.type === type);
}

export function errText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
