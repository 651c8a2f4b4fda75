// One probe attempt as the kubelet's probers make it — exec (through the
// runtime's ExecSync), httpGet, tcpSocket and grpc (grpc.health.v1
// Health/Check) — with their success rules and output texts. Lifecycle hooks
// use the exec and httpGet ones too.
import type * as Grpc from '@grpc/grpc-js';
import { request as httpRequest, type IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { connect } from 'node:net';
import { KUBELET_VERSION } from '../status/node';
import type { ContainerRuntime } from './runtime';

export type ProbeOutcome = 'success' | 'failure' | 'warning';

export interface ProbeAttempt {
  result: ProbeOutcome;
  output: string;
}

/** Where a probe goes: the container (exec) or the pod's address (network probes). */
export interface ProbeTarget {
  container: any;
  containerID: string;
  podIP: string;
  runtime: Pick<ContainerRuntime, 'execSync'>;
}

/** At most this much of an HTTP body is read (kubelet's maxRespBodyLength). */
const MAX_BODY = 10 * 1024;
const MAX_REDIRECTS = 10;

/** A port given by number or by the name of one of the container's ports. */
export function resolvePort(port: unknown, container: any): number {
  if (typeof port === 'number') return port;
  const s = String(port ?? '');
  if (/^\d+$/.test(s)) return Number(s);
  const p = (container.ports ?? []).find((x: any) => x.name === s);
  if (!p) throw new Error(`couldn't find port: ${s} in ${JSON.stringify(container.ports ?? [])}`);
  return Number(p.containerPort);
}

const hostPort = (host: string, port: number) =>
  host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;

/** The URL of an httpGet action (probe or hook). */
export function httpGetURL(action: any, target: ProbeTarget): URL {
  const scheme = String(action.scheme ?? 'HTTP').toLowerCase();
  const host = action.host || target.podIP;
  const port = resolvePort(action.port, target.container);
  let path: string = action.path ?? '';
  if (path && !path.startsWith('/')) path = `/${path}`;
  return new URL(`${scheme}://${hostPort(host, port)}${path}`);
}

function get(
  url: URL,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<{ status: number; location?: string; body: string }> {
  return new Promise((resolve, reject) => {
    const mod = url.protocol === 'https:' ? httpsRequest : httpRequest;
    const req = mod(
      url,
      { method: 'GET', headers, timeout: timeoutMs, rejectUnauthorized: false },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          if (size < MAX_BODY) chunks.push(c.subarray(0, MAX_BODY - size));
          size += c.length;
        });
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            location: res.headers.location,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () =>
      req.destroy(new Error('context deadline exceeded (Client.Timeout exceeded while awaiting headers)')),
    );
    req.on('error', reject);
    req.end();
  });
}

/** kubelet's request headers: User-Agent kube-probe/<major.minor>, Accept: any type, then the probe's own. */
function probeHeaders(action: any, url: URL, agent = 'kube-probe'): Record<string, string> {
  const minor = KUBELET_VERSION.replace(/^v(\d+\.\d+).*$/, '$1');
  const h: Record<string, string> = { 'User-Agent': `${agent}/${minor}`, Accept: '*/*', Host: url.host };
  for (const x of action.httpHeaders ?? []) {
    const name = Object.keys(h).find((k) => k.toLowerCase() === String(x.name).toLowerCase()) ?? x.name;
    h[name] = x.value;
  }
  return h;
}

/** kubelet's http prober: 200–399 succeed; redirects followed on the same host, another host is a warning. */
export async function httpProbe(
  action: any,
  target: ProbeTarget,
  timeoutSeconds: number,
): Promise<ProbeAttempt> {
  let url = httpGetURL(action, target);
  const deadline = Date.now() + timeoutSeconds * 1000;
  try {
    for (let hop = 0; ; hop++) {
      const r = await get(url, probeHeaders(action, url), Math.max(1, deadline - Date.now()));
      if (r.status >= 300 && r.status < 400 && r.location && hop < MAX_REDIRECTS) {
        const next = new URL(r.location, url);
        if (next.hostname !== url.hostname)
          return { result: 'warning', output: `Probe terminated redirects, Response body: ${r.body}` };
        url = next;
        continue;
      }
      if (r.status >= 200 && r.status < 400) return { result: 'success', output: r.body };
      return { result: 'failure', output: `HTTP probe failed with statuscode: ${r.status}` };
    }
  } catch (err) {
    return { result: 'failure', output: `Get "${url.href}": ${goNetError(err, url.host)}` };
  }
}

/** A lifecycle hook's GET (User-Agent kube-lifecycle): only a failed request is an error, not the status. */
export async function hookGet(
  action: any,
  target: ProbeTarget,
  timeoutSeconds: number,
): Promise<string | undefined> {
  let url: URL | undefined;
  try {
    url = httpGetURL(action, target);
    await get(url, probeHeaders(action, url, 'kube-lifecycle'), timeoutSeconds * 1000);
    return undefined;
  } catch (err) {
    return url ? `Get "${url.href}": ${goNetError(err, url.host)}` : String((err as Error)?.message ?? err);
  }
}

/** A Node socket error in Go's words ("dial tcp 127.0.0.1:80: connect: connection refused"). */
function goNetError(err: unknown, addr: string): string {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ECONNREFUSED') return `dial tcp ${addr}: connect: connection refused`;
  if (e?.code === 'ETIMEDOUT') return `dial tcp ${addr}: i/o timeout`;
  if (e?.code === 'EHOSTUNREACH') return `dial tcp ${addr}: connect: no route to host`;
  return e?.message ?? String(err);
}

