// ResourceQuota (plugin/pkg/admission/resourcequota): a write that consumes
// quota is charged to every matching ResourceQuota of its namespace before it
// is stored. The charge is a compare-and-swap of the quota's status.used, so
// concurrent creates never both get the last unit. Dry-run checks, never charges.
import { compareQuantity, type Quantity } from '../../../shared/api/validation/quantity';
import { isStatusError } from '../../../shared/api/status';
import type { Registry } from '../../registry/registry';
import { statusStrategy } from '../../registry/registry';
import { systemContext } from '../../registry/context';
import { qosClass } from '../../registry/strategies/pod';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import {
  addLists,
  admissionForbidden,
  fromResourceList,
  Lister,
  maxLists,
  prettyPrint,
  subLists,
  toResourceList,
  type ResourceList,
} from './util';

interface Evaluator {
  /** Does this resource name count for the evaluator's kind? */
  matches(resourceName: string): boolean;
  usage(obj: any): ResourceList;
  /** Operations that consume quota. */
  handles(op: string): boolean;
  /** Pods: every container must state what a compute quota restricts. */
  constraints?(required: string[], obj: any): string | null;
  /** Pods: quota scopes. */
  scoped?: boolean;
}

const one = (): Quantity => ({ mant: 1n, exp: 0, format: 'DecimalSI' });

