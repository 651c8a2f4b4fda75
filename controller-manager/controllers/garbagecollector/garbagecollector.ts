// The garbage collector (kube's GarbageCollector): metadata-only informers
// ("monitors") on every deletable, listable, watchable resource feed the
// dependency graph; workers decide:
// - attemptToDelete: a dependent whose owners are all gone (or waiting for
//   foreground deletion) is deleted; references to missing owners are removed
//   while a solid owner remains; an owner in foreground deletion loses its
//   foregroundDeletion finalizer once no blocking dependent is left;
// - attemptToOrphan: an owner with the orphan finalizer has its references
//   removed from its dependents, then the finalizer.
// Discovery is repeated every 30 s so new resources (CRDs) get monitors.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import {
  isConflict,
  isMethodNotSupported,
  isNotFound,
  type Client,
  type DiscoveredResource,
  type KubeObject,
  type OwnerReference,
} from '../../../shared/client';
import { SharedIndexInformer, unwrapTombstone, type RateLimitingQueue } from '../../../shared/informers';
import { MetadataClient, errText, queueFor, sleep } from '../../app/controller-util';
import { INFORMER_REFLECTOR_OPTIONS } from '../../app/manager';
import {
  DependencyGraph,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  GCNode,
  hasFinalizer,
  identityOf,
  identityString,
  type Identity,
} from './graph';

/** Resources the collector never watches (kube's ignoredResources). */
const IGNORED = new Set(['/events', 'events.k8s.io/events']);

const VIRTUAL_DELETE = new Error('enqueued virtual delete event');
const NAMESPACED_OWNER_OF_CLUSTER_SCOPED = new Error(
  'cluster-scoped objects cannot refer to namespaced owners',
);

class RestMappingError extends Error {}

export interface GCOptions {
  workers: number;
  /** How often discovery is repeated for new resource types (kube: 30 s). */
  resyncPeriodMs?: number;
  /** How long workers wait for the monitors' first lists before starting anyway. */
  syncTimeoutMs?: number;
}

interface Monitor {
  resource: DiscoveredResource;
  informer: SharedIndexInformer<KubeObject>;
  running: Promise<void>;
  abort: AbortController;
}

const gvrKey = (r: { group: string; version: string; resource: string }) =>
  `${r.group}/${r.version}/${r.resource}`;

/** Deletable resources (kube's GetDeletableResources): preferred versions supporting delete, list and watch. */
export async function deletableResources(client: Client): Promise<DiscoveredResource[]> {
  const disco = client.discovery();
  const [groups, all] = await Promise.all([disco.serverGroups(), disco.serverResources()]);
  const out: DiscoveredResource[] = [];
  for (const g of groups) {
    const seen = new Set<string>();
    for (const v of g.versions) {
      for (const r of all) {
        if (r.group !== g.name || r.version !== v || seen.has(r.resource)) continue;
        seen.add(r.resource);
        if (IGNORED.has(`${r.group}/${r.resource}`)) continue;
        if (!['delete', 'list', 'watch'].every((verb) => r.verbs.includes(verb))) continue;
        out.push(r);
      }
    }
  }
  return out;
}

export class GarbageCollector {
  readonly attemptToDelete: RateLimitingQueue<GCNode>;
  readonly attemptToOrphan: RateLimitingQueue<GCNode>;
  readonly graph: DependencyGraph;
  private readonly monitors = new Map<string, Monitor>();
  private readonly recorder: EventRecorderLike;
  private lastInvalidate = 0;

  constructor(
    private readonly ctx: ControllerContext,
    private readonly opts: GCOptions,
  ) {
    this.attemptToDelete = queueFor<GCNode>(ctx, 'garbage_collector_attempt_to_delete');
    this.attemptToOrphan = queueFor<GCNode>(ctx, 'garbage_collector_attempt_to_orphan');
    this.recorder = ctx.recorder('garbage-collector-controller');
    this.graph = new DependencyGraph(this.attemptToDelete, this.attemptToOrphan, {
      invalidNamespaceOwnerRef: (dep, uid) => this.reportInvalidNamespaceOwnerRef(dep, uid),
    });
  }

  private get client(): Client {
    return this.ctx.client;
  }

  // ---- monitors -------------------------------------------------------------

