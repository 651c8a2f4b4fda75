// The garbage collector's monitors (kube's GraphBuilder monitors): a
// metadata-only informer on every deletable resource — what discovery lists
// with delete, list and watch, events aside — feeding its events into the
// dependency graph. Resynced as resource types come and go (CRDs).
import type { ControllerContext } from '../../controller';
import { unwrapTombstone, SharedIndexInformer } from '../../../shared/informers';
import type { Client, DiscoveredResource, KubeObject } from '../../../shared/client';
import { MetadataClient, sleep } from '../../app/controller-util';
import { INFORMER_REFLECTOR_OPTIONS, trimManagedFields } from '../../app/manager';
import { identityOf, type DependencyGraph } from './graph';

/** Resources the collector never watches (kube's ignoredResources). */
const IGNORED = new Set(['/events', 'events.k8s.io/events']);

interface Monitor {
  resource: DiscoveredResource;
  informer: SharedIndexInformer<KubeObject>;
  running: Promise<void>;
  abort: AbortController;
}

const gvrKey = (r: { group: string; version: string; resource: string }) =>
  `${r.group}/${r.version}/${r.resource}`;

/** Deletable resources (kube's GetDeletableResources): preferred ones supporting delete, list and watch. */
export async function deletableResources(client: Client): Promise<DiscoveredResource[]> {
  const resources = await client.discovery().resourcesWithVerbs(['delete', 'list', 'watch']);
  return resources.filter((r) => !IGNORED.has(`${r.group}/${r.resource}`));
}

export class GraphMonitors {
  private readonly monitors = new Map<string, Monitor>();

  constructor(
    private readonly ctx: ControllerContext,
    private readonly graph: DependencyGraph,
  ) {}

  /** Starts monitors for new resources and stops those of vanished ones; true when anything changed. */
  async resync(): Promise<boolean> {
    const resources = await deletableResources(this.ctx.client);
    // Stopped while discovery was under way: a monitor started now would never be told to stop.
    if (this.ctx.signal.aborted) return false;
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
      this.start(r);
      changed = true;
    }
    if (changed) this.ctx.log.v(2)?.info('garbage collector monitors', { count: this.monitors.size });
    return changed;
  }

  private start(r: DiscoveredResource): void {
    const informer = new SharedIndexInformer<KubeObject>(
      new MetadataClient(this.ctx.client, r).listerWatcher(),
      {
        name: `gc ${r.group ? `${r.resource}.${r.group}` : r.resource}`,
        reflector: INFORMER_REFLECTOR_OPTIONS,
        // kube-controller-manager's metadata informers drop managedFields too: the graph reads
        // owners, finalizers and deletion only, and a pod's managedFields are half its metadata.
        transform: trimManagedFields,
      },
    );
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

  /** How many resources are monitored. */
  get size(): number {
    return this.monitors.size;
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
}
