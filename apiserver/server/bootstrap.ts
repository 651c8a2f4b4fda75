// What every Kubernetes cluster has once the apiserver is up (post-start
// hooks): the system namespaces, the `kubernetes` Service and its endpoints
// (one entry per live apiserver, through TTL'd master leases in the store),
// the apiserver identity Lease, and the system priority classes.
import { createHash, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import { isStatusError } from '../../shared/api/status';
import type { Storage } from '../storage/interface';
import type { Registry, ServedResource } from '../registry/registry';
import { systemContext } from '../registry/context';
import { rfc3339Micro } from '../../shared/api/validation/gotime';
import { logger } from '../../shared/log';

const log = logger('bootstrap');

export const SYSTEM_NAMESPACES = ['default', 'kube-system', 'kube-public', 'kube-node-lease'];

function served(registry: Registry, group: string, resource: string): ServedResource {
  const s = registry.preferred(group, resource);
  if (!s) throw new Error(`bootstrap: ${group}/${resource} is not served`);
  return s;
}

/** Creates the object unless it exists. */
async function ensure(s: ServedResource, namespace: string, obj: any): Promise<void> {
  // Look first: a restart must not run create-time side effects (address allocation) again.
  try {
    await s.store.reader.get(systemContext(namespace), obj.metadata.name);
    return;
  } catch (err) {
    if (!isStatusError(err, 'NotFound')) throw err;
  }
  try {
    await s.store.create(systemContext(namespace), s.toStorage(obj));
  } catch (err) {
    if (!isStatusError(err, 'AlreadyExists')) throw err;
  }
}

/** Per registry, the one making of the system namespaces (in flight or done). */
const systemNamespacesMade = new WeakMap<Registry, Promise<void>>();

/**
 * Makes the system namespaces, once per registry: the post-start hooks that need them (the
 * bootstrap controller, RBAC's, the identity leases', authentication info's) all wait on the
 * same attempt; a failed one is tried again by the next caller.
 */
export function ensureSystemNamespaces(registry: Registry): Promise<void> {
  let made = systemNamespacesMade.get(registry);
  if (!made) {
    made = (async () => {
      const ns = served(registry, '', 'namespaces');
      // Together: concurrent creates share one commit of the store.
      await Promise.all(
        SYSTEM_NAMESPACES.map((name) =>
          ensure(ns, '', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } }),
        ),
      );
    })();
    made.catch(() => systemNamespacesMade.delete(registry));
    systemNamespacesMade.set(registry, made);
  }
  return made;
}

export async function ensurePriorityClasses(registry: Registry): Promise<void> {
  const pc = registry.preferred('scheduling.k8s.io', 'priorityclasses');
  if (!pc) return;
  const make = (name: string, value: number) => ({
    apiVersion: 'scheduling.k8s.io/v1',
    kind: 'PriorityClass',
    metadata: { name },
    value,
    preemptionPolicy: 'PreemptLowerPriority',
    description: `Used for system critical pods that must run in the ${name === 'system-node-critical' ? 'node' : 'cluster'}.`,
  });
  await Promise.all([
    ensure(pc, '', make('system-node-critical', 2000001000)),
    ensure(pc, '', make('system-cluster-critical', 2000000000)),
  ]);
}

export interface EndpointReconcilerOptions {
  storage: Storage;
  registry: Registry;
  etcdPrefix: string;
  advertiseAddress: string;
  port: number;
  serviceIP: string;
  /** lease | master-count | none */
  type: string;
}

/** The `kubernetes` Service in default, and its endpoints reconciled from master leases. */
export class KubernetesServiceReconciler {
  private timer: NodeJS.Timeout | null = null;
  private readonly leaseKey: string;

  constructor(private readonly o: EndpointReconcilerOptions) {
    this.leaseKey = `${o.etcdPrefix}/masterleases/${o.advertiseAddress}:${o.port}`;
  }