  /** Starts monitors for new resources and stops those of vanished ones; true when anything changed. */
  async resyncMonitors(): Promise<boolean> {
    this.ctx.client.discovery().invalidate();
    this.lastInvalidate = Date.now();
    const resources = await deletableResources(this.client);
    const wanted = new Map(resources.map((r) => [gvrKey(r), r]));
    let changed = false;
    for (const [key, m] of this.monitors) {
      if (wanted.has(key)) continue;
      m.abort.abort();
      this.monitors.delete(key);
      changed = true;
    }
    for (const [key, r] of wanted) {
      if (this.monitors.has(key)) continue;
      this.startMonitor(r);
      changed = true;
    }
    if (changed) this.ctx.log.v(2)?.info('garbage collector monitors', { count: this.monitors.size });
    return changed;
  }

  private startMonitor(r: DiscoveredResource): void {
    const informer = new SharedIndexInformer<KubeObject>(new MetadataClient(this.client, r).listerWatcher(), {
      name: `gc ${r.group ? `${r.resource}.${r.group}` : r.resource}`,
      reflector: INFORMER_REFLECTOR_OPTIONS,
    });
    informer.addEventHandler({
      onAdd: (obj) => this.graph.process({ type: 'add', identity: identityOf(obj), obj }),
      onUpdate: (old, obj) => this.graph.process({ type: 'update', identity: identityOf(obj), obj, old }),
      onDelete: (o) => {
        const obj = unwrapTombstone(o);
        this.graph.process({ type: 'delete', identity: identityOf(obj), obj });
      },
    });
    const abort = new AbortController();
    const onStop = () => abort.abort();
    this.ctx.signal.addEventListener('abort', onStop, { once: true });
    const running = informer
      .run(abort.signal)
      .finally(() => this.ctx.signal.removeEventListener('abort', onStop));
    this.monitors.set(gvrKey(r), { resource: r, informer, running, abort });
  }

  /** Whether every monitor has its first list. */
  isSynced(): boolean {
    for (const m of this.monitors.values()) if (!m.informer.hasSynced()) return false;
    return true;
  }

  unsynced(): string[] {
    return [...this.monitors.values()].filter((m) => !m.informer.hasSynced()).map((m) => gvrKey(m.resource));
  }

