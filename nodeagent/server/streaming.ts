// The kubelet's streaming endpoints on the secure port:
//   /exec/{ns}/{pod}[/{uid}]/{container}    upgrade (SPDY or WebSocket), CRI Exec
//   /attach/{ns}/{pod}[/{uid}]/{container}  upgrade, CRI Attach
//   /portForward/{ns}/{pod}[/{uid}]         upgrade, CRI PortForward
//   /run/{ns}/{pod}[/{uid}]/{container}     POST, ?cmd=: runs a command and answers its output (ExecSync)
// An upgrade resolves to the runtime's streaming URL for that session and is
// proxied there byte for byte (the runtime's answer, 101 or an error, comes back
// as it is), as the kubelet's proxyStream does. Failures before that answer
// with the kubelet's status codes and plain-text messages.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import { logger } from '../../shared/log';
import { dialUpgrade, readRest, splice, writeRawResponse } from '../../shared/streaming/upgrade';
import type { ServedPod } from '../pods/records';
import type { ContainerRuntime, StreamRequest } from '../pods/runtime';

const log = logger('nodeagent/streaming');

export const STREAMING_PREFIXES = ['/exec', '/attach', '/portForward', '/run'];

export const isStreamingPath = (p: string) =>
  STREAMING_PREFIXES.some((x) => p === x || p.startsWith(`${x}/`));

/** A failure with the kubelet's code and plain-text message. */
export class StreamError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

interface Target {
  kind: 'exec' | 'attach' | 'portForward' | 'run';
  namespace: string;
  pod: string;
  uid?: string;
  container?: string;
}

/** Splits a streaming path; undefined when it has the wrong number of parts. */
export function parseStreamPath(path: string): Target | undefined {
  const parts = path.split('/').slice(1).map(decodeURIComponent);
  const kind = parts[0] as Target['kind'];
  const rest = parts.slice(1);
  if (kind === 'portForward') {
    if (rest.length === 2) return { kind, namespace: rest[0], pod: rest[1] };
    if (rest.length === 3) return { kind, namespace: rest[0], pod: rest[1], uid: rest[2] };
    return undefined;
  }
  if (!['exec', 'attach', 'run'].includes(kind)) return undefined;
  if (rest.length === 3) return { kind, namespace: rest[0], pod: rest[1], container: rest[2] };
  if (rest.length === 4) return { kind, namespace: rest[0], pod: rest[1], uid: rest[2], container: rest[3] };
  return undefined;
}

const one = (q: URLSearchParams, name: string) => q.get(name) === '1';

export class StreamingEndpoints {
  constructor(
    private readonly d: {
      pods: { podByName(ns: string, name: string): ServedPod | undefined };
      runtime?: ContainerRuntime;
      runtimeName: string;
    },
  ) {}

  /** The container ID of a running container of the pod (the kubelet's findContainer). */
  private containerID(t: Target): string {
    const rec = this.pod(t);
    const cur = rec.containers.get(t.container ?? '')?.current;
    if (!cur || cur.state !== 'running') throw new StreamError(500, `container not found ("${t.container}")`);
    return cur.id;
  }

  private pod(t: Target) {
    const rec = this.d.pods.podByName(t.namespace, t.pod);
    if (!rec || (t.uid && rec.uid !== t.uid)) throw new StreamError(404, 'pod does not exist');
    return rec;
  }

  private unsupported(what: string): StreamError {
    // No ": " in the text: client-go reads an error body as YAML first, and "a: b" would decode
    // as an empty Status.
    return new StreamError(
      500,
      `${what} is not supported by the ${this.d.runtimeName} runtime (it runs no processes)`,
    );
  }

