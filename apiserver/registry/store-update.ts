// The update path of the generic store (k8s.io/apiserver's Store.Update and
// GuaranteedUpdate): a read-modify-write that starts from a guess (what the
// update before it stored, or the watch cache's object) and retries from the
// state a lost race reported; server-owned metadata kept, defaults, ownership
// and admission (WriteHooks), validation, generation, and the end of a
// two-phase deletion once nothing holds the object. Updates of one object take
// turns (key-turns.ts).
import type { KeyValue, PutOptions } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import type { Cacher } from '../storage/cacher/cacher';
import { conflict, notFound, type GroupResource } from '../../shared/api/status';
import type { FieldError } from '../../shared/api/field-errors';
import { retryAfterConflict, type RequestContext } from './context';
import { type KeyTurn, KeyTurns, type StoredState } from './key-turns';
import { metaOf } from './meta';
import { jsonClone, jsonEqual } from '../../shared/api/json-value';
import type { SubresourceStrategy } from './strategy';
import type { StoreResource } from './resource';
import { semanticEqual } from '../../shared/api/validation/metadata';
import type { StoreOptions, WriteHooks } from './store';

type Outcome =
  | { action: 'create'; obj: any }
  | { action: 'update'; obj: any }
  | { action: 'delete'; obj: any }
  | { action: 'none'; obj: any };

/** What updating needs of the store: its options and the private helpers GenericStore hands over. */
export interface UpdateAccess {
  gr: GroupResource;
  res: StoreResource;
  opts: Pick<StoreOptions, 'storage' | 'strategy' | 'schema'>;
  cacher(): Cacher | null;
  key(namespace: string, name: string): string;
  decode(kv: StoredState): any;
  encode(obj: any, key: string): Buffer;
  putOptions(obj: any, onCommitted?: (modRevision: number) => void): PutOptions | undefined;
  /** The create pipeline up to the write (an update may create). */
  prepareCreate(ctx: RequestContext, obj: any, hooks: WriteHooks): Promise<any>;
  fail(name: string, errs: FieldError[]): never;
}

export class StoreUpdater {
  private readonly turns = new KeyTurns();

  constructor(private readonly s: UpdateAccess) {}

  /**
   * Read-modify-write of one object. `compute` gets a private copy of the
   * current object (null when absent) and returns the desired one; it may run
   * several times when writes race. Returns the stored object and whether it
   * was created.
   */
  async update(
    ctx: RequestContext,
    name: string,
    compute: (current: any | null) => any | Promise<any>,
    hooks: WriteHooks = {},
    opts: { sub?: SubresourceStrategy; allowCreate?: boolean } = {},
  ): Promise<{ obj: any; created: boolean }> {
    const key = this.s.key(ctx.namespace, name);
    const turn = ctx.dryRun ? undefined : await this.turns.take(key);
    try {
      return await this.updateInTurn(ctx, name, key, compute, hooks, opts, turn);
    } finally {
      // Passes nothing on unless the write already handed over what it stored.
      turn?.end(undefined);
    }
  }

  private async updateInTurn(
    ctx: RequestContext,
    name: string,
    key: string,
    compute: (current: any | null) => any | Promise<any>,
    hooks: WriteHooks,
    opts: { sub?: SubresourceStrategy; allowCreate?: boolean },
    turn: KeyTurn | undefined,
  ): Promise<{ obj: any; created: boolean }> {
    const previous = turn?.previous;
    const { sub } = opts;
    /** The state a lost race reported (Kubernetes retries from the failed transaction's read too). */
    let reported: KeyValue | undefined;
    for (let attempt = 0; ; attempt++) {
      // Like kube's GuaranteedUpdate, the first try starts from a guess, saving a
      // read of the store: what the update before this one stored, or the watch
      // cache's object, whichever is newer. The write's compare on modRevision
      // catches a stale one, and any answer a stale one could cause (a failed
      // precondition, "nothing to change") is checked again against the store.
      // A retry after a lost race starts from the state that race reported.
      const cacher = this.s.cacher();
      // Every resource's cache runs in kube-apiserver; here it starts with the first read or update.
      if (cacher && !cacher.isReady && attempt === 0) void cacher.ready();
      const cached = attempt === 0 && !ctx.dryRun && cacher?.isReady ? cacher.get(key) : undefined;
      const handed =
        attempt === 0 && previous && previous.modRevision > (cached?.rv ?? 0) ? previous : undefined;
      const guessed = !!(handed ?? cached);
      let current: any;
      let modRevision: number;
      if (handed) {
        current = this.s.decode(handed);
        modRevision = handed.modRevision;
      } else if (cached) {
        current = cached.copy();
        modRevision = cached.rv;
      } else {
        const kv = reported ?? (await this.s.opts.storage.get(key)).kv;
        reported = undefined;
        current = kv ? this.s.decode(kv) : null;
        modRevision = kv?.modRevision ?? 0;
      }
      let out: Outcome;
      try {
        out = await this.computeUpdate(ctx, name, current, compute, hooks, sub, opts.allowCreate);
      } catch (err) {
        if (guessed) continue;
        throw err;
      }
      if (ctx.dryRun || out.action === 'none') {
        if (guessed) continue;
        return { obj: out.obj, created: out.action === 'create' };
      }
      // The next update in line may start once this write is committed, before it is durable.
      const handOver = (value: Buffer) => (rev: number) => turn?.end({ key, value, modRevision: rev });
      try {
        if (out.action === 'create') {
          await this.s.opts.strategy.beforeCreate?.(out.obj, ctx);
          const value = this.s.encode(out.obj, key);
          const pass = handOver(value);
          const written = await this.s.opts.storage.create(key, value, this.s.putOptions(out.obj, pass));
          pass(written.modRevision);
          out.obj.metadata.resourceVersion = String(written.modRevision);
          return { obj: out.obj, created: true };
        }
        if (out.action === 'delete') {
          const del = await this.s.opts.storage.delete(key, modRevision);
          await this.s.opts.strategy.afterDelete?.(out.obj);
          out.obj.metadata.resourceVersion = String(del.revision);
          return { obj: out.obj, created: false };
        }
        await this.s.opts.strategy.beforeUpdate?.(out.obj, current, ctx);
        const value = this.s.encode(out.obj, key);
        const pass = handOver(value);
        const written = await this.s.opts.storage.update(
          key,
          value,
          modRevision,
          this.s.putOptions(out.obj, pass),
        );
        pass(written.modRevision);
        out.obj.metadata.resourceVersion = String(written.modRevision);
        return { obj: out.obj, created: false };
      } catch (err) {
        if (out.action === 'create') await this.s.opts.strategy.afterCreateFailed?.(out.obj);
        if (
          isStorageError(err, 'Conflict') ||
          isStorageError(err, 'KeyExists') ||
          isStorageError(err, 'KeyNotFound')
        ) {
          if (retryAfterConflict(ctx, attempt)) {
            if (isStorageError(err, 'Conflict')) reported = err.current;
            continue;
          }
          throw conflict(this.s.gr, name);
        }
        throw err;
      }
    }
  }

