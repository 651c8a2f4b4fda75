// The Endpoints controller (pkg/controller/endpoint): the v1 Endpoints of
// every Service with a selector — pod addresses (ready ones in addresses, others
// in notReadyAddresses unless publishNotReadyAddresses), ports resolved per pod
// by targetPort (number or container port name), repacked into subsets of
// addresses sharing the same ports.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isNotFound, isAlreadyExists, isConflict, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { intOption, keyOf, rfc3339, splitKey, unwrap, type Obj } from '../util/base';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';
import {
  HEADLESS_LABEL,
  TRIGGER_TIME_ANNOTATION,
  findPort,
  isPodReady,
  managedService,
  podIPOfFamily,
  serviceFamilies,
  serviceSelects,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from '../util/endpoints';
import { ServicePodController } from './service-base';

const MAX_CAPACITY = 1000;
const OVER_CAPACITY = 'endpoints.kubernetes.io/over-capacity';

interface Address {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef: any;
}

interface Port {
  name?: string;
  port: number;
  protocol: string;
  appProtocol?: string;
}

/** RepackSubsets: addresses grouped by the exact set of ports they serve. */
export function repackSubsets(entries: { address: Address; ready: boolean; port?: Port }[]): any[] {
  const byAddress = new Map<string, { address: Address; ready: boolean; ports: Map<string, Port> }>();
  for (const e of entries) {
    const k = `${e.ready ? 'r' : 'n'}|${e.address.ip}|${e.address.targetRef?.uid ?? ''}`;
    let a = byAddress.get(k);
    if (!a) byAddress.set(k, (a = { address: e.address, ready: e.ready, ports: new Map() }));
    if (e.port) a.ports.set(`${e.port.name ?? ''}|${e.port.port}|${e.port.protocol}`, e.port);
  }
  const bySet = new Map<string, { ports: Port[]; ready: Address[]; notReady: Address[] }>();
  for (const a of byAddress.values()) {
    const keys = [...a.ports.keys()].sort();
    const k = keys.join(';');
    let s = bySet.get(k);
    if (!s) bySet.set(k, (s = { ports: keys.map((x) => a.ports.get(x)!), ready: [], notReady: [] }));
    (a.ready ? s.ready : s.notReady).push(a.address);
  }
  const byIp = (x: Address, y: Address) => (x.ip < y.ip ? -1 : x.ip > y.ip ? 1 : 0);
  const subsets = [...bySet.values()].map((s) => {
    const out: any = {};
    if (s.ready.length) out.addresses = s.ready.sort(byIp);
    if (s.notReady.length) out.notReadyAddresses = s.notReady.sort(byIp);
    if (s.ports.length) out.ports = s.ports;
    return out;
  });
  const first = (s: any) => (s.addresses ?? s.notReadyAddresses ?? [])[0]?.ip ?? '';
  return subsets.sort((a, b) => (first(a) < first(b) ? -1 : first(a) > first(b) ? 1 : 0));
}

export class EndpointsController extends ServicePodController {
  private readonly endpoints: SharedIndexInformer<Obj>;
  private readonly client: ResourceClient<Obj>;

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentEndpointSyncs', 5)) {
    super(ctx, 'endpoint', workers);
    this.endpoints = ctx.informers.forResource<Obj>('endpoints');
    this.client = ctx.client.resource<Obj>('endpoints');
    this.waitFor(this.endpoints);
    // Someone else changed or removed Endpoints of a managed Service: put them back.
    this.endpoints.addEventHandler({
      onDelete: (e) => this.enqueue(keyOf(unwrap(e))),
    });
  }

  protected async sync(key: string): Promise<void> {
    const [ns, name] = splitKey(key);
    const svc = this.services.indexer.getByKey(key);
    if (!svc) {
      if (this.endpoints.indexer.getByKey(key)) {
        try {
          await this.client.namespace(ns).delete(name);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      return;
    }
    if (!managedService(svc)) return;
    const publishNotReady = !!svc.spec?.publishNotReadyAddresses;
    const family = serviceFamilies(svc)[0];
    const headless = svc.spec?.clusterIP === 'None';
    const entries: { address: Address; ready: boolean; port?: Port }[] = [];
    for (const pod of this.pods.lister().namespace(ns).list()) {
      if (!serviceSelects(svc, pod)) continue;
      if (!shouldPodBeInEndpoints(pod, publishNotReady)) continue;
      const ip = podIPOfFamily(pod, family);
      if (!ip) continue;
      const address: Address = {
        ip,
        ...(shouldSetHostname(pod, svc) ? { hostname: pod.spec.hostname } : {}),
        ...(pod.spec?.nodeName ? { nodeName: pod.spec.nodeName } : {}),
        targetRef: {
          kind: 'Pod',
          namespace: pod.metadata.namespace,
          name: pod.metadata.name,
          uid: pod.metadata.uid,
        },
      };
      const ready = publishNotReady || isPodReady(pod);
      const ports: any[] = svc.spec?.ports ?? [];
      if (!ports.length) {
        if (headless) entries.push({ address, ready });
        continue;
      }
      for (const sp of ports) {
        const port = findPort(pod, sp);
        if (port === undefined) continue;
        const p: Port = { port, protocol: sp.protocol ?? 'TCP' };
        if (sp.name) p.name = sp.name;
        if (sp.appProtocol) p.appProtocol = sp.appProtocol;
        entries.push({ address, ready, port: p });
      }
    }
    let subsets = repackSubsets(entries);
    const annotations: Record<string, string> = {};
    let total = 0;
    for (const s of subsets) total += (s.addresses?.length ?? 0) + (s.notReadyAddresses?.length ?? 0);
    if (total > MAX_CAPACITY) {
      annotations[OVER_CAPACITY] = 'truncated';
      subsets = truncate(subsets, MAX_CAPACITY);
    }
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    if (headless) labels[HEADLESS_LABEL] = '';
    else delete labels[HEADLESS_LABEL];

    const current = this.endpoints.indexer.getByKey(key);
    const curLabels = { ...(current?.metadata.labels ?? {}) };
    if (
      current &&
      jsonEqual(current.subsets ?? [], subsets) &&
      jsonEqual(curLabels, labels) &&
      current.metadata.annotations?.[OVER_CAPACITY] === annotations[OVER_CAPACITY]
    )
      return;
    const next: Obj = current
      ? jsonClone(current)
      : { apiVersion: 'v1', kind: 'Endpoints', metadata: { name, namespace: ns } };
    next.metadata.labels = labels;
    const ann = { ...(next.metadata.annotations ?? {}) };
    delete ann[OVER_CAPACITY];
    Object.assign(ann, annotations);
    ann[TRIGGER_TIME_ANNOTATION] = rfc3339(this.ctx.now());
    next.metadata.annotations = ann;
    next.subsets = subsets;
    const rc = this.client.namespace(ns);
    try {
      if (current) await rc.update(next);
      else await rc.create(next);
    } catch (err) {
      // A stale cache: the next event brings the current object.
      if (isAlreadyExists(err) || isConflict(err)) throw err;
      if (isNotFound(err)) return;
      throw err;
    }
  }
}

function truncate(subsets: any[], max: number): any[] {
  let left = max;
  return subsets.map((s) => {
    const out = { ...s };
    const take = (list?: Address[]) => {
      if (!list) return undefined;
      const r = list.slice(0, Math.max(0, left));
      left -= r.length;
      return r.length ? r : undefined;
    };
    out.addresses = take(s.addresses);
    out.notReadyAddresses = take(s.notReadyAddresses);
    if (!out.addresses) delete out.addresses;
    if (!out.notReadyAddresses) delete out.notReadyAddresses;
    return out;
  });
}

export const endpointController: ControllerDescriptor = {
  name: 'endpoint',
  start(ctx) {
    void new EndpointsController(ctx).run();
  },
};
