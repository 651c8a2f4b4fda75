// The set of served resources: for every enabled group/version/resource of the
// catalog, its GenericStore (shared by all versions of one storage resource),
// its conversions to and from the storage version, and its subresources.
import { builtinResources, compareVersions, type APIResourceInfo } from '../../shared/api/catalog';
import { formatAPIVersion } from '../../shared/api/schema';
import type { RuntimeConfig } from '../../shared/options/runtime-config';
import type { Storage } from '../storage/interface';
import { GenericStore, type StoreOptions } from './store';
import type { StorageCodec } from './storage-codec';
import type { Strategy, SubresourceStrategy } from './strategy';
import type { SchemaHooks, StoreResource } from './resource';
import type { RequestContext } from './context';
import type { WriteHooks } from './store';
import type { Printer } from '../../shared/api/printers';
import type { TypeModel } from '../apply';

/** A subresource that is not the object itself (scale, binding, eviction, token ...). */
/** Where a connect subresource's request is forwarded (a node agent's port), and how. */
export interface UpstreamLocation {
  url: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  /** Skip verifying the upstream's certificate (no --kubelet-certificate-authority). */
  insecure?: boolean;
  timeoutMs?: number;
  /** Name the upstream's certificate must carry, when not the URL's host (TLS server name). */
  serverName?: string;
}

export interface CustomSubresource {
  get?(ctx: RequestContext, name: string, served: ServedResource): Promise<any>;
  /** Connect subresources (pods/log, pods/exec, nodes/proxy ...): the upstream to proxy the request to. */
  locate?(
    ctx: RequestContext,
    name: string,
    served: ServedResource,
    query: URLSearchParams,
    subpath: string,
  ): Promise<UpstreamLocation>;
  /** hooks: field manager and admission of the parent object's write. */
  update?(
    ctx: RequestContext,
    name: string,
    body: any,
    served: ServedResource,
    hooks?: WriteHooks,
  ): Promise<{ obj: any; created: boolean }>;
  create?(
    ctx: RequestContext,
    name: string,
    body: any,
    served: ServedResource,
  ): Promise<{ obj: any; status?: number }>;
}

export interface SubresourceDef {
  name: string;
  /** Kind of the subresource's body (Scale, Binding, Eviction ...), with its group/version. */
  kind: string;
  group: string;
  version: string;
  verbs: string[];
  connect?: boolean;
  /** Object-shaped subresources (status, finalize, approval ...): which part a write may change. */
  strategy?: SubresourceStrategy;
  custom?: CustomSubresource;
}

export interface ServedResource {
  info: APIResourceInfo;
  store: GenericStore;
  /** Converts an object of this version to the storage version, and back. */
  toStorage(obj: any): any;
  fromStorage(obj: any): any;
  /**
   * Conversion that needs I/O (CRD conversion webhooks): awaited before fromStorage of these
   * stored objects, and before toStorage of an object of this version.
   */
  prepare?(stored: any[]): Promise<void>;
  prepareWrite?(obj: any): Promise<void>;
  /** This version is the storage version: objects need no conversion. */
  isStorageVersion: boolean;
  /** Table columns when not the built-in printer of the kind (custom resources). */
  printer?: Printer;
  /** A custom resource version's openAPIV3Schema (decoding prunes unknown fields with it). */
  customSchema?: Record<string, unknown>;
  subresources: Map<string, SubresourceDef>;
  /** Create-only and stored nowhere. */
  virtual?: VirtualResource;
  /** Requests to this version get a Warning header and are counted (SPEC.md Versioning, facts 2). */
  deprecation?: { warning: string; removedRelease: string };
  /** Server-side apply's type model when not the built-in schema's (custom resources: structuralModel). */
  fieldModel?: TypeModel;
}

/** A resource that only answers creates and stores nothing (SubjectAccessReview, TokenReview ...). */
export interface VirtualResource {
  create(ctx: RequestContext, body: any, served: ServedResource): Promise<any>;
}

/** Per-resource behaviour supplied by strategies/ (keyed "group/resource"). */
export interface ResourceBehaviour {
  virtual?: VirtualResource;
  strategy?: Strategy;
  /** Storage group/resource when it differs (events.k8s.io events live with core events). */
  storedAs?: { group: string; resource: string };
  conversions?: Record<string, { toStorage(obj: any): any; fromStorage(obj: any): any }>;
  subresources?: Record<string, Partial<SubresourceDef>>;
}

export interface RegistryOptions {
  storage: Storage;
  codec: StorageCodec;
  etcdPrefix: string;
  runtimeConfig: RuntimeConfig;
  schemaHooks(definition: string | undefined, res: StoreResource): SchemaHooks;
  behaviour(group: string, resource: string): ResourceBehaviour;
  /** Watch cache capacity per "resource.group" (0 disables); undefined when --watch-cache=false. */
  cacheCapacity(group: string, resource: string): number;
  deleteCollectionWorkers: number;
  enableGarbageCollector: boolean;
}

