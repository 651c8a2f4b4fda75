// The EndpointSlice controller (pkg/controller/endpointslice): discovery.k8s.io/v1
// EndpointSlices for every Service with a selector, one set per address family,
// pods grouped by the ports they resolve to, at most --max-endpoints-per-slice
// endpoints a slice; conditions ready / serving / terminating (terminating pods
// stay listed while EndpointSliceTerminatingCondition is on); labelled
// kubernetes.io/service-name and endpointslice.kubernetes.io/managed-by, owned
// by the Service; a placeholder slice when there are no endpoints.
import type { ControllerContext, ControllerDescriptor } from '../../controller';
import { isNotFound, type ResourceClient } from '../../../shared/client';
import type { SharedIndexInformer } from '../../../shared/informers';
import { featureGates } from '../../../shared/options/feature-gates';
import { intOption, splitKey, unwrap, type Obj } from '../util/base';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';
import { controllerRef } from '../util/controller-ref';
import {
  HEADLESS_LABEL,
  SERVICE_NAME_LABEL,
  findPort,
  isPodReady,
  managedService,
  podIPOfFamily,
  podReference,
  serviceFamilies,
  serviceSelects,
  shouldPodBeInEndpoints,
  shouldSetHostname,
} from '../util/endpoints';
import { ServicePodController } from '../endpoint/service-base';

export const MANAGED_BY_LABEL = 'endpointslice.kubernetes.io/managed-by';
export const CONTROLLER_NAME = 'endpointslice-controller.k8s.io';
const ZONE_LABEL = 'topology.kubernetes.io/zone';
/** Writes the cache has not shown yet are waited for at most this long. */
const TRACK_TIMEOUT_MS = 10_000;

/** A slice's endpoints after placement: an existing slice (or a new one), or one to remove. */
interface Placement {
  slice?: Obj;
  endpoints: any[];
  remove?: boolean;
}

interface Group {
  addressType: string;
  ports: any[];
  endpoints: any[];
}

/**
 * Which slices can hold a port set (endpointsliceutil.NewPortMapKey): the ports' values in a
 * fixed field order, sorted, so a slice read back from the apiserver (fields in its own order)
 * keys the same as the one the controller computed.
 */
const portsKey = (ports: any[]) =>
  JSON.stringify(
    ports
      .map((p) => [p.name ?? '', p.port ?? 0, p.protocol ?? 'TCP', p.appProtocol ?? ''])
      .sort((a, b) =>
        a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] - b[1] || (a[2] < b[2] ? -1 : a[2] > b[2] ? 1 : 0),
      ),
  );

function rvNewer(a: string | undefined, b: string): boolean {
  if (!a) return false;
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) return BigInt(a) >= BigInt(b);
  return a === b;
}

export class EndpointSliceController extends ServicePodController {
  private readonly slices: SharedIndexInformer<Obj>;
  private readonly nodes: SharedIndexInformer<Obj>;
  private readonly client: ResourceClient<Obj>;
  private readonly maxPerSlice: number;
  /** Slices written but not yet seen in the cache, per Service key (endpointSliceTracker). */
  private readonly pending = new Map<string, { names: Map<string, string | 'deleted'>; since: number }>();

  constructor(ctx: ControllerContext, workers = intOption(ctx, 'concurrentServiceEndpointSyncs', 5)) {
    super(ctx, 'endpointslice', workers);
    this.maxPerSlice = Math.max(1, intOption(ctx, 'maxEndpointsPerSlice', 100));
    this.slices = ctx.informers.forResource<Obj>('endpointslices.discovery.k8s.io');
    this.nodes = ctx.informers.forResource<Obj>('nodes');
    this.client = ctx.client.resource<Obj>('endpointslices.discovery.k8s.io');
    this.waitFor(this.slices, this.nodes);
    const sliceEvent = (s: Obj, deleted: boolean) => {
      if (s.metadata.labels?.[MANAGED_BY_LABEL] !== CONTROLLER_NAME) return;
      const svc = s.metadata.labels?.[SERVICE_NAME_LABEL];
      if (!svc) return;
      const key = `${s.metadata.namespace}/${svc}`;
      const p = this.pending.get(key);
      if (p) {
        const want = p.names.get(s.metadata.name!);
        if (
          want !== undefined &&
          (deleted ? want === 'deleted' : want !== 'deleted' && rvNewer(s.metadata.resourceVersion, want))
        )
          p.names.delete(s.metadata.name!);
        if (!p.names.size) this.pending.delete(key);
      }
      this.enqueue(key);
    };
    this.slices.addEventHandler({
      onAdd: (s) => sliceEvent(s, false),
      onUpdate: (_o, s) => sliceEvent(s, false),
      onDelete: (s) => sliceEvent(unwrap(s), true),
    });
  }