  async waitForSync(timeoutMs: number): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (!this.ctx.signal.aborted && Date.now() < deadline) {
      if (this.isSynced()) return true;
      await sleep(100, this.ctx.signal);
    }
    return this.isSynced();
  }

  async stop(): Promise<void> {
    for (const m of this.monitors.values()) m.abort.abort();
    await Promise.all([...this.monitors.values()].map((m) => m.running));
  }

  // ---- lookups --------------------------------------------------------------

  /** The resource serving apiVersion/kind; discovery is refreshed (at most every 5 s) on a miss. */
  async resourceFor(apiVersion: string, kind: string): Promise<DiscoveredResource> {
    let r = await this.client.discovery().resourceForKind(apiVersion, kind);
    if (!r && Date.now() - this.lastInvalidate > 5000) {
      this.lastInvalidate = Date.now();
      this.client.discovery().invalidate();
      r = await this.client.discovery().resourceForKind(apiVersion, kind);
    }
    if (!r) throw new RestMappingError(`unable to get REST mapping for ${apiVersion}/${kind}`);
    return r;
  }

  private async metadataFor(
    id: Identity,
  ): Promise<{ mc: MetadataClient; ns: string; r: DiscoveredResource }> {
    const r = await this.resourceFor(id.apiVersion, id.kind);
    if (r.namespaced && !id.namespace) throw NAMESPACED_OWNER_OF_CLUSTER_SCOPED;
    return { mc: new MetadataClient(this.client, r), ns: r.namespaced ? id.namespace : '', r };
  }

  /** The object's current metadata (throws NotFound). */
  async getObject(id: Identity): Promise<KubeObject> {
    const { mc, ns } = await this.metadataFor(id);
    return mc.get(ns, id.name, this.ctx.signal);
  }

  private async isDangling(
    ref: OwnerReference,
    item: GCNode,
  ): Promise<{ dangling: boolean; owner?: KubeObject }> {
    const key: Identity = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      name: ref.name,
      uid: ref.uid,
      namespace: '',
    };
    if (this.graph.absentOwnerCache.has(key)) return { dangling: true };
    key.namespace = item.identity.namespace;
    if (this.graph.absentOwnerCache.has(key)) return { dangling: true };
    const r = await this.resourceFor(ref.apiVersion, ref.kind);
    if (!r.namespaced) key.namespace = '';
    if (!item.identity.namespace && r.namespaced) {
      this.reportInvalidNamespaceOwnerRef(item, ref.uid);
      throw NAMESPACED_OWNER_OF_CLUSTER_SCOPED;
    }
    let owner: KubeObject;
    try {
      owner = await new MetadataClient(this.client, r).get(
        r.namespaced ? item.identity.namespace : '',
        ref.name,
        this.ctx.signal,
      );
    } catch (err) {
      if (!isNotFound(err)) throw err;
      this.graph.absentOwnerCache.add(key);
      return { dangling: true };
    }
    if (owner.metadata.uid !== ref.uid) {
      this.graph.absentOwnerCache.add(key);
      return { dangling: true };
    }
    return { dangling: false, owner };
  }

  // ---- writes ---------------------------------------------------------------

  private async deleteObject(
    id: Identity,
    resourceVersion: string | undefined,
    ownerRefs: OwnerReference[],
    policy: 'Orphan' | 'Foreground' | 'Background',
  ): Promise<void> {
    const { r, ns } = await this.metadataFor(id);
    const rc = r.namespaced ? this.client.resource(r).namespace(ns) : this.client.resource(r);
    const del = (rv?: string) =>
      rc.delete(id.name, {
        propagationPolicy: policy,
        preconditions: { uid: id.uid, ...(rv ? { resourceVersion: rv } : {}) },
        signal: this.ctx.signal,
      });
    try {
      await del(resourceVersion);
    } catch (err) {
      if (isNotFound(err)) return;
      if (!isConflict(err) || !resourceVersion) throw err;
      // Something else changed: retry without the resourceVersion if the references did not.
      let live: KubeObject;
      try {
        live = await this.getObject(id);
      } catch (e) {
        if (isNotFound(e)) return;
        throw err;
      }
      if (live.metadata.uid !== id.uid) return;
      if (JSON.stringify(live.metadata.ownerReferences ?? []) !== JSON.stringify(ownerRefs)) throw err;
      try {
        await del();
      } catch (e) {
        if (!isNotFound(e)) throw e;
      }
    }
  }

  /** Rewrites metadata of the object under optimistic concurrency (merge patch with resourceVersion). */
  private async patchMetadata(
    id: Identity,
    change: (meta: KubeObject['metadata']) => Record<string, unknown> | undefined,
  ): Promise<void> {
    const { r, ns } = await this.metadataFor(id);
    const rc = r.namespaced ? this.client.resource(r).namespace(ns) : this.client.resource(r);
    for (let attempt = 1; ; attempt++) {
      let latest: KubeObject;
      try {
        latest = await this.getObject(id);
      } catch (err) {
        if (isNotFound(err)) return;
        throw err;
      }
      if (latest.metadata.uid !== id.uid) return;
      const patch = change(latest.metadata);
      if (!patch) return;
      try {
        await rc.patch(
          id.name,
          { metadata: { ...patch, uid: id.uid, resourceVersion: latest.metadata.resourceVersion } },
          'merge',
          { signal: this.ctx.signal },
        );
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= 5) throw err;
      }
    }
  }

  private removeFinalizer(n: GCNode, finalizer: string): Promise<void> {
    return this.patchMetadata(n.identity, (meta) => {
      const fs = meta.finalizers ?? [];
      if (!fs.includes(finalizer)) return undefined;
      return { finalizers: fs.filter((f) => f !== finalizer) };
    });
  }

  private removeOwnerReferences(id: Identity, uids: Set<string>): Promise<void> {
    return this.patchMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      const kept = refs.filter((r) => !uids.has(r.uid));
      if (kept.length === refs.length) return undefined;
      return { ownerReferences: kept };
    });
  }

  private unblockOwnerReferences(id: Identity): Promise<void> {
    return this.patchMetadata(id, (meta) => {
      const refs = meta.ownerReferences ?? [];
      if (!refs.some((r) => r.blockOwnerDeletion)) return undefined;
      return {
        ownerReferences: refs.map((r) => (r.blockOwnerDeletion ? { ...r, blockOwnerDeletion: false } : r)),
      };
    });
  }

  private reportInvalidNamespaceOwnerRef(n: GCNode, ownerUID: string): void {
    const ref = n.owners.find((o) => o.uid === ownerUID);
    if (!ref) return;
    const invalid: Identity = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      name: ref.name,
      uid: ref.uid,
      namespace: n.identity.namespace,
    };
    const { apiVersion, kind, name, uid, namespace } = n.identity;
    this.recorder.event(
      { apiVersion, kind, name, uid, namespace },
      'Warning',
      'OwnerRefInvalidNamespace',
      'GarbageCollect',
      `ownerRef ${identityString(invalid)} does not exist in namespace ${JSON.stringify(n.identity.namespace)}`,
    );
  }

  // ---- decisions ------------------------------------------------------------

  /** One attemptToDelete item: 'requeue' to look again later. */
  async attemptToDeleteWorker(n: GCNode): Promise<'forget' | 'requeue'> {
    if (!n.observed) {
      const inGraph = this.graph.uidToNode.get(n.identity.uid);
      if (!inGraph || inGraph.observed) return 'forget';
    }
    try {
      await this.attemptToDeleteItem(n);
    } catch (err) {
      if (err === VIRTUAL_DELETE || err === NAMESPACED_OWNER_OF_CLUSTER_SCOPED) return 'forget';
      if (err instanceof RestMappingError)
        this.ctx.log.v(5)?.info('error syncing item', { item: String(n), err: err.message });
      else if (!this.ctx.signal.aborted)
        this.ctx.log.warn('error syncing item', { item: String(n), err: errText(err) });
      return 'requeue';
    }
    // A virtual node must be seen by an informer (or be verified absent) before it is forgotten.
    if (!n.observed) return 'requeue';
    return 'forget';
  }

  private virtualDelete(id: Identity): never {
    this.graph.process({ type: 'delete', identity: id, virtual: true });
    throw VIRTUAL_DELETE;
  }

  async attemptToDeleteItem(item: GCNode): Promise<void> {
    // Being deleted without waiting for dependents: nothing to do until it is gone.
    if (item.beingDeleted && !item.deletingDependents) return;
    let latest: KubeObject;
    try {
      latest = await this.getObject(item.identity);
    } catch (err) {
      if (isNotFound(err)) this.virtualDelete(item.identity);
      throw err;
    }
    if (latest.metadata.uid !== item.identity.uid) this.virtualDelete(item.identity);

    if (item.deletingDependents) return this.processDeletingDependents(item);

    const refs = latest.metadata.ownerReferences ?? [];
    if (!refs.length) return;
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waiting: OwnerReference[] = [];
    for (const ref of refs) {
      const { dangling: isDangling, owner } = await this.isDangling(ref, item);
      if (isDangling) dangling.push(ref);
      else if (owner?.metadata.deletionTimestamp && hasFinalizer(owner, FINALIZER_FOREGROUND))
        waiting.push(ref);
      else solid.push(ref);
    }
    this.ctx.log.v(5)?.info('classify item references', {
      item: String(item),
      solid: solid.length,
      dangling: dangling.length,
      waitingForDependentsDeletion: waiting.length,
    });

    if (solid.length) {
      if (!dangling.length && !waiting.length) return;
      // Keep the object for its solid owners; drop the references to the others.
      await this.removeOwnerReferences(item.identity, new Set([...dangling, ...waiting].map((r) => r.uid)));
      return;
    }
    if (waiting.length && item.dependents.size) {
      for (const dep of item.dependents) {
        if (dep.deletingDependents) {
          // A cycle of foreground deletions could wait forever: stop blocking our owners.
          await this.unblockOwnerReferences(item.identity);
          break;
        }
      }
      this.ctx.log
        .v(2)
        ?.info('at least one owner is waiting for dependents deletion, deleting the item in foreground', {
          item: String(item),
        });
      await this.deleteObject(item.identity, latest.metadata.resourceVersion, refs, 'Foreground');
      return;
    }
    const policy = hasFinalizer(latest, FINALIZER_ORPHAN)
      ? 'Orphan'
      : hasFinalizer(latest, FINALIZER_FOREGROUND)
        ? 'Foreground'
        : 'Background';
    this.ctx.log
      .v(2)
      ?.info('item has no solid owner, deleting it', { item: String(item), propagationPolicy: policy });
    await this.deleteObject(item.identity, latest.metadata.resourceVersion, refs, policy);
  }

  private async processDeletingDependents(item: GCNode): Promise<void> {
    const blocking = item.blockingDependents();
    if (!blocking.length) {
      this.ctx.log.v(2)?.info('remove DeleteDependents finalizer for item', { item: String(item) });
      await this.removeFinalizer(item, FINALIZER_FOREGROUND);
      return;
    }
    for (const dep of blocking) if (!dep.deletingDependents) this.attemptToDelete.add(dep);
  }

  /** One attemptToOrphan item: references to the owner are removed from its dependents, then the orphan finalizer. */
  async attemptToOrphanWorker(owner: GCNode): Promise<void> {
    const deps = [...owner.dependents];
    const errs: string[] = [];
    await Promise.all(
      deps.map(async (dep) => {
        try {
          await this.removeOwnerReferences(dep.identity, new Set([owner.identity.uid]));
        } catch (err) {
          if (!isNotFound(err) && !isMethodNotSupported(err))
            errs.push(`orphaning ${String(dep)} failed, ${errText(err)}`);
        }
      }),
    );
    if (errs.length) throw new Error(errs.join('; '));
    this.ctx.log.v(5)?.info('successfully updated all dependents', { owner: String(owner) });
    await this.removeFinalizer(owner, FINALIZER_ORPHAN);
  }

  // ---- running --------------------------------------------------------------

  private async runQueue(
    queue: RateLimitingQueue<GCNode>,
    fn: (n: GCNode) => Promise<'forget' | 'requeue'>,
  ): Promise<void> {
    for (;;) {
      const r = await queue.get();
      if (r.shutdown) return;
      const n = r.item;
      try {
        if ((await fn(n)) === 'requeue') queue.addRateLimited(n);
        else queue.forget(n);
      } catch (err) {
        if (!this.ctx.signal.aborted)
          this.ctx.log.warn('garbage collector worker failed', { item: String(n), err: errText(err) });
        queue.addRateLimited(n);
      } finally {
        queue.done(n);
      }
    }
  }

  /** Discovers, starts monitors, waits for them, then runs the workers until the signal aborts. */
  async run(): Promise<void> {
    const signal = this.ctx.signal;
    const stopQueues = () => {
      this.attemptToDelete.shutDown();
      this.attemptToOrphan.shutDown();
    };
    signal.addEventListener('abort', stopQueues, { once: true });
    this.ctx.log.info('Starting controller');
    for (;;) {
      try {
        await this.resyncMonitors();
        break;
      } catch (err) {
        this.ctx.log.warn('failed to discover resources for the garbage collector', { err: errText(err) });
        await sleep(1000, signal);
        if (signal.aborted) return;
      }
    }
    if (!(await this.waitForSync(this.opts.syncTimeoutMs ?? 30_000))) {
      if (signal.aborted) return;
      this.ctx.log.warn('timed out waiting for dependency graph builder sync, starting workers anyway', {
        unsynced: this.unsynced(),
      });
    } else this.ctx.log.info('All resource monitors have synced. Proceeding to collect garbage');
    const workers: Promise<void>[] = [];
    for (let i = 0; i < Math.max(1, this.opts.workers); i++) {
      workers.push(this.runQueue(this.attemptToDelete, (n) => this.attemptToDeleteWorker(n)));
      workers.push(
        this.runQueue(this.attemptToOrphan, async (n) => {
          await this.attemptToOrphanWorker(n);
          return 'forget';
        }),
      );
    }
    // New resource types (CRDs) get monitors.
    const period = this.opts.resyncPeriodMs ?? 30_000;
    const resync = (async () => {
      while (!signal.aborted) {
        await sleep(period, signal);
        if (signal.aborted) break;
        try {
          if (await this.resyncMonitors()) await this.waitForSync(period);
        } catch (err) {
          this.ctx.log.warn('failed to sync resource monitors', { err: errText(err) });
        }
      }
    })();
    await Promise.all([...workers, resync]);
    await this.stop();
  }
}

export function startGarbageCollector(
  ctx: ControllerContext,
  opts: Partial<GCOptions> = {},
): GarbageCollector | undefined {
  if (ctx.options.enableGarbageCollector === false) {
    ctx.log.info('garbage collector is disabled (--enable-garbage-collector=false)');
    return undefined;
  }
  const gc = new GarbageCollector(ctx, { workers: ctx.options.concurrentGcSyncs ?? 20, ...opts });
  gc.run().catch((err) => {
    if (!ctx.signal.aborted) ctx.log.error('garbage collector stopped', { err: errText(err) });
  });
  return gc;
}

export const garbageCollectorController: ControllerDescriptor = {
  name: 'garbagecollector',
  aliases: ['garbage-collector-controller'],
  start: (ctx) => void startGarbageCollector(ctx),
};