// Kinds whose generation Kubernetes tracks although their status has no observedGeneration.
const GENERATION_KINDS = new Set(['Job', 'CronJob', 'NetworkPolicy', 'Ingress']);

function tracksGeneration(r: APIResourceInfo): boolean {
  if (!r.hasSpec) return false;
  return GENERATION_KINDS.has(r.kind) || !!r.statusObservedGeneration;
}

const gvrKey = (group: string, version: string, resource: string) => `${group}/${version}/${resource}`;

export class Registry {
  private readonly served = new Map<string, ServedResource>();
  private readonly preferredMemo = new Map<string, ServedResource | null>();
  readonly stores: GenericStore[] = [];
  /** Keys of resources added at run time (addServed); built-ins are never replaced by them. */
  private readonly dynamic = new Set<string>();
  private readonly listeners = new Set<() => void>();

  constructor(private readonly opts: RegistryOptions) {
    this.build(builtinResources());
  }

  private build(all: APIResourceInfo[]): void {
    // Group every version of one storage resource together.
    const byStorage = new Map<string, APIResourceInfo[]>();
    for (const info of all) {
      const b = this.opts.behaviour(info.group, info.resource);
      const sg = b.storedAs ?? { group: info.group, resource: info.resource };
      const k = `${sg.group}/${sg.resource}`;
      if (!byStorage.has(k)) byStorage.set(k, []);
      byStorage.get(k)!.push(info);
    }
    for (const [k, versions] of byStorage) {
      const [group, resource] = k.split('/');
      // Storage version: the most stable version of the storage group itself.
      const own = versions.filter((v) => v.group === group);
      const candidates = (own.length ? own : versions)
        .slice()
        .sort((a, b) => compareVersions(a.version, b.version));
      const sv = candidates[0];
      const behaviour = this.opts.behaviour(group, resource);
      const definition = sv.definition;
      const strategy: Strategy = {
        tracksGeneration: tracksGeneration(sv),
        ...(behaviour.strategy ?? {}),
      };
      const res: StoreResource = {
        group,
        resource,
        kind: sv.kind,
        apiVersion: formatAPIVersion(sv.group, sv.version),
        namespaced: sv.namespaced,
        keyRoot: group
          ? `${this.opts.etcdPrefix}/${group}/${resource}`
          : `${this.opts.etcdPrefix}/${resource}`,
        hasStatus: !!sv.subresources?.some((s) => s.name === 'status'),
      };
      const enabled = versions.filter((v) =>
        this.opts.runtimeConfig.resourceEnabled(v.group, v.version, v.resource),
      );
      if (!enabled.length) continue;
      const store = new GenericStore(res, {
        storage: this.opts.storage,
        codec: this.opts.codec,
        schema: this.opts.schemaHooks(definition, res),
        strategy,
        cacheCapacity: this.opts.cacheCapacity(group, resource),
        // Built-in kinds: no webhook conversion needs the same decoded object across reads.
        compactCache: true,
        deleteCollectionWorkers: this.opts.deleteCollectionWorkers,
        enableGarbageCollector: this.opts.enableGarbageCollector,
      });
      this.stores.push(store);
      for (const info of enabled) this.add(info, store, res);
    }
  }

  private add(info: APIResourceInfo, store: GenericStore, res: StoreResource): void {
    const b = this.opts.behaviour(info.group, info.resource);
    const gv = formatAPIVersion(info.group, info.version);
    const isStorageVersion = gv === res.apiVersion && info.kind === res.kind;
    const conv = b.conversions?.[gv] ?? identityConversion(gv, info.kind, res.apiVersion, res.kind);
    const subresources = new Map<string, SubresourceDef>();
    for (const s of info.subresources ?? []) {
      const extra = b.subresources?.[s.name] ?? {};
      subresources.set(s.name, {
        name: s.name,
        kind: s.kind,
        group: s.group ?? info.group,
        version: s.version ?? info.version,
        verbs: s.verbs,
        connect: s.connect,
        ...(s.name === 'status' ? { strategy: statusStrategy } : {}),
        ...extra,
      });
    }
    const deprecation = deprecationOf(info);
    this.preferredMemo.clear();
    this.served.set(gvrKey(info.group, info.version, info.resource), {
      ...(deprecation ? { deprecation } : {}),
      info,
      store,
      ...conv,
      isStorageVersion,
      subresources,
      ...(b.virtual ? { virtual: b.virtual } : {}),
    });
  }

  lookup(group: string, version: string, resource: string): ServedResource | undefined {
    return this.served.get(gvrKey(group, version, resource));
  }

  /** Every served resource (for discovery). */
  all(): ServedResource[] {
    return [...this.served.values()];
  }

  /** The served resource of a storage group/resource in its preferred version (for internal use). */
  preferred(group: string, resource: string): ServedResource | undefined {
    // Admission and strategies ask on every write: answer from a memo, rebuilt when resources change.
    const k = `${group}/${resource}`;
    let p = this.preferredMemo.get(k);
    if (p === undefined) {
      const candidates = this.all().filter((s) => s.info.group === group && s.info.resource === resource);
      p = candidates.sort((a, b) => compareVersions(a.info.version, b.info.version))[0] ?? null;
      this.preferredMemo.set(k, p);
    }
    return p ?? undefined;
  }

