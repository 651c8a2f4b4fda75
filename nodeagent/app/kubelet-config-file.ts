// Reading a KubeletConfiguration file (--config, kubelet.config.k8s.io/v1beta1,
// camelCase fields as the kubelet's): the kind check, which field stands for
// which flag, each field converted to that flag's value, and warnings for
// fields tkube does not know. How the result meets the command line is
// config.ts; the file served back on /configz is configz.ts.
import { readFileSync } from 'node:fs';
import { parseConfigYAML } from '../../shared/codec/yaml';
import { parseDuration } from '../../shared/options/duration';

export const KUBELET_CONFIG_API_VERSION = 'kubelet.config.k8s.io/v1beta1';
export const KUBELET_CONFIG_KIND = 'KubeletConfiguration';

type FieldKind =
  'string' | 'strings' | 'int' | 'bool' | 'duration' | 'evictionMap' | 'taints' | 'headers' | 'gates';

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
  ['containerRuntimeEndpoint', 'containerRuntimeEndpoint', 'string'],
  ['imageServiceEndpoint', 'imageServiceEndpoint', 'string'],
  ['runtimeRequestTimeout', 'runtimeRequestTimeout', 'duration'],
  ['clusterDNS', 'clusterDns', 'strings'],
  ['clusterDomain', 'clusterDomain', 'string'],
  ['resolvConf', 'resolvConf', 'string'],
  ['cgroupRoot', 'cgroupRoot', 'string'],
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
    case 'strings':
      if (!Array.isArray(v) || v.some((x) => typeof x !== 'string'))
        fail(`expected a list of strings, got ${JSON.stringify(v)}`);
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

/** One field of the file, converted to its flag's value. */
export interface FileSetting {
  /** The flag's attribute (camelCase). */
  attr: string;
  value: unknown;
  /** How it meets the command line: the flag wins, feature gates merge per gate, or there is no flag. */
  merge: 'flag-wins' | 'per-gate' | 'file-only';
}

/** The file's fields as flag values, in the order of the field table, and warnings for unknown fields. */
export function parseKubeletConfiguration(file: Record<string, unknown>): {
  settings: FileSetting[];
  warnings: string[];
} {
  const warnings = unknownFields(file).map(
    (f) => `strict decoding error: unknown field "${f}" in the kubelet config file`,
  );
  const settings: FileSetting[] = [];
  for (const [path, attr, kind] of FIELDS) {
    const v = pathGet(file, path);
    if (v === undefined || v === null) continue;
    settings.push({
      attr,
      value: convert(path, kind, v),
      merge: kind === 'gates' ? 'per-gate' : 'flag-wins',
    });
  }
  for (const [field, [attr, kind]] of Object.entries(CONFIG_ONLY)) {
    const v = file[field];
    if (v === undefined || v === null) continue;
    settings.push({ attr, value: convert(field, kind, v), merge: 'file-only' });
  }
  return { settings, warnings };
}

/** Reads a KubeletConfiguration file. */
export function loadKubeletConfigFile(path: string): Record<string, unknown> {
  let doc: any;
  try {
    doc = parseConfigYAML(readFileSync(path, 'utf8')) ?? {};
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
