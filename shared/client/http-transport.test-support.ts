// Real servers on 127.0.0.1 for the client transport's tests: TLS with h2 (and HTTP/1.1),
// TLS with HTTP/1.1 only, plain http, and a TCP relay that can stop forwarding (a dead
// connection that neither closes nor answers).
import * as http from 'node:http';
import * as http2 from 'node:http2';
import * as https from 'node:https';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { createCA, createServingCert, type KeyPair } from '../pki/certs';

export interface TestPKI {
  ca: KeyPair;
  serving: KeyPair;
}

let pki: Promise<TestPKI> | undefined;

/** One CA and a serving certificate for 127.0.0.1 and localhost, made once per test process. */
export function testPKI(): Promise<TestPKI> {
  return (pki ??= (async () => {
    const ca = await createCA('transport-test-ca');
    const serving = await createServingCert(ca, '127.0.0.1', { ips: ['127.0.0.1'], dnsNames: ['localhost'] });
    return { ca, serving };
  })());
}

export type Handler = (req: http.IncomingMessage | http2.Http2ServerRequest, res: any) => void;

export interface TestServer {
  origin: string;
  port: number;
  /** HTTP/2 sessions the server has accepted. */
  sessions: http2.ServerHttp2Session[];
  /** TCP connections the server has accepted. */
  connections: net.Socket[];
  close(): Promise<void>;
}

type Kind = 'h2' | 'h1-tls' | 'http';

/** A server of the kind, answering with handler. */
export async function startServer(
  kind: Kind,
  handler: Handler,
  settings: http2.Settings = {},
): Promise<TestServer> {
  const { serving } = await testPKI();
  const tlsOpts = { cert: serving.certPem, key: serving.keyPem };
  const srv: net.Server =
    kind === 'h2'
      ? http2.createSecureServer({ ...tlsOpts, allowHTTP1: true, settings }, handler as any)
      : kind === 'h1-tls'
        ? https.createServer(tlsOpts, handler as any)
        : http.createServer(handler as any);
  const sessions: http2.ServerHttp2Session[] = [];
  const connections: net.Socket[] = [];
  srv.on('session', (s: http2.ServerHttp2Session) => sessions.push(s));
  srv.on(kind === 'http' ? 'connection' : 'secureConnection', (s: net.Socket) => connections.push(s));
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  return {
    origin: `${kind === 'http' ? 'http' : 'https'}://127.0.0.1:${port}`,
    port,
    sessions,
    connections,
    close: () =>
      new Promise<void>((r) => {
        for (const s of sessions) s.destroy();
        for (const c of connections) c.destroy();
        srv.close(() => r());
      }),
  };
}

export interface Relay {
  origin: string;
  /** Stops forwarding on the connections open now: they stay open and silent. */
  blackhole(): void;
  /** Connections accepted so far. */
  accepted: number;
  close(): Promise<void>;
}

/** A TCP relay in front of a TLS server's port. */
export async function startRelay(targetPort: number): Promise<Relay> {
  const pairs: [net.Socket, net.Socket][] = [];
  const srv = net.createServer((inbound) => {
    relay.accepted++;
    const outbound = net.connect(targetPort, '127.0.0.1');
    inbound.pipe(outbound);
    outbound.pipe(inbound);
    const end = () => {
      inbound.destroy();
      outbound.destroy();
    };
    inbound.on('error', end);
    outbound.on('error', end);
    pairs.push([inbound, outbound]);
  });
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const relay: Relay = {
    origin: `https://127.0.0.1:${(srv.address() as AddressInfo).port}`,
    accepted: 0,
    blackhole() {
      for (const [a, b] of pairs.splice(0)) {
        a.unpipe(b);
        b.unpipe(a);
        a.pause();
        b.pause();
        pairs.push([a, b]);
      }
    },
    close: () =>
      new Promise<void>((r) => {
        for (const [a, b] of pairs) {
          a.destroy();
          b.destroy();
        }
        srv.close(() => r());
      }),
  };
  return relay;
}

/** The request's body, read whole. */
export async function readAll(req: AsyncIterable<Buffer | string>): Promise<string> {
  let s = '';
  for await (const c of req) s += c.toString();
  return s;
}

/** Answers with what the request was: method, path, HTTP version, body and a few headers. */
export const echo: Handler = (req, res) => {
  void readAll(req).then((body) => {
    res.setHeader('content-type', 'application/json');
    res.setHeader('x-multi', ['a', 'b']);
    res.end(
      JSON.stringify({
        method: req.method,
        path: req.url,
        version: req.httpVersion,
        body,
        contentLength: req.headers['content-length'],
        auth: req.headers.authorization,
      }),
    );
  });
};
