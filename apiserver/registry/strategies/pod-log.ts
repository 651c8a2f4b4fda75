// The apiserver side of `kubectl logs` and of nodes/<name>/proxy: where on the
// node agent (kubelet) a request goes — pod → node → the node's address by
// --kubelet-preferred-address-types, the port of
// status.daemonEndpoints.kubeletEndpoint — and with which credentials: the
// apiserver's kubelet client certificate (--kubelet-client-certificate/-key,
// or one tkube issues from its cluster CA: CN kube-apiserver-kubelet-client,
// O system:masters), verifying the kubelet with --kubelet-certificate-authority
// or, when that is unset, not at all (as Kubernetes does).
import { readFileSync } from 'node:fs';
import { badRequest, invalid, StatusError } from '../../../shared/api/status';
import type { FieldError } from '../../../shared/api/field-errors';
import { goParseInt64 } from '../../../shared/codec/go-strconv';
import { createClientCert, loadOrCreate, type KeyPair } from '../../../shared/pki/certs';
import type { FlagValues } from '../../../shared/options/flags';
import { systemContext, type RequestContext } from '../context';
import { hostPort, proxyIDOf } from './pod-service-proxy';
import type { Registry, ResourceBehaviour, ServedResource, UpstreamLocation } from '../registry';
import { podStreamLocation, type StreamKind } from './pod-stream';

const STREAM_KINDS: StreamKind[] = ['exec', 'attach', 'portforward'];

/** How the apiserver reaches node agents. */
export interface KubeletConnection {
  preferredAddressTypes: string[];
  timeoutMs: number;
  /** The apiserver's client certificate towards kubelets. */
  certPem?: string;
  keyPem?: string;
  /** --kubelet-certificate-authority; unset: the kubelet's certificate is not verified. */
  caPem?: string;
  /** The port when a Node reports none (the kubelet's default). */
  defaultPort: number;
}

export const KUBELET_CLIENT_CN = 'kube-apiserver-kubelet-client';

/** The kubelet connection from the apiserver's flags and its TLS setup. */
export async function kubeletConnection(
  values: FlagValues,
  tls: { clusterCA?: KeyPair },
): Promise<KubeletConnection> {
  let cert: KeyPair | undefined;
  if (values.kubeletClientCertificate || values.kubeletClientKey) {
    if (!values.kubeletClientCertificate || !values.kubeletClientKey)
      throw new Error('--kubelet-client-certificate and --kubelet-client-key must be given together');
    cert = {
      certPem: readFileSync(values.kubeletClientCertificate, 'utf8'),
      keyPem: readFileSync(values.kubeletClientKey, 'utf8'),
    };
  } else if (tls.clusterCA && values.certDir) {
    const ca = tls.clusterCA;
    cert = await loadOrCreate(values.certDir, 'apiserver-kubelet-client', () =>
      createClientCert(ca, { commonName: KUBELET_CLIENT_CN, organizations: ['system:masters'] }, 365),
    );
  }
  return {
    preferredAddressTypes: (values.kubeletPreferredAddressTypes as string[] | undefined) ?? [
      'Hostname',
      'InternalDNS',
      'InternalIP',
      'ExternalDNS',
      'ExternalIP',
    ],
    timeoutMs: values.kubeletTimeout ?? 5000,
    certPem: cert?.certPem,
    keyPem: cert?.keyPem,
    caPem: values.kubeletCertificateAuthority
      ? readFileSync(values.kubeletCertificateAuthority, 'utf8')
      : undefined,
    defaultPort: 10250,
  };
}

/** Go's %v of []NodeAddress: "[{InternalIP 10.0.0.1} {Hostname n1}]". */
const formatAddresses = (as: any[]) => `[${as.map((a) => `{${a.type} ${a.address}}`).join(' ')}]`;

/** The node's address by preference (nodeutil.GetPreferredNodeAddress) and its kubelet port. */
export function nodeConnectionInfo(node: any, conn: KubeletConnection): { host: string; port: number } {
  const addresses: any[] = node?.status?.addresses ?? [];
  for (const type of conn.preferredAddressTypes) {
    const a = addresses.find((x) => x.type === type);
    if (a?.address) {
      const port = Number(node?.status?.daemonEndpoints?.kubeletEndpoint?.Port) || conn.defaultPort;
      return { host: a.address, port };
    }
  }
  throw new StatusError(
    500,
    'InternalError',
    `no preferred addresses found; known addresses: ${formatAddresses(addresses)}`,
  );
}