const POD_RESOURCES = new Set([
  'count/pods',
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
const POD_VALIDATION = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];
const isNative = (name: string) => !name.includes('/') || name.includes('kubernetes.io/');

function podComputeUsage(requests: ResourceList, limits: ResourceList): ResourceList {
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

function podResources(pod: any): { requests: ResourceList; limits: ResourceList } {
  let requests: ResourceList = new Map();
  let limits: ResourceList = new Map();
  for (const c of pod.spec?.containers ?? []) {
    requests = addLists(requests, toResourceList(c.resources?.requests));
    limits = addLists(limits, toResourceList(c.resources?.limits));
  }
  for (const c of pod.spec?.initContainers ?? []) {
    requests = maxLists(requests, toResourceList(c.resources?.requests));
    limits = maxLists(limits, toResourceList(c.resources?.limits));
  }
  if (pod.spec?.overhead) {
    const o = toResourceList(pod.spec.overhead);
    requests = addLists(requests, o);
    const lo: ResourceList = new Map([...o].filter(([k]) => limits.has(k)));
    limits = addLists(limits, lo);
  }
  return { requests, limits };
}

const podEvaluator: Evaluator = {
  scoped: true,
  matches: (n) =>
    POD_RESOURCES.has(n) ||
    n.startsWith('hugepages-') ||
    n.startsWith('requests.hugepages-') ||
    (n.startsWith('requests.') && !isNative(n.slice(9))),
  handles: (op) => op === 'CREATE',
  usage(pod) {
    const out: ResourceList = new Map([['count/pods', one()]]);
    const phase = pod.status?.phase;
    if (phase === 'Succeeded' || phase === 'Failed' || pod.metadata?.deletionTimestamp) return out;
    const { requests, limits } = podResources(pod);
    return addLists(out, podComputeUsage(requests, limits));
  },
  constraints(required, pod) {
    const req = new Set(required.filter((r) => POD_VALIDATION.includes(r)));
    if (!req.size) return null;
    const missing = new Map<string, Set<string>>();
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      const have = podComputeUsage(
        toResourceList(c.resources?.requests),
        toResourceList(c.resources?.limits),
      );
      for (const r of req) {
        if (!have.has(r)) {
          if (!missing.has(r)) missing.set(r, new Set());
          missing.get(r)!.add(c.name);
        }
      }
    }
    if (!missing.size) return null;
    const parts = [...missing.keys()].sort().map((r) => `${r} for: ${[...missing.get(r)!].sort().join(',')}`);
    return `must specify ${parts.join('; ')}`;
  },
};

const serviceEvaluator: Evaluator = {
  matches: (n) => ['services', 'count/services', 'services.nodeports', 'services.loadbalancers'].includes(n),
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  usage(svc) {
    const out: ResourceList = new Map([
      ['services', one()],
      ['count/services', one()],
    ]);
    const ports = (svc.spec?.ports ?? []).length;
    const n = (v: number): Quantity => ({ mant: BigInt(v), exp: 0, format: 'DecimalSI' });
    const type = svc.spec?.type ?? 'ClusterIP';
    out.set('services.nodeports', n(0));
    out.set('services.loadbalancers', n(0));
    if (type === 'NodePort') out.set('services.nodeports', n(ports));
    if (type === 'LoadBalancer') {
      out.set('services.loadbalancers', n(1));
      if (svc.spec?.allocateLoadBalancerNodePorts !== false) out.set('services.nodeports', n(ports));
    }
    return out;
  },
};

const SC_SUFFIX = '.storageclass.storage.k8s.io/';
const pvcEvaluator: Evaluator = {
  matches: (n) =>
    ['persistentvolumeclaims', 'count/persistentvolumeclaims', 'requests.storage'].includes(n) ||
    (n.includes(SC_SUFFIX) && /\/(persistentvolumeclaims|requests\.storage)$/.test(n)),
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  usage(pvc) {
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
  },
};

const LEGACY_COUNTED = new Set(['configmaps', 'secrets', 'replicationcontrollers', 'resourcequotas']);

function objectCountEvaluator(group: string, resource: string): Evaluator {
  const names = [`count/${group ? `${resource}.${group}` : resource}`];
  if (!group && LEGACY_COUNTED.has(resource)) names.push(resource);
  return {
    matches: (n) => names.includes(n),
    handles: (op) => op === 'CREATE',
    usage: () => new Map(names.map((n) => [n, one()])),
  };
}

function evaluatorFor(a: AdmissionAttributes): Evaluator {
  if (a.group === '') {
    if (a.resource === 'pods') return podEvaluator;
    if (a.resource === 'services') return serviceEvaluator;
    if (a.resource === 'persistentvolumeclaims') return pvcEvaluator;
  }
  return objectCountEvaluator(a.group, a.resource);
}

/** Does the quota's scopes (and scopeSelector) select the pod? */
function scopesMatch(quota: any, obj: any, scoped: boolean): boolean {
  const scopes: { scopeName: string; operator: string; values?: string[] }[] = [
    ...(quota.spec?.scopes ?? []).map((s: string) => ({ scopeName: s, operator: 'Exists' })),
    ...(quota.spec?.scopeSelector?.matchExpressions ?? []),
  ];
  if (!scopes.length) return true;
  if (!scoped) return false;
  for (const s of scopes) {
    let match: boolean;
    switch (s.scopeName) {
      case 'Terminating':
        match = obj.spec?.activeDeadlineSeconds !== undefined && obj.spec?.activeDeadlineSeconds !== null;
        break;
      case 'NotTerminating':
        match = obj.spec?.activeDeadlineSeconds === undefined || obj.spec?.activeDeadlineSeconds === null;
        break;
      case 'BestEffort':
        match = qosClass(obj) === 'BestEffort';
        break;
      case 'NotBestEffort':
        match = qosClass(obj) !== 'BestEffort';
        break;
      case 'PriorityClass': {
        const pc = obj.spec?.priorityClassName;
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
          ...(obj.spec?.affinity?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
          ...(obj.spec?.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution ?? []),
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

function mask(list: ResourceList, names: Iterable<string>): ResourceList {
  const keep = new Set(names);
  return new Map([...list].filter(([k]) => keep.has(k)));
}

const isZero = (q: Quantity) => q.mant === 0n;

export class ResourceQuota implements AdmissionPlugin {
  readonly name = 'ResourceQuota';
  private readonly quotas: Lister;

  constructor(private readonly registry: () => Registry) {
    this.quotas = new Lister(registry, '', 'resourcequotas');
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (!a.namespace || !a.object || (a.subresource && a.subresource !== 'resize')) return;
    if (a.operation !== 'CREATE' && a.operation !== 'UPDATE') return;
    const evaluator = evaluatorFor(a);
    if (!evaluator.handles(a.operation) && !(a.subresource === 'resize' && evaluator === podEvaluator))
      return;
    const quotas = await this.quotas.list(a.namespace);
    if (!quotas.length) return;

    let delta = evaluator.usage(a.object);
    if (a.operation === 'UPDATE' && a.oldObject?.metadata?.resourceVersion) {
      const prev = evaluator.usage(a.oldObject);
      const d: ResourceList = new Map();
      for (const [k, v] of subLists(delta, prev)) if (v.mant > 0n) d.set(k, v);
      delta = d;
    }
    delta = new Map([...delta].filter(([, v]) => !isZero(v)));
    if (!delta.size) return;

    // Which quotas charge this object, and for what.
    const charges: { name: string; resources: string[] }[] = [];
    for (const q of quotas) {
      if (!scopesMatch(q, a.object, !!evaluator.scoped)) continue;
      const hard = toResourceList(q.status?.hard);
      const restricted = [...hard.keys()].filter((n) => evaluator.matches(n));
      if (!restricted.length) continue;
      const problem = evaluator.constraints?.(restricted, a.object);
      if (problem) throw admissionForbidden(a, `failed quota: ${q.metadata.name}: ${problem}`);
      const used = toResourceList(q.status?.used);
      if (restricted.some((n) => !used.has(n)))
        throw admissionForbidden(
          a,
          `status unknown for quota: ${q.metadata.name}, resources: ${[...restricted].sort().join(',')}`,
        );
      const requested = mask(delta, restricted);
      if (!requested.size) continue;
      checkQuota(a, q, requested);
      charges.push({ name: q.metadata.name, resources: restricted });
    }
    if (!charges.length || a.dryRun) return;

    // Charge each quota with a compare-and-swap on its status; undo on failure.
    const charged: { name: string; requested: ResourceList }[] = [];
    try {
      for (const c of charges) {
        const requested = mask(delta, c.resources);
        await this.charge(a, c.name, requested);
        charged.push({ name: c.name, requested });
      }
    } catch (err) {
      for (const c of charged) await this.refund(a.namespace, c.name, c.requested).catch(() => {});
      throw err;
    }
  }

  private served() {
    const s = this.registry().preferred('', 'resourcequotas');
    if (!s) throw new Error('resourcequotas are not served');
    return s;
  }

  private async charge(a: AdmissionAttributes, name: string, requested: ResourceList): Promise<void> {
    const s = this.served();
    try {
      await s.store.update(
        systemContext(a.namespace, 'resourcequota-admission'),
        name,
        (current) => {
          if (!current) return current;
          checkQuota(a, current, requested);
          const used = addLists(toResourceList(current.status?.used), requested);
          current.status = { ...(current.status ?? {}), used: fromResourceList(used) };
          return current;
        },
        {},
        { sub: statusStrategy },
      );
    } catch (err) {
      // A quota deleted meanwhile no longer limits anything.
      if (isStatusError(err, 'NotFound')) return;
      throw err;
    }
  }

  private async refund(namespace: string, name: string, requested: ResourceList): Promise<void> {
    await this.served().store.update(
      systemContext(namespace, 'resourcequota-admission'),
      name,
      (current) => {
        const used = subLists(toResourceList(current.status?.used), requested);
        current.status = { ...(current.status ?? {}), used: fromResourceList(used) };
        return current;
      },
      {},
      { sub: statusStrategy },
    );
  }
}

/** Throws Kubernetes' "exceeded quota" error when used + requested goes over hard. */
function checkQuota(a: AdmissionAttributes, quota: any, requested: ResourceList): void {
  const hard = toResourceList(quota.status?.hard);
  const used = toResourceList(quota.status?.used);
  const exceeded: string[] = [];
  for (const [k, v] of requested) {
    const h = hard.get(k);
    if (!h) continue;
    const next = addLists(
      new Map([[k, used.get(k) ?? { mant: 0n, exp: 0, format: v.format }]]),
      new Map([[k, v]]),
    );
    if (compareQuantity(next.get(k)!, h) > 0) exceeded.push(k);
  }
  if (!exceeded.length) return;
  const usedMasked: ResourceList = new Map(
    exceeded.map((k) => [k, used.get(k) ?? { mant: 0n, exp: 0, format: 'DecimalSI' as const }]),
  );
  throw admissionForbidden(
    a,
    `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(mask(requested, exceeded))}, used: ${prettyPrint(usedMasked)}, limited: ${prettyPrint(mask(hard, exceeded))}`,
  );
}
