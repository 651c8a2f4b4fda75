// Builds a running apiserver from its flag values: storage, registry, TLS,
// handlers, post-start hooks, kubeconfig. cmd/apiserver.ts parses flags and
// calls startAPIServer; tests call it in-process too.
import { mkdirSync } from 'node:fs';
import { logger } from '../../shared/log';
import type { FlagValues } from '../../shared/options/flags';
import { parseRuntimeConfig } from '../../shared/options/runtime-config';
import { featureGates } from '../../shared/options/feature-gates';
import { builtinResources } from '../../shared/api/catalog';
import { writeKubeconfig, type ClientConfig } from '../../shared/client/kubeconfig';
import { openStorage } from '../storage/open';
import type { Storage } from '../storage/interface';
import { Registry } from '../registry/registry';
import { StorageCodec, jsonCodec, type ObjectCodec } from '../registry/storage-codec';
import { decodeObject, encodeObject, protobufSupported } from '../../shared/codec/protobuf';
import { genericSchemaHooks } from '../registry/meta-validation';
import { schemaHooks } from '../../shared/api/validation/hooks';
import { validateStatusUpdate } from '../../shared/api/validation';
import { typeSchema } from '../../shared/api/schema';
import { behaviours } from '../registry/strategies';
import { kubeletConnection } from '../registry/strategies/pod-log';
import { ServiceAllocator, serviceBehaviour } from '../registry/strategies/service';
import { ResourceHandler } from '../endpoints/api-handler';
import { makeWriteHooks } from '../endpoints/write-hooks';
import { serveOpenAPI } from '../endpoints/openapi';
import { OpenAPIService } from '../../shared/api/openapi';
import { CRDController } from '../registry/crd';
import { buildSecurity } from '../auth';
import { buildTransformer } from '../storage/transformers';
import { APIServer } from './server';
import { adminCredentials, defaultServingNames, localAddresses, setupServingTLS } from './tls';
import {
  ensurePriorityClasses,
  ensureSystemNamespaces,
  IdentityLease,
  KubernetesServiceReconciler,
} from './bootstrap';
import { firstServiceIP } from './service-ip';
import { APIServerMetrics } from './metrics';
import { checkShowHiddenVersion } from '../../shared/metrics/registry';
import { startAggregation } from '../aggregator';
import { ServiceResolver } from '../aggregator/service-resolver';

const log = logger('apiserver');

/** A start-up phase reached, at -v=2: milliseconds since the process started. */
export function startupPhase(phase: string): void {
  log.v(2)?.info('start-up phase', { phase, ms: Math.round(performance.now()) });
}

export const VERSION = {
  major: '1',
  minor: '36',
  gitVersion: 'v1.36.3',
  gitCommit: 'tkube',
  gitTreeState: 'clean',
  buildDate: '2026-11-01T00:00:00Z',
  goVersion: 'go1.25.0',
  compiler: 'gc',
  platform: `${process.platform}/${process.arch === 'x64' ? 'amd64' : process.arch}`,
};

export interface RunningAPIServer {
  port: number;
  server: APIServer;
  registry: Registry;
  storage: Storage;
  /**
   * A client configuration for this apiserver from inside its process: the loopback bearer
   * token (system:apiserver in system:masters), trusting the serving certificate itself (it
   * may be one given in --cert-dir that no CA of tkube's signed, as envtest's).
   */
  loopbackConfig(): Promise<ClientConfig>;
  /** Graceful stop (what SIGTERM does). */
  stop(): Promise<void>;
}

/**
 * Resources served without a watch cache unless --watch-cache-sizes names them, as
 * kube-apiserver's defaults: Events, written for every step of every pod and read
 * mostly by `kubectl get events`, held ~2 KB each in a cache for their whole hour.
 */
const UNCACHED_BY_DEFAULT = ['events', 'events.events.k8s.io'];

/** Parses "resource[.group]#size" settings into a capacity lookup. */
function cacheSizes(values: FlagValues): (group: string, resource: string) => number {
  if (!values.watchCache) return () => 0;
  const sizes = new Map<string, number>(UNCACHED_BY_DEFAULT.map((gr) => [gr, 0]));
  for (const s of (values.watchCacheSizes as string[] | undefined) ?? []) {
    const [gr, size] = s.split('#');
    sizes.set(gr, Number(size));
  }
  const dflt = values.defaultWatchCacheSize as number;
  return (group, resource) => sizes.get(group ? `${resource}.${group}` : resource) ?? dflt;
}

