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
  compareQuantity,
  formatQuantity,
  quantityFromJSON,
  type Quantity,
} from '../../../shared/api/validation/quantity';
import { QueueController, durationOption, intOption, keyOf, parseTime, unwrap, type Obj } from '../util/base';
import { updateStatus } from '../util/status';

type ResourceList = Map<string, Quantity>;

const ZERO = (): Quantity => ({ mant: 0n, exp: 0, format: 'DecimalSI' });
const ONE = (): Quantity => ({ mant: 1n, exp: 0, format: 'DecimalSI' });
const count = (n: number): Quantity => ({ mant: BigInt(n), exp: 0, format: 'DecimalSI' });

function addQ(a: Quantity, b: Quantity): Quantity {
  const e = Math.min(a.exp, b.exp);
  const am = a.mant * 10n ** BigInt(a.exp - e);
  const bm = b.mant * 10n ** BigInt(b.exp - e);
  const format = a.mant !== 0n ? a.format : b.format;
  return { mant: am + bm, exp: e, format };
}

function add(into: ResourceList, from: ResourceList): ResourceList {
  for (const [k, v] of from) into.set(k, into.has(k) ? addQ(into.get(k)!, v) : { ...v, cached: undefined });
  return into;
}

function maxInto(into: ResourceList, from: ResourceList): ResourceList {
  for (const [k, v] of from)
    if (!into.has(k) || compareQuantity(v, into.get(k)!) > 0) into.set(k, { ...v, cached: undefined });
  return into;
}

function toList(obj: Record<string, unknown> | undefined): ResourceList {
  const out: ResourceList = new Map();
  for (const [k, v] of Object.entries(obj ?? {})) {
    try {
      out.set(k, quantityFromJSON(v));
    } catch {
      // ignored like an unparseable quantity in a list
    }
  }
  return out;
}

function fromList(list: ResourceList): Record<string, string> {
  const out: Record<string, string> = {};
  for (const k of [...list.keys()].sort()) out[k] = formatQuantity(list.get(k)!);
  return out;
}

const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');

const POD_COMPUTE = new Set([
  'pods',
  'cpu',
  'memory',
  'ephemeral-storage',
  'requests.cpu',
  'requests.memory',
  'requests.ephemeral-storage',
  'limits.cpu',
  'limits.memory',
  'limits.ephemeral-storage',
]);

export function isPodComputeResource(n: string): boolean {
  return (
    POD_COMPUTE.has(n) ||
    n.startsWith('hugepages-') ||
    n.startsWith('requests.hugepages-') ||
    (n.startsWith('requests.') && !isNative(n.slice(9)))
  );
}

/** QuotaV1Pod: not finished, and not past its deletion grace period. */
function podCountsForCompute(pod: Obj, now: number): boolean {
  const phase = pod.status?.phase;
  if (phase === 'Succeeded' || phase === 'Failed') return false;
  const del = parseTime(pod.metadata.deletionTimestamp);
  const grace = pod.metadata.deletionGracePeriodSeconds;
  if (del !== undefined && typeof grace === 'number' && now > del + grace * 1000) return false;
  return true;
}

/** The pod evaluator's usage: count/pods always; pods and compute resources while it runs. */
export function podUsage(pod: Obj, now: number): ResourceList {
  const out: ResourceList = new Map([['count/pods', ONE()]]);
  if (!podCountsForCompute(pod, now)) return out;
  let requests: ResourceList = new Map();
  let limits: ResourceList = new Map();
  for (const c of pod.spec?.containers ?? []) {
    add(requests, toList(c.resources?.requests));
    add(limits, toList(c.resources?.limits));
  }
  const initReq: ResourceList = new Map();
  const initLim: ResourceList = new Map();
  for (const c of pod.spec?.initContainers ?? []) {
    maxInto(initReq, toList(c.resources?.requests));
    maxInto(initLim, toList(c.resources?.limits));
  }
  requests = maxInto(requests, initReq);
  limits = maxInto(limits, initLim);
  if (pod.spec?.overhead) {
    const o = toList(pod.spec.overhead);
    add(requests, o);
    add(limits, new Map([...o].filter(([k]) => limits.has(k))));
  }
  out.set('pods', ONE());
  for (const r of ['cpu', 'memory', 'ephemeral-storage']) {
    const q = requests.get(r);
    if (q) {
      out.set(r, q);
      out.set(`requests.${r}`, q);
    }
    const l = limits.get(r);
    if (l) out.set(`limits.${r}`, l);
  }
  for (const [r, q] of requests) {
    if (r.startsWith('hugepages-')) {
      out.set(r, q);
      out.set(`requests.${r}`, q);
    } else if (!isNative(r)) out.set(`requests.${r}`, q);
  }
  return out;
}

function qosClass(pod: Obj): string {
  const containers = [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])];
  let any = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = c.resources?.requests ?? {};
    const lim = c.resources?.limits ?? {};
    if (Object.keys(req).length || Object.keys(lim).length) any = true;
    for (const r of ['cpu', 'memory']) {
      if (lim[r] === undefined) guaranteed = false;
      else if (req[r] !== undefined && String(req[r]) !== String(lim[r])) guaranteed = false;
    }
  }
  if (!any) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