  stop(): void {
    for (const s of this.stores) s.cacher?.stop();
  }

  // ---- resources served at run time (custom resources) ----------------------

  /** The store key root of a group/resource ("/registry/<group>/<resource>"). */
  keyRoot(group: string, resource: string): string {
    return group ? `${this.opts.etcdPrefix}/${group}/${resource}` : `${this.opts.etcdPrefix}/${resource}`;
  }

  /** The codec objects are stored with. */
  get codec(): StorageCodec {
    return this.opts.codec;
  }

  /** A store with this registry's storage settings, for a resource served at run time. */
  newStore(
    res: StoreResource,
    o: Pick<StoreOptions, 'schema' | 'strategy'> & Partial<Pick<StoreOptions, 'codec' | 'sharedReads'>>,
  ): GenericStore {
    return new GenericStore(res, {
      storage: this.opts.storage,
      codec: o.codec ?? this.opts.codec,
      schema: o.schema,
      strategy: o.strategy,
      sharedReads: o.sharedReads,
      cacheCapacity: o.sharedReads ? 0 : this.opts.cacheCapacity(res.group, res.resource),
      deleteCollectionWorkers: this.opts.deleteCollectionWorkers,
      enableGarbageCollector: this.opts.enableGarbageCollector,
    });
  }

  /**
   * Serves resources added at run time, replacing earlier run-time ones of the
   * same group/version/resource; a built-in resource is never replaced (false).
   */
  addServed(list: ServedResource[]): boolean {
    let all = true;
    for (const s of list) {
      const k = gvrKey(s.info.group, s.info.version, s.info.resource);
      if (this.served.has(k) && !this.dynamic.has(k)) {
        all = false;
        continue;
      }
      this.served.set(k, s);
      this.dynamic.add(k);
    }
    this.changed();
    return all;
  }

  /** Stops serving run-time resources (only the given objects: a newer replacement stays). */
  removeServed(list: ServedResource[]): void {
    for (const s of list) {
      const k = gvrKey(s.info.group, s.info.version, s.info.resource);
      if (this.dynamic.has(k) && this.served.get(k) === s) {
        this.served.delete(k);
        this.dynamic.delete(k);
      }
    }
    this.changed();
  }

  /** Whether a group/version/resource is served by a run-time resource. */
  isDynamic(group: string, version: string, resource: string): boolean {
    return this.dynamic.has(gvrKey(group, version, resource));
  }

  /** Calls listener whenever run-time resources are added or removed; returns the unsubscribe. */
  onChange(listener: () => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  private changed(): void {
    this.preferredMemo.clear();
    for (const l of this.listeners) l();
  }
}

// Why a built-in version is deprecated, in kube-apiserver's words, where the facts mark it.
const DEPRECATED_SINCE: Record<string, string> = {
  '/v1/ComponentStatus': 'v1 ComponentStatus is deprecated in v1.19+',
  '/v1/Endpoints': 'v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice',
};

/** Deprecated: marked so in the facts, or a beta/alpha version of a resource that has a GA version. */
function deprecationOf(info: APIResourceInfo): ServedResource['deprecation'] {
  if (info.deprecated) {
    return {
      warning:
        DEPRECATED_SINCE[`${info.group}/${info.version}/${info.kind}`] ??
        `${info.groupVersion} ${info.kind} is deprecated`,
      removedRelease: '',
    };
  }
  if (info.stage === 'ga') return undefined;
  const ga = builtinResources().find(
    (r) => r.group === info.group && r.resource === info.resource && r.stage === 'ga',
  );
  if (!ga) return undefined;
  return {
    warning: `${info.groupVersion} ${info.kind} is deprecated; use ${ga.groupVersion} ${ga.kind}`,
    removedRelease: '',
  };
}

function identityConversion(apiVersion: string, kind: string, storageVersion: string, storageKind: string) {
  if (apiVersion === storageVersion && kind === storageKind) {
    return { toStorage: (o: any) => o, fromStorage: (o: any) => o };
  }
  return {
    toStorage: (o: any) => ({ ...o, apiVersion: storageVersion, kind: storageKind }),
    fromStorage: (o: any) => ({ ...o, apiVersion, kind }),
  };
}

/** /status: a write changes status only (and metadata the writer owns, like managedFields). */
export const statusStrategy: SubresourceStrategy = {
  statusOnly: true,
  merge(incoming, old) {
    const out = { ...old, status: incoming.status };
    if (incoming.status === undefined) delete out.status;
    out.metadata = { ...old.metadata };
    if (incoming.metadata?.managedFields !== undefined)
      out.metadata.managedFields = incoming.metadata.managedFields;
    if (incoming.metadata?.resourceVersion !== undefined)
      out.metadata.resourceVersion = incoming.metadata.resourceVersion;
    return out;
  },
};
