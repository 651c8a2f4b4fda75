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
// Which resources are watched is monitors.ts; reads and writes of the objects
// are objects.ts; the graph itself is graph.ts.
import type { ControllerContext, ControllerDescriptor, EventRecorderLike } from '../../controller';
import {
  isMethodNotSupported,
  isNotFound,
  type KubeObject,
  type OwnerReference,
} from '../../../shared/client';
import type { RateLimitingQueue } from '../../../shared/informers';
import { MetadataClient, errText, queueFor, sleep } from '../../app/controller-util';
import {
  DependencyGraph,
  FINALIZER_FOREGROUND,
  FINALIZER_ORPHAN,
  GCNode,
  hasFinalizer,
  identityString,
  type Identity,
} from './graph';
import { GraphMonitors } from './monitors';
import { GCObjects, NAMESPACED_OWNER_OF_CLUSTER_SCOPED, RestMappingError } from './objects';

const VIRTUAL_DELETE = new Error('enqueued virtual delete event');

export interface GCOptions {
  workers: number;
  /** How often discovery is repeated for new resource types (kube: 30 s). */
  resyncPeriodMs?: number;
  /** How long workers wait for the monitors' first lists before starting anyway. */
  syncTimeoutMs?: number;
}

export class GarbageCollector {
  readonly attemptToDelete: RateLimitingQueue<GCNode>;
  readonly attemptToOrphan: RateLimitingQueue<GCNode>;
  readonly graph: DependencyGraph;
  private readonly monitors: GraphMonitors;
  private readonly objects: GCObjects;
  private readonly recorder: EventRecorderLike;

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
    this.monitors = new GraphMonitors(ctx, this.graph);
    this.objects = new GCObjects(ctx);
  }

  // ---- monitors (monitors.ts) -----------------------------------------------

  /** Starts monitors for new resources and stops those of vanished ones; true when anything changed. */
  async resyncMonitors(): Promise<boolean> {
    this.objects.invalidateDiscovery();
    return this.monitors.resync();
  }

  /** Whether every monitor has its first list. */
  isSynced(): boolean {
    return this.monitors.isSynced();
  }

  unsynced(): string[] {
    return this.monitors.unsynced();
  }

  waitForSync(timeoutMs: number): Promise<boolean> {
    return this.monitors.waitForSync(timeoutMs);
  }

  stop(): Promise<void> {
    return this.monitors.stop();
  }

  // ---- owners ---------------------------------------------------------------

  /** Whether the owner a reference names is gone (or replaced: another uid); the owner when it is not. */
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
    const r = await this.objects.resourceFor(ref.apiVersion, ref.kind);
    if (!r.namespaced) key.namespace = '';
    if (!item.identity.namespace && r.namespaced) {
      this.reportInvalidNamespaceOwnerRef(item, ref.uid);
      throw NAMESPACED_OWNER_OF_CLUSTER_SCOPED;
    }
    let owner: KubeObject;
    try {
      owner = await new MetadataClient(this.ctx.client, r).get(
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
      latest = await this.objects.getObject(item.identity);
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
      await this.objects.removeOwnerReferences(
        item.identity,
        new Set([...dangling, ...waiting].map((r) => r.uid)),
      );
      return;
    }
    if (waiting.length && item.dependents.size) {
      for (const dep of item.dependents) {
        if (dep.deletingDependents) {
          // A cycle of foreground deletions could wait forever: stop blocking our owners.
          await this.objects.unblockOwnerReferences(item.identity);
          break;
        }
      }
      this.ctx.log
        .v(2)
        ?.info('at least one owner is waiting for dependents deletion, deleting the item in foreground', {
          item: String(item),
        });
      await this.objects.deleteObject(item.identity, latest.metadata.resourceVersion, refs, 'Foreground');
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
    await this.objects.deleteObject(item.identity, latest.metadata.resourceVersion, refs, policy);
  }

  private async processDeletingDependents(item: GCNode): Promise<void> {
    const blocking = item.blockingDependents();
    if (!blocking.length) {
      this.ctx.log.v(2)?.info('remove DeleteDependents finalizer for item', { item: String(item) });
      await this.objects.removeFinalizer(item, FINALIZER_FOREGROUND);
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
          await this.objects.removeOwnerReferences(dep.identity, new Set([owner.identity.uid]));
        } catch (err) {
          if (!isNotFound(err) && !isMethodNotSupported(err))
            errs.push(`orphaning ${String(dep)} failed, ${errText(err)}`);
        }
      }),
    );
    if (errs.length) throw new Error(errs.join('; '));
    this.ctx.log.v(5)?.info('successfully updated all dependents', { owner: String(owner) });
    await this.objects.removeFinalizer(owner, FINALIZER_ORPHAN);
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