/** Does the quota's scopes (and scopeSelector) select the pod? */
export function podMatchesScopes(quota: Obj, pod: Obj): boolean {
  const scopes: { scopeName: string; operator: string; values?: string[] }[] = [
    ...(quota.spec?.scopes ?? []).map((s: string) => ({ scopeName: s, operator: 'Exists' })),
    ...(quota.spec?.scopeSelector?.matchExpressions ?? []),
  ];
  for (const s of scopes) {
    let match: boolean;
    switch (s.scopeName) {
      case 'Terminating':
        match = typeof pod.spec?.activeDeadlineSeconds === 'number';
        break;
      case 'NotTerminating':
        match = typeof pod.spec?.activeDeadlineSeconds !== 'number';
        break;
      case 'BestEffort':
        match = qosClass(pod) === 'BestEffort';
        break;
      case 'NotBestEffort':
        match = qosClass(pod) !== 'BestEffort';
        break;
      case 'PriorityClass': {
        const pc = pod.spec?.priorityClassName;
        const values = s.values ?? [];
        match =
          s.operator === 'In'
            ? pc !== undefined && values.includes(pc)
            : s.operator === 'NotIn'
              ? pc === undefined || !values.includes(pc)
              : s.operator === 'Exists'
                ? !!pc
                : !pc;
        break;
      }
      case 'CrossNamespacePodAffinity': {
        const terms = [
          ...(pod.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
          ...(pod.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
        ];
        const cross = terms.some((t: any) => t.namespaces?.length || t.namespaceSelector);
        match = s.operator === 'DoesNotExist' ? !cross : cross;
        break;
      }
      default:
        match = false;
    }
    if (!match) return false;
  }
  return true;
}

const quotaScoped = (q: Obj) =>
  (q.spec?.scopes ?? []).length > 0 || (q.spec?.scopeSelector?.matchExpressions ?? []).length > 0;

function serviceUsage(svc: Obj): ResourceList {
  const ports = (svc.spec?.ports ?? []).length;
  const type = svc.spec?.type ?? 'ClusterIP';
  const out: ResourceList = new Map([
    ['services', ONE()],
    ['count/services', ONE()],
    ['services.nodeports', ZERO()],
    ['services.loadbalancers', ZERO()],
  ]);
  if (type === 'NodePort') out.set('services.nodeports', count(ports));
  if (type === 'LoadBalancer') {
    out.set('services.loadbalancers', ONE());
    if (svc.spec?.allocateLoadBalancerNodePorts !== false) out.set('services.nodeports', count(ports));
  }
  return out;
}

const SC_SUFFIX = '.storageclass.storage.k8s.io/';

function pvcUsage(pvc: Obj): ResourceList {
  const out: ResourceList = new Map([
    ['persistentvolumeclaims', ONE()],
    ['count/persistentvolumeclaims', ONE()],
  ]);
  const sc = pvc.spec?.storageClassName;
  if (sc) out.set(`${sc}${SC_SUFFIX}persistentvolumeclaims`, ONE());
  const storage = toList(pvc.spec?.resources?.requests).get('storage');
  if (storage) {
    out.set('requests.storage', storage);
    if (sc) out.set(`${sc}${SC_SUFFIX}requests.storage`, storage);
  }
  return out;
}

const LEGACY_COUNTED: Record<string, string> = {
  configmaps: 'configmaps',
  secrets: 'secrets',
  replicationcontrollers: 'replicationcontrollers',
  resourcequotas: 'resourcequotas',
};

/** The resource a count/<resource>[.<group>] (or legacy) quota name counts, as a built-in name. */
function countedResource(name: string): string | undefined {
  if (LEGACY_COUNTED[name]) return name;
  if (!name.startsWith('count/')) return undefined;
  return name.slice(6);
}

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
    const hard = toList(q.spec?.hard);
    const now = this.ctx.now();
    const used: ResourceList = new Map();
    const scoped = quotaScoped(q);
    const names = [...hard.keys()];

    // Pods.
    if (names.some((n) => isPodComputeResource(n) || n === 'count/pods')) {
      for (const pod of this.list('pods', ns)) {
        if (scoped && !podMatchesScopes(q, pod)) continue;
        add(used, podUsage(pod, now));
      }
      for (const n of names)
        if (isPodComputeResource(n) || n === 'count/pods') if (!used.has(n)) used.set(n, ZERO());
    }
    if (!scoped) {
      if (names.some((n) => n.startsWith('services') || n === 'count/services')) {
        const svcUsed: ResourceList = new Map([
          ['services', ZERO()],
          ['count/services', ZERO()],
          ['services.nodeports', ZERO()],
          ['services.loadbalancers', ZERO()],
        ]);
        for (const svc of this.list('services', ns)) add(svcUsed, serviceUsage(svc));
        add(used, svcUsed);
      }
      const pvcNames = names.filter(
        (n) =>
          ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(n) ||
          n.includes(SC_SUFFIX),
      );
      if (pvcNames.length) {
        for (const n of pvcNames) used.set(n, ZERO());
        for (const pvc of this.list('persistentvolumeclaims', ns)) add(used, pvcUsage(pvc));
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
        used.set(n, count(inf.lister().namespace(ns).list().length));
      }
    }
    // Only what the quota limits is reported.
    const masked: ResourceList = new Map();
    for (const n of names) if (used.has(n)) masked.set(n, used.get(n)!);
    const status = { hard: fromList(hard), used: fromList(masked) };
    await updateStatus(this.client, q, status, { retryOnConflict: true });
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
