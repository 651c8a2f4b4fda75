// /configz: the effective configuration of the agent, as a
// KubeletConfiguration with the kubelet's field names (durations as Go
// duration strings), so it reads back like the file it may have come from.
import { formatDuration } from '../../shared/options/duration';
import type { NodeAgentConfig } from './config';
import { KUBELET_CONFIG_API_VERSION, KUBELET_CONFIG_KIND } from './kubelet-config-file';

/** The effective configuration as a KubeletConfiguration (served on /configz). */
export function toKubeletConfiguration(c: NodeAgentConfig): Record<string, unknown> {
  const d = formatDuration;
  const gates: Record<string, boolean> = {};
  for (const [k, v] of Object.entries(c.featureGates)) gates[k] = v === true || v === 'true';
  return {
    kind: KUBELET_CONFIG_KIND,
    apiVersion: KUBELET_CONFIG_API_VERSION,
    address: c.address,
    port: c.port,
    readOnlyPort: c.readOnlyPort,
    healthzPort: c.healthzPort,
    healthzBindAddress: c.healthzBindAddress,
    ...(c.tlsCertFile ? { tlsCertFile: c.tlsCertFile, tlsPrivateKeyFile: c.tlsPrivateKeyFile } : {}),
    authentication: {
      anonymous: { enabled: c.anonymousAuth },
      webhook: { enabled: c.webhookAuthentication, cacheTTL: d(c.webhookAuthenticationCacheTTLMs) },
      x509: c.clientCAFile ? { clientCAFile: c.clientCAFile } : {},
    },
    authorization: {
      mode: c.authorizationMode,
      webhook: {
        cacheAuthorizedTTL: d(c.authorizedCacheTTLMs),
        cacheUnauthorizedTTL: d(c.unauthorizedCacheTTLMs),
      },
    },
    registerNode: c.registerNode,
    ...(c.registerWithTaints.length ? { registerWithTaints: c.registerWithTaints } : {}),
    ...(c.podCIDR ? { podCIDR: c.podCIDR } : {}),
    maxPods: c.maxPods,
    podPidsLimit: c.podPidsLimit,
    ...(c.podManifestPath ? { staticPodPath: c.podManifestPath } : {}),
    fileCheckFrequency: d(c.fileCheckFrequencyMs),
    ...(c.manifestURL ? { staticPodURL: c.manifestURL, staticPodURLHeader: c.manifestURLHeader } : {}),
    httpCheckFrequency: d(c.httpCheckFrequencyMs),
    containerLogMaxSize: String(c.containerLogMaxSizeBytes),
    containerLogMaxFiles: c.containerLogMaxFiles,
    nodeStatusUpdateFrequency: d(c.nodeStatusUpdateFrequencyMs),
    nodeStatusReportFrequency: d(c.nodeStatusReportFrequencyMs),
    nodeStatusMaxImages: c.nodeStatusMaxImages,
    nodeLeaseDurationSeconds: c.nodeLeaseDurationSeconds,
    evictionHard: Object.fromEntries(c.evictionHard.map((t) => [t.signal, t.text])),
    evictionPressureTransitionPeriod: d(c.evictionPressureTransitionPeriodMs),
    imageGCHighThresholdPercent: c.imageGCHighThresholdPercent,
    imageGCLowThresholdPercent: c.imageGCLowThresholdPercent,
    imageMinimumGCAge: d(c.imageMinimumGCAgeMs),
    kubeAPIQPS: c.kubeAPIQPS,
    kubeAPIBurst: c.kubeAPIBurst,
    contentType: c.contentType,
    eventRecordQPS: c.eventQPS,
    eventBurst: c.eventBurst,
    cpuManagerPolicy: c.cpuManagerPolicy,
    cgroupDriver: c.cgroupDriver,
    cgroupsPerQOS: c.cgroupsPerQOS,
    cpuCFSQuota: c.cpuCFSQuota,
    failSwapOn: c.failSwapOn,
    oomScoreAdj: c.oomScoreAdj,
    maxOpenFiles: c.maxOpenFiles,
    featureGates: gates,
    containerRuntimeEndpoint: c.containerRuntimeEndpoint,
    ...(c.imageServiceEndpoint ? { imageServiceEndpoint: c.imageServiceEndpoint } : {}),
    runtimeRequestTimeout: d(c.runtimeRequestTimeoutMs),
    ...(c.clusterDNS.length ? { clusterDNS: c.clusterDNS } : {}),
    ...(c.clusterDomain ? { clusterDomain: c.clusterDomain } : {}),
    resolvConf: c.resolvConf,
    cgroupRoot: c.cgroupRoot,
  };
}
