// Helpers for the auth tests: clients as other users (client certificates from
// the test server's cluster CA, bearer tokens), local HTTPS services (OIDC
// issuers, webhooks) with their own CA, and waiting for the server to be ready.
import https from 'node:https';
import { sign, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createCA, createClientCert, createServingCert, type KeyPair } from '../../../shared/pki/certs';
import type { ClientConfig } from '../../../shared/client/kubeconfig';
import { testRequester, type TestAPIServer } from '../../server/testing';

export type Requester = ReturnType<typeof testRequester>;

export function clusterCA(srv: TestAPIServer): KeyPair {
  const dir = join(srv.dir, 'certs');
  return {
    certPem: readFileSync(join(dir, 'ca.crt'), 'utf8'),
    keyPem: readFileSync(join(dir, 'ca.key'), 'utf8'),
  };
}

/** A client config authenticating with a client certificate of the cluster CA (or the given CA). */
export async function certConfig(
  srv: TestAPIServer,
  commonName: string,
  organizations: string[] = [],
  ca: KeyPair = clusterCA(srv),
): Promise<ClientConfig> {
  const kp = await createClientCert(ca, { commonName, organizations });
  return { server: srv.config.server, caPem: srv.config.caPem, certPem: kp.certPem, keyPem: kp.keyPem };
}

/** A requester that sends fixed headers (a bearer token, impersonation ...) on every call. */
export function withHeaders(config: ClientConfig, headers: Record<string, string | string[]>): Requester {
  const base = testRequester(config);
  const call = (method: string, path: string, opts: Parameters<Requester>[2] = {}) =>
    base(method, path, {
      ...opts,
      headers: { ...(headers as Record<string, string>), ...(opts?.headers ?? {}) },
    });
  return Object.assign(call, { close: () => base.close() }) as Requester;
}

export const anonymousConfig = (srv: TestAPIServer): ClientConfig => ({
  server: srv.config.server,
  caPem: srv.config.caPem,
});

export const tokenRequester = (srv: TestAPIServer, token: string) =>
  withHeaders(anonymousConfig(srv), { authorization: `Bearer ${token}` });

/** Who the server thinks the requester is (SelfSubjectReview), or the failing status. */
export async function whoami(api: Requester): Promise<{ status: number; user?: any; json: any }> {
  const r = await api('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    body: { apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' },
  });
  return { status: r.status, user: r.json?.status?.userInfo, json: r.json };
}

/** Waits for /readyz (post-start hooks such as rbac/bootstrap-roles done). */
export async function waitReady(api: Requester, timeoutMs = 20_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await api('GET', '/readyz');
    if (r.status === 200) return;
    if (Date.now() > deadline) throw new Error(`server not ready: ${r.body.toString()}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

export async function eventually(
  check: () => Promise<boolean>,
  timeoutMs = 10_000,
  what = 'condition',
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 50));
  }
}

export interface LocalHTTPS {
  url: string;
  ca: KeyPair;
  /** Requests seen, by path. */
  hits: Map<string, number>;
  close(): Promise<void>;
}

/** A local HTTPS service with its own CA (serving 127.0.0.1 and localhost). */
export async function startHTTPS(
  handler: (req: IncomingMessage, res: ServerResponse, body: any) => void | Promise<void>,
  o: { requestCert?: boolean; clientCA?: string } = {},
): Promise<LocalHTTPS> {
  const ca = await createCA('test-service-ca');
  const serving = await createServingCert(ca, 'localhost', { dnsNames: ['localhost'], ips: ['127.0.0.1'] });
  const hits = new Map<string, number>();
  const server = https.createServer(
    {
      cert: serving.certPem,
      key: serving.keyPem,
      ...(o.requestCert ? { requestCert: true, rejectUnauthorized: true, ca: o.clientCA } : {}),
    },
    (req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const path = (req.url ?? '/').split('?')[0];
        hits.set(path, (hits.get(path) ?? 0) + 1);
        let body: any;
        try {
          body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString('utf8')) : undefined;
        } catch {
          body = undefined;
        }
        void Promise.resolve(handler(req, res, body)).catch(() => {
          res.statusCode = 500;
          res.end();
        });
      });
    },
  );
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const addr = server.address();
  const port = typeof addr === 'object' && addr ? addr.port : 0;
  return {
    url: `https://127.0.0.1:${port}`,
    ca,
    hits,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

export function sendJSON(res: ServerResponse, code: number, obj: unknown): void {
  const body = JSON.stringify(obj);
  res.writeHead(code, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) });
  res.end(body);
}

/** A compact JWS signed with node:crypto directly (independent of the server's JWT code). */
export function signToken(
  payload: Record<string, unknown>,
  key: KeyObject,
  header: Record<string, unknown> = { alg: 'RS256' },
): string {
  const enc = (o: unknown) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const input = `${enc(header)}.${enc(payload)}`;
  const alg = String(header.alg);
  const hash = `sha${alg.slice(2)}`;
  const sig = alg.startsWith('ES')
    ? sign(hash, Buffer.from(input), { key, dsaEncoding: 'ieee-p1363' })
    : sign(hash, Buffer.from(input), key);
  return `${input}.${sig.toString('base64url')}`;
}
