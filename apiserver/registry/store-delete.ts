// The deletion path of the generic store (k8s.io/apiserver's Store.Delete,
// updateForGracefulDeletionAndFinalizers and DeleteCollection): preconditions,
// then either the object goes at once, or a two-phase deletion starts —
// deletionTimestamp and grace period set, the garbage collector's finalizers
// (orphan, foregroundDeletion) placed per the propagation policy — which
// finishes when the last finalizer is removed (an update, store.ts). Deleting
// a collection deletes what a list returns, with a few workers.
import type { KeyValue, PutOptions } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import { conflict, internalError, notFound, StatusError, type GroupResource } from '../../shared/api/status';
import { retryAfterConflict, type RequestContext } from './context';
import { rfc3339 } from '../../shared/api/validation/gotime';
import { jsonClone, jsonEqual } from '../../shared/api/json-value';
import type { ListResult, SelectorOptions } from './reads';
import type { StoreOptions, WriteHooks } from './store';

export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: string;
  orphanDependents?: boolean;
}

/** The garbage collector's finalizers, placed by the propagation policy. */
const GC_FINALIZERS = ['orphan', 'foregroundDeletion'];

/** What deleting needs of the store: its options and the private helpers GenericStore hands over. */
export interface DeleteAccess {
  gr: GroupResource;
  opts: Pick<StoreOptions, 'storage' | 'strategy' | 'enableGarbageCollector' | 'deleteCollectionWorkers'>;
  key(namespace: string, name: string): string;
  decode(kv: KeyValue): any;
  encode(obj: any, key: string): Buffer;
  putOptions(obj: any): PutOptions | undefined;
  list(ctx: RequestContext, list: SelectorOptions): Promise<ListResult>;
}

export class StoreDeleter {
  constructor(private readonly s: DeleteAccess) {}

  /**
   * Deletes, or starts a two-phase deletion (finalizers, graceful pods).
   * Returns the object and whether it is gone from the store.
   */
  async delete(
    ctx: RequestContext,
    name: string,
    opts: DeleteOptions = {},
    hooks: WriteHooks = {},
  ): Promise<{ obj: any; deleted: boolean }> {
    const { storage, strategy } = this.s.opts;
    const gr = this.s.gr;
    const key = this.s.key(ctx.namespace, name);
    for (let attempt = 0; ; attempt++) {
      const kv = (await storage.get(key)).kv;
      if (!kv) throw notFound(gr, name);
      const obj = this.s.decode(kv);
      const md = obj.metadata;
      const pre = opts.preconditions;
      if (pre?.uid && pre.uid !== md.uid)
        throw conflict(
          gr,
          name,
          `Precondition failed: UID in precondition: ${pre.uid}, UID in object meta: ${md.uid}`,
        );
      if (pre?.resourceVersion && pre.resourceVersion !== md.resourceVersion)
        throw conflict(
          gr,
          name,
          `Precondition failed: ResourceVersion in precondition: ${pre.resourceVersion}, ResourceVersion in object meta: ${md.resourceVersion}`,
        );
      await hooks.validate?.(obj, obj);
      const next = this.deletionState(ctx, obj, opts);
      try {
        if (next === null) {
          if (ctx.dryRun) return { obj, deleted: true };
          const del = await storage.delete(key, kv.modRevision);
          await strategy.afterDelete?.(obj);
          obj.metadata.resourceVersion = String(del.revision);
          return { obj, deleted: true };
        }
        if (jsonEqual(next, obj) || ctx.dryRun) return { obj: next, deleted: false };
        const written = await storage.update(
          key,
          this.s.encode(next, key),
          kv.modRevision,
          this.s.putOptions(next),
        );
        next.metadata.resourceVersion = String(written.modRevision);
        return { obj: next, deleted: false };
      } catch (err) {
        if (isStorageError(err, 'Conflict')) {
          if (retryAfterConflict(ctx, attempt)) continue;
          throw conflict(gr, name);
        }
        if (isStorageError(err, 'KeyNotFound')) throw notFound(gr, name);
        throw err;
      }
    }
  }

  /** The object to write for a delete request, or null to remove it now. */
  private deletionState(ctx: RequestContext, current: any, opts: DeleteOptions): any | null {
    const obj = jsonClone(current);
    const md = obj.metadata;
    const strategy = this.s.opts.strategy;
    if (strategy.onDelete) return strategy.onDelete(obj, ctx);
    const alreadyDeleting = !!md.deletionTimestamp;
    if (
      this.s.opts.enableGarbageCollector &&
      (!alreadyDeleting || opts.propagationPolicy || opts.orphanDependents !== undefined)
    ) {
      const policy =
        opts.propagationPolicy ??
        (opts.orphanDependents === true
          ? 'Orphan'
          : opts.orphanDependents === false
            ? 'Background'
            : alreadyDeleting
              ? undefined
              : (strategy.defaultPropagation ?? 'Background'));
      if (policy) {
        const kept = (md.finalizers ?? []).filter((f: string) => !GC_FINALIZERS.includes(f));
        if (policy === 'Orphan') kept.push('orphan');
        if (policy === 'Foreground') kept.push('foregroundDeletion');
        if (kept.length) md.finalizers = kept;
        else delete md.finalizers;
      }
    }
    const hasFinalizers = (md.finalizers?.length ?? 0) > 0;
    // Seconds are int64s: past 2^53 the codecs give bigints, and a double does for a deadline.
    const asked = strategy.gracePeriod?.(obj, opts.gracePeriodSeconds);
    let grace = asked === undefined || asked === null ? undefined : Number(asked);
    if (alreadyDeleting) {
      // A second delete may only shorten the grace period of a graceful deletion.
      const currentGrace = Number(md.deletionGracePeriodSeconds ?? 0);
      if (grace !== undefined && grace < currentGrace) {
        md.deletionGracePeriodSeconds = grace;
        md.deletionTimestamp = rfc3339(new Date(ctx.now().getTime() + grace * 1000));
      } else grace = currentGrace;
      if (!hasFinalizers && !grace) return null;
      return obj;
    }
    if (!hasFinalizers && !grace) return null;
    md.deletionTimestamp = rfc3339(new Date(ctx.now().getTime() + (grace ?? 0) * 1000));
    md.deletionGracePeriodSeconds = grace ?? 0;
    if (md.generation) md.generation += 1;
    return obj;
  }

  /** Deletes everything a list with these options returns; returns what was deleted or marked. */
  async deleteCollection(
    ctx: RequestContext,
    list: SelectorOptions,
    opts: DeleteOptions,
    hooks: WriteHooks = {},
  ): Promise<any[]> {
    const { items } = await this.s.list(ctx, { ...list });
    const out: any[] = [];
    let next = 0;
    const worker = async () => {
      while (next < items.length) {
        const item = items[next++];
        try {
          const md = item.obj.metadata;
          const r = await this.delete({ ...ctx, namespace: md.namespace ?? '' }, md.name, opts, hooks);
          out.push(r.obj);
        } catch (err) {
          if (err instanceof StatusError && err.code === 404) continue;
          throw err instanceof StatusError ? err : internalError(err);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.max(1, this.s.opts.deleteCollectionWorkers) }, worker));
    return out;
  }
}