  private async computeUpdate(
    ctx: RequestContext,
    name: string,
    current: any | null,
    compute: (current: any | null) => any | Promise<any>,
    hooks: WriteHooks,
    sub?: SubresourceStrategy,
    allowCreate?: boolean,
  ): Promise<Outcome> {
    if (!current) {
      if (sub || !(allowCreate ?? this.s.opts.strategy.allowCreateOnUpdate)) throw notFound(this.s.gr, name);
      const desired = await compute(null);
      const md = metaOf(desired);
      if (md.resourceVersion) throw conflict(this.s.gr, name);
      md.name = name;
      return { action: 'create', obj: await this.s.prepareCreate(ctx, desired, hooks) };
    }
    const old = current;
    let obj = await compute(jsonClone(old));
    const md = metaOf(obj);
    const oldMd = old.metadata;
    if (
      md.resourceVersion !== undefined &&
      md.resourceVersion !== '' &&
      md.resourceVersion !== oldMd.resourceVersion
    ) {
      throw conflict(this.s.gr, name);
    }
    if (!md.resourceVersion && this.s.opts.strategy.allowUnconditionalUpdate === false) {
      this.s.fail(name, [
        {
          type: 'FieldValueInvalid',
          field: 'metadata.resourceVersion',
          badValue: 0,
          detail: 'must be specified for an update',
        },
      ]);
    }
    if (md.uid && md.uid !== oldMd.uid) {
      throw conflict(
        this.s.gr,
        name,
        `Precondition failed: UID in precondition: ${md.uid}, UID in object meta: ${oldMd.uid}`,
      );
    }
    if (sub) {
      obj = sub.merge(obj, jsonClone(old), ctx);
    } else if (this.s.res.hasStatus) {
      if (old.status === undefined) delete obj.status;
      else obj.status = jsonClone(old.status);
    }
    const nmd = metaOf(obj);
    // Server-owned metadata stays as stored; name and namespace may not change.
    if (nmd.name === undefined || nmd.name === '') nmd.name = oldMd.name;
    if (this.s.res.namespaced && !nmd.namespace) nmd.namespace = oldMd.namespace;
    nmd.uid = oldMd.uid;
    nmd.creationTimestamp = oldMd.creationTimestamp;
    for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
      if (oldMd[f] === undefined) delete nmd[f];
      else nmd[f] = oldMd[f];
    }
    delete nmd.selfLink;
    this.s.opts.schema.applyDefaults(obj);
    if (!sub) await this.s.opts.strategy.authorizeWrite?.(obj, old, ctx);
    // As on create: managedFields and mutating admission first, then the strategy.
    if (hooks.mutate) obj = await hooks.mutate(obj, old);
    if (!sub) this.s.opts.strategy.prepareForUpdate?.(obj, old, ctx);
    // Go compares the decoded structs: a null, an empty list and a missing field are one value.
    if (this.s.opts.strategy.tracksGeneration && !sub && !semanticEqual(obj.spec, old.spec)) {
      metaOf(obj).generation = (oldMd.generation ?? 0) + 1;
    }
    // Validation sees the version being replaced (the precondition was checked above).
    obj.metadata.resourceVersion = oldMd.resourceVersion;
    const schema = this.s.opts.schema;
    const errs = [
      ...(sub?.trusted
        ? []
        : sub?.statusOnly && schema.validateStatusUpdate
          ? schema.validateStatusUpdate(obj, old)
          : schema.validateUpdate(obj, old, ctx.internal)),
      ...(sub
        ? (sub.validate?.(obj, old, ctx) ?? [])
        : (this.s.opts.strategy.validateUpdate?.(obj, old, ctx) ?? [])),
    ];
    if (errs.length) this.s.fail(name, errs);
    await hooks.validate?.(obj, old);
    if (this.finalized(obj)) return { action: 'delete', obj };
    if (jsonEqual(obj, old)) return { action: 'none', obj: old };
    return { action: 'update', obj };
  }

  /** Deletion was requested and nothing holds the object any more. */
  private finalized(obj: any): boolean {
    const md = obj.metadata;
    if (!md.deletionTimestamp || (md.finalizers && md.finalizers.length > 0)) return false;
    const custom = this.s.opts.strategy.deleteOnUpdateWhenFinalized;
    return custom ? custom(obj) : !md.deletionGracePeriodSeconds;
  }
}
