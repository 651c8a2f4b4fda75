// The lock object of leader election: a coordination.k8s.io/v1 Lease
// (client-go's resourcelock.LeaseLock). The record lives in the Lease spec;
// updates carry the resourceVersion last read, so two candidates cannot both win.
import type { Client } from '../client/client';
import type { ResourceClient } from '../client/resource';
import type { KubeObject } from '../client/types';

/** client-go's LeaderElectionRecord; times are epoch ms. */
export interface LeaderElectionRecord {
  holderIdentity: string;
  leaseDurationSeconds: number;
  acquireTime: number;
  renewTime: number;
  leaderTransitions: number;
}

export interface ResourceLock {
  /** The current record and its raw form (compared to notice any change), or throws (NotFound when absent). */
  get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; raw: string }>;
  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  /** Writes the record over the version last read; throws Conflict when someone else wrote meanwhile. */
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void>;
  identity(): string;
  describe(): string;
  /** The lock object, for events about it. */
  object(): KubeObject | undefined;
}

/** metav1.MicroTime: RFC 3339 with six fractional digits. */
export function formatMicroTime(ms: number): string {
  const iso = new Date(ms).toISOString(); // 2025-01-01T00:00:00.123Z
  return `${iso.slice(0, 23)}000Z`;
}

export function parseMicroTime(s: string | undefined | null): number {
  if (!s) return 0;
  const t = Date.parse(s);
  return Number.isNaN(t) ? 0 : t;
}

export interface LeaseLockConfig {
  namespace: string;
  name: string;
  identity: string;
  /** Labels put on the Lease when it is created. */
  labels?: Record<string, string>;
}

export class LeaseLock implements ResourceLock {
  private lease?: KubeObject;
  private readonly leases: ResourceClient;

  constructor(
    client: Client,
    private readonly cfg: LeaseLockConfig,
  ) {
    this.leases = client.resource('leases.coordination.k8s.io').namespace(cfg.namespace);
  }

  async get(signal?: AbortSignal): Promise<{ record: LeaderElectionRecord; raw: string }> {
    const lease = await this.leases.get(this.cfg.name, { signal });
    this.lease = lease;
    const record = leaseSpecToRecord(lease.spec ?? {});
    return { record, raw: JSON.stringify(record) };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.lease = await this.leases.create(
      {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: {
          name: this.cfg.name,
          namespace: this.cfg.namespace,
          ...(this.cfg.labels ? { labels: this.cfg.labels } : {}),
        },
        spec: recordToLeaseSpec(record),
      },
      { signal },
    );
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    if (!this.lease) throw new Error('lease not initialized, call get or create first');
    this.lease = await this.leases.update(
      { ...this.lease, spec: { ...this.lease.spec, ...recordToLeaseSpec(record) } },
      { signal },
    );
  }

  identity(): string {
    return this.cfg.identity;
  }

  describe(): string {
    return `${this.cfg.namespace}/${this.cfg.name}`;
  }

  object(): KubeObject | undefined {
    return this.lease;
  }
}

export function leaseSpecToRecord(spec: any): LeaderElectionRecord {
  return {
    holderIdentity: spec.holderIdentity ?? '',
    leaseDurationSeconds: spec.leaseDurationSeconds ?? 0,
    acquireTime: parseMicroTime(spec.acquireTime),
    renewTime: parseMicroTime(spec.renewTime),
    leaderTransitions: spec.leaseTransitions ?? 0,
  };
}

export function recordToLeaseSpec(r: LeaderElectionRecord): Record<string, unknown> {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: formatMicroTime(r.acquireTime),
    renewTime: formatMicroTime(r.renewTime),
    leaseTransitions: r.leaderTransitions,
  };
}

/** The lock types of --leader-elect-resource-lock; the *leases migration locks are plain Leases now. */
export const LOCK_TYPES = ['leases', 'endpointsleases', 'configmapsleases'] as const;

export function newResourceLock(lockType: string, client: Client, cfg: LeaseLockConfig): ResourceLock {
  if (!(LOCK_TYPES as readonly string[]).includes(lockType)) {
    throw new Error(
      `invalid --leader-elect-resource-lock "${lockType}": must be one of ${LOCK_TYPES.join(', ')}`,
    );
  }
  return new LeaseLock(client, cfg);
}
