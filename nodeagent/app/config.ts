// The node agent's configuration: flag values merged with a KubeletConfiguration
// file (read by kubelet-config-file.ts), flags set on the command line
// winning, then resolved into the typed NodeAgentConfig the agent runs with
// (served back on /configz by configz.ts).
import { accessSync, constants, mkdirSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import type { FlagValues } from '../../shared/options/flags';
import { milliValue, parseQuantity } from '../../shared/api/validation/quantity';
import { parseThresholds, type Threshold } from '../status/eviction';
import { parseKubeletConfiguration } from './kubelet-config-file';

export interface Taint {
  key: string;
  value?: string;
  effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

export interface NodeAgentConfig {
  kubeconfig?: string;
  nodeName: string;
  /** The Hostname address (--hostname-override or the machine's hostname). */
  hostname: string;
  /** --node-ip (empty: detected). */
  nodeIPs: string[];
  nodeLabels: Record<string, string>;
  registerNode: boolean;
  registerSchedulable: boolean;
  registerWithTaints: Taint[];
  podCIDR?: string;
  rootDir: string;
  certDir: string;
  runtime: string;
  containerRuntimeEndpoint: string;
  imageServiceEndpoint?: string;
  runtimeRequestTimeoutMs: number;
  podInfraContainerImage: string;
  registryMirror?: string;
  clusterDNS: string[];
  clusterDomain: string;
  resolvConf: string;
  cgroupRoot: string;
  /** --simulated-nodes: host this many simulated nodes instead of being one node (0: off). */
  simulatedNodes: number;

  address: string;
  port: number;
  readOnlyPort: number;
  healthzPort: number;
  healthzBindAddress: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  tlsMinVersion?: string;

  anonymousAuth: boolean;
  clientCAFile?: string;
  webhookAuthentication: boolean;
  webhookAuthenticationCacheTTLMs: number;
  authorizationMode: 'AlwaysAllow' | 'Webhook';
  authorizedCacheTTLMs: number;
  unauthorizedCacheTTLMs: number;

  maxPods: number;
  podPidsLimit: number;
  podManifestPath?: string;
  fileCheckFrequencyMs: number;
  manifestURL?: string;
  manifestURLHeader: Record<string, string[]>;
  httpCheckFrequencyMs: number;
  containerLogMaxSizeBytes: number;
  containerLogMaxFiles: number;

  nodeStatusUpdateFrequencyMs: number;
  nodeStatusReportFrequencyMs: number;
  nodeStatusMaxImages: number;
  nodeLeaseDurationSeconds: number;
  evictionHard: Threshold[];
  evictionPressureTransitionPeriodMs: number;
  imageGCHighThresholdPercent: number;
  imageGCLowThresholdPercent: number;
  imageMinimumGCAgeMs: number;

  kubeAPIQPS: number;
  kubeAPIBurst: number;
  contentType: string;
  eventQPS: number;
  eventBurst: number;

  cpuManagerPolicy: string;
  cgroupDriver: string;
  cgroupsPerQOS: boolean;
  cpuCFSQuota: boolean;
  failSwapOn: boolean;
  oomScoreAdj: number;
  maxOpenFiles: number;

  featureGates: Record<string, boolean | string>;
  verbosity: number;
}

export interface MergeResult {
  values: FlagValues;
  warnings: string[];
  /** The file as read (for /configz). */
  file: Record<string, unknown>;
}

/**
 * Merges a KubeletConfiguration into flag values: a field applies unless its
 * flag was set on the command line (flags win, as with the kubelet). Feature
 * gates merge key by key, the command line winning per gate.
 */
export function mergeKubeletConfiguration(
  values: FlagValues,
  file: Record<string, unknown>,
  setOnCommandLine: (attr: string) => boolean,
): MergeResult {
  const out: FlagValues = { ...values };
  const { settings, warnings } = parseKubeletConfiguration(file);
  for (const { attr, value, merge } of settings) {
    if (merge === 'per-gate') {
      out[attr] = {
        ...(value as Record<string, string>),
        ...(setOnCommandLine(attr) ? (values[attr] ?? {}) : {}),
      };
      continue;
    }
    if (merge === 'flag-wins' && setOnCommandLine(attr)) continue;
    out[attr] = value;
  }
  return { values: out, warnings, file };
}

const EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

/** "<key>=<value>:<effect>" or "<key>:<effect>". */
export function parseTaint(spec: string): Taint {
  const i = spec.lastIndexOf(':');
  if (i <= 0) throw new Error(`invalid taint spec: ${spec}`);
  const effect = spec.slice(i + 1);
  if (!EFFECTS.includes(effect))
    throw new Error(`invalid taint effect: ${effect}, unsupported taint effect (${EFFECTS.join(', ')})`);
  const kv = spec.slice(0, i);
  const eq = kv.indexOf('=');
  const key = eq < 0 ? kv : kv.slice(0, eq);
  const value = eq < 0 ? undefined : kv.slice(eq + 1);
  if (!key) throw new Error(`invalid taint spec: ${spec}`);
  return { key, ...(value ? { value } : {}), effect: effect as Taint['effect'] };
}

/** --manifest-url-header entries ("a:hello,b:again") into header → values. */
export function parseHeaders(entries: string[] | undefined): Record<string, string[]> {
  const out: Record<string, string[]> = {};
  for (const entry of entries ?? []) {
    for (const pair of entry.split(',')) {
      if (!pair.trim()) continue;
      const i = pair.indexOf(':');
      if (i <= 0)
        throw new Error(
          `invalid argument "${entry}" for "--manifest-url-header" flag: malformed pair, expect string:string`,
        );
      const name = pair.slice(0, i).trim();
      (out[name] ??= []).push(pair.slice(i + 1).trim());
    }
  }
  return out;
}

function writable(dir: string): boolean {
  try {
    mkdirSync(dir, { recursive: true });
    accessSync(dir, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A per-user state directory for when the kubelet's default directories are not writable. */
function userStateDir(nodeName: string): string {
  const base = process.env.XDG_STATE_HOME || join(homedir(), '.local', 'state');
  return join(base, 'tkube', 'nodeagent', nodeName);
}

const abs = (p: string) => (isAbsolute(p) ? p : resolve(p));

export interface ResolveOptions {
  /** Whether root-dir / cert-dir were given (flag or config file). */
  explicit: (attr: string) => boolean;
  /** For tests: the machine's hostname. */
  hostname?: string;
}

/** --simulated-nodes, which only the fake runtime can serve. */
function simulatedNodes(values: FlagValues): number {
  const n = values.simulatedNodes ?? 0;
  if (n > 0 && values.runtime !== 'fake')
    throw new Error(`--simulated-nodes needs --runtime=fake (got "${values.runtime}")`);
  return n;
}

/** Turns merged flag values into the typed configuration, with the kubelet's validation. */
export function resolveConfig(values: FlagValues, o: ResolveOptions): NodeAgentConfig {
  const host = (values.hostnameOverride || o.hostname || hostname()).trim().toLowerCase();
  if (!host) throw new Error('the node name is empty: set --hostname-override');
  let rootDir = abs(values.rootDir);
  if (!o.explicit('rootDir') && !writable(rootDir)) rootDir = userStateDir(host);
  let certDir = abs(values.certDir);
  if (!o.explicit('certDir') && (o.explicit('rootDir') || !writable(certDir))) certDir = join(rootDir, 'pki');

  let logMax: number;
  try {
    logMax = Number(milliValue(parseQuantity(String(values.containerLogMaxSize))) / 1000n);
  } catch (err) {
    throw new Error(
      `invalid container log max size "${values.containerLogMaxSize}": ${(err as Error).message}`,
      {
        cause: err,
      },
    );
  }
  if (logMax <= 0) throw new Error('--container-log-max-size must be positive');
  if (values.imageGcLowThreshold > values.imageGcHighThreshold)
    throw new Error(
      `--image-gc-low-threshold (${values.imageGcLowThreshold}) must be less than or equal to --image-gc-high-threshold (${values.imageGcHighThreshold})`,
    );
  const nodeIPs = String(values.nodeIp ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const leaseSeconds = values.nodeLeaseDurationSeconds ?? 40;
  if (leaseSeconds <= 0) throw new Error('nodeLeaseDurationSeconds must be greater than 0');
  return {
    kubeconfig: values.kubeconfig || undefined,
    nodeName: host,
    hostname: host,
    nodeIPs,
    nodeLabels: values.nodeLabels ?? {},
    registerNode: values.registerNode,
    registerSchedulable: values.registerSchedulable,
    registerWithTaints: ((values.registerWithTaints as string[] | undefined) ?? []).map(parseTaint),
    podCIDR: values.podCidr || undefined,
    rootDir,
    certDir,
    runtime: values.runtime,
    containerRuntimeEndpoint: values.containerRuntimeEndpoint,
    imageServiceEndpoint: values.imageServiceEndpoint || undefined,
    runtimeRequestTimeoutMs: values.runtimeRequestTimeout,
    podInfraContainerImage: values.podInfraContainerImage,
    registryMirror: values.registryMirror || undefined,
    clusterDNS: ((values.clusterDns as string[] | undefined) ?? []).filter(Boolean),
    clusterDomain: values.clusterDomain ?? '',
    resolvConf: values.resolvConf ?? '',
    cgroupRoot: values.cgroupRoot ?? '',
    simulatedNodes: simulatedNodes(values),
    address: values.address,
    port: values.port,
    readOnlyPort: values.readOnlyPort,
    healthzPort: values.healthzPort,
    healthzBindAddress: values.healthzBindAddress,
    tlsCertFile: values.tlsCertFile || undefined,
    tlsPrivateKeyFile: values.tlsPrivateKeyFile || undefined,
    tlsMinVersion: values.tlsMinVersion || undefined,
    anonymousAuth: values.anonymousAuth,
    clientCAFile: values.clientCaFile || undefined,
    webhookAuthentication: values.authenticationTokenWebhook,
    webhookAuthenticationCacheTTLMs: values.authenticationTokenWebhookCacheTtl,
    authorizationMode: values.authorizationMode,
    authorizedCacheTTLMs: values.authorizationWebhookCacheAuthorizedTtl,
    unauthorizedCacheTTLMs: values.authorizationWebhookCacheUnauthorizedTtl,
    maxPods: values.maxPods,
    podPidsLimit: values.podMaxPids,
    podManifestPath: values.podManifestPath ? abs(values.podManifestPath) : undefined,
    fileCheckFrequencyMs: values.fileCheckFrequency,
    manifestURL: values.manifestUrl || undefined,
    manifestURLHeader: parseHeaders(values.manifestUrlHeader),
    httpCheckFrequencyMs: values.httpCheckFrequency,
    containerLogMaxSizeBytes: logMax,
    containerLogMaxFiles: values.containerLogMaxFiles,
    nodeStatusUpdateFrequencyMs: values.nodeStatusUpdateFrequency,
    nodeStatusReportFrequencyMs: values.nodeStatusReportFrequency ?? 300_000,
    nodeStatusMaxImages: values.nodeStatusMaxImages,
    nodeLeaseDurationSeconds: leaseSeconds,
    evictionHard: parseThresholds(String(values.evictionHard ?? '')),
    evictionPressureTransitionPeriodMs: values.evictionPressureTransitionPeriod,
    imageGCHighThresholdPercent: values.imageGcHighThreshold,
    imageGCLowThresholdPercent: values.imageGcLowThreshold,
    imageMinimumGCAgeMs: values.minimumImageTtlDuration,
    kubeAPIQPS: values.kubeApiQps,
    kubeAPIBurst: values.kubeApiBurst,
    contentType: values.kubeApiContentType,
    eventQPS: values.eventQps || 5,
    eventBurst: values.eventBurst || 10,
    cpuManagerPolicy: values.cpuManagerPolicy,
    cgroupDriver: values.cgroupDriver,
    cgroupsPerQOS: values.cgroupsPerQos,
    cpuCFSQuota: values.cpuCfsQuota,
    failSwapOn: values.failSwapOn,
    oomScoreAdj: values.oomScoreAdj,
    maxOpenFiles: values.maxOpenFiles,
    featureGates: values.featureGates ?? {},
    verbosity: values.v ?? 0,
  };
}
