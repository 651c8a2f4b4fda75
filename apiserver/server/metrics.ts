// The apiserver's /metrics: request counts and latencies, in-flight and
// long-running requests, watchers, stored object counts and database size
// (polled at --etcd-count-metric-poll-period and --etcd-db-metric-poll-interval),
// and requests to deprecated APIs.
import {
  Metric,
  MetricsRegistry,
  type Counter,
  type Gauge,
  type Histogram,
} from '../../shared/metrics/registry';
import { processMetrics } from '../../shared/metrics/process';
import type { RequestInfo } from '../endpoints/request-info';
import type { Storage } from '../storage/interface';
import type { Registry } from '../registry/registry';
import { keyPrefix } from '../registry/resource';
import { logger } from '../../shared/log';

const log = logger('metrics');

/** The verb label Kubernetes reports: GET/LIST/WATCH/POST/PUT/PATCH/APPLY/DELETE/CONNECT. */
export function metricVerb(method: string, info: RequestInfo, contentType: string | undefined): string {
  if (!info.isResourceRequest) return method.toUpperCase();
  switch (info.verb) {
    case 'list':
      return 'LIST';
    case 'watch':
      return 'WATCH';
    case 'get':
      return 'GET';
    case 'patch':
      return (contentType ?? '').startsWith('application/apply-patch') ? 'APPLY' : 'PATCH';
    default:
      return method.toUpperCase();
  }
}

export function metricScope(info: RequestInfo): string {
  if (!info.isResourceRequest) return '';
  if (info.name) return 'resource';
  if (info.namespace) return 'namespace';
  return 'cluster';
}

/** What a request is, as the request metrics label it (dry_run only on the totals and durations). */
const REQUEST_LABELS = [
  'verb',
  'dry_run',
  'group',
  'version',
  'resource',
  'subresource',
  'scope',
  'component',
];

/** A request's values of REQUEST_LABELS, in that order. */
function requestLabelValues(
  method: string,
  info: RequestInfo,
  contentType: string | undefined,
  dryRun: boolean,
): string[] {
  return [
    metricVerb(method, info, contentType),
    dryRun ? 'All' : '',
    info.apiGroup,
    info.apiVersion,
    info.resource,
    info.subresource,
    metricScope(info),
    'apiserver',
  ];
}

/** The labels of a request that every request metric has. */
function requestLabels(
  method: string,
  info: RequestInfo,
  contentType: string | undefined,
): Record<string, string> {
  const values = requestLabelValues(method, info, contentType, false);
  return Object.fromEntries(REQUEST_LABELS.map((l, i) => [l, values[i]]));
}

export class APIServerMetrics {
  readonly registry: MetricsRegistry;
  readonly requests: Counter;
  readonly durations: Histogram;
  readonly inflight: Gauge;
  readonly longRunning: Gauge;
  readonly storageObjects: Gauge;
  private readonly watchCacheCapacity: Gauge;
  readonly dbSize: Gauge;
  readonly storageSize: Gauge;
  readonly deprecatedAPIs: Gauge;
  private timers: NodeJS.Timeout[] = [];

  constructor(currentVersion: string, opts: { showHiddenFor?: string; disabled?: string[] } = {}) {
    this.registry = new MetricsRegistry({ currentVersion, ...opts });
    this.requests = this.registry.counter({
      name: 'apiserver_request_total',
      help: 'Requests served, by verb, dry-run, group, version, resource, scope, component and HTTP code.',
      labels: [...REQUEST_LABELS, 'code'],
      stability: 'STABLE',
    });
    this.durations = this.registry.histogram({
      name: 'apiserver_request_duration_seconds',
      help: 'Response latency in seconds, by verb, dry-run, group, version, resource, subresource, scope and component.',
      labels: REQUEST_LABELS,
      stability: 'STABLE',
    });
    this.inflight = this.registry.gauge({
      name: 'apiserver_current_inflight_requests',
      help: 'Requests being served now, by kind (readOnly or mutating).',
      labels: ['request_kind'],
      stability: 'STABLE',
    });
    this.longRunning = this.registry.gauge({
      name: 'apiserver_longrunning_requests',
      help: 'Long-running requests (watches, proxies, log follows) open now.',
      labels: REQUEST_LABELS.filter((l) => l !== 'dry_run'),
      stability: 'STABLE',
    });
    this.storageObjects = this.registry.gauge({
      name: 'apiserver_storage_objects',
      help: 'Objects stored, by resource, as last counted.',
      labels: ['resource'],
      stability: 'STABLE',
    });
    this.watchCacheCapacity = this.registry.gauge({
      name: 'apiserver_watch_cache_capacity',
      help: 'Total capacity of watch cache broken by resource type.',
      labels: ['group', 'resource'],
    });
    this.dbSize = this.registry.gauge({
      name: 'apiserver_storage_db_total_size_in_bytes',
      help: 'Size of the storage database file in bytes, as last measured.',
      labels: ['endpoint'],
    });
    this.storageSize = this.registry.gauge({
      name: 'apiserver_storage_size_bytes',
      help: 'Size of the storage database in bytes, by storage cluster.',
      labels: ['storage_cluster_id'],
      stability: 'STABLE',
    });
    this.deprecatedAPIs = this.registry.gauge({
      name: 'apiserver_requested_deprecated_apis',
      help: 'Deprecated APIs that have been requested, by group, version, resource, subresource and release of removal.',
      labels: ['group', 'version', 'resource', 'subresource', 'removed_release'],
      stability: 'STABLE',
    });
    processMetrics(this.registry);
  }

  observe(
    method: string,
    info: RequestInfo,
    contentType: string | undefined,
    dryRun: boolean,
    code: number,
    seconds: number,
  ): void {
    // One series key per request; the totals' series adds the code.
    const key = Metric.keyOf(requestLabelValues(method, info, contentType, dryRun));
    this.requests.incKey(Metric.keyOf([key, String(code)]));
    this.durations.observeKey(key, seconds);
  }

  longRunningLabels(method: string, info: RequestInfo): Record<string, string> {
    return requestLabels(method, info, undefined);
  }

  /** Starts the pollers of stored object counts and database size. */
  startPolling(
    storage: Storage,
    registry: Registry,
    countPeriodMs: number,
    dbPeriodMs: number,
    endpoint: string,
  ): void {
    this.registry.addCollector(() => {
      for (const store of registry.stores)
        if (store.cacher)
          this.watchCacheCapacity.set(
            { group: store.res.group, resource: store.res.resource },
            store.cacher.capacity,
          );
    });
    if (countPeriodMs > 0) {
      const count = async () => {
        for (const store of registry.stores) {
          const n = await storage.count(keyPrefix(store.res)).catch(() => -1);
          const r = store.res;
          this.storageObjects.set({ resource: r.group ? `${r.resource}.${r.group}` : r.resource }, n);
        }
      };
      void count().catch((err) => log.warn('counting stored objects failed', { err: String(err) }));
      this.timers.push(setInterval(() => void count().catch(() => undefined), countPeriodMs));
    }
    if (dbPeriodMs > 0) {
      const size = async () => {
        const n = await storage.dbSize();
        this.dbSize.set({ endpoint }, n);
        this.storageSize.set({ storage_cluster_id: endpoint }, n);
      };
      void size().catch(() => undefined);
      this.timers.push(setInterval(() => void size().catch(() => undefined), dbPeriodMs));
    }
    for (const t of this.timers) t.unref();
  }

  stop(): void {
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
  }
}
