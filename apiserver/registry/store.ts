// The generic store behind every resource (like k8s.io/apiserver's
// registry/generic/registry.Store): server-owned metadata, defaults,
// validation, optimistic concurrency (updates: store-update.ts), two-phase
// deletion with finalizers and graceful deletion (store-delete.ts), dry-run. Per-type rules come from the
// Strategy; what the handler adds (field manager, admission) comes in as
// WriteHooks; reads and watches are the StoreReader's (reads.ts).
import type { PutOptions, Storage } from '../storage/interface';
import { isStorageError } from '../storage/errors';
import { Cacher } from '../storage/cacher/cacher';
import type { CacheCodec, ObjectAttrs } from '../storage/cacher/cached-object';
import { alreadyExists, badRequest, invalid, type GroupResource } from '../../shared/api/status';
import { required, type FieldError } from '../../shared/api/field-errors';
import type { RequestContext } from './context';
import { StoreUpdater } from './store-update';
import type { StoredState } from './key-turns';
import { generateName, metaOf, newUID } from './meta';
import { rfc3339 } from '../../shared/api/validation/gotime';
import { jsonClone } from '../../shared/api/json-value';
import type { StorageCodec } from './storage-codec';
import type { Strategy } from './strategy';
import { keyPrefix, objectKey, type SchemaHooks, type StoreResource } from './resource';
import { StoreReader, type SelectorOptions } from './reads';
import { builtinFieldLabels, type FieldLabels } from './field-labels';
import { StoreDeleter, type DeleteOptions } from './store-delete';
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

export class GenericStore {
  readonly reader: StoreReader;
  readonly cacher: Cacher | null;
  readonly gr: GroupResource;
  private readonly fieldLabels: FieldLabels;
  private readonly deleter: StoreDeleter;
  private readonly updater: StoreUpdater;

  constructor(
    readonly res: StoreResource,
    private readonly opts: StoreOptions,
  ) {
    this.gr = { group: res.group, resource: res.resource };
    this.fieldLabels = opts.strategy.fieldLabels ?? builtinFieldLabels(res.group, res.resource);
    this.deleter = new StoreDeleter({
      gr: this.gr,
      opts,
      key: (namespace, name) => this.key(namespace, name),
      decode: (kv) => this.decode(kv),
      encode: (obj, key) => this.encode(obj, key),
      putOptions: (obj) => this.putOptions(obj),
      list: (ctx, list) => this.reader.list(ctx, list),
    });
    this.updater = new StoreUpdater({
      gr: this.gr,
      res,
      opts,
      // Set further down (or shared): read when an update runs.
      cacher: () => this.cacher,
      key: (namespace, name) => this.key(namespace, name),
      decode: (kv) => this.decode(kv),
      encode: (obj, key) => this.encode(obj, key),
      putOptions: (obj, onCommitted) => this.putOptions(obj, onCommitted),
      prepareCreate: (ctx, obj, hooks) => this.prepareCreate(ctx, obj, hooks),
      fail: (name, errs) => this.fail(name, errs),
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
      this.fieldLabels,
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
    const extra = this.fieldLabels.values?.(obj);
    if (extra) Object.assign(fields, extra);
    return { labels: md.labels ?? {}, fields };
  }

  key(namespace: string, name: string): string {
    return objectKey(this.res, namespace, name);
  }

  private decode(kv: StoredState): any {
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
    const ttlSeconds = ttl && ttl > 0 ? ttl : undefined;
    return ttlSeconds || onCommitted ? { ttlSeconds, onCommitted } : undefined;
  }

  // ---- update (store-update.ts) ---------------------------------------------

  /** Read-modify-write of one object (see StoreUpdater.update). */
  update(...args: Parameters<StoreUpdater['update']>): ReturnType<StoreUpdater['update']> {
    return this.updater.update(...args);
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
    list: SelectorOptions,
    opts: DeleteOptions,
    hooks: WriteHooks = {},
  ): Promise<any[]> {
    return this.deleter.deleteCollection(ctx, list, opts, hooks);
  }
}
