// The generic store behind every resource (like k8s.io/apiserver's
// registry/generic/registry.Store): server-owned metadata, defaults,
// validation, optimistic concurrency, two-phase deletion with finalizers and
// graceful deletion (store-delete.ts), dry-run. Per-type rules come from the
// Strategy; what the handler adds (field manager, admission) comes in as
// WriteHooks; reads and watches are the StoreReader's (reads.ts).
import type { KeyValue, PutOptions, Storage } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import { Cacher } from '../storage/cacher/cacher';
import type { CacheCodec, ObjectAttrs } from '../storage/cacher/cached-object';
import {
  alreadyExists,
  badRequest,
  conflict,
  invalid,
  notFound,
  type GroupResource,
} from '../../shared/api/status';
import { required, type FieldError } from '../../shared/api/field-errors';
import { retryAfterConflict, type RequestContext } from './context';
import { type KeyTurn, KeyTurns } from './key-turns';
import { generateName, metaOf, newUID } from './meta';
import { rfc3339 } from '../../shared/api/validation/gotime';
import { jsonClone, jsonEqual } from '../../shared/api/json-value';
import type { StorageCodec } from './storage-codec';
import type { Strategy, SubresourceStrategy } from './strategy';
import { keyPrefix, objectKey, type SchemaHooks, type StoreResource } from './resource';
import { StoreReader } from './reads';
import { StoreDeleter, type DeleteOptions } from './store-delete';
import { semanticEqual } from '../../shared/api/validation/metadata';
import { decodeMessage, hasProtobufMagic, peekTypeMeta } from '../../shared/codec/protobuf';

export type { DeleteOptions } from './store-delete';

export interface WriteHooks {
  /** Runs after defaults: field manager, mutating admission. Returns the object to write. */
  mutate?(obj: any, old: any | null): any | Promise<any>;
  /** Validating admission; throw a StatusError to reject. */
  validate?(obj: any, old: any | null): void | Promise<void>;
}

export interface StoreOptions {
  storage: Storage;
  codec: StorageCodec;
  schema: SchemaHooks;
  strategy: Strategy;
  /** 0 disables the watch cache for this resource. */
  cacheCapacity: number;
  /** The watch cache keeps stored bytes, decoding on demand (CacheCodec.compact). */
  compactCache?: boolean;
  /** Reads (and watch cache) of another store over the same keys: custom resource versions share one. */
  sharedReads?: GenericStore;
  deleteCollectionWorkers: number;
  enableGarbageCollector: boolean;
}

type Outcome =
  | { action: 'create'; obj: any }
  | { action: 'update'; obj: any }
  | { action: 'delete'; obj: any }
  | { action: 'none'; obj: any };

export class GenericStore {
  readonly reader: StoreReader;
  readonly cacher: Cacher | null;
  readonly gr: GroupResource;
  private readonly deleter: StoreDeleter;
  private readonly turns = new KeyTurns();

  constructor(
    readonly res: StoreResource,
    private readonly opts: StoreOptions,
  ) {
    this.gr = { group: res.group, resource: res.resource };
    this.deleter = new StoreDeleter({
      gr: this.gr,
      opts,
      key: (namespace, name) => this.key(namespace, name),
      decode: (kv) => this.decode(kv),
      encode: (obj, key) => this.encode(obj, key),
      putOptions: (obj) => this.putOptions(obj),
      list: (ctx, list) => this.reader.list(ctx, list),
    });
    if (opts.sharedReads) {
      this.cacher = opts.sharedReads.cacher;
      this.reader = opts.sharedReads.reader;
      return;
    }
    this.cacher =
      opts.cacheCapacity > 0
        ? new Cacher(opts.storage, keyPrefix(res), this.cacheCodec(), { capacity: opts.cacheCapacity })
        : null;
    this.reader = new StoreReader(
      res,
      opts.storage,
      opts.codec,
      this.cacher,
      (obj) => this.attrs(obj),
      opts.strategy.fieldSelectors,
    );
  }

