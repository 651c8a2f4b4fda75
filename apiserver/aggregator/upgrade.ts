// Upgraded requests (SPDY, WebSocket) to an aggregated API: the request goes
// to the service over TLS as it came (with the front-proxy headers), and from
// then on bytes flow both ways untouched — the upstream's answer, 101 or not,
// is the client's. A connection failure is answered 503 in plain text, as the
// aggregator's responder writes it.
import { connect } from 'node:tls';
import type { ServerResponse } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Res } from '../server/http';
import type { UpgradeRequest } from '../server/http';
import { transportError } from '../endpoints/handlers/proxy';

export interface UpgradeTarget {
  host: string;
  port: number;
  path: string;
  headers: Record<string, string | string[]>;
  ca?: string;
  cert?: string;
  key?: string;
  insecure: boolean;
  serverName: string;
}

export function proxyUpgrade(
  req: UpgradeRequest,
  client: { socket: Duplex; head: Buffer },
  res: Res,
  t: UpgradeTarget,
): Promise<void> {
  return new Promise<void>((resolve) => {
    const upstream = connect({
      host: t.host,
      port: t.port,
      servername: t.serverName,
      ca: t.ca,
      cert: t.cert,
      key: t.key,
      rejectUnauthorized: !t.insecure,
      ALPNProtocols: ['http/1.1'],
    });
    let connected = false;
    upstream.once('secureConnect', () => {
      connected = true;
      const lines = [`${req.method ?? 'GET'} ${t.path} HTTP/1.1`, `Host: ${t.host}:${t.port}`];
      // Hop-by-hop headers were dropped; an upgrade needs its two back.
      lines.push(`Connection: Upgrade`, `Upgrade: ${req.headers.upgrade ?? ''}`);
      for (const [k, v] of Object.entries(t.headers))
        for (const value of Array.isArray(v) ? v : [v]) lines.push(`${k}: ${value}`);
      upstream.write(`${lines.join('\r\n')}\r\n\r\n`);
      if (client.head.length) upstream.write(client.head);
      // From here the socket is the upstream's: the response object is never written.
      (res as ServerResponse).detachSocket?.(client.socket as never);
      upstream.pipe(client.socket);
      client.socket.pipe(upstream);
      const close = () => {
        upstream.destroy();
        client.socket.destroy();
      };
      upstream.on('close', close);
      client.socket.on('close', close);
      resolve();
    });
    upstream.once('error', (err: Error & { code?: string }) => {
      if (connected) {
        client.socket.destroy();
        return;
      }
      const message = `${transportError(err, `https://${t.host}:${t.port}`)}\n`;
      client.socket.end(
        `HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\n` +
          `X-Content-Type-Options: nosniff\r\nContent-Length: ${Buffer.byteLength(message)}\r\n` +
          `Connection: close\r\n\r\n${message}`,
      );
      resolve();
    });
  });
}
