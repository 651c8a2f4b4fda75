// LimitRanger (plugin/pkg/admission/limitranger): defaults container requests
// and limits from the namespace's LimitRanges, then enforces min, max and
// maxLimitRequestRatio per Container, per Pod and per PersistentVolumeClaim.
import {
  compareQuantity,
  formatQuantity,
  milliValue,
  type Quantity,
} from '../../../shared/api/validation/quantity';
import { podRequestsAndLimits, qosClass } from '../../../shared/api/pod-resources';
import { toResourceList, type ResourceList } from '../../../shared/api/resource-list';
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { admissionForbidden, isPods, jsonClone, Lister } from './util';

const ANNOTATION = 'kubernetes.io/limit-ranger';

export class LimitRanger implements AdmissionPlugin {
  readonly name = 'LimitRanger';
  private readonly ranges: Lister;

  constructor(registry: () => Registry) {
    this.ranges = new Lister(registry, '', 'limitranges');
  }

  private static applies(a: AdmissionAttributes): 'pod' | 'pvc' | null {
    if (a.subresource || !a.object) return null;
    // Containers cannot be added or changed on update: pods are only checked on create.
    if (isPods(a)) return a.operation === 'CREATE' ? 'pod' : null;
    if (a.group === '' && a.resource === 'persistentvolumeclaims')
      return a.operation === 'CREATE' || a.operation === 'UPDATE' ? 'pvc' : null;
    return null;
  }

  async admit(a: AdmissionAttributes): Promise<void> {
    if (LimitRanger.applies(a) !== 'pod') return;
    const ranges = await this.ranges.list(a.namespace);
    for (const lr of ranges) {
      const defaults = { limits: {} as Record<string, unknown>, requests: {} as Record<string, unknown> };
      let any = false;
      for (const item of lr.spec?.limits ?? []) {
        if (item.type !== 'Container') continue;
        for (const [k, v] of Object.entries(item.default ?? {})) {
          defaults.limits[k] = v;
          any = true;
        }
        for (const [k, v] of Object.entries(item.defaultRequest ?? {})) {
          defaults.requests[k] = v;
          any = true;
        }
      }
      if (any) mergePodResources(a.object, defaults);
    }
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    const kind = LimitRanger.applies(a);
    if (!kind) return;
    const ranges = await this.ranges.list(a.namespace);
    const errs: string[] = [];
    for (const lr of ranges) {
      for (const item of lr.spec?.limits ?? []) {
        if (kind === 'pvc') {
          if (item.type !== 'PersistentVolumeClaim') continue;
          const req = toResourceList(a.object.spec?.resources?.requests);
          for (const [k, v] of sorted(item.min)) minConstraint(errs, item.type, k, v, req, new Map());
          for (const [k, v] of sorted(item.max)) {
            const r = req.get(k);
            if (!r) errs.push(`maximum ${k} usage per ${item.type} is ${fmt(v)}.  No request is specified`);
            else if (compareQuantity(r, v) > 0)
              errs.push(`maximum ${k} usage per ${item.type} is ${fmt(v)}, but request is ${fmt(r)}`);
          }
          continue;
        }
        if (item.type === 'Container') {
          const spec = a.object.spec ?? {};
          for (const c of [...(spec.initContainers ?? []), ...(spec.containers ?? [])])
            checkItem(errs, item, toResourceList(c.resources?.requests), toResourceList(c.resources?.limits));
        } else if (item.type === 'Pod') {
          // A Pod limit bounds the containers' totals; spec.overhead is not counted.
          const { requests, limits } = podRequestsAndLimits(a.object, { excludeOverhead: true });
          checkItem(errs, item, requests, limits);
        }
      }
    }
    if (errs.length) throw admissionForbidden(a, errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);
  }
}

function sorted(list: Record<string, unknown> | undefined): [string, Quantity][] {
  const rl = toResourceList(list);
  return [...rl.keys()].sort().map((k) => [k, rl.get(k)!]);
}

const fmt = (q: Quantity) => formatQuantity(q);

/** min, max and maxLimitRequestRatio of one Container or Pod limit. */
function checkItem(errs: string[], item: any, req: ResourceList, lim: ResourceList): void {
  for (const [k, v] of sorted(item.min)) minConstraint(errs, item.type, k, v, req, lim);
  for (const [k, v] of sorted(item.max)) maxConstraint(errs, item.type, k, v, req, lim);
  for (const [k, v] of sorted(item.maxLimitRequestRatio)) ratioConstraint(errs, item.type, k, v, req, lim);
}

