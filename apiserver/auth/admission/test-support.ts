// Test helpers for admission and audit tests: requests as another identity
// (client certificates from the test server's CA), a local HTTPS server.
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { createClientCert, createServingCert, type KeyPair } from '../../../shared/pki/certs';
import { testRequester, type TestAPIServer } from '../../server/testing';

export function clusterCA(srv: TestAPIServer): KeyPair {
  return {
    certPem: readFileSync(join(srv.dir, 'certs', 'ca.crt'), 'utf8'),
    keyPem: readFileSync(join(srv.dir, 'certs', 'ca.key'), 'utf8'),
  };
}

/** A requester authenticated by a client certificate for user/groups. */
export async function requesterAs(srv: TestAPIServer, user: string, groups: string[]) {
  const cert = await createClientCert(clusterCA(srv), { commonName: user, organizations: groups });
  return testRequester({ ...srv.config, certPem: cert.certPem, keyPem: cert.keyPem });
}

export interface LocalHTTPS {
  url: string;
  caBundle: string;
  server: https.Server;
  close(): Promise<void>;
}

/**
 * An HTTPS server on 127.0.0.1 with a certificate from ca (by default one for localhost and
 * 127.0.0.1); caBundle is base64 PEM.
 */
export async function localHTTPS(
  ca: KeyPair,
  handler: (
    body: any,
    req: import('node:http').IncomingMessage,
  ) => Promise<{ status?: number; body: unknown }>,
  serving?: KeyPair,
): Promise<LocalHTTPS> {
  serving ??= await createServingCert(ca, 'webhook', { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
  const server = https.createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body: any;
      try {
        body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      } catch {
        body = Buffer.concat(chunks);
      }
      handler(body, req).then(
        (out) => {
          const text = typeof out.body === 'string' ? out.body : JSON.stringify(out.body);
          res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
          res.end(text);
        },
        () => {
          res.writeHead(500);
          res.end();
        },
      );
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `https://127.0.0.1:${port}`,
    caBundle: Buffer.from(ca.certPem).toString('base64'),
    server,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/**
 * Waits until a list from the watch cache (resourceVersion=0, where admission reads its
 * configuration) holds the named object, or no longer holds it when `present` is false.
 */
export async function untilCached(
  api: ReturnType<typeof testRequester>,
  listPath: string,
  name: string,
  present = true,
): Promise<void> {
  for (let i = 0; i < 400; i++) {
    const l = await api('GET', `${listPath}?resourceVersion=0`);
    if (l.json.items.some((o: any) => o.metadata.name === name) === present) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`${listPath}: the watch cache never ${present ? 'listed' : 'dropped'} ${name}`);
}
