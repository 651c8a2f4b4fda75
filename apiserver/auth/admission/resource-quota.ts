// ResourceQuota (plugin/pkg/admission/resourcequota): a write that consumes
// quota is charged to every matching ResourceQuota of its namespace before it
// is stored. The charge is a compare-and-swap of the quota's status.used, so
// concurrent creates never both get the last unit. Dry-run checks, never charges.
import { addQuantity, compareQuantity, isZeroQuantity } from '../../../shared/api/validation/quantity';
import { isStatusError } from '../../../shared/api/status';
import {
  computeUsage,
  isPodFinished,
  isPodQuotaResource,
  isPVCQuotaResource,
  isServiceQuotaResource,
  objectCountNames,
  podMatchesScopes,
  podUsage,
  pvcUsage,
  quotaScopes,
  serviceUsage,
} from '../../../shared/api/quota';
import {
  addLists,
  countQuantity,
  fromResourceList,
  maskList,
  prettyPrint,
  subLists,
  toResourceList,
  zeroQuantity,
  type ResourceList,
} from '../../../shared/api/resource-list';
import type { Registry } from '../../registry/registry';
import { statusStrategy } from '../../registry/registry';
import { systemContext } from '../../registry/context';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, Lister } from './util';

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

const POD_VALIDATION = ['cpu', 'memory', 'requests.cpu', 'requests.memory', 'limits.cpu', 'limits.memory'];

const podEvaluator: Evaluator = {
  scoped: true,
  matches: isPodQuotaResource,
  handles: (op) => op === 'CREATE',
  // Admission releases a deleted pod's compute at once, without its grace period.
  usage: (pod) => podUsage(pod, !isPodFinished(pod) && !pod.metadata?.deletionTimestamp),
  constraints(required, pod) {
    const req = new Set(required.filter((r) => POD_VALIDATION.includes(r)));
    if (!req.size) return null;
    const missing = new Map<string, Set<string>>();
    for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
      const have = computeUsage(toResourceList(c.resources?.requests), toResourceList(c.resources?.limits));
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
  matches: isServiceQuotaResource,
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  usage: serviceUsage,
};

const pvcEvaluator: Evaluator = {
  matches: isPVCQuotaResource,
  handles: (op) => op === 'CREATE' || op === 'UPDATE',
  usage: pvcUsage,
};

function objectCountEvaluator(group: string, resource: string): Evaluator {
  const names = objectCountNames(group, resource);
  return {
    matches: (n) => names.includes(n),
    handles: (op) => op === 'CREATE',
    usage: () => new Map(names.map((n) => [n, countQuantity(1)])),
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

/** Does the quota select the object? Only pods have scopes; a scoped quota counts nothing else. */
function scopesMatch(quota: any, obj: any, scoped: boolean): boolean {
  if (!quotaScopes(quota).length) return true;
  return scoped && podMatchesScopes(quota, obj);
}

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
    delta = new Map([...delta].filter(([, v]) => !isZeroQuantity(v)));
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
      const requested = maskList(delta, restricted);
      if (!requested.size) continue;
      checkQuota(a, q, requested);
      charges.push({ name: q.metadata.name, resources: restricted });
    }
    if (!charges.length || a.dryRun) return;

    // Charge each quota with a compare-and-swap on its status; undo on failure.
    const charged: { name: string; requested: ResourceList }[] = [];
    try {
      for (const c of charges) {
        const requested = maskList(delta, c.resources);
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
    const next = used.has(k) ? addQuantity(used.get(k)!, v) : v;
    if (compareQuantity(next, h) > 0) exceeded.push(k);
  }
  if (!exceeded.length) return;
  const usedMasked: ResourceList = new Map(exceeded.map((k) => [k, used.get(k) ?? zeroQuantity()]));
  throw admissionForbidden(
    a,
    `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, used: ${prettyPrint(usedMasked)}, limited: ${prettyPrint(maskList(hard, exceeded))}`,
  );
}