  /** The runtime's streaming URL of one upgrade request. */
  async streamURL(t: Target, q: URLSearchParams): Promise<string> {
    let req: StreamRequest;
    if (t.kind === 'portForward') {
      const rec = this.pod(t);
      const ports = (q.get('port') ?? '')
        .split(',')
        .filter(Boolean)
        .map(Number)
        .filter((n) => Number.isInteger(n) && n > 0 && n < 65536);
      req = { kind: 'portforward', podUID: rec.uid, ports };
    } else {
      const tty = one(q, 'tty');
      const stdin = one(q, 'input');
      const stdout = one(q, 'output');
      // A terminal merges stderr into stdout.
      const stderr = one(q, 'error') && !tty;
      if (!stdin && !stdout && !one(q, 'error'))
        throw new StreamError(400, 'you must specify at least 1 of stdin, stdout, stderr');
      const containerID = this.containerID(t);
      req =
        t.kind === 'exec'
          ? { kind: 'exec', containerID, cmd: q.getAll('command'), tty, stdin, stdout, stderr }
          : { kind: 'attach', containerID, tty, stdin, stdout, stderr };
    }
    if (!this.d.runtime?.streamURL) throw this.unsupported(t.kind);
    return this.d.runtime.streamURL(req);
  }

  /** An upgrade on a streaming path: proxied to the runtime's streaming server. */
  async upgrade(req: IncomingMessage, socket: Duplex, head: Buffer, path: string, q: URLSearchParams) {
    const t = parseStreamPath(path);
    try {
      if (!t || t.kind === 'run') throw new StreamError(404, '404 page not found');
      const url = await this.streamURL(t, q);
      const headers: [string, string][] = [];
      for (let i = 0; i < req.rawHeaders.length; i += 2)
        if (req.rawHeaders[i].toLowerCase() !== 'host')
          headers.push([req.rawHeaders[i], req.rawHeaders[i + 1]]);
      const r = await dialUpgrade({ url, timeoutMs: 30_000 }, req.method ?? 'POST', headers).catch((e) => {
        throw new StreamError(500, String((e as Error).message));
      });
      if (r.statusCode !== 101) {
        const body = await readRest(r);
        socket.end(Buffer.concat([r.rawHead, body]));
        return;
      }
      socket.write(r.rawHead);
      if (r.rest.length) socket.write(r.rest);
      if (head.length) r.socket.write(head);
      await splice(socket, r.socket);
    } catch (err) {
      const e =
        err instanceof StreamError ? err : new StreamError(500, String((err as Error)?.message ?? err));
      if (e.code >= 500) log.error('streaming request failed', { path, err: e.message });
      writeRawResponse(
        socket,
        e.code,
        STATUS_TEXT[e.code] ?? 'Error',
        { 'Content-Type': 'text/plain; charset=utf-8', Connection: 'close' },
        e.message,
      );
    }
  }

  /** An ordinary request on a streaming path: /run, or an exec/attach/portForward that did not upgrade. */
  async request(req: IncomingMessage, res: ServerResponse, path: string, q: URLSearchParams): Promise<void> {
    const t = parseStreamPath(path);
    if (!t) throw new StreamError(404, '404 page not found');
    if (t.kind !== 'run') throw new StreamError(400, 'Upgrade request required');
    if (req.method !== 'POST') throw new StreamError(405, 'Method Not Allowed');
    const containerID = this.containerID(t);
    if (!this.d.runtime?.execSync) throw this.unsupported('run');
    // The legacy parameter: one string, split at spaces.
    const cmd = (q.get('cmd') ?? '').split(' ');
    const r = await this.d.runtime.execSync(containerID, cmd, 0);
    const out = Buffer.concat([r.stdout, r.stderr]);
    if (r.exitCode !== 0)
      throw new StreamError(
        500,
        `command '${cmd.join(' ')}' exited with ${r.exitCode}: ${out.toString('utf8')}`,
      );
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': out.length });
    res.end(out);
  }
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad Request',
  401: 'Unauthorized',
  403: 'Forbidden',
  404: 'Not Found',
  405: 'Method Not Allowed',
  500: 'Internal Server Error',
};

export { STATUS_TEXT };