  /** How the watch cache decodes and keeps this resource's stored objects. */
  cacheCodec(): CacheCodec {
    const { res, opts } = this;
    return {
      decode: (value, rv, key) => opts.codec.decode(value, rv, key ?? ''),
      attrs: (obj) => this.attrs(obj),
      compact: opts.compactCache ?? false,
      messageDecoder: (value) => {
        if (!hasProtobufMagic(value)) return undefined;
        const t = peekTypeMeta(value);
        if (t.apiVersion !== res.apiVersion || t.kind !== res.kind) return undefined;
        return (message) => decodeMessage(res.apiVersion, res.kind, message);
      },
    };
  }

  /** Applies the kind's defaults in place (patch and apply run it before recording ownership). */
  readonly defaulter = (obj: any): void => this.opts.schema.applyDefaults(obj);

  get strategy(): Strategy {
    return this.opts.strategy;
  }

  get storage(): Storage {
    return this.opts.storage;
  }

  /** Labels and selectable fields of an object. */
  attrs(obj: any): ObjectAttrs {
    const md = obj.metadata ?? {};
    const fields: Record<string, string> = { 'metadata.name': md.name ?? '' };
    if (this.res.namespaced) fields['metadata.namespace'] = md.namespace ?? '';
    const extra = this.opts.strategy.selectableFields?.(obj);
    if (extra) Object.assign(fields, extra);
    return { labels: md.labels ?? {}, fields };
  }

  key(namespace: string, name: string): string {
    return objectKey(this.res, namespace, name);
  }

  private decode(kv: KeyValue): any {
    return this.opts.codec.decode(kv.value, kv.modRevision, kv.key);
  }

  private encode(obj: any, key: string): Buffer {
    return this.opts.codec.encode(obj, key);
  }

  private fail(name: string, errs: FieldError[]): never {
    throw invalid({ group: this.res.group, kind: this.res.kind }, name, errs);
  }

  // ---- create -------------------------------------------------------------

  /** Runs the create pipeline up to (not including) the write. */
  private async prepareCreate(ctx: RequestContext, obj: any, hooks: WriteHooks): Promise<any> {
    const md = metaOf(obj);
    if (this.res.namespaced) md.namespace = ctx.namespace;
    else delete md.namespace;
    if (md.resourceVersion) throw badRequest('resourceVersion should not be set on objects to be created');
    if (!md.name && md.generateName) md.name = generateName(md.generateName);
    if (!md.name) this.fail('', [required('metadata.name', 'name or generateName is required')]);
    md.uid = newUID();
    md.creationTimestamp = rfc3339(ctx.now());
    delete md.deletionTimestamp;
    delete md.deletionGracePeriodSeconds;
    delete md.selfLink;
    if (this.opts.strategy.tracksGeneration) md.generation = 1;
    else delete md.generation;
    if (this.res.hasStatus && !this.opts.strategy.keepStatusOnCreate && obj.status !== undefined)
      delete obj.status;
    this.opts.schema.applyDefaults(obj);
    await this.opts.strategy.authorizeWrite?.(obj, null, ctx);
    // Kubernetes' order: managedFields and mutating admission see the object as sent (and
    // defaulted); what the strategy then sets (a Job's selector ...) belongs to no manager.
    if (hooks.mutate) obj = await hooks.mutate(obj, null);
    this.opts.strategy.prepareForCreate?.(obj, ctx);
    const errs = [
      ...this.opts.schema.validate(obj, ctx.internal),
      ...(this.opts.strategy.validate?.(obj, ctx) ?? []),
    ];
    if (errs.length) this.fail(obj.metadata?.name ?? '', errs);
    await hooks.validate?.(obj, null);
    return obj;
  }