function minConstraint(
  errs: string[],
  type: string,
  name: string,
  enforced: Quantity,
  req: ResourceList,
  lim: ResourceList,
): void {
  const r = req.get(name);
  const l = lim.get(name);
  if (!r) errs.push(`minimum ${name} usage per ${type} is ${fmt(enforced)}.  No request is specified`);
  else if (compareQuantity(r, enforced) < 0)
    errs.push(`minimum ${name} usage per ${type} is ${fmt(enforced)}, but request is ${fmt(r)}`);
  else if (l && compareQuantity(l, enforced) < 0)
    errs.push(`minimum ${name} usage per ${type} is ${fmt(enforced)}, but limit is ${fmt(l)}`);
}

function maxConstraint(
  errs: string[],
  type: string,
  name: string,
  enforced: Quantity,
  req: ResourceList,
  lim: ResourceList,
): void {
  const r = req.get(name);
  const l = lim.get(name);
  if (!l) errs.push(`maximum ${name} usage per ${type} is ${fmt(enforced)}.  No limit is specified`);
  else if (compareQuantity(l, enforced) > 0)
    errs.push(`maximum ${name} usage per ${type} is ${fmt(enforced)}, but limit is ${fmt(l)}`);
  else if (r && compareQuantity(r, enforced) > 0)
    errs.push(`maximum ${name} usage per ${type} is ${fmt(enforced)}, but request is ${fmt(r)}`);
}

function ratioConstraint(
  errs: string[],
  type: string,
  name: string,
  enforced: Quantity,
  req: ResourceList,
  lim: ResourceList,
): void {
  const r = req.get(name);
  const l = lim.get(name);
  if (!r || milliValue(r) === 0n) {
    errs.push(
      `${name} max limit to request ratio per ${type} is ${fmt(enforced)}, but no request is specified or request is 0`,
    );
    return;
  }
  if (!l || milliValue(l) === 0n) {
    errs.push(
      `${name} max limit to request ratio per ${type} is ${fmt(enforced)}, but no limit is specified or limit is 0`,
    );
    return;
  }
  const ratio = Number(milliValue(l)) / Number(milliValue(r));
  if (ratio * 1000 > Number(milliValue(enforced)))
    errs.push(
      `${name} max limit to request ratio per ${type} is ${fmt(enforced)}, but provided ratio is ${ratio.toFixed(6)}`,
    );
}

function mergeContainer(
  c: any,
  defaults: { limits: Record<string, unknown>; requests: Record<string, unknown> },
  prefix: string,
  notes: string[],
): void {
  c.resources ??= {};
  const setLimits: string[] = [];
  const setRequests: string[] = [];
  for (const [k, v] of Object.entries(defaults.limits)) {
    c.resources.limits ??= {};
    if (c.resources.limits[k] === undefined) {
      c.resources.limits[k] = jsonClone(v);
      setLimits.push(k);
    }
  }
  for (const [k, v] of Object.entries(defaults.requests)) {
    c.resources.requests ??= {};
    if (c.resources.requests[k] === undefined) {
      c.resources.requests[k] = jsonClone(v);
      setRequests.push(k);
    }
  }
  if (c.resources.limits && !Object.keys(c.resources.limits).length) delete c.resources.limits;
  if (c.resources.requests && !Object.keys(c.resources.requests).length) delete c.resources.requests;
  if (setRequests.length) notes.push(`${setRequests.sort().join(', ')} request for ${prefix} ${c.name}`);
  if (setLimits.length) notes.push(`${setLimits.sort().join(', ')} limit for ${prefix} ${c.name}`);
}

function mergePodResources(
  pod: any,
  defaults: { limits: Record<string, unknown>; requests: Record<string, unknown> },
): void {
  const notes: string[] = [];
  for (const c of pod.spec?.containers ?? []) mergeContainer(c, defaults, 'container', notes);
  for (const c of pod.spec?.initContainers ?? []) mergeContainer(c, defaults, 'init container', notes);
  if (notes.length) {
    pod.metadata.annotations = {
      ...(pod.metadata.annotations ?? {}),
      [ANNOTATION]: `LimitRanger plugin set: ${notes.join('; ')}`,
    };
    // Kubernetes derives the QoS class after mutating admission; the store derived it before.
    if (pod.status?.qosClass) pod.status.qosClass = qosClass(pod);
  }
}