async function getNode(registry: Registry, name: string, ctx: RequestContext): Promise<any> {
  const nodes = registry.preferred('', 'nodes');
  if (!nodes) throw new StatusError(500, 'InternalError', 'nodes are not served');
  const sys = systemContext('');
  return (await nodes.store.reader.get({ ...sys, signal: ctx.signal }, name)).obj;
}

function location(conn: KubeletConnection, url: string, insecureBackend = false): UpstreamLocation {
  return {
    url,
    certPem: conn.certPem,
    keyPem: conn.keyPem,
    caPem: conn.caPem,
    insecure: !conn.caPem || insecureBackend,
    timeoutMs: conn.timeoutMs,
  };
}

/** Every container name of a pod, in the order kubectl lists them. */
function containerNames(pod: any): string[] {
  return [
    ...(pod.spec?.initContainers ?? []),
    ...(pod.spec?.containers ?? []),
    ...(pod.spec?.ephemeralContainers ?? []),
  ].map((c: any) => c.name);
}

/** Kubernetes' validateContainer: the container, defaulted when the pod has one. */
export function logContainer(pod: any, requested: string | null): string {
  const name = pod.metadata?.name ?? '';
  if (!requested) {
    const containers: any[] = pod.spec?.containers ?? [];
    if (containers.length === 1) return containers[0].name;
    if (!containers.length) throw badRequest(`a container name must be specified for pod ${name}`);
    throw badRequest(
      `a container name must be specified for pod ${name}, choose one of: [${containerNames(pod).join(' ')}]`,
    );
  }
  if (!containerNames(pod).includes(requested))
    throw badRequest(`container ${requested} is not valid for pod ${name}`);
  return requested;
}

// Query options convert as in Kubernetes: "0"/"false" are false, other values true; ints by ParseInt.
const bool = (v: string | null) => v !== null && !(v === '0' || v.toLowerCase() === 'false');

function intParam(q: URLSearchParams, name: string, _errs: FieldError[]): number | undefined {
  const v = q.get(name);
  if (v === null) return undefined;
  try {
    return Number(goParseInt64(v));
  } catch (e) {
    throw badRequest((e as Error).message);
  }
}

/** The kubelet query of a pods/log request (PodLogOptions, validated like Kubernetes). */
export function podLogQuery(q: URLSearchParams, podName: string): URLSearchParams {
  const errs: FieldError[] = [];
  const tailLines = intParam(q, 'tailLines', errs);
  const limitBytes = intParam(q, 'limitBytes', errs);
  const sinceSeconds = intParam(q, 'sinceSeconds', errs);
  const sinceTime = q.get('sinceTime');
  if (tailLines !== undefined && tailLines < 0)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'tailLines',
      badValue: tailLines,
      detail: 'must be greater than or equal to 0',
    });
  if (limitBytes !== undefined && limitBytes < 1)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'limitBytes',
      badValue: limitBytes,
      detail: 'must be greater than 0',
    });
  if (sinceSeconds !== undefined && sinceSeconds < 1)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'sinceSeconds',
      badValue: sinceSeconds,
      detail: 'must be greater than 0',
    });
  if (sinceSeconds !== undefined && sinceTime)
    errs.push({
      type: 'FieldValueForbidden',
      field: '',
      detail: 'at most one of `sinceTime` or `sinceSeconds` may be specified',
    });
  if (sinceTime && Number.isNaN(Date.parse(sinceTime)))
    errs.push({
      type: 'FieldValueInvalid',
      field: 'sinceTime',
      badValue: sinceTime,
      detail: 'must be an RFC 3339 time',
    });
  if (errs.length) throw invalid({ group: '', kind: 'PodLogOptions' }, podName, errs);
  const out = new URLSearchParams();
  if (bool(q.get('follow'))) out.set('follow', 'true');
  if (bool(q.get('previous'))) out.set('previous', 'true');
  if (bool(q.get('timestamps'))) out.set('timestamps', 'true');
  if (sinceSeconds !== undefined) out.set('sinceSeconds', String(sinceSeconds));
  if (sinceTime)
    out.set('sinceTime', new Date(Date.parse(sinceTime)).toISOString().replace(/\.\d{3}Z$/, 'Z'));
  if (tailLines !== undefined) out.set('tailLines', String(tailLines));
  if (limitBytes !== undefined) out.set('limitBytes', String(limitBytes));
  return out;
}

