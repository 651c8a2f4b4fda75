// One resource type through the REST client, like client-go's dynamic client:
// client.resource(gvr).namespace(ns).get/list/watch/create/update/patch/delete,
// plus subresources and listAll(), which follows continue tokens like
// client-go's pager.
import { logger } from '../log';
import { isResourceExpired } from './errors';
import { groupVersionPath, resolveResource, type ResolvedResource, type ResourceSpec } from './gvr';
import type { QueryValue, RestClient } from './rest';
import {
  PATCH_CONTENT_TYPES,
  selectorString,
  type ApplyOptions,
  type DeleteOptions,
  type GetOptions,
  type KubeList,
  type KubeObject,
  type ListOptions,
  type PatchOptions,
  type PatchType,
  type StatusObject,
  type WatchOptions,
  type WriteOptions,
} from './types';
import { Watch } from './watch';
import { stringifyJSONInt64 } from '../codec/json-int64';

const log = logger('client');

/** client-go's pager page size. */
export const DEFAULT_PAGE_SIZE = 500;

function writeQuery(
  o: WriteOptions | undefined,
  extra: Record<string, QueryValue> = {},
): Record<string, QueryValue> {
  return {
    dryRun: o?.dryRun ? 'All' : undefined,
    fieldManager: o?.fieldManager,
    fieldValidation: o?.fieldValidation,
    ...extra,
  };
}

function listQuery(o: ListOptions | WatchOptions | undefined): Record<string, QueryValue> {
  if (!o) return {};
  const q: Record<string, QueryValue> = {
    labelSelector: selectorString(o.labelSelector),
    fieldSelector: selectorString(o.fieldSelector),
    resourceVersion: o.resourceVersion,
    resourceVersionMatch: o.resourceVersionMatch,
    timeoutSeconds: o.timeoutSeconds,
  };
  if ('limit' in o && o.limit) q.limit = o.limit;
  if ('continue' in o && o.continue) q.continue = o.continue;
  return q;
}

/** Sets apiVersion and kind on list items that came without them (Protobuf lists, like client-go's typed lists). */
export function fillItemTypes<T extends KubeObject>(
  list: KubeList<T>,
  fallback?: ResolvedResource,
): KubeList<T> {
  const apiVersion = list.apiVersion || fallback?.apiVersion;
  const kind = list.kind?.endsWith('List') ? list.kind.slice(0, -4) : fallback?.kind;
  if (!list.items) list.items = [];
  if (!apiVersion || !kind) return list;
  for (const it of list.items) {
    if (!it.kind) {
      it.apiVersion = apiVersion;
      it.kind = kind;
    }
  }
  return list;
}

export class ResourceClient<T extends KubeObject = KubeObject> {
  readonly info: ResolvedResource;
  private readonly base: string;

  constructor(
    readonly rest: RestClient,
    spec: ResourceSpec | ResolvedResource | string,
    /** The namespace this client is bound to ("" = all namespaces / cluster scope). */
    readonly ns = '',
  ) {
    this.info = resolveResource(spec);
    this.base = groupVersionPath(this.info.group, this.info.version);
  }

  /** The same resource in one namespace. */
  namespace(ns: string): ResourceClient<T> {
    if (!this.info.namespaced) throw new Error(`${this.info.resource} is not namespaced`);
    return new ResourceClient<T>(this.rest, this.info, ns);
  }

  /** The collection path, in the bound namespace or obj's. */
  collectionPath(ns = this.ns): string {
    const { resource, namespaced } = this.info;
    return namespaced && ns
      ? `${this.base}/namespaces/${encodeURIComponent(ns)}/${resource}`
      : `${this.base}/${resource}`;
  }

  private objectPath(name: string, ns: string, subresource?: string): string {
    if (!name) throw new Error(`${this.info.resource}: a name is required`);
    if (this.info.namespaced && !ns)
      throw new Error(`${this.info.resource} "${name}": a namespace is required`);
    const p = `${this.collectionPath(ns)}/${encodeURIComponent(name)}`;
    return subresource ? `${p}/${subresource}` : p;
  }

  private nsOf(obj?: { metadata?: { namespace?: string } }): string {
    const own = obj?.metadata?.namespace;
    if (this.ns && own && own !== this.ns) {
      throw new Error(
        `the namespace of the object (${own}) does not match the namespace of the client (${this.ns})`,
      );
    }
    return this.ns || own || '';
  }