/** kubelet's tcp prober: a connection within the timeout succeeds. */
export function tcpProbe(action: any, target: ProbeTarget, timeoutSeconds: number): Promise<ProbeAttempt> {
  const host = action.host || target.podIP;
  const port = resolvePort(action.port, target.container);
  const addr = hostPort(host, port);
  return new Promise((resolve) => {
    const sock = connect({ host, port });
    const timer = setTimeout(() => {
      sock.destroy();
      resolve({ result: 'failure', output: `dial tcp ${addr}: i/o timeout` });
    }, timeoutSeconds * 1000);
    sock.once('connect', () => {
      clearTimeout(timer);
      sock.destroy();
      resolve({ result: 'success', output: '' });
    });
    sock.once('error', (err) => {
      clearTimeout(timer);
      resolve({ result: 'failure', output: goNetError(err, addr) });
    });
  });
}

/** kubelet's exec prober: exit code 0 succeeds; the output is stdout and stderr together. */
export async function execProbe(
  action: any,
  target: ProbeTarget,
  timeoutSeconds: number,
): Promise<ProbeAttempt> {
  if (!target.runtime.execSync) return { result: 'failure', output: 'the runtime cannot exec' };
  const cmd: string[] = action.command ?? [];
  try {
    const r = await target.runtime.execSync(target.containerID, cmd, timeoutSeconds);
    const output = Buffer.concat([r.stdout, r.stderr]).toString('utf8');
    return { result: r.exitCode === 0 ? 'success' : 'failure', output };
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    if (/timed? ?out|deadline/i.test(msg))
      return { result: 'failure', output: `command timed out after ${timeoutSeconds}s` };
    return { result: 'failure', output: msg };
  }
}

// grpc.health.v1: HealthCheckRequest { string service = 1 }, HealthCheckResponse { ServingStatus status = 1 }.
const SERVING_STATUS = ['UNKNOWN', 'SERVING', 'NOT_SERVING', 'SERVICE_UNKNOWN'];

function encodeHealthRequest(service: string): Buffer {
  const s = Buffer.from(service, 'utf8');
  if (!s.length) return Buffer.alloc(0);
  const len: number[] = [];
  let n = s.length;
  while (n >= 0x80) {
    len.push((n & 0x7f) | 0x80);
    n >>>= 7;
  }
  len.push(n);
  return Buffer.concat([Buffer.from([0x0a, ...len]), s]);
}

function decodeHealthStatus(b: Buffer): number {
  let i = 0;
  let status = 0;
  while (i < b.length) {
    const tag = b[i++];
    let v = 0;
    let shift = 0;
    for (;;) {
      const x = b[i++];
      v |= (x & 0x7f) << shift;
      shift += 7;
      if (!(x & 0x80)) break;
    }
    if (tag === 0x08) status = v;
    else if ((tag & 7) === 2) i += v;
  }
  return status;
}

let grpcLib: typeof Grpc | undefined;
/** grpc-js, loaded by the first grpc probe: ~70 modules most nodes never run. */
function grpcModule(): typeof Grpc {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return (grpcLib ??= require('@grpc/grpc-js') as typeof Grpc);
}

/** kubelet's grpc prober: Health/Check of the probe's service must answer SERVING. */
export function grpcProbe(action: any, target: ProbeTarget, timeoutSeconds: number): Promise<ProbeAttempt> {
  const grpc = grpcModule();
  const addr = hostPort(target.podIP, Number(action.port));
  const client = new grpc.Client(addr, grpc.credentials.createInsecure());
  return new Promise((resolve) => {
    client.makeUnaryRequest(
      '/grpc.health.v1.Health/Check',
      (x: Buffer) => x,
      (x: Buffer) => x,
      encodeHealthRequest(action.service ?? ''),
      new grpc.Metadata(),
      { deadline: Date.now() + timeoutSeconds * 1000 },
      (err, res) => {
        client.close();
        if (err) {
          if (err.code === grpc.status.UNIMPLEMENTED)
            return resolve({
              result: 'failure',
              output: `this server does not implement the grpc health protocol (grpc.health.v1.Health): ${err.details}`,
            });
          if (err.code === grpc.status.DEADLINE_EXCEEDED)
            return resolve({
              result: 'failure',
              output: `timeout: health rpc did not complete within ${timeoutSeconds}s`,
            });
          return resolve({
            result: 'failure',
            output: `timeout: failed to connect service "${addr}" within ${timeoutSeconds}s: ${err.details}`,
          });
        }
        const st = decodeHealthStatus(res ?? Buffer.alloc(0));
        if (st === 1) return resolve({ result: 'success', output: '' });
        resolve({
          result: 'failure',
          output: `service unhealthy (responded with "${SERVING_STATUS[st] ?? String(st)}")`,
        });
      },
    );
  });
}

/** Runs a probe's handler once. */
export function runProbeHandler(probe: any, target: ProbeTarget): Promise<ProbeAttempt> {
  const timeout = Number(probe.timeoutSeconds ?? 1) || 1;
  if (probe.exec) return execProbe(probe.exec, target, timeout);
  if (probe.httpGet) return httpProbe(probe.httpGet, target, timeout);
  if (probe.tcpSocket) return tcpProbe(probe.tcpSocket, target, timeout);
  if (probe.grpc) return grpcProbe(probe.grpc, target, timeout);
  return Promise.resolve({ result: 'warning', output: 'missing probe handler' });
}