/** pods/log → https://<node>:<port>/containerLogs/<ns>/<pod>/<container>?... */
export async function podLogLocation(
  registry: Registry,
  conn: KubeletConnection,
  ctx: RequestContext,
  name: string,
  served: ServedResource,
  query: URLSearchParams,
): Promise<UpstreamLocation> {
  const pod = (await served.store.reader.get(ctx, name)).obj;
  const container = logContainer(pod, query.get('container'));
  const params = podLogQuery(query, name);
  // Kubernetes answers an empty log for a pod without a node; a proxied request needs a node.
  const { host, port } = await nodeOfPod(registry, conn, ctx, pod, name);
  const path = `/containerLogs/${encodeURIComponent(pod.metadata.namespace)}/${encodeURIComponent(pod.metadata.name)}/${encodeURIComponent(container)}`;
  return kubeletLocation(conn, host, port, path, params, bool(query.get('insecureSkipTLSVerifyBackend')));
}

/** The kubelet address of the node a pod is bound to (400 when it is bound to none). */
export async function nodeOfPod(
  registry: Registry,
  conn: KubeletConnection,
  ctx: RequestContext,
  pod: any,
  name: string,
): Promise<{ host: string; port: number }> {
  const nodeName: string | undefined = pod.spec?.nodeName;
  if (!nodeName) throw badRequest(`pod ${name} does not have a host assigned`);
  return nodeConnectionInfo(await getNode(registry, nodeName, ctx), conn);
}

/** https://<host>:<port><path>?<params> with the apiserver's kubelet credentials. */
export function kubeletLocation(
  conn: KubeletConnection,
  host: string,
  port: number,
  path: string,
  params: URLSearchParams,
  insecureBackend = false,
): UpstreamLocation {
  const qs = params.toString();
  return location(conn, `https://${hostPort(host, port)}${path}${qs ? `?${qs}` : ''}`, insecureBackend);
}

/** nodes/<name>[:port]/proxy/<path> → the node agent's <path> (name may be "scheme:name:port"). */
export async function nodeProxyLocation(
  registry: Registry,
  conn: KubeletConnection,
  ctx: RequestContext,
  id: string,
  query: URLSearchParams,
  subpath: string,
): Promise<UpstreamLocation> {
  const { scheme, name, port: portText } = proxyIDOf(id, 'node');
  const port = portText ? Number(portText) : undefined;
  if (port !== undefined && !(Number.isInteger(port) && port > 0 && port < 65536))
    throw badRequest(`invalid node request "${id}"`);
  const node = await getNode(registry, name, ctx);
  const info = nodeConnectionInfo(node, conn);
  const q = new URLSearchParams(query);
  const qs = q.toString();
  const url = `${scheme || 'https'}://${hostPort(info.host, port ?? info.port)}/${subpath}${qs ? `?${qs}` : ''}`;
  return location(conn, url);
}

/** The connect subresources that go to node agents: pods/log, exec, attach, portforward and nodes/proxy. */
export function kubeletConnectBehaviours(
  registry: () => Registry,
  conn: KubeletConnection | undefined,
): Record<string, ResourceBehaviour> {
  if (!conn) return {};
  return {
    '/pods': {
      subresources: {
        log: {
          custom: {
            locate: (ctx, name, served, query) => podLogLocation(registry(), conn, ctx, name, served, query),
          },
        },
        ...Object.fromEntries(
          STREAM_KINDS.map((kind) => [
            kind,
            {
              custom: {
                locate: (ctx: RequestContext, name: string, served: ServedResource, query: URLSearchParams) =>
                  podStreamLocation(registry(), conn, ctx, name, served, query, kind),
              },
            },
          ]),
        ),
      },
    },
    '/nodes': {
      subresources: {
        proxy: {
          custom: {
            locate: (ctx, name, _served, query, subpath) =>
              nodeProxyLocation(registry(), conn, ctx, name, query, subpath),
          },
        },
      },
    },
  };
}