export async function startAPIServer(values: FlagValues): Promise<RunningAPIServer> {
  startupPhase('modules loaded');
  featureGates.set(values.featureGates);
  for (const w of featureGates.warnings) log.warn(w);
  const knownGVs = new Set(builtinResources().map((r) => `${r.group}/${r.version}`));
  const runtimeConfig = parseRuntimeConfig(values.runtimeConfig, knownGVs);
  for (const w of runtimeConfig.warnings) log.warn(w);

  const etcdServers = (values.etcdServers as string[] | undefined) ?? [];
  const backend = etcdServers.length ? 'etcd3' : (values.storageBackend as 'embedded' | 'etcd3');
  if (backend === 'etcd3' && !etcdServers.length)
    throw new Error('--etcd-servers must be specified for the etcd3 storage backend');
  if (backend === 'embedded') mkdirSync(values.dataDir, { recursive: true });
  const storage = await openStorage({
    backend,
    dataDir: values.dataDir,
    etcdServers,
    etcdCAFile: values.etcdCafile,
    etcdCertFile: values.etcdCertfile,
    etcdKeyFile: values.etcdKeyfile,
    compactionIntervalMs: values.etcdCompactionInterval,
    healthcheckTimeoutMs: values.etcdHealthcheckTimeout,
    leaseReuseDurationSeconds: values.leaseReuseDurationSeconds,
    requestTimeoutMs: values.requestTimeout,
  });

  startupPhase('storage open');
  const serviceIP = firstServiceIP(values.serviceClusterIpRange);
  const advertise =
    values.advertiseAddress ||
    (values.bindAddress !== '0.0.0.0' ? values.bindAddress : (localAddresses()[0] ?? '127.0.0.1'));
  const names = defaultServingNames(serviceIP, [advertise]);
  const tls = await setupServingTLS({
    certDir: values.certDir,
    tlsCertFile: values.tlsCertFile,
    tlsPrivateKeyFile: values.tlsPrivateKeyFile,
    clientCaFile: values.clientCaFile,
    ...names,
  });

  startupPhase('serving TLS ready');
  const protobufCodec: ObjectCodec = {
    encode: encodeObject,
    decode: decodeObject,
    supports: protobufSupported,
  };
  const codec = new StorageCodec(
    values.storageMediaType === 'application/vnd.kubernetes.protobuf' ? protobufCodec : jsonCodec,
    protobufCodec,
    await buildTransformer(
      values.encryptionProviderConfig,
      (values.etcdPrefix as string).replace(/\/+$/, ''),
    ),
  );
  // Where webhooks, conversion webhooks and APIServices given as a Service are reached.
  const services = new ServiceResolver({
    registry: () => registry,
    endpointRouting: !!values.enableAggregatorRouting,
  });
  const security = await buildSecurity({ values, tls, storage, registry: () => registry, services });
  const registry: Registry = new Registry({
    storage,
    codec,
    etcdPrefix: (values.etcdPrefix as string).replace(/\/+$/, ''),
    runtimeConfig,
    schemaHooks: (definition, res) => {
      const gvk = definition ? typeSchema(definition)?.gvk?.[0] : undefined;
      if (!gvk) return genericSchemaHooks(res);
      return {
        ...schemaHooks(definition),
        validateStatusUpdate: (obj, old) => validateStatusUpdate(obj, old, { gvk }),
      };
    },
    behaviour: behaviours({
      eventTTLSeconds: Math.round(values.eventTtl / 1000),
      registry: () => registry,
      services: serviceBehaviour(
        new ServiceAllocator({
          storage,
          registry: () => registry,
          etcdPrefix: (values.etcdPrefix as string).replace(/\/+$/, ''),
          serviceCIDR: values.serviceClusterIpRange,
          nodePortRange: values.serviceNodePortRange,
        }),
      ),
      extra: security.behaviours,
      kubelet: await kubeletConnection(values, tls),
    }),
    cacheCapacity: cacheSizes(values),
    deleteCollectionWorkers: values.deleteCollectionWorkers,
    enableGarbageCollector: values.enableGarbageCollector,
  });

  startupPhase('registry built');
  const currentVersion = `${VERSION.major}.${VERSION.minor}`;
  checkShowHiddenVersion(values.showHiddenMetricsForVersion, currentVersion);
  const metrics = new APIServerMetrics(currentVersion, {
    showHiddenFor: values.showHiddenMetricsForVersion,
    disabled: values.disabledMetrics,
  });
  const handler = new ResourceHandler(registry, {
    onDeprecatedRequest: (s, subresource) =>
      metrics.deprecatedAPIs.set(
        {
          group: s.info.group,
          version: s.info.version,
          resource: s.info.resource,
          subresource,
          removed_release: s.deprecation?.removedRelease ?? '',
        },
        1,
      ),
    maxBodyBytes: values.maxRequestBodyBytes,
    minRequestTimeoutSeconds: values.minRequestTimeout,
    writeHooks: makeWriteHooks(security.admission),
    protobufSupported: (s) => protobufSupported(s.info.groupVersion, s.info.kind),
  });
  const openapi = new OpenAPIService(
    registry.all().map((s) => s.info),
    { version: VERSION.gitVersion },
  );
  startupPhase('handlers built');
  const server = new APIServer({
    bindAddress: values.bindAddress,
    securePort: values.securePort,
    tls,
    registry,
    storage,
    handler,
    security,
    maxRequestsInflight: values.maxRequestsInflight,
    maxMutatingRequestsInflight: values.maxMutatingRequestsInflight,
    enablePriorityAndFairness:
      values.enablePriorityAndFairness && featureGates.enabled('APIPriorityAndFairness'),
    requestTimeoutMs: values.requestTimeout,
    shutdownDelayMs: values.shutdownDelayDuration,
    shutdownSendRetryAfter: values.shutdownSendRetryAfter,
    livezGracePeriodMs: values.livezGracePeriod,
    goawayChance: values.goawayChance,
    http2MaxStreamsPerConnection: values.http2MaxStreamsPerConnection,
    etcdHealthcheckTimeoutMs: values.etcdHealthcheckTimeout,
    version: VERSION,
    metrics,
    aggregator: {
      remoteFor: (p) => aggregation.aggregator.remoteFor(p),
      proxy: (...a) => aggregation.aggregator.proxy(...a),
    },
    extraRoutes: [
      ...security.routes,
      async (req, res, path, query) => req.method === 'GET' && serveOpenAPI(openapi, req, res, path, query),
    ],
  });

  let reconciler: KubernetesServiceReconciler | undefined;
  let identity: IdentityLease | undefined;
  // CustomResourceDefinitions: served from a list+watch of the CRD store (apiserver/registry/crd).
  registry.onChange(() => server.discoveryCache.invalidate());
  const crds = new CRDController({ registry, openapi, services });
  const aggregation = startAggregation({
    values,
    tls,
    registry,
    server,
    crdsSynced: () => crds.synced(),
    openapi,
    services,
    metrics: metrics.registry,
  });
  server.addPostStartHook('start-apiextensions-controllers', async () => void crds.start());
  server.addPostStartHook('crd-informer-synced', () => crds.start());
  server.addPostStartHook('start-apiserver-admission-initializer', async () => {});
  for (const hook of security.postStartHooks) server.addPostStartHook(hook.name, hook.run);
  server.addPostStartHook('bootstrap-controller', async () => {
    await ensureSystemNamespaces(registry);
    reconciler = new KubernetesServiceReconciler({
      storage,
      registry: registry,
      etcdPrefix: (values.etcdPrefix as string).replace(/\/+$/, ''),
      advertiseAddress: advertise,
      port: server.port,
      serviceIP,
      type: values.endpointReconcilerType,
    });
    await reconciler.start();
  });
  server.addPostStartHook('scheduling/bootstrap-system-priority-classes', () =>
    ensurePriorityClasses(registry),
  );
  server.addPostStartHook('start-kube-apiserver-identity-lease-controller', async () => {
    await ensureSystemNamespaces(registry);
    identity = new IdentityLease(
      registry,
      server.port,
      values.identityLeaseDurationSeconds,
      values.identityLeaseRenewIntervalSeconds,
    );
    await identity.start();
  });

  startupPhase('post-start hooks added');
  const port = await server.listen();
  metrics.startPolling(
    storage,
    registry,
    values.etcdCountMetricPollPeriod,
    values.etcdDbMetricPollInterval,
    backend === 'etcd3' ? etcdServers.join(',') : values.dataDir,
  );
  const host =
    values.bindAddress === '0.0.0.0' || values.bindAddress === '::' ? '127.0.0.1' : values.bindAddress;
  const localURL = `https://${host.includes(':') ? `[${host}]` : host}:${port}`;
  if (values.writeKubeconfig) {
    const admin = await adminCredentials(tls, values.certDir);
    writeKubeconfig(values.writeKubeconfig, {
      server: values.writeKubeconfigServer || localURL,
      caPem: tls.caPem,
      certPem: admin?.certPem,
      keyPem: admin?.keyPem,
    });
  }
  startupPhase('listening');
  log.info('serving', { address: values.bindAddress, port, storage: backend });

  return {
    port,
    server,
    registry,
    storage,
    async loopbackConfig() {
      return { server: localURL, caPem: tls.certPem, token: security.loopbackToken };
    },
    async stop() {
      await server.shutdown(async () => {
        identity?.stop();
        await reconciler?.stop();
        crds.stop();
        aggregation.stop();
        services.stop();
      });
      metrics.stop();
      await security.stop();
      await storage.close();
    },
  };
}
