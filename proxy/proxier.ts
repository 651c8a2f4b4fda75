// The sync loop: shared informers on Services and EndpointSlices (kube-proxy's
// label selector), and one sync of the whole rule set at a time — bounded as
// kube-proxy's runner: a change after a quiet spell is applied at once, changes
// within --min-sync-period of the last sync are coalesced into the next one,
// and every --sync-period everything is applied again. A sync is partial (only
// what changed is rewritten) except the first one, the first after a failure and
// one every FULL_SYNC_PERIOD_MS (kube-proxy's FullSyncPeriod). Nothing is applied
// before both caches have synced. A failed sync is retried after the min period.
import type { Client, KubeObject } from '../shared/client';
import { SharedInformerFactory, type SharedIndexInformer } from '../shared/informers';
import type { Logger } from '../shared/log';
import type { ProxyBackend } from './backend';
import { deleteFlows, staleUdpFlows } from './conntrack';
import type { Runner } from './exec';
import { buildRuleSet, hasAnyEndpoints, type ModelOptions, type RuleSet } from './model';
import type { ProxyMetrics } from './metrics';
import type { ServiceHealthServers } from './service-health';
import { PROXY_LABEL_SELECTOR, type EndpointSlice, type Service } from './types';

/** kube-proxy's proxyutil.FullSyncPeriod: a full sync at least this often. */
export const FULL_SYNC_PERIOD_MS = 60 * 60 * 1000;

export interface ProxierOptions {
  client: Client;
  backend: ProxyBackend;
  model: ModelOptions;
  /** Where conntrack runs (the backend's namespace); absent: no UDP flow cleanup. */
  conntrack?: Runner;
  /** The healthCheckNodePort servers, kept in step with each applied rule set. */
  serviceHealth?: ServiceHealthServers;
  minSyncPeriodMs: number;
  syncPeriodMs: number;
  metrics: ProxyMetrics;
  log: Logger;
  now?: () => number;
}

function trimManagedFields(obj: KubeObject): KubeObject {
  if (!obj?.metadata?.managedFields) return obj;
  const { managedFields: _drop, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

export class Proxier {
  private readonly factory: SharedInformerFactory;
  private readonly services: SharedIndexInformer;
  private readonly slices: SharedIndexInformer;
  private readonly now: () => number;
  private synced = false;
  private stopped = false;
  private timer?: NodeJS.Timeout;
  private periodic?: NodeJS.Timeout;
  private running?: Promise<void>;
  private pending = false;
  private lastSyncStart = -Infinity;
  private installed?: RuleSet;
  /** The next sync rewrites everything (first sync, after a failure, once per FULL_SYNC_PERIOD_MS). */
  private needFullSync = true;
  private lastFullSync = -Infinity;
  /** When the oldest change not yet applied arrived (kube-proxy's healthz "queued" time). */
  queuedAt?: number;
  /** When rules were last applied. */
  lastUpdated?: number;
  /** Completed syncs, for tests and the benchmark. */
  syncs = 0;

  constructor(private readonly o: ProxierOptions) {
    this.now = o.now ?? Date.now;
    this.factory = new SharedInformerFactory(o.client, {
      labelSelector: PROXY_LABEL_SELECTOR,
      transform: trimManagedFields,
    });
    this.services = this.factory.forResource('services');
    this.slices = this.factory.forResource('endpointslices.discovery.k8s.io');
    const on = (counter: ProxyMetrics['serviceChanges']) => ({
      // The initial list is in the caches the first sync reads: no sync of its own.
      onAdd: (_o: unknown, initial: boolean) => (initial ? counter.inc() : this.changed(counter)),
      onUpdate: () => this.changed(counter),
      onDelete: () => this.changed(counter),
    });
    this.services.addEventHandler(on(o.metrics.serviceChanges));
    this.slices.addEventHandler(on(o.metrics.endpointChanges));
  }

  get mode() {
    return this.o.backend.mode;
  }

  /** Starts the informers; resolves after the first sync (or rejects when the caches never sync). */
  async start(): Promise<void> {
    this.factory.start();
    const synced = await this.factory.waitForCacheSync();
    if (this.stopped) return;
    if ([...synced.values()].some((ok) => !ok))
      throw new Error('the Service and EndpointSlice caches did not sync');
    this.synced = true;
    this.periodic = setInterval(() => this.requestSync(), this.o.syncPeriodMs);
    this.requestSync();
    await this.whenIdle();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    clearInterval(this.periodic);
    await this.running;
    await this.o.serviceHealth?.stop();
    await this.factory.shutdown();
  }

  /** Resolves when no sync is running or due. */
  async whenIdle(): Promise<void> {
    while (!this.stopped && (this.running || this.timer || this.pending))
      await (this.running ?? new Promise((r) => setTimeout(r, 5)));
  }

  private changed(counter: ProxyMetrics['serviceChanges']): void {
    counter.inc();
    const now = this.now();
    this.queuedAt ??= now;
    this.o.metrics.lastQueued.set(undefined, now / 1000);
    this.requestSync();
  }

  private requestSync(): void {
    if (!this.synced || this.stopped) return;
    if (this.running || this.timer) {
      this.pending = true;
      return;
    }
    const wait = Math.max(0, this.lastSyncStart + this.o.minSyncPeriodMs - this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.running = this.sync().finally(() => {
        this.running = undefined;
        if (this.pending) {
          this.pending = false;
          this.requestSync();
        }
      });
    }, wait);
  }

  private async sync(): Promise<void> {
    const start = this.now();
    this.lastSyncStart = start;
    const queuedAt = this.queuedAt;
    this.queuedAt = undefined;
    const rs = buildRuleSet(
      this.services.lister().list() as unknown as Service[],
      this.slices.lister().list() as unknown as EndpointSlice[],
      this.o.model,
    );
    const full = this.needFullSync || start - this.lastFullSync >= FULL_SYNC_PERIOD_MS;
    try {
      await this.o.backend.apply(rs, { full });
    } catch (err) {
      this.needFullSync = true;
      this.o.metrics.failures(this.o.backend.mode).inc();
      this.o.log.error('failed to program the proxy rules, retrying', { mode: this.mode, err: String(err) });
      this.queuedAt = queuedAt ?? start;
      this.pending = true;
      return;
    }
    if (this.o.conntrack) await deleteFlows(this.o.conntrack, staleUdpFlows(this.installed, rs), this.o.log);
    this.installed = rs;
    await this.o.serviceHealth?.sync(rs);
    if (full) {
      this.needFullSync = false;
      this.lastFullSync = start;
    }
    const end = this.now();
    this.lastUpdated = end;
    this.syncs++;
    const seconds = (end - start) / 1000;
    this.o.metrics.syncDuration.observe(undefined, seconds);
    (full ? this.o.metrics.syncFullDuration : this.o.metrics.syncPartialDuration).observe(undefined, seconds);
    this.o.metrics.lastSynced.set(undefined, end / 1000);
    const noLocal = (local: (sp: RuleSet['servicePorts'][number]) => boolean) =>
      rs.servicePorts.filter((sp) => local(sp) && hasAnyEndpoints(sp) && sp.localEndpoints.length === 0)
        .length;
    this.o.metrics.noLocalEndpoints.set(
      { traffic_policy: 'internal' },
      noLocal((sp) => sp.internalLocal),
    );
    this.o.metrics.noLocalEndpoints.set(
      { traffic_policy: 'external' },
      noLocal((sp) => sp.externalLocal),
    );
    this.o.log.v(4)?.info('synced proxy rules', {
      mode: this.mode,
      servicePorts: rs.servicePorts.length,
      full,
      ms: end - start,
    });
  }
}