  async start(): Promise<void> {
    const svc = served(this.o.registry, '', 'services');
    await ensure(svc, 'default', {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: 'kubernetes', labels: { component: 'apiserver', provider: 'kubernetes' } },
      spec: {
        type: 'ClusterIP',
        clusterIP: this.o.serviceIP,
        clusterIPs: [this.o.serviceIP],
        ports: [{ name: 'https', port: 443, protocol: 'TCP', targetPort: this.o.port }],
        sessionAffinity: 'None',
      },
    });
    if (this.o.type === 'none') return;
    await this.tick();
    this.timer = setInterval(
      () => void this.tick().catch((err) => log.warn('endpoint reconcile failed', { err: String(err) })),
      10_000,
    );
    this.timer.unref();
  }

  /** Removes this apiserver's lease (graceful shutdown) and reconciles the endpoints once more. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    if (this.o.type === 'lease') {
      await this.o.storage.delete(this.leaseKey).catch(() => undefined);
      await this.reconcile().catch(() => undefined);
    }
  }

  private async tick(): Promise<void> {
    if (this.o.type === 'lease') {
      const value = Buffer.from(JSON.stringify({ ip: this.o.advertiseAddress, port: this.o.port }));
      const { kv } = await this.o.storage.get(this.leaseKey);
      if (kv)
        await this.o.storage
          .update(this.leaseKey, value, kv.modRevision, { ttlSeconds: 15 })
          .catch(() => undefined);
      else await this.o.storage.create(this.leaseKey, value, { ttlSeconds: 15 }).catch(() => undefined);
    }
    await this.reconcile();
  }

  private async masters(): Promise<{ ip: string; port: number }[]> {
    if (this.o.type !== 'lease') return [{ ip: this.o.advertiseAddress, port: this.o.port }];
    const r = await this.o.storage.range(`${this.o.etcdPrefix}/masterleases/`);
    return r.kvs
      .map((kv) => JSON.parse(kv.value.toString()))
      .sort((a, b) => {
        const x = `${a.ip}:${a.port}`;
        const y = `${b.ip}:${b.port}`;
        return x < y ? -1 : x > y ? 1 : 0;
      });
  }

  private async reconcile(): Promise<void> {
    const masters = await this.masters();
    const byPort = new Map<number, string[]>();
    for (const m of masters) byPort.set(m.port, [...(byPort.get(m.port) ?? []), m.ip]);
    const subsets = [...byPort].map(([port, ips]) => ({
      addresses: ips.map((ip) => ({ ip })),
      ports: [{ name: 'https', port, protocol: 'TCP' }],
    }));
    const ep = served(this.o.registry, '', 'endpoints');
    const desired = {
      apiVersion: 'v1',
      kind: 'Endpoints',
      metadata: { name: 'kubernetes', labels: { 'endpointslice.kubernetes.io/skip-mirror': 'true' } },
      subsets,
    };
    await ep.store.update(
      systemContext('default'),
      'kubernetes',
      (cur) => ({ ...(cur ?? {}), ...desired, metadata: { ...(cur?.metadata ?? {}), ...desired.metadata } }),
      {},
      { allowCreate: true },
    );
    const slices = this.o.registry.preferred('discovery.k8s.io', 'endpointslices');
    if (!slices) return;
    const first = [...byPort][0];
    const slice = {
      apiVersion: 'discovery.k8s.io/v1',
      kind: 'EndpointSlice',
      // Only the service-name label, as Kubernetes writes it: a managed-by label would hand the
      // slice to the endpointslice controller, which deletes slices of selector-less services.
      metadata: { name: 'kubernetes', labels: { 'kubernetes.io/service-name': 'kubernetes' } },
      addressType: 'IPv4',
      endpoints: masters.map((m) => ({
        addresses: [m.ip],
        conditions: { ready: true, serving: true, terminating: false },
      })),
      ports: first ? [{ name: 'https', port: first[0], protocol: 'TCP' }] : [],
    };
    await slices.store.update(
      systemContext('default'),
      'kubernetes',
      (cur) => ({ ...(cur ?? {}), ...slice, metadata: { ...(cur?.metadata ?? {}), ...slice.metadata } }),
      {},
      { allowCreate: true },
    );
  }
}

/** The apiserver identity Lease in kube-system, renewed every interval. */
export class IdentityLease {
  private timer: NodeJS.Timeout | null = null;
  readonly name: string;
  private readonly holder: string;

  constructor(
    private readonly registry: Registry,
    port: number,
    private readonly durationSeconds: number,
    private readonly renewSeconds: number,
  ) {
    this.name =
      'apiserver-' + createHash('sha256').update(`${hostname()}:${port}`).digest('hex').slice(0, 26);
    this.holder = `${this.name}_${randomUUID()}`;
  }

  async start(): Promise<void> {
    await this.renew();
    this.timer = setInterval(
      () => void this.renew().catch((err) => log.warn('identity lease renewal failed', { err: String(err) })),
      this.renewSeconds * 1000,
    );
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  private async renew(): Promise<void> {
    const leases = served(this.registry, 'coordination.k8s.io', 'leases');
    const now = rfc3339Micro(new Date());
    await leases.store.update(
      systemContext('kube-system'),
      this.name,
      (cur) => ({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          ...(cur?.metadata ?? {}),
          name: this.name,
          labels: {
            'apiserver.kubernetes.io/identity': 'kube-apiserver',
            'kubernetes.io/hostname': hostname(),
          },
        },
        spec: {
          holderIdentity: this.holder,
          leaseDurationSeconds: this.durationSeconds,
          acquireTime: cur?.spec?.acquireTime ?? now,
          renewTime: now,
        },
      }),
      {},
      { allowCreate: true },
    );
  }
}
