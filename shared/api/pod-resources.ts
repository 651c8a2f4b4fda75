// What a pod asks for as a whole (resourcehelper.PodRequests / PodLimits) and
// its QoS class (qos.GetPodQOS), for quota and limit checks and pod status.
import { addLists, maxLists, toResourceList, type ResourceList } from './resource-list';

/**
 * The pod's requests and limits: the sum over its containers, at least the
 * largest init container, plus spec.overhead (on limits only for resources
 * that have a limit) unless excluded.
 */
export function podRequestsAndLimits(
  pod: any,
  o: { excludeOverhead?: boolean } = {},
): { requests: ResourceList; limits: ResourceList } {
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
  if (pod.spec?.overhead && !o.excludeOverhead) {
    const overhead = toResourceList(pod.spec.overhead);
    requests = addLists(requests, overhead);
    limits = addLists(limits, new Map([...overhead].filter(([k]) => limits.has(k))));
  }
  return { requests, limits };
}

export type QOSClass = 'Guaranteed' | 'Burstable' | 'BestEffort';

export function qosClass(pod: any): QOSClass {
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
