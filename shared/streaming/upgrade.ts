// The raw side of an upgrade-aware proxy: open an HTTP/1.1 connection to an
// upstream (TLS with a client certificate, or plain), send one request that
// asks for an upgrade, read the response head, and — when it is 101 — splice
// the two sockets byte for byte. Used by the apiserver (client ⇄ node agent)
// and the node agent (apiserver ⇄ the runtime's streaming server).
import net from 'node:net';
import tls from 'node:tls';
import type { Duplex } from 'node:stream';

export interface UpgradeTarget {
  url: string;
  caPem?: string;
  certPem?: string;
  keyPem?: string;
  /** Do not verify the upstream's certificate. */
  insecure?: boolean;
  timeoutMs?: number;
}

export interface UpgradeResponse {
  socket: Duplex;
  statusCode: number;
  statusText: string;
  /** Lowercase names. */
  headers: Record<string, string[]>;
  /** The response head as received (status line and headers, with the blank line). */
  rawHead: Buffer;
  /** Bytes that came after the head. */
  rest: Buffer;
}

/** A failure to reach the upstream, with Go's net.Dialer wording (as Kubernetes reports it). */
export class DialError extends Error {
  constructor(message: string) {
    super(message);
  }
}

function dialMessage(e: Error & { code?: string }, host: string, port: string): string {
  const addr = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  switch (e.code) {
    case 'ECONNREFUSED':
      return `dial tcp ${addr}: connect: connection refused`;
    case 'EHOSTUNREACH':
      return `dial tcp ${addr}: connect: no route to host`;
    case 'ETIMEDOUT':
      return `dial tcp ${addr}: i/o timeout`;
    case 'ENOTFOUND':
      return `dial tcp: lookup ${host}: no such host`;
    default:
      return e.message;
  }
}

/** Connects and sends the upgrade request; resolves with the upstream's response head. */
export function dialUpgrade(
  target: UpgradeTarget,
  method: string,
  headers: [string, string][],
  signal?: AbortSignal,
): Promise<UpgradeResponse> {
  const u = new URL(target.url);
  const host = u.hostname.replace(/^\[|\]$/g, '');
  const secure = u.protocol === 'https:' || u.protocol === 'wss:';
  const port = u.port || (secure ? '443' : '80');
  return new Promise((resolve, reject) => {
    let settled = false;
    const done = (err: Error | undefined, r?: UpgradeResponse) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
      socket.off('data', onData);
      if (err) {
        socket.destroy();
        reject(err);
      } else resolve(r!);
    };
    const socket: net.Socket = secure
      ? tls.connect({
          host,
          port: Number(port),
          servername: net.isIP(host) ? undefined : host,
          ca: target.caPem,
          cert: target.certPem,
          key: target.keyPem,
          rejectUnauthorized: !target.insecure,
          ALPNProtocols: ['http/1.1'],
        })
      : net.connect({ host, port: Number(port) });
    const timeoutMs = target.timeoutMs ?? 30_000;
    const timer = setTimeout(
      () => done(new DialError(`dial tcp ${u.host}: i/o timeout`)),
      timeoutMs > 0 ? timeoutMs : 30_000,
    );
    const onAbort = () => done(new Error('request aborted'));
    signal?.addEventListener('abort', onAbort);
    socket.once('error', (e) => done(new DialError(dialMessage(e, host, port))));
    socket.once('close', () => done(new DialError(`${u.host}: connection closed before the response`)));
    socket.once(secure ? 'secureConnect' : 'connect', () => {
      const lines = [`${method} ${u.pathname}${u.search} HTTP/1.1`, `Host: ${u.host}`];
      for (const [k, v] of headers) lines.push(`${k}: ${v}`);
      socket.write(`${lines.join('\r\n')}\r\n\r\n`);
    });
    let buf = Buffer.alloc(0);
    const onData = (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) {
        if (buf.length > 64 * 1024) done(new Error('upstream response head too large'));
        return;
      }
      const rawHead = buf.subarray(0, end + 4);
      const [status, ...lines] = rawHead.toString('latin1').slice(0, end).split('\r\n');
      const m = /^HTTP\/1\.[01] (\d{3}) ?(.*)$/.exec(status);
      if (!m) return done(new Error(`malformed upstream response: ${JSON.stringify(status)}`));
      const h: Record<string, string[]> = {};
      for (const line of lines) {
        const i = line.indexOf(':');
        if (i > 0) (h[line.slice(0, i).trim().toLowerCase()] ??= []).push(line.slice(i + 1).trim());
      }
      socket.removeAllListeners('error');
      socket.removeAllListeners('close');
      done(undefined, {
        socket,
        statusCode: Number(m[1]),
        statusText: m[2],
        headers: h,
        rawHead,
        rest: buf.subarray(end + 4),
      });
    };
    socket.on('data', onData);
  });
}

/** Reads what is left of a (non-upgrade) response body: up to limit bytes, until the upstream closes. */
export function readRest(r: UpgradeResponse, limit = 64 * 1024): Promise<Buffer> {
  const len = Number(r.headers['content-length']?.[0]);
  return new Promise((resolve) => {
    let buf = r.rest;
    const finish = () => {
      r.socket.destroy();
      resolve(buf.subarray(0, Number.isFinite(len) ? len : limit));
    };
    if (Number.isFinite(len) && buf.length >= len) return finish();
    r.socket.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (buf.length >= (Number.isFinite(len) ? len : limit)) finish();
    });
    r.socket.on('end', finish);
    r.socket.on('close', finish);
    r.socket.on('error', finish);
  });
}

/**
 * Splices two upgraded connections: bytes flow both ways; one side's end
 * half-closes the other, one side's close or error ends both. An error does not
 * cut the other side off: bytes already read from the failed side still go out
 * (a Go proxy's writes are in the kernel by then; here they may wait in the stream).
 */
export function splice(a: Duplex, b: Duplex): Promise<void> {
  return new Promise((resolve) => {
    a.pipe(b);
    b.pipe(a);
    let closed = 0;
    const onClose = (other: Duplex) => () => {
      // Let what is queued for the other side leave, then make sure it goes.
      other.end();
      setTimeout(() => other.destroy(), 5000).unref();
      if (++closed === 2) resolve();
    };
    a.once('close', onClose(b));
    b.once('close', onClose(a));
    // A stream closes after its error, and its close ends the other side (above).
    a.on('error', () => {});
    b.on('error', () => {});
  });
}

/** Writes an HTTP/1.1 response on a raw socket (a failed upgrade) and closes it. */
export function writeRawResponse(
  socket: Duplex,
  code: number,
  statusText: string,
  headers: Record<string, string>,
  body: Buffer | string,
): void {
  const b = typeof body === 'string' ? Buffer.from(body) : body;
  const lines = [`HTTP/1.1 ${code} ${statusText}`];
  for (const [k, v] of Object.entries({ ...headers, 'Content-Length': String(b.length) }))
    lines.push(`${k}: ${v}`);
  socket.end(Buffer.concat([Buffer.from(`${lines.join('\r\n')}\r\n\r\n`), b]));
}
