// Kubeconfig files: written by the apiserver (--write-kubeconfig) and the
// launcher, read by every client (controller-manager, nodeagent, tests).
// Also the in-cluster configuration from a pod's service-account files.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { parseConfigYAML, toYAML } from '../codec/yaml';

/** What a client needs to reach the apiserver. */
export interface ClientConfig {
  server: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  /** A file holding the bearer token, re-read periodically (projected service-account tokens rotate). */
  tokenFile?: string;
  /** Skip TLS verification (insecure-skip-tls-verify). */
  insecure?: boolean;
  /** TLS server name to verify (tls-server-name). */
  serverName?: string;
  /** Namespace of the current context. */
  namespace?: string;
}

export interface KubeconfigInput {
  server: string;
  caPem: string;
  certPem?: string;
  keyPem?: string;
  token?: string;
  clusterName?: string;
  userName?: string;
  contextName?: string;
}

const b64 = (s: string) => Buffer.from(s).toString('base64');

export function buildKubeconfig(i: KubeconfigInput): object {
  const cluster = i.clusterName ?? 'tkube';
  const user = i.userName ?? 'admin';
  const context = i.contextName ?? 'tkube';
  const userEntry: Record<string, string> = {};
  if (i.certPem) userEntry['client-certificate-data'] = b64(i.certPem);
  if (i.keyPem) userEntry['client-key-data'] = b64(i.keyPem);
  if (i.token) userEntry.token = i.token;
  return {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: cluster, cluster: { server: i.server, 'certificate-authority-data': b64(i.caPem) } }],
    users: [{ name: user, user: userEntry }],
    contexts: [{ name: context, context: { cluster, user } }],
    'current-context': context,
    preferences: {},
  };
}

/**
 * Writes a kubeconfig: YAML for people, JSON (valid YAML, read by every client) for components,
 * which then start without the YAML parser.
 */
export function writeKubeconfig(
  path: string,
  input: KubeconfigInput,
  format: 'yaml' | 'json' = 'yaml',
): void {
  mkdirSync(dirname(resolve(path)), { recursive: true });
  const cfg = buildKubeconfig(input);
  writeFileSync(path, format === 'json' ? `${JSON.stringify(cfg, null, 2)}\n` : toYAML(cfg), { mode: 0o600 });
}

function dataOrFile(data: string | undefined, file: string | undefined, base: string): string | undefined {
  if (data) return Buffer.from(data, 'base64').toString('utf8');
  if (file) return readFileSync(isAbsolute(file) ? file : join(base, file), 'utf8');
  return undefined;
}

/** Reads a kubeconfig file; `context` selects another than the current one. */
export function loadKubeconfig(path: string, context?: string): ClientConfig {
  const text = readFileSync(path, 'utf8');
  const cfg = parseConfigYAML(text) ?? {};
  const base = dirname(resolve(path));
  const ctxName = context ?? cfg['current-context'];
  const ctx = (cfg.contexts ?? []).find((c: any) => c.name === ctxName)?.context;
  if (!ctx) throw new Error(`kubeconfig ${path}: context "${ctxName ?? ''}" not found`);
  const cluster = (cfg.clusters ?? []).find((c: any) => c.name === ctx.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`kubeconfig ${path}: cluster "${ctx.cluster}" has no server`);
  const user = (cfg.users ?? []).find((u: any) => u.name === ctx.user)?.user ?? {};
  let token: string | undefined = user.token;
  const tokenFile: string | undefined = user.tokenFile
    ? isAbsolute(user.tokenFile)
      ? user.tokenFile
      : join(base, user.tokenFile)
    : undefined;
  if (!token && tokenFile) token = readFileSync(tokenFile, 'utf8').trim();
  return {
    server: cluster.server,
    caPem: dataOrFile(cluster['certificate-authority-data'], cluster['certificate-authority'], base),
    certPem: dataOrFile(user['client-certificate-data'], user['client-certificate'], base),
    keyPem: dataOrFile(user['client-key-data'], user['client-key'], base),
    token,
    ...(!user.token && tokenFile ? { tokenFile } : {}),
    insecure: cluster['insecure-skip-tls-verify'] === true,
    serverName: cluster['tls-server-name'],
    namespace: ctx.namespace,
  };
}

const SA_DIR = '/var/run/secrets/kubernetes.io/serviceaccount';

/** The in-cluster configuration (KUBERNETES_SERVICE_HOST/PORT and the service-account files), if present. */
export function inClusterConfig(saDir = SA_DIR): ClientConfig | undefined {
  const host = process.env.KUBERNETES_SERVICE_HOST;
  const port = process.env.KUBERNETES_SERVICE_PORT;
  if (!host || !port || !existsSync(join(saDir, 'token'))) return undefined;
  const hostPart = host.includes(':') ? `[${host}]` : host;
  return {
    server: `https://${hostPart}:${port}`,
    token: readFileSync(join(saDir, 'token'), 'utf8').trim(),
    tokenFile: join(saDir, 'token'),
    caPem: existsSync(join(saDir, 'ca.crt')) ? readFileSync(join(saDir, 'ca.crt'), 'utf8') : undefined,
    namespace: existsSync(join(saDir, 'namespace'))
      ? readFileSync(join(saDir, 'namespace'), 'utf8').trim()
      : undefined,
  };
}
