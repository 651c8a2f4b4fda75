// The proxy process: flags -> client, backend (mode choice), the sync loop and
// the health and metrics servers. --cleanup removes what any mode added.
import { hostname } from 'node:os';
import { Client, inClusterConfig, loadKubeconfig, type ClientConfig } from '../../shared/client';
import { logger } from '../../shared/log';
import { MetricsRegistry } from '../../shared/metrics/registry';
import type { FlagValues } from '../../shared/options/flags';
import { NftablesBackend, IptablesBackend, chooseBackend, cleanupAll } from '../backend';
import { commandRunner, type Runner } from '../exec';
import { proxyMetrics } from '../metrics';
import { Proxier } from '../proxier';
import { healthState, serveHealth, serveMetrics, type ProxyServer } from './health';
import { ServiceHealthServers } from '../service-health';

const log = logger('proxy');

export const PROXY_VERSION = '1.36';

export interface ProxyConfig {
  client: ClientConfig;
  qps: number;
  burst: number;
  mode: string;
  nodeName: string;
  nodeIPs: string[];
  clusterCIDRs: string[];
  serviceCIDRs: string[];
  nodePortAddresses: string[];
  scopeSourceCIDRs: string[];
  masqueradeAll: boolean;
  healthzBindAddress: string;
  metricsBindAddress: string;
  syncPeriodMs: number;
  minSyncPeriodMs: number;
  nftTable: string;
  iptablesPrefix: string;
  cleanup: boolean;
}

/** The client configuration: --kubeconfig (or the in-cluster one), --master overriding its server. */
function clientConfig(values: FlagValues): ClientConfig {
  const cfg = values.kubeconfig
    ? loadKubeconfig(values.kubeconfig)
    : values.master
      ? undefined
      : inClusterConfig();
  if (!cfg && !values.master)
    throw new Error(
      'neither --kubeconfig nor --master was given and there is no in-cluster configuration (KUBERNETES_SERVICE_HOST, KUBERNETES_SERVICE_PORT)',
    );
  return values.master ? { ...(cfg ?? {}), server: values.master } : cfg!;
}

export function resolveConfig(values: FlagValues): ProxyConfig {
  return {
    client: values.cleanup ? { server: '' } : clientConfig(values),
    qps: values.kubeApiQps,
    burst: values.kubeApiBurst,
    mode: values.proxyMode,
    nodeName: (values.hostnameOverride || hostname()).trim().toLowerCase(),
    nodeIPs: values.nodeIpOverride,
    clusterCIDRs: values.clusterCidr,
    serviceCIDRs: values.serviceClusterIpRange,
    nodePortAddresses: values.nodeportAddresses,
    scopeSourceCIDRs: values.scopeSourceCidrs,
    masqueradeAll: values.masqueradeAll,
    healthzBindAddress: values.healthzBindAddress,
    metricsBindAddress: values.metricsBindAddress,
    syncPeriodMs: values.iptablesSyncPeriod ?? values.syncPeriod,
    minSyncPeriodMs: values.iptablesMinSyncPeriod ?? values.minSyncPeriod,
    nftTable: values.nftablesTable,
    iptablesPrefix: values.iptablesChainPrefix,
    cleanup: values.cleanup,
  };
}

export interface RunningProxy {
  proxier: Proxier;
  registry: MetricsRegistry;
  healthPort?: number;
  metricsPort?: number;
  stop(): Promise<void>;
}

/**
 * Starts the proxy. `run` executes nft/iptables/conntrack (tests pass one for a
 * network namespace). Leftovers of the other mode (a crash, a change of mode) go first.
 */
export async function startProxy(cfg: ProxyConfig, run: Runner = commandRunner()): Promise<RunningProxy> {
  const backend = await chooseBackend({
    run,
    mode: cfg.mode,
    nftTable: cfg.nftTable,
    iptablesPrefix: cfg.iptablesPrefix,
    log,
  });
  log.info('Using proxy mode', { mode: backend.mode, nodeName: cfg.nodeName });
  if (backend.mode === 'nftables') await new IptablesBackend(run, cfg.iptablesPrefix).cleanup();
  else await new NftablesBackend(run, cfg.nftTable).cleanup().catch(() => undefined);

  const registry = new MetricsRegistry({ currentVersion: PROXY_VERSION });
  const metrics = proxyMetrics(registry);
  const client = Client.create(cfg.client, { qps: cfg.qps, burst: cfg.burst, userAgent: 'tkube-proxy' });
  const serviceHealth = new ServiceHealthServers(
    () => healthState(proxier, 2 * cfg.syncPeriodMs, Date.now(), false).healthy,
    log,
  );
  const proxier: Proxier = new Proxier({
    client,
    backend,
    conntrack: run,
    serviceHealth,
    model: {
      nodeName: cfg.nodeName,
      nodeIPs: cfg.nodeIPs,
      clusterCIDRs: cfg.clusterCIDRs,
      serviceCIDRs: cfg.serviceCIDRs,
      masqueradeAll: cfg.masqueradeAll,
      nodePortAddresses: cfg.nodePortAddresses,
      scopeSourceCIDRs: cfg.scopeSourceCIDRs,
    },
    minSyncPeriodMs: cfg.minSyncPeriodMs,
    syncPeriodMs: cfg.syncPeriodMs,
    metrics,
    log,
  });
  const servers: ProxyServer[] = [];
  const stop = async () => {
    await proxier.stop();
    await Promise.all(servers.map((s) => s.close()));
    await client.close();
  };
  try {
    const health = cfg.healthzBindAddress
      ? await serveHealth(cfg.healthzBindAddress, proxier, metrics, 2 * cfg.syncPeriodMs)
      : undefined;
    if (health) servers.push(health);
    const metricsServer = cfg.metricsBindAddress
      ? await serveMetrics(cfg.metricsBindAddress, registry, backend.mode)
      : undefined;
    if (metricsServer) servers.push(metricsServer);
    // Served while the caches sync: /healthz is already meaningful (kube-proxy starts it first too).
    await proxier.start();
    return { proxier, registry, healthPort: health?.port, metricsPort: metricsServer?.port, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** --cleanup: removes the tables and chains any mode added, then the process exits. */
export async function cleanupProxy(cfg: ProxyConfig, run: Runner = commandRunner()): Promise<void> {
  await cleanupAll({ run, nftTable: cfg.nftTable, iptablesPrefix: cfg.iptablesPrefix });
  log.info('Cleaned up the proxy rules', { nftTable: cfg.nftTable, iptablesPrefix: cfg.iptablesPrefix });
}
