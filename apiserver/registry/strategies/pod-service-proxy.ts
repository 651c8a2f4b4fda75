// pods/<id>/proxy and services/<id>/proxy, where id is [scheme:]name[:port]:
// the pod's IP, or an address of the service's endpoints that belongs to a pod
// (as kube-apiserver's ResourceLocation finds them), reached over plain HTTP
// unless the id says https (whose certificate is not verified, as Kubernetes
// does). (exec, attach and portforward go to the node agent: pod-stream.ts.)
import { isIP } from 'node:net';
import { badRequest, StatusError } from '../../../shared/api/status';
import { systemContext, type RequestContext } from '../context';
import type { Registry, ResourceBehaviour, UpstreamLocation } from '../registry';

export interface ProxyID {
  scheme: string;
  name: string;
  /** A number, or (services) a port's name; '' when not given. */
  port: string;
}

/** Splits "[scheme:]name[:port]" (net.SplitSchemeNamePort); undefined when malformed. */
function parseProxyID(id: string): ProxyID | undefined {
  const parts = id.split(':');
  if (parts.length > 3) return undefined;
  // name | name:port | scheme:name:port
  const [scheme, name, port] = parts.length === 3 ? parts : ['', parts[0], parts[1] ?? ''];
  if (!name || !['', 'http', 'https'].includes(scheme)) return undefined;
  return { scheme, name, port };
}

/** parseProxyID, or 400 naming what was asked for ("pod", "service", "node"). */
export function proxyIDOf(rawID: string, what: string): ProxyID {
  const id = parseProxyID(rawID);
  if (!id) throw badRequest(`invalid ${what} request "${rawID}"`);
  return id;
}

export const hostPort = (host: string, port: number | string) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** Go's net.IP.IsGlobalUnicast: not unspecified, loopback, link-local, multicast or broadcast. */
function isGlobalUnicast(ip: string): boolean {
  const v = isIP(ip);
  if (v === 4) {
    const [a, b] = ip.split('.').map(Number);
    return !(
      ip === '0.0.0.0' ||
      a === 127 ||
      (a >= 224 && a < 240) ||
      ip === '255.255.255.255' ||
      (a === 169 && b === 254)
    );
  }
  if (v === 6) {
    const l = ip.toLowerCase();
    return !(l === '::' || l === '::1' || /^fe[89ab]/.test(l) || l.startsWith('ff'));
  }
  return false;
}

const podIPs = (pod: any): string[] =>
  pod?.status?.podIPs?.length
    ? pod.status.podIPs.map((p: any) => p.ip)
    : pod?.status?.podIP
      ? [pod.status.podIP]
      : [];

async function getObject(registry: Registry, resource: string, ctx: RequestContext, name: string) {
  const served = registry.preferred('', resource);
  if (!served) throw new StatusError(500, 'InternalError', `${resource} are not served`);
  // The user was authorised for the proxy subresource; reading what it names is the server's job.
  const sys = { ...systemContext(ctx.namespace ?? ''), signal: ctx.signal };
  return (await served.store.reader.get(sys, name)).obj;
}

function upstream(
  id: ProxyID,
  host: string,
  port: string,
  subpath: string,
  query: URLSearchParams,
  timeoutMs: number,
): UpstreamLocation {
  const qs = query.toString();
  const authority = port ? hostPort(host, port) : host.includes(':') ? `[${host}]` : host;
  return {
    url: `${id.scheme || 'http'}://${authority}/${subpath}${qs ? `?${qs}` : ''}`,
    insecure: true,
    timeoutMs,
  };
}

export async function podProxyLocation(
  registry: Registry,
  ctx: RequestContext,
  rawID: string,
  query: URLSearchParams,
  subpath: string,
  timeoutMs: number,
): Promise<UpstreamLocation> {
  const id = proxyIDOf(rawID, 'pod');
  const pod = await getObject(registry, 'pods', ctx, id.name);
  // No port given: the first port a container declares.
  let port = id.port;
  if (!port)
    for (const c of pod.spec?.containers ?? [])
      if (c.ports?.length) {
        port = String(c.ports[0].containerPort);
        break;
      }
  const ip = podIPs(pod)[0] ?? '';
  if (!isGlobalUnicast(ip)) throw badRequest('address not allowed');
  return upstream(id, ip, port, subpath, query, timeoutMs);
}

export async function serviceProxyLocation(
  registry: Registry,
  ctx: RequestContext,
  rawID: string,
  query: URLSearchParams,
  subpath: string,
  timeoutMs: number,
): Promise<UpstreamLocation> {
  const id = proxyIDOf(rawID, 'service');
  const unavailable = (msg: string) => new StatusError(503, 'ServiceUnavailable', msg);
  // A port number stands for the name of the service port that has it.
  let portName = id.port;
  if (/^\d+$/.test(id.port)) {
    const svc = await getObject(registry, 'services', ctx, id.name);
    const match = (svc.spec?.ports ?? []).find((p: any) => String(p.port) === id.port);
    if (!match) throw unavailable(`no service port ${id.port} found for service "${id.name}"`);
    portName = match.name ?? '';
  }
  const eps = await getObject(registry, 'endpoints', ctx, id.name);
  const subsets: any[] = eps.subsets ?? [];
  if (!subsets.length) throw unavailable(`no endpoints available for service "${id.name}"`);
  // Start at a random subset and address, as Kubernetes does, to spread the load.
  const s0 = Math.floor(Math.random() * subsets.length);
  for (let i = 0; i < subsets.length; i++) {
    const ss = subsets[(s0 + i) % subsets.length];
    const addresses: any[] = ss.addresses ?? [];
    if (!addresses.length) continue;
    for (const p of ss.ports ?? []) {
      if ((p.name ?? '') !== portName) continue;
      const a0 = Math.floor(Math.random() * addresses.length);
      for (let j = 0; j < addresses.length; j++) {
        const addr = addresses[(a0 + j) % addresses.length];
        if (await addressOfPod(registry, ctx, addr))
          return upstream(id, addr.ip, String(p.port), subpath, query, timeoutMs);
      }
    }
  }
  throw unavailable(`no endpoints available for service "${rawID}"`);
}

/** isValidAddress: only addresses of an existing pod of the namespace that has that IP. */
async function addressOfPod(registry: Registry, ctx: RequestContext, addr: any): Promise<boolean> {
  const ref = addr.targetRef;
  if (!ref?.name || ref.namespace !== ctx.namespace) return false;
  try {
    return podIPs(await getObject(registry, 'pods', ctx, ref.name)).includes(addr.ip);
  } catch {
    return false;
  }
}

export function podServiceProxyBehaviours(
  registry: () => Registry,
  timeoutMs: number,
): Record<string, ResourceBehaviour> {
  return {
    '/pods': {
      subresources: {
        proxy: {
          custom: {
            locate: (ctx, name, _served, query, subpath) =>
              podProxyLocation(registry(), ctx, name, query, subpath, timeoutMs),
          },
        },
      },
    },
    '/services': {
      subresources: {
        proxy: {
          custom: {
            locate: (ctx, name, _served, query, subpath) =>
              serviceProxyLocation(registry(), ctx, name, query, subpath, timeoutMs),
          },
        },
      },
    },
  };
}
