// The node agent's configuration: flag values merged with a KubeletConfiguration
// file (--config, kubelet.config.k8s.io/v1beta1, camelCase fields as the
// kubelet's), flags set on the command line winning, then resolved into the
// typed NodeAgentConfig the agent runs with.
import { accessSync, constants, mkdirSync, readFileSync } from 'node:fs';
import { homedir, hostname } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';
import YAML from 'yaml';
import type { FlagValues } from '../../shared/options/flags';
import { formatDuration, parseDuration } from '../../shared/options/duration';
import { milliValue, parseQuantity } from '../../shared/api/validation/quantity';
import { parseThresholds, type Threshold } from '../status/eviction';

export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

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

type FieldKind = 'string' | 'int' | 'bool' | 'duration' | 'evictionMap' | 'taints' | 'headers' | 'gates';

/** KubeletConfiguration field path → flag (camelCase attribute) and how to read it. */
const FIELDS: [string, string, FieldKind][] = [
  ['address', 'address', 'string'],
  ['port', 'port', 'int'],
  ['readOnlyPort', 'readOnlyPort', 'int'],
  ['healthzPort', 'healthzPort', 'int'],
  ['healthzBindAddress', 'healthzBindAddress', 'string'],
  ['tlsCertFile', 'tlsCertFile', 'string'],
  ['tlsPrivateKeyFile', 'tlsPrivateKeyFile', 'string'],
  ['tlsMinVersion', 'tlsMinVersion', 'string'],
  ['authentication.anonymous.enabled', 'anonymousAuth', 'bool'],
  ['authentication.webhook.enabled', 'authenticationTokenWebhook', 'bool'],
  ['authentication.webhook.cacheTTL', 'authenticationTokenWebhookCacheTtl', 'duration'],
  ['authentication.x509.clientCAFile', 'clientCaFile', 'string'],
  ['authorization.mode', 'authorizationMode', 'string'],
  ['authorization.webhook.cacheAuthorizedTTL', 'authorizationWebhookCacheAuthorizedTtl', 'duration'],
  ['authorization.webhook.cacheUnauthorizedTTL', 'authorizationWebhookCacheUnauthorizedTtl', 'duration'],
  ['registerNode', 'registerNode', 'bool'],
  ['registerWithTaints', 'registerWithTaints', 'taints'],
  ['podCIDR', 'podCidr', 'string'],
  ['maxPods', 'maxPods', 'int'],
  ['podPidsLimit', 'podMaxPids', 'int'],
  ['staticPodPath', 'podManifestPath', 'string'],
  ['fileCheckFrequency', 'fileCheckFrequency', 'duration'],
  ['staticPodURL', 'manifestUrl', 'string'],
  ['staticPodURLHeader', 'manifestUrlHeader', 'headers'],
  ['httpCheckFrequency', 'httpCheckFrequency', 'duration'],
  ['containerLogMaxSize', 'containerLogMaxSize', 'string'],
  ['containerLogMaxFiles', 'containerLogMaxFiles', 'int'],
  ['nodeStatusUpdateFrequency', 'nodeStatusUpdateFrequency', 'duration'],
  ['nodeStatusMaxImages', 'nodeStatusMaxImages', 'int'],
  ['evictionHard', 'evictionHard', 'evictionMap'],
  ['evictionPressureTransitionPeriod', 'evictionPressureTransitionPeriod', 'duration'],
  ['imageGCHighThresholdPercent', 'imageGcHighThreshold', 'int'],
  ['imageGCLowThresholdPercent', 'imageGcLowThreshold', 'int'],
  ['imageMinimumGCAge', 'minimumImageTtlDuration', 'duration'],
  ['kubeAPIQPS', 'kubeApiQps', 'int'],
  ['kubeAPIBurst', 'kubeApiBurst', 'int'],
  ['contentType', 'kubeApiContentType', 'string'],
  ['eventRecordQPS', 'eventQps', 'int'],
  ['eventBurst', 'eventBurst', 'int'],
  ['cpuManagerPolicy', 'cpuManagerPolicy', 'string'],
  ['cgroupDriver', 'cgroupDriver', 'string'],
  ['cgroupsPerQOS', 'cgroupsPerQos', 'bool'],
  ['cpuCFSQuota', 'cpuCfsQuota', 'bool'],
  ['failSwapOn', 'failSwapOn', 'bool'],
  ['oomScoreAdj', 'oomScoreAdj', 'int'],
  ['maxOpenFiles', 'maxOpenFiles', 'int'],
  ['featureGates', 'featureGates', 'gates'],
];

/** Fields of the file with no flag: they keep their own defaults here. */
const CONFIG_ONLY: Record<string, [string, 'duration' | 'int']> = {
  nodeStatusReportFrequency: ['nodeStatusReportFrequency', 'duration'],
  nodeLeaseDurationSeconds: ['nodeLeaseDurationSeconds', 'int'],
};

/** Fields the file may hold that tkube reads elsewhere or ignores without a warning. */
const KNOWN_IGNORED = new Set([
  'apiVersion',
  'kind',
  'authentication.webhook',
  'authentication',
  'authentication.anonymous',
  'authentication.x509',
  'authorization',
  'authorization.webhook',
  'clusterDNS',
  'clusterDomain',
  'containerRuntimeEndpoint',
  'enableServer',
  'staticPodURLHeader',
  'evictionHard',
  'featureGates',
  'registerWithTaints',
  'logging',
  'serializeImagePulls',
  'resolvConf',
  'runtimeRequestTimeout',
  'rotateCertificates',
  'serverTLSBootstrap',
  'shutdownGracePeriod',
  'shutdownGracePeriodCriticalPods',
  'syncFrequency',
  'volumeStatsAggPeriod',
  'cgroupRoot',
  'hairpinMode',
  'streamingConnectionIdleTimeout',
]);

