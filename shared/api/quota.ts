// ResourceQuota's evaluators (pkg/quota/v1/evaluator/core): which quota
// resource names an object counts for, and the usage of one pod, service or
// persistent volume claim. The apiserver's quota admission charges that usage
// on create; the controller-manager's resourcequota controller sums it.
import { podRequestsAndLimits, qosClass } from './pod-resources';
import {
  addLists,
  countQuantity,
  isNativeResourceName as isNative,
  toResourceList,
  type ResourceList,
} from './resource-list';

const one = () => countQuantity(1);

// ---- pods -------------------------------------------------------------------------

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

/** Names counted from a running pod's requests and limits (and "pods"). */
export function isPodComputeResource(n: string): boolean {
  return (
    POD_COMPUTE.has(n) ||
    n.startsWith('hugepages-') ||
    n.startsWith('requests.hugepages-') ||
    (n.startsWith('requests.') && !isNative(n.slice(9)))
  );
}

/** Every name the pod evaluator counts. */
export const isPodQuotaResource = (n: string) => n === 'count/pods' || isPodComputeResource(n);

/** The compute usage of these requests and limits (a pod's, or one container's): "pods" and what they ask for. */
export function computeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
  const out: ResourceList = new Map([['pods', one()]]);
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

export const isPodFinished = (pod: any) =>
  pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

/** QuotaV1Pod: not finished, and not past its deletion grace period. */
export function podHoldsCompute(pod: any, now: number): boolean {
  if (isPodFinished(pod)) return false;
  const deleted = pod.metadata?.deletionTimestamp ? Date.parse(pod.metadata.deletionTimestamp) : NaN;
  const grace = pod.metadata?.deletionGracePeriodSeconds;
  return Number.isNaN(deleted) || typeof grace !== 'number' || now <= deleted + grace * 1000;
}

/** The pod evaluator's usage: count/pods always; "pods" and compute resources while it holds them. */
export function podUsage(pod: any, holdsCompute: boolean): ResourceList {
  const out: ResourceList = new Map([['count/pods', one()]]);
  if (!holdsCompute) return out;
  const { requests, limits } = podRequestsAndLimits(pod);
  return addLists(out, computeUsage(requests, limits));
}

export interface ScopeRequirement {
  scopeName: string;
  operator: string;
  values?: string[];
}

/** spec.scopes (as Exists) and spec.scopeSelector's expressions. */
export function quotaScopes(quota: any): ScopeRequirement[] {
  return [
    ...(quota.spec?.scopes ?? []).map((s: string) => ({ scopeName: s, operator: 'Exists' })),
    ...(quota.spec?.scopeSelector?.matchExpressions ?? []),
  ];
}

/** Does every scope of the quota select the pod? */
export function podMatchesScopes(quota: any, pod: any): boolean {
  for (const s of quotaScopes(quota)) {
    let match: boolean;
    switch (s.scopeName) {
      case 'Terminating':
        match = pod.spec?.activeDeadlineSeconds !== undefined && pod.spec?.activeDeadlineSeconds !== null;
        break;
      case 'NotTerminating':
        match = pod.spec?.activeDeadlineSeconds === undefined || pod.spec?.activeDeadlineSeconds === null;
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

// ---- services ---------------------------------------------------------------------

const SERVICE_RESOURCES = ['services', 'count/services', 'services.nodeports', 'services.loadbalancers'];

export const isServiceQuotaResource = (n: string) => SERVICE_RESOURCES.includes(n);

export function serviceUsage(svc: any): ResourceList {
  const ports = (svc.spec?.ports ?? []).length;
  const type = svc.spec?.type ?? 'ClusterIP';
  const out: ResourceList = new Map([
    ['services', one()],
    ['count/services', one()],
    ['services.nodeports', countQuantity(0)],
    ['services.loadbalancers', countQuantity(0)],
  ]);
  if (type === 'NodePort') out.set('services.nodeports', countQuantity(ports));
  if (type === 'LoadBalancer') {
    out.set('services.loadbalancers', one());
    if (svc.spec?.allocateLoadBalancerNodePorts !== false)
      out.set('services.nodeports', countQuantity(ports));
  }
  return out;
}

// ---- persistent volume claims -----------------------------------------------------

const SC_SUFFIX = '.storageclass.storage.k8s.io/';

export const isPVCQuotaResource = (n: string) =>
  ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(n) ||
  (n.includes(SC_SUFFIX) && /\/(persistentvolumeclaims|requests\.storage)$/.test(n));

export function pvcUsage(pvc: any): ResourceList {
  const out: ResourceList = new Map([
    ['persistentvolumeclaims', one()],
    ['count/persistentvolumeclaims', one()],
  ]);
  const sc = pvc.spec?.storageClassName;
  if (sc) out.set(`${sc}${SC_SUFFIX}persistentvolumeclaims`, one());
  const storage = toResourceList(pvc.spec?.resources?.requests).get('storage');
  if (storage) {
    out.set('requests.storage', storage);
    if (sc) out.set(`${sc}${SC_SUFFIX}requests.storage`, storage);
  }
  return out;
}

// ---- object counts ------------------------------------------------------------------

/** Core resources also counted under their bare name (the names before count/<resource>). */
const LEGACY_COUNTED = new Set(['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas']);

/** The names that count objects of a resource: count/<resource>[.<group>], and a legacy name. */
export function objectCountNames(group: string, resource: string): string[] {
  const names = [`count/${group ? `${resource}.${group}` : resource}`];
  if (!group && LEGACY_COUNTED.has(resource)) names.push(resource);
  return names;
}

/** The resource ("pods", "deployments.apps") an object-count name counts. */
export function countedResource(name: string): string | undefined {
  if (LEGACY_COUNTED.has(name)) return name;
  if (!name.startsWith('count/')) return undefined;
  return name.slice(6);
}
