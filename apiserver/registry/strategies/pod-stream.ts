// pods/exec, pods/attach and pods/portforward: where on the node agent
// (kubelet) a streaming session goes — Kubernetes' ExecLocation,
// AttachLocation and PortForwardLocation: the pod's container (defaulted when
// it has one), its node's kubelet address, and the kubelet's query
// (input/output/error/tty/command; port).
import { badRequest } from '../../../shared/api/status';
import type { RequestContext } from '../context';
import type { Registry, ServedResource, UpstreamLocation } from '../registry';
import { kubeletLocation, logContainer, nodeOfPod, type KubeletConnection } from './pod-log';

export type StreamKind = 'exec' | 'attach' | 'portforward';

/** Query booleans as Kubernetes decodes PodExecOptions: "true", "1" ... */
export const streamBool = (v: string | null) => v === 'true' || v === '1' || v === 'True' || v === 'TRUE';

/** The ports of a port-forward request ("ports" may repeat and hold comma lists). */
export function forwardPorts(query: URLSearchParams): number[] {
  const ports: number[] = [];
  for (const v of query.getAll('ports'))
    for (const p of v.split(',')) {
      const t = p.trim();
      if (!t) continue;
      const n = Number(t);
      if (!/^\d+$/.test(t) || n < 1 || n > 65535) throw badRequest(`invalid port "${t}"`);
      ports.push(n);
    }
  return ports;
}

export async function podStreamLocation(
  registry: Registry,
  conn: KubeletConnection,
  ctx: RequestContext,
  name: string,
  served: ServedResource,
  query: URLSearchParams,
  kind: StreamKind,
): Promise<UpstreamLocation> {
  const pod = (await served.store.reader.get(ctx, name)).obj;
  const ns = encodeURIComponent(pod.metadata.namespace);
  const podName = encodeURIComponent(pod.metadata.name);
  const params = new URLSearchParams();
  let path: string;
  if (kind === 'portforward') {
    const ports = forwardPorts(query);
    if (ports.length) params.set('port', ports.join(','));
    path = `/portForward/${ns}/${podName}`;
  } else {
    const container = logContainer(pod, query.get('container'));
    if (streamBool(query.get('stdin'))) params.set('input', '1');
    if (streamBool(query.get('stdout'))) params.set('output', '1');
    if (streamBool(query.get('stderr'))) params.set('error', '1');
    if (streamBool(query.get('tty'))) params.set('tty', '1');
    if (kind === 'exec') for (const c of query.getAll('command')) params.append('command', c);
    path = `/${kind}/${ns}/${podName}/${encodeURIComponent(container)}`;
  }
  const { host, port } = await nodeOfPod(registry, conn, ctx, pod, name);
  return kubeletLocation(conn, host, port, path, params);
}