  private track(key: string, name: string, rv: string | 'deleted'): void {
    // Already in the cache (the watch event came before the response)?
    const cached = this.slices.indexer.getByKey(`${splitKey(key)[0]}/${name}`);
    if (rv === 'deleted' ? !cached : rvNewer(cached?.metadata.resourceVersion, rv)) return;
    let p = this.pending.get(key);
    if (!p) this.pending.set(key, (p = { names: new Map(), since: Date.now() }));
    p.names.set(name, rv);
  }

  /** Slices of this Service the cache holds, unless our own writes are not visible yet. */
  private ownSlices(key: string, ns: string, name: string): Obj[] | undefined {
    const p = this.pending.get(key);
    if (p) {
      if (Date.now() - p.since < TRACK_TIMEOUT_MS) return undefined;
      this.pending.delete(key);
    }
    return this.slices
      .lister()
      .namespace(ns)
      .list()
      .filter(
        (s) =>
          s.metadata.labels?.[SERVICE_NAME_LABEL] === name &&
          s.metadata.labels?.[MANAGED_BY_LABEL] === CONTROLLER_NAME,
      );
  }

  protected async sync(key: string): Promise<void> {
    const [ns, name] = splitKey(key);
    const svc = this.services.indexer.getByKey(key);
    const existing = this.ownSlices(key, ns, name);
    if (!existing) {
      this.enqueueAfter(key, 50);
      return;
    }
    if (!svc || !managedService(svc)) {
      // The Service is gone (its slices go with it through the garbage collector) or no longer selects:
      // remove what we manage.
      if (svc && !managedService(svc)) for (const s of existing) await this.remove(key, s);
      return;
    }
    const groups = this.desired(svc);
    const ref = { ...controllerRef(svc, 'v1', 'Service') };
    const labels: Record<string, string> = { ...(svc.metadata.labels ?? {}) };
    delete labels[SERVICE_NAME_LABEL];
    delete labels[MANAGED_BY_LABEL];
    if (svc.spec?.clusterIP === 'None') labels[HEADLESS_LABEL] = '';
    else delete labels[HEADLESS_LABEL];
    labels[SERVICE_NAME_LABEL] = name;
    labels[MANAGED_BY_LABEL] = CONTROLLER_NAME;

    const pool = new Map<string, Obj[]>();
    for (const s of [...existing].sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1))) {
      const k = `${s.addressType}|${portsKey(s.ports ?? [])}`;
      if (!pool.has(k)) pool.set(k, []);
      pool.get(k)!.push(s);
    }
    // A placeholder (no endpoints, no ports) when nothing is selected.
    if (!groups.length) groups.push({ addressType: serviceFamilies(svc)[0], ports: [], endpoints: [] });
    const rc = this.client.namespace(ns);
    for (const g of groups) {
      const k = `${g.addressType}|${portsKey(g.ports)}`;
      const placed = this.place(g.endpoints, pool.get(k) ?? []);
      pool.delete(k);
      for (const { slice: reuse, endpoints, remove } of placed) {
        const body: Obj = {
          apiVersion: 'discovery.k8s.io/v1',
          kind: 'EndpointSlice',
          metadata: reuse
            ? { ...jsonClone(reuse.metadata), labels }
            : { generateName: `${name}-`, namespace: ns, labels, ownerReferences: [ref] },
          addressType: g.addressType,
          endpoints,
          ports: g.ports,
        };
        if (!reuse) {
          const created = await rc.create(body);
          this.track(key, created.metadata.name!, created.metadata.resourceVersion!);
          continue;
        }
        if (remove) {
          await this.remove(key, reuse);
          continue;
        }
        const same =
          jsonEqual(reuse.endpoints ?? [], endpoints) &&
          jsonEqual(reuse.ports ?? [], g.ports) &&
          jsonEqual(reuse.metadata.labels ?? {}, labels) &&
          (reuse.metadata.ownerReferences ?? []).some((r) => r.uid === svc.metadata.uid);
        if (same) continue;
        if (!(body.metadata.ownerReferences ?? []).some((r: any) => r.uid === svc.metadata.uid))
          body.metadata.ownerReferences = [ref];
        try {
          const updated = await rc.update(body);
          this.track(key, updated.metadata.name!, updated.metadata.resourceVersion!);
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
    }
    for (const left of pool.values()) for (const s of left) await this.remove(key, s);
  }

  /**
   * Where each endpoint of a group goes (the reconciler's placement): an endpoint stays in the slice
   * that holds it, new ones fill slices with room, then new slices; so settled slices are never
   * reshuffled, whatever their names. Slices left empty are removed, but for the one a group
   * without endpoints keeps (its placeholder).
   */
  private place(endpoints: any[], slices: Obj[]): Placement[] {
    const id = (e: any) => `${e.targetRef?.uid ?? ''}|${(e.addresses ?? []).join(',')}`;
    const wanted = new Map(endpoints.map((e) => [id(e), e]));
    const placed: Placement[] = slices.map((slice) => {
      const kept: any[] = [];
      for (const e of slice.endpoints ?? []) {
        const w = wanted.get(id(e));
        if (!w || kept.length >= this.maxPerSlice) continue;
        kept.push(w);
        wanted.delete(id(e));
      }
      return { slice, endpoints: kept };
    });
    const rest = [...wanted.values()];
    for (const p of placed)
      while (p.endpoints.length < this.maxPerSlice && rest.length) p.endpoints.push(rest.shift());
    for (let i = 0; i < rest.length; i += this.maxPerSlice)
      placed.push({ endpoints: rest.slice(i, i + this.maxPerSlice) });
    if (!placed.length) placed.push({ endpoints: [] });
    placed.forEach((p, i) => (p.remove = !p.endpoints.length && (endpoints.length > 0 || i > 0)));
    return placed;
  }

  private async remove(key: string, s: Obj): Promise<void> {
    try {
      await this.client.namespace(s.metadata.namespace!).delete(s.metadata.name!);
      this.track(key, s.metadata.name!, 'deleted');
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
  }

  /** The endpoints of the Service, grouped by address type and resolved ports. */
  private desired(svc: Obj): Group[] {
    const ns = svc.metadata.namespace!;
    const publishNotReady = !!svc.spec?.publishNotReadyAddresses;
    const terminatingCondition = featureGates.enabled('EndpointSliceTerminatingCondition');
    const groups = new Map<string, Group>();
    const pods = this.pods
      .lister()
      .namespace(ns)
      .list()
      .filter((p) => serviceSelects(svc, p))
      .sort((a, b) => (a.metadata.name! < b.metadata.name! ? -1 : 1));
    for (const family of serviceFamilies(svc)) {
      for (const pod of pods) {
        if (!shouldPodBeInEndpoints(pod, terminatingCondition || publishNotReady)) continue;
        const ip = podIPOfFamily(pod, family);
        if (!ip) continue;
        const ports: any[] = [];
        let ok = true;
        for (const sp of svc.spec?.ports ?? []) {
          const port = findPort(pod, sp);
          if (port === undefined) {
            ok = false;
            continue;
          }
          const p: any = { name: sp.name ?? '', port, protocol: sp.protocol ?? 'TCP' };
          if (sp.appProtocol) p.appProtocol = sp.appProtocol;
          ports.push(p);
        }
        // Pods that resolve no port of a Service with ports are left out (like the Endpoints controller).
        if (!ports.length && (svc.spec?.ports ?? []).length && !ok) continue;
        const terminating = !!pod.metadata.deletionTimestamp;
        const ready = isPodReady(pod);
        const conditions: any = { ready: publishNotReady || (ready && !terminating) };
        if (terminatingCondition) {
          conditions.serving = publishNotReady || ready;
          conditions.terminating = terminating;
        }
        const ep: any = { addresses: [ip], conditions };
        if (shouldSetHostname(pod, svc)) ep.hostname = pod.spec.hostname;
        ep.targetRef = podReference(pod);
        if (pod.spec?.nodeName) {
          ep.nodeName = pod.spec.nodeName;
          const zone = this.nodes.indexer.getByKey(pod.spec.nodeName)?.metadata.labels?.[ZONE_LABEL];
          if (zone) ep.zone = zone;
        }
        const k = `${family}|${portsKey(ports)}`;
        let g = groups.get(k);
        if (!g) groups.set(k, (g = { addressType: family, ports, endpoints: [] }));
        g.endpoints.push(ep);
      }
    }
    return [...groups.values()];
  }
}

export const endpointSliceController: ControllerDescriptor = {
  name: 'endpointslice',
  start(ctx) {
    void new EndpointSliceController(ctx).run();
  },
};
