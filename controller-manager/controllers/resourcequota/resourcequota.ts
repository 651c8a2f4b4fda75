// The ResourceQuota controller (pkg/controller/resourcequota): status.hard
// mirrors spec.hard and status.used is recomputed from the objects of the
// namespace — pods (count, compute requests and limits of non-terminal pods,
// quota scopes), services, persistent volume claims, and count/<resource>
// object counts — when a quota changes, when something it counts is deleted or
// a pod finishes (replenishment), and every --resource-quota-sync-period, so the
// apiserver's quota admission, which charges creations, stays consistent.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { lookupBuiltin, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import {
  isPodQuotaResource,
  isPVCQuotaResource,
  isServiceQuotaResource,
  podHoldsCompute,
  podMatchesScopes,
  podUsage,
  pvcUsage,
  quotaScopes,
  serviceUsage,
  countedResource,
} from '../../../shared/api/quota';
import {
  addLists,
  countQuantity,
  fromResourceList,
  maskList,
  toResourceList,
  zeroQuantity,
  type ResourceList,
} from '../../../shared/api/resource-list';
import { QueueController, durationOption, intOption, keyOf, unwrap, type Obj } from '../util/base';
import { updateStatus } from '../util/status';

export class ResourceQuotaController extends QueueController {
  private readonly quotas: SharedIndexInformer<Obj>;
  private readonly client: ResourceClient<Obj>;
  /** Informers of what quotas count, by built-in resource name ("pods", "deployments.apps"). */
  private readonly counted = new Map<string, SharedIndexInformer<Obj> | null>();
  private readonly syncPeriodMs: number;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentResourceQuotaSyncs', 5)) {
    super(ctx, { name: 'resourcequota', workers });
    this.syncPeriodMs = durationOption(ctx, 'resourceQuotaSyncPeriod', 5 * 60_000);
    this.quotas = ctx.informers.forResource<Obj>('resourcequotas');
    this.client = ctx.client.resource<Obj>('resourcequotas');
    this.waitFor(this.quotas);
    this.quotas.addEventHandler({
      onAdd: (q) => this.enqueue(keyOf(q)),
      onUpdate: (old, q) => {
        // Only spec changes (and a status out of step with the spec) need a recount.
        if (
          JSON.stringify(old.spec) !== JSON.stringify(q.spec) ||
          JSON.stringify(q.spec?.hard) !== JSON.stringify(q.status?.hard)
        )
          this.enqueue(keyOf(q));
      },
    });
    // The usual evaluators are watched from the start.
    for (const r of [
      'pods',
      'services',
      'persistentvolumeclaims',
      'configmaps',
      'secrets',
      'replicationcontrollers',
    ])
      this.watchResource(r);
  }

  /** The informer of a counted resource, registering (and, once running, starting) it on first use. */
  private watchResource(resource: string): SharedIndexInformer<Obj> | undefined {
    if (this.counted.has(resource)) return this.counted.get(resource) ?? undefined;
    const info = lookupBuiltin(resource);
    if (!info || !info.namespaced) {
      this.counted.set(resource, null);
      return undefined;
    }
    const inf = this.ctx.informers.forResource<Obj>({
      group: info.group,
      version: info.version,
      resource: info.resource,
    });
    this.counted.set(resource, inf);
    const replenish = (o: Obj) => this.enqueueNamespace(o.metadata.namespace!);
    inf.addEventHandler({
      onDelete: (o) => replenish(unwrap(o)),
      onUpdate: (old, cur) => {
        // A pod reaching a terminal phase frees its compute resources.
        if (
          info.resource === 'pods' &&
          old.status?.phase !== cur.status?.phase &&
          ['Succeeded', 'Failed'].includes(cur.status?.phase)
        )
          replenish(cur);
        if (info.resource === 'services' && old.spec?.type !== cur.spec?.type) replenish(cur);
      },
    });
    this.waitFor(inf);
    return inf;
  }

  private enqueueNamespace(ns: string): void {
    for (const q of this.quotas.lister().namespace(ns).list()) this.enqueue(keyOf(q));
  }

  protected override onStarted(): void {
    const tick = () => {
      if (this.ctx.signal.aborted) return;
      for (const q of this.quotas.lister().list()) this.enqueue(keyOf(q));
      const t = setTimeout(tick, this.syncPeriodMs);
      t.unref?.();
      this.ctx.signal.addEventListener('abort', () => clearTimeout(t), { once: true });
    };
    if (this.syncPeriodMs > 0) {
      const t = setTimeout(tick, this.syncPeriodMs);
      t.unref?.();
      this.ctx.signal.addEventListener('abort', () => clearTimeout(t), { once: true });
    }
  }

  protected async sync(key: string): Promise<void> {
    const q = this.quotas.indexer.getByKey(key);
    if (!q) return;
    const ns = q.metadata.namespace!;
    const hard = toResourceList(q.spec?.hard);
    const now = this.ctx.now();
    let used: ResourceList = new Map();
    const scoped = quotaScopes(q).length > 0;
    const names = [...hard.keys()];
    const zeroFor = (match: (n: string) => boolean): ResourceList =>
      new Map(names.filter(match).map((n) => [n, zeroQuantity()]));

    if (names.some(isPodQuotaResource)) {
      used = addLists(used, zeroFor(isPodQuotaResource));
      for (const pod of this.list('pods', ns)) {
        if (scoped && !podMatchesScopes(q, pod)) continue;
        used = addLists(used, podUsage(pod, podHoldsCompute(pod, now)));
      }
    }
    if (!scoped) {
      if (names.some(isServiceQuotaResource)) {
        used = addLists(used, zeroFor(isServiceQuotaResource));
        for (const svc of this.list('services', ns)) used = addLists(used, serviceUsage(svc));
      }
      if (names.some(isPVCQuotaResource)) {
        used = addLists(used, zeroFor(isPVCQuotaResource));
        for (const pvc of this.list('persistentvolumeclaims', ns)) used = addLists(used, pvcUsage(pvc));
      }
      for (const n of names) {
        if (used.has(n)) continue;
        const r = countedResource(n);
        if (!r || ['pods', 'services', 'persistentvolumeclaims'].includes(r)) continue;
        const inf = this.watchResource(r);
        if (!inf) continue;
        if (!inf.hasSynced()) {
          // Started just now: count once its cache is filled.
          this.ctx.informers.start(this.ctx.signal);
          if (!(await inf.whenSynced(this.ctx.signal))) return;
        }
        used.set(n, countQuantity(inf.lister().namespace(ns).list().length));
      }
    }
    // Only what the quota limits is reported.
    const status = { hard: fromResourceList(hard), used: fromResourceList(maskList(used, names)) };
    // A conflict requeues the quota (kube does the same): its role may not get quotas, only list/watch them.
    await updateStatus(this.client, q, status);
  }

  private list(resource: string, ns: string): Obj[] {
    const inf = this.watchResource(resource);
    return inf ? inf.lister().namespace(ns).list() : [];
  }
}

export const resourceQuotaController: ControllerDescriptor = {
  name: 'resourcequota',
  start(ctx) {
    void new ResourceQuotaController(ctx).run();
  },
};