  async create(ctx: RequestContext, input: any, hooks: WriteHooks = {}): Promise<any> {
    const generated = !input.metadata?.name && !!input.metadata?.generateName;
    for (let attempt = 0; ; attempt++) {
      const obj = await this.prepareCreate(ctx, attempt === 0 ? input : jsonClone(input), hooks);
      const name = obj.metadata.name;
      if (ctx.dryRun) {
        await this.opts.strategy.beforeCreate?.(obj, ctx);
        return obj;
      }
      const key = this.key(ctx.namespace, name);
      await this.opts.strategy.beforeCreate?.(obj, ctx);
      try {
        const kv = await this.opts.storage.create(key, this.encode(obj, key), this.putOptions(obj));
        obj.metadata.resourceVersion = String(kv.modRevision);
        return obj;
      } catch (err) {
        await this.opts.strategy.afterCreateFailed?.(obj);
        if (isStorageError(err, 'KeyExists')) {
          if (generated && attempt < 8) {
            delete input.metadata.name;
            continue;
          }
          throw alreadyExists(this.gr, name);
        }
        throw err;
      }
    }
  }

  private putOptions(obj: any, onCommitted?: (modRevision: number) => void): PutOptions | undefined {
    const ttl = this.opts.strategy.ttlSeconds?.(obj);
    if (!(ttl && ttl > 0)) return onCommitted && { onCommitted };
    return { ttlSeconds: ttl, onCommitted };
  }