  /** obj with apiVersion and kind set, so it can be sent as Protobuf (a shallow copy only when missing). */
  private typed<O extends { apiVersion?: string; kind?: string }>(obj: O): O {
    if (obj.apiVersion && obj.kind) return obj;
    if (!this.info.kind) return obj;
    return { apiVersion: this.info.apiVersion, kind: this.info.kind, ...obj };
  }

  async get(name: string, opts: GetOptions = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'GET',
      path: this.objectPath(name, this.ns),
      query: { resourceVersion: opts.resourceVersion },
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  /** One page (or the whole collection when no limit is given). */
  async list(opts: ListOptions = {}): Promise<KubeList<T>> {
    const list = await this.rest.request<KubeList<T>>({
      method: 'GET',
      path: this.collectionPath(),
      query: listQuery(opts),
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
    return fillItemTypes(list, this.info);
  }

  /**
   * Every page of a list, following continue tokens (client-go's pager: later
   * pages drop resourceVersion; an expired token falls back to one unpaged list
   * at the original resourceVersion).
   */
  async *listPages(opts: ListOptions = {}): AsyncGenerator<KubeList<T>> {
    const limit = opts.limit ?? DEFAULT_PAGE_SIZE;
    let o: ListOptions = { ...opts, limit };
    let paged = false;
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await this.list(o);
      } catch (err) {
        if (!paged || !isResourceExpired(err)) throw err;
        log
          .v(2)
          ?.info('continue token expired, falling back to a full list', { resource: this.info.resource });
        yield await this.list({ ...opts, limit: undefined, continue: undefined });
        return;
      }
      const next = page.metadata?.continue;
      yield page;
      if (!next) return;
      paged = true;
      o = { ...o, continue: next, resourceVersion: undefined, resourceVersionMatch: undefined };
    }
  }

  /** The whole collection as one list, read in pages of opts.limit (500 by default). */
  async listAll(opts: ListOptions = {}): Promise<KubeList<T> & { paginated: boolean }> {
    let first: KubeList<T> | undefined;
    let pages = 0;
    for await (const page of this.listPages(opts)) {
      pages++;
      if (!first) {
        first = page;
        continue;
      }
      for (const it of page.items) first.items.push(it);
    }
    const out = first!;
    out.metadata = { ...out.metadata, continue: '' };
    delete out.metadata.remainingItemCount;
    return Object.assign(out, { paginated: pages > 1 });
  }

  /** Starts a watch; iterate the result for {type, object} events. */
  async watch(opts: WatchOptions = {}): Promise<Watch<T>> {
    const q = listQuery(opts);
    q.watch = 1;
    if (opts.allowWatchBookmarks) q.allowWatchBookmarks = true;
    if (opts.sendInitialEvents !== undefined) q.sendInitialEvents = opts.sendInitialEvents;
    const res = await this.rest.stream({
      method: 'GET',
      path: this.collectionPath(),
      query: q,
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
    return new Watch<T>(res);
  }

  async create(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'POST',
      path: this.collectionPath(this.nsOf(obj)),
      query: writeQuery(opts),
      body: this.typed(obj),
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  async update(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.rest.request<T>({
      method: 'PUT',
      path: this.objectPath(obj.metadata?.name ?? '', this.nsOf(obj)),
      query: writeQuery(opts),
      body: this.typed(obj),
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  updateStatus(obj: T, opts: WriteOptions = {}): Promise<T> {
    return this.updateSubresource<T, T>(obj.metadata?.name ?? '', 'status', this.typed(obj), opts);
  }

  async patch(name: string, patch: unknown, type: PatchType, opts: PatchOptions = {}): Promise<T> {
    if (type === 'apply' && !opts.fieldManager) throw new Error('apply: fieldManager is required');
    return this.rest.request<T>({
      method: 'PATCH',
      path: this.objectPath(name, this.ns, opts.subresource),
      query: writeQuery(opts, { force: type === 'apply' && opts.force ? true : undefined }),
      rawBody: typeof patch === 'string' || Buffer.isBuffer(patch) ? patch : stringifyJSONInt64(patch),
      contentType: PATCH_CONTENT_TYPES[type],
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  /** Server-side apply of a partial object (apiVersion and kind are filled in). */
  apply(obj: Partial<T> & { metadata: { name?: string } }, opts: ApplyOptions): Promise<T> {
    const name = obj.metadata?.name ?? '';
    const ns = this.nsOf(obj);
    const client = ns !== this.ns ? new ResourceClient<T>(this.rest, this.info, ns) : this;
    return client.patch(name, this.typed(obj), 'apply', opts);
  }

  applyStatus(obj: Partial<T> & { metadata: { name?: string } }, opts: ApplyOptions): Promise<T> {
    return this.apply(obj, { ...opts, subresource: 'status' });
  }

  /** Deletes one object: the object when it still exists (finalizers, grace), else a Success Status. */
  async delete(name: string, opts: DeleteOptions = {}): Promise<T | StatusObject> {
    return this.rest.request<T | StatusObject>({
      method: 'DELETE',
      path: this.objectPath(name, this.ns),
      ...this.deleteBody(opts),
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  async deleteCollection(opts: DeleteOptions & ListOptions = {}): Promise<unknown> {
    return this.rest.request({
      method: 'DELETE',
      path: this.collectionPath(),
      query: listQuery(opts),
      ...this.deleteBody(opts),
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  private deleteBody(o: DeleteOptions): { rawBody?: string; contentType?: string } {
    const body: Record<string, unknown> = {};
    if (o.gracePeriodSeconds !== undefined) body.gracePeriodSeconds = o.gracePeriodSeconds;
    if (o.propagationPolicy) body.propagationPolicy = o.propagationPolicy;
    if (o.preconditions) body.preconditions = o.preconditions;
    if (o.dryRun) body.dryRun = ['All'];
    if (!Object.keys(body).length) return {};
    return {
      rawBody: JSON.stringify({ kind: 'DeleteOptions', apiVersion: this.info.apiVersion, ...body }),
      contentType: 'application/json',
    };
  }

  // ---- subresources ---------------------------------------------------------

  getSubresource<R = any>(name: string, subresource: string, opts: GetOptions = {}): Promise<R> {
    return this.rest.request<R>({
      method: 'GET',
      path: this.objectPath(name, this.ns, subresource),
      query: { resourceVersion: opts.resourceVersion },
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  /** PUT on a subresource (status, scale, finalize, approval). */
  updateSubresource<B = any, R = any>(
    name: string,
    subresource: string,
    body: B,
    opts: WriteOptions = {},
  ): Promise<R> {
    return this.writeSubresource<R>('PUT', name, subresource, body, opts);
  }

  /** POST on a subresource (eviction, binding, token). */
  createSubresource<B = any, R = any>(
    name: string,
    subresource: string,
    body: B,
    opts: WriteOptions = {},
  ): Promise<R> {
    return this.writeSubresource<R>('POST', name, subresource, body, opts);
  }

  private writeSubresource<R>(
    method: 'PUT' | 'POST',
    name: string,
    subresource: string,
    body: unknown,
    opts: WriteOptions,
  ): Promise<R> {
    return this.rest.request<R>({
      method,
      path: this.objectPath(name, this.nsOf(body as any), subresource),
      query: writeQuery(opts),
      body,
      protobuf: this.info.protobuf,
      signal: opts.signal,
    });
  }

  getScale(name: string, opts: GetOptions = {}): Promise<any> {
    return this.getSubresource(name, 'scale', opts);
  }

  updateScale(name: string, scale: any, opts: WriteOptions = {}): Promise<any> {
    const body = { apiVersion: 'autoscaling/v1', kind: 'Scale', ...scale };
    return this.updateSubresource(name, 'scale', body, opts);
  }

  /** POST pods/<name>/eviction (policy/v1 Eviction). */
  evict(
    name: string,
    deleteOptions?: Omit<DeleteOptions, 'signal'>,
    opts: WriteOptions = {},
  ): Promise<unknown> {
    const ns = this.ns;
    const body: any = { apiVersion: 'policy/v1', kind: 'Eviction', metadata: { name, namespace: ns } };
    if (deleteOptions) {
      const { dryRun, ...rest } = deleteOptions;
      body.deleteOptions = { ...rest, ...(dryRun ? { dryRun: ['All'] } : {}) };
    }
    return this.createSubresource(name, 'eviction', body, opts);
  }

  /** POST pods/<name>/binding (v1 Binding). */
  bind(
    name: string,
    target: { kind?: string; name: string; apiVersion?: string },
    opts: WriteOptions = {},
  ): Promise<unknown> {
    const body = {
      apiVersion: 'v1',
      kind: 'Binding',
      metadata: { name, namespace: this.ns },
      target: { apiVersion: 'v1', kind: 'Node', ...target },
    };
    return this.createSubresource(name, 'binding', body, opts);
  }

  /** PUT namespaces/<name>/finalize with the namespace object (spec.finalizers changed). */
  finalize(ns: T, opts: WriteOptions = {}): Promise<T> {
    return this.updateSubresource<T, T>(ns.metadata?.name ?? '', 'finalize', this.typed(ns), opts);
  }
}
