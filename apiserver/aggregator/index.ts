// The aggregation layer's parts, started as kube-apiserver's post-start hooks:
// the extension-apiserver-authentication ConfigMap, Local APIServices, and the
// proxy with its availability checks and merged discovery.
import { readFileSync } from 'node:fs';
import type { FlagValues } from '../../shared/options/flags';
import type { MetricsRegistry } from '../../shared/metrics/registry';
import type { Registry } from '../registry/registry';
import type { APIServer } from '../server/server';
import type { ServingTLS } from '../server/tls';
import { ensureSystemNamespaces } from '../server/bootstrap';
import { Aggregator } from './aggregator';
import type { ServiceResolver } from './service-resolver';
import { AuthenticationTrustController, authenticationInfoFromFlags } from './authentication-trust';
import { LocalAPIServices } from './local-apiservices';

export { Aggregator } from './aggregator';

export interface AggregationDeps {
  values: FlagValues;
  tls: ServingTLS;
  registry: Registry;
  server: APIServer;
  /** Resolves once the custom resources that exist are served (their APIServices must not be removed before). */
  crdsSynced: () => Promise<void>;
  /** The served OpenAPI documents, which aggregated APIs' documents join. */
  openapi?: AggregationOpenAPI;
  /** The apiserver's metrics registry. */
  metrics?: MetricsRegistry;
  /** Where services are reached (shared with webhooks and conversion). */
  services: ServiceResolver;
}

type AggregationOpenAPI = ConstructorParameters<typeof Aggregator>[0]['openapi'];

export function startAggregation(d: AggregationDeps) {
  const { values, tls, registry, server } = d;
  // The client CA as --client-ca-file has it now (plus the cluster CA tkube signs client certificates with).
  const clientCA = () => {
    const fromFile = values.clientCaFile ? readFileSync(values.clientCaFile as string, 'utf8') : undefined;
    if (!tls.clusterCA) return fromFile ?? tls.clientCaPem;
    return fromFile ? `${fromFile}\n${tls.clusterCA.certPem}` : tls.clusterCA.certPem;
  };
  const trust = new AuthenticationTrustController({
    registry,
    info: () => authenticationInfoFromFlags(values, clientCA),
    files: [values.clientCaFile, values.requestheaderClientCaFile].filter(Boolean) as string[],
  });
  const local = new LocalAPIServices(registry);
  const aggregator = new Aggregator({
    registry,
    services: d.services,
    proxyClientCertFile: values.proxyClientCertFile as string | undefined,
    proxyClientKeyFile: values.proxyClientKeyFile as string | undefined,
    onDiscoveryChange: () => server.discoveryCache.invalidate(),
    openapi: d.openapi,
    metrics: d.metrics,
  });
  server.discoveryCache.setExternal(() => aggregator.aggregatedVersions());

  server.addPostStartHook('start-cluster-authentication-info-controller', async () => {
    await ensureSystemNamespaces(registry);
    await trust.start();
  });
  server.addPostStartHook('apiservice-status-remote-available-controller', () => aggregator.start());
  // kube-apiserver's boot-sequence check: ready once every built-in APIService was made Available.
  const completion = () => {
    const missing = local.pending();
    if (missing.length) throw new Error(`missing APIService: [${missing.join(' ')}]`);
  };
  server.healthz.add('autoregister-completion', completion);
  server.readyz.add('autoregister-completion', completion);
  server.addPostStartHook('kube-apiserver-autoregistration', async () => {
    await d.crdsSynced();
    await local.start();
  });

  return {
    aggregator,
    stop() {
      trust.stop();
      local.stop();
      aggregator.stop();
    },
  };
}