  // ---- update -------------------------------------------------------------

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
    const key = this.key(ctx.namespace, name);
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
      const cacher = this.cacher;
      // Every resource's cache runs in kube-apiserver; here it starts with the first read or update.
      if (cacher && !cacher.isReady && attempt === 0) void cacher.ready();
      const cached = attempt === 0 && !ctx.dryRun && cacher?.isReady ? cacher.get(key) : undefined;
      const handed =
        attempt === 0 && previous && previous.modRevision > (cached?.rv ?? 0) ? previous : undefined;
      const guessed = !!(handed ?? cached);
      let current: any;
      let modRevision: number;
      if (handed) {
        current = this.opts.codec.decode(handed.value, handed.modRevision, key);
        modRevision = handed.modRevision;
      } else if (cached) {
        current = cached.copy();
        modRevision = cached.rv;
      } else {
        const kv = reported ?? (await this.opts.storage.get(key)).kv;
        reported = undefined;
        current = kv ? this.decode(kv) : null;
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
      try {
        if (out.action === 'create') {
          await this.opts.strategy.beforeCreate?.(out.obj, ctx);
          const value = this.encode(out.obj, key);
          const pass = (modRevision: number) => turn?.end({ key, value, modRevision });
          const written = await this.opts.storage.create(key, value, this.putOptions(out.obj, pass));
          pass(written.modRevision);
          out.obj.metadata.resourceVersion = String(written.modRevision);
          return { obj: out.obj, created: true };
        }
        if (out.action === 'delete') {
          const del = await this.opts.storage.delete(key, modRevision);
          await this.opts.strategy.afterDelete?.(out.obj);
          out.obj.metadata.resourceVersion = String(del.revision);
          return { obj: out.obj, created: false };
        }
        await this.opts.strategy.beforeUpdate?.(out.obj, current, ctx);
        const value = this.encode(out.obj, key);
        // The next update in line may start once this write is committed, before it is durable.
        const pass = (rev: number) => turn?.end({ key, value, modRevision: rev });
        const written = await this.opts.storage.update(
          key,
          value,
          modRevision,
          this.putOptions(out.obj, pass),
        );
        pass(written.modRevision);
        out.obj.metadata.resourceVersion = String(written.modRevision);
        return { obj: out.obj, created: false };
      } catch (err) {
        if (out.action === 'create') await this.opts.strategy.afterCreateFailed?.(out.obj);
        if (
          isStorageError(err, 'Conflict') ||
          isStorageError(err, 'KeyExists') ||
          isStorageError(err, 'KeyNotFound')
        ) {
          if (retryAfterConflict(ctx, attempt)) {
            if (isStorageError(err, 'Conflict')) reported = err.current;
            continue;
          }
          throw conflict(this.gr, name);
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
      if (sub || !(allowCreate ?? this.opts.strategy.allowCreateOnUpdate)) throw notFound(this.gr, name);
      const desired = await compute(null);
      const md = metaOf(desired);
      if (md.resourceVersion) throw conflict(this.gr, name);
      md.name = name;
      return { action: 'create', obj: await this.prepareCreate(ctx, desired, hooks) };
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
      throw conflict(this.gr, name);
    }
    if (!md.resourceVersion && this.opts.strategy.allowUnconditionalUpdate === false) {
      this.fail(name, [
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
        this.gr,
        name,
        `Precondition failed: UID in precondition: ${md.uid}, UID in object meta: ${oldMd.uid}`,
      );
    }
    if (sub) {
      obj = sub.merge(obj, jsonClone(old), ctx);
    } else if (this.res.hasStatus) {
      if (old.status === undefined) delete obj.status;
      else obj.status = jsonClone(old.status);
    }
    const nmd = metaOf(obj);
    // Server-owned metadata stays as stored; name and namespace may not change.
    if (nmd.name === undefined || nmd.name === '') nmd.name = oldMd.name;
    if (this.res.namespaced && !nmd.namespace) nmd.namespace = oldMd.namespace;
    nmd.uid = oldMd.uid;
    nmd.creationTimestamp = oldMd.creationTimestamp;
    for (const f of ['deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const) {
      if (oldMd[f] === undefined) delete nmd[f];
      else nmd[f] = oldMd[f];
    }
    delete nmd.selfLink;
    this.opts.schema.applyDefaults(obj);
    if (!sub) await this.opts.strategy.authorizeWrite?.(obj, old, ctx);
    // As on create: managedFields and mutating admission first, then the strategy.
    if (hooks.mutate) obj = await hooks.mutate(obj, old);
    if (!sub) this.opts.strategy.prepareForUpdate?.(obj, old, ctx);
    // Go compares the decoded structs: a null, an empty list and a missing field are one value.
    if (this.opts.strategy.tracksGeneration && !sub && !semanticEqual(obj.spec, old.spec)) {
      metaOf(obj).generation = (oldMd.generation ?? 0) + 1;
    }
    // Validation sees the version being replaced (the precondition was checked above).
    obj.metadata.resourceVersion = oldMd.resourceVersion;
    const schema = this.opts.schema;
    const errs = [
      ...(sub?.trusted
        ? []
        : sub?.statusOnly && schema.validateStatusUpdate
          ? schema.validateStatusUpdate(obj, old)
          : schema.validateUpdate(obj, old, ctx.internal)),
      ...(sub
        ? (sub.validate?.(obj, old, ctx) ?? [])
        : (this.opts.strategy.validateUpdate?.(obj, old, ctx) ?? [])),
    ];
    if (errs.length) this.fail(name, errs);
    await hooks.validate?.(obj, old);
    if (this.finalized(obj)) return { action: 'delete', obj };
    if (jsonEqual(obj, old)) return { action: 'none', obj: old };
    return { action: 'update', obj };
  }

  /** Deletion was requested and nothing holds the object any more. */
  private finalized(obj: any): boolean {
    const md = obj.metadata;
    if (!md.deletionTimestamp || (md.finalizers && md.finalizers.length > 0)) return false;
    const custom = this.opts.strategy.deleteOnUpdateWhenFinalized;
    return custom ? custom(obj) : !md.deletionGracePeriodSeconds;
  }

  // ---- delete (store-delete.ts) ---------------------------------------------

  /**
   * Deletes, or starts a two-phase deletion (finalizers, graceful pods).
   * Returns the object and whether it is gone from the store.
   */
  delete(
    ctx: RequestContext,
    name: string,
    opts: DeleteOptions = {},
    hooks: WriteHooks = {},
  ): Promise<{ obj: any; deleted: boolean }> {
    return this.deleter.delete(ctx, name, opts, hooks);
  }

  /** Deletes everything a list with these options returns; returns what was deleted or marked. */
  deleteCollection(
    ctx: RequestContext,
    list: { labelSelector?: string; fieldSelector?: string },
    opts: DeleteOptions,
    hooks: WriteHooks = {},
  ): Promise<any[]> {
    return this.deleter.deleteCollection(ctx, list, opts, hooks);
  }
}
