// kube-proxy's sync metrics (pkg/proxy/metrics), on the proxy's /metrics.
import { MetricsRegistry } from '../shared/metrics/registry';
import type { ProxyMode } from './backend';

/** ExponentialBuckets(0.001, 2, 15), kube-proxy's sync latency buckets. */
const SYNC_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

export function proxyMetrics(registry: MetricsRegistry) {
  return {
    syncDuration: registry.histogram(
      { name: 'kubeproxy_sync_proxy_rules_duration_seconds', help: 'SyncProxyRules latency in seconds' },
      SYNC_BUCKETS,
    ),
    syncFullDuration: registry.histogram(
      {
        name: 'kubeproxy_sync_full_proxy_rules_duration_seconds',
        help: 'SyncProxyRules latency in seconds for full resyncs',
      },
      SYNC_BUCKETS,
    ),
    syncPartialDuration: registry.histogram(
      {
        name: 'kubeproxy_sync_partial_proxy_rules_duration_seconds',
        help: 'SyncProxyRules latency in seconds for partial resyncs',
      },
      SYNC_BUCKETS,
    ),
    lastSynced: registry.gauge({
      name: 'kubeproxy_sync_proxy_rules_last_timestamp_seconds',
      help: 'The last time proxy rules were successfully synced',
    }),
    lastQueued: registry.gauge({
      name: 'kubeproxy_sync_proxy_rules_last_queued_timestamp_seconds',
      help: 'The last time a sync of proxy rules was queued',
    }),
    serviceChanges: registry.counter({
      name: 'kubeproxy_sync_proxy_rules_service_changes_total',
      help: 'Cumulative proxy rules Service changes',
    }),
    endpointChanges: registry.counter({
      name: 'kubeproxy_sync_proxy_rules_endpoint_changes_total',
      help: 'Cumulative proxy rules Endpoint changes',
    }),
    noLocalEndpoints: registry.gauge({
      name: 'kubeproxy_sync_proxy_rules_no_local_endpoints_total',
      help: 'Number of services with a Local traffic policy and no endpoints',
      labels: ['traffic_policy'],
    }),
    healthz: registry.counter({
      name: 'kubeproxy_proxy_healthz_total',
      help: 'Cumulative proxy healthz HTTP status',
      labels: ['code'],
    }),
    livez: registry.counter({
      name: 'kubeproxy_proxy_livez_total',
      help: 'Cumulative proxy livez HTTP status',
      labels: ['code'],
    }),
    failures(mode: ProxyMode) {
      return mode === 'nftables'
        ? registry.counter({
            name: 'kubeproxy_sync_proxy_rules_nftables_sync_failures_total',
            help: 'Cumulative proxy nftables sync failures',
          })
        : registry.counter({
            name: 'kubeproxy_sync_proxy_rules_iptables_restore_failures_total',
            help: 'Cumulative proxy iptables restore failures',
          });
    },
  };
}

export type ProxyMetrics = ReturnType<typeof proxyMetrics>;