function pathGet(obj: any, path: string): unknown {
  let cur = obj;
  for (const p of path.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = cur[p];
  }
  return cur;
}

function unknownFields(obj: any, prefix = ''): string[] {
  const known = new Set([...FIELDS.map((f) => f[0]), ...Object.keys(CONFIG_ONLY), ...KNOWN_IGNORED]);
  const out: string[] = [];
  for (const [k, v] of Object.entries(obj ?? {})) {
    const p = prefix ? `${prefix}.${k}` : k;
    if (known.has(p)) {
      if (v && typeof v === 'object' && !Array.isArray(v) && [...known].some((x) => x.startsWith(`${p}.`)))
        out.push(...unknownFields(v, p));
      continue;
    }
    out.push(p);
  }
  return out;
}

function convert(path: string, kind: FieldKind, v: unknown): unknown {
  const fail = (what: string): never => {
    throw new Error(`${path}: ${what}`);
  };
  switch (kind) {
    case 'string':
      if (typeof v !== 'string') fail(`expected a string, got ${JSON.stringify(v)}`);
      return v;
    case 'int':
      if (typeof v !== 'number' || !Number.isInteger(v))
        fail(`expected an integer, got ${JSON.stringify(v)}`);
      return v;
    case 'bool':
      if (typeof v !== 'boolean') fail(`expected true or false, got ${JSON.stringify(v)}`);
      return v;
    case 'duration':
      if (typeof v !== 'string') fail(`expected a duration string like "20s", got ${JSON.stringify(v)}`);
      try {
        return parseDuration(v as string);
      } catch {
        return fail(`time: invalid duration "${String(v)}"`);
      }
    case 'evictionMap': {
      if (!v || typeof v !== 'object' || Array.isArray(v)) fail('expected a map of signal to threshold');
      return Object.entries(v as Record<string, unknown>)
        .map(([k, x]) => `${k}<${String(x)}`)
        .join(',');
    }
    case 'taints': {
      if (!Array.isArray(v)) fail('expected a list of taints');
      return (v as any[]).map((t) => {
        if (!t || typeof t.key !== 'string' || typeof t.effect !== 'string')
          fail('each taint needs key and effect');
        return t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`;
      });
    }
    case 'headers': {
      if (!v || typeof v !== 'object' || Array.isArray(v))
        fail('expected a map of header name to list of values');
      const out: string[] = [];
      for (const [name, values] of Object.entries(v as Record<string, unknown>)) {
        for (const x of Array.isArray(values) ? values : [values]) out.push(`${name}:${String(x)}`);
      }
      return out;
    }
    case 'gates': {
      if (!v || typeof v !== 'object' || Array.isArray(v))
        fail('expected a map of feature gate to true/false');
      const out: Record<string, string> = {};
      for (const [name, x] of Object.entries(v as Record<string, unknown>)) {
        if (typeof x !== 'boolean') fail(`feature gate ${name}: expected true or false`);
        out[name] = String(x);
      }
      return out;
    }
  }
}

export interface MergeResult {
  values: FlagValues;
  warnings: string[];
  /** The file as read (for /configz). */
  file: Record<string, unknown>;
}

/** Reads a KubeletConfiguration file. */
export function loadKubeletConfigFile(path: string): Record<string, unknown> {
  let doc: any;
  try {
    doc = YAML.parse(readFileSync(path, 'utf8')) ?? {};
  } catch (err) {
    throw new Error(`failed to load Kubelet config file ${path}, error: ${(err as Error).message}`, {
      cause: err,
    });
  }
  if (typeof doc !== 'object' || Array.isArray(doc))
    throw new Error(`failed to load Kubelet config file ${path}, error: not a KubeletConfiguration object`);
  if (doc.kind !== KUBELET_CONFIG_KIND || doc.apiVersion !== KUBELET_CONFIG_API_VERSION) {
    throw new Error(
      `failed to load Kubelet config file ${path}, error: no kind "${doc.kind ?? ''}" is registered for version "${doc.apiVersion ?? ''}" (want kind ${KUBELET_CONFIG_KIND}, apiVersion ${KUBELET_CONFIG_API_VERSION})`,
    );
  }
  return doc;
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
  const warnings = unknownFields(file).map(
    (f) => `strict decoding error: unknown field "${f}" in the kubelet config file`,
  );
  for (const [path, attr, kind] of FIELDS) {
    const v = pathGet(file, path);
    if (v === undefined || v === null) continue;
    const converted = convert(path, kind, v);
    if (kind === 'gates') {
      out[attr] = {
        ...(converted as Record<string, string>),
        ...(setOnCommandLine(attr) ? (values[attr] ?? {}) : {}),
      };
      continue;
    }
    if (setOnCommandLine(attr)) continue;
    out[attr] = converted;
  }
  for (const [field, [attr, kind]] of Object.entries(CONFIG_ONLY)) {
    const v = file[field];
    if (v === undefined || v === null) continue;
    out[attr] = convert(field, kind, v);
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
  };
}
