// The controller manager's secure port (10257): HTTPS with /healthz, /livez,
// /readyz and /metrics, behind kube's delegated authentication and
// authorization:
// - authentication: a client certificate signed by --client-ca-file (CN = user,
//   O = groups), a bearer token checked with a TokenReview through
//   --authentication-kubeconfig, or anonymous;
// - authorization: --authorization-always-allow-paths pass without a check,
//   system:masters is always allowed, anything else asks a SubjectAccessReview
//   through --authorization-kubeconfig, and is forbidden without one.
// Without --tls-cert-file/--tls-private-key-file a self-signed certificate for
// localhost is generated (into --cert-dir when given, else kept in memory).
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { logger } from '../../shared/log';
import { StatusError, type StatusReason } from '../../shared/api/status';
import type { Client } from '../../shared/client';
import { createCA, createServingCert, loadOrCreate, type KeyPair } from '../../shared/pki/certs';
import { METRICS_CONTENT_TYPE, type MetricsRegistry } from '../../shared/metrics/registry';

const log = logger('controller-manager');

export type HealthCheck = () => void | Promise<void>;

/** /healthz-style endpoint with named checks (`?verbose`, `?exclude=`, `/<path>/<check>`). */
export class HealthChecks {
  private readonly checks: { name: string; check: HealthCheck }[] = [];

  constructor(readonly path: string) {}

  add(name: string, check: HealthCheck): this {
    this.checks.push({ name, check });
    return this;
  }

  async serve(sub: string, query: URLSearchParams): Promise<{ code: number; body: string }> {
    if (sub) {
      const one = this.checks.find((c) => c.name === sub);
      if (!one) return { code: 404, body: '404 page not found\n' };
      try {
        await one.check();
        return { code: 200, body: 'ok' };
      } catch (err) {
        return {
          code: 500,
          body: `internal server error: ${err instanceof Error ? err.message : String(err)}\n`,
        };
      }
    }
    const verbose = query.has('verbose') && query.get('verbose') !== 'false';
    const excluded = new Set(query.getAll('exclude').flatMap((e) => e.split(',')));
    const lines: string[] = [];
    let failed = false;
    for (const c of this.checks) {
      if (excluded.has(c.name)) {
        lines.push(`[+]${c.name} excluded: ok`);
        continue;
      }
      try {
        await c.check();
        lines.push(`[+]${c.name} ok`);
      } catch (err) {
        failed = true;
        log.v(1)?.info('health check failed', { check: c.name, err: String(err) });
        lines.push(`[-]${c.name} failed: reason withheld`);
      }
    }
    for (const name of excluded) {
      if (!this.checks.some((c) => c.name === name))
        lines.push(`warn: some health checks cannot be excluded: no matches for "${name}"`);
    }
    const what = this.path.slice(1);
    if (failed) return { code: 500, body: `${lines.join('\n')}\n${what} check failed\n` };
    if (!verbose) return { code: 200, body: 'ok' };
    return { code: 200, body: `${lines.join('\n')}\n${what} check passed\n` };
  }
}

export interface User {
  name: string;
  groups: string[];
}

export interface SecureServingOptions {
  bindAddress: string;
  port: number;
  certDir?: string;
  tlsCertFile?: string;
  tlsPrivateKeyFile?: string;
  tlsMinVersion?: string;
  clientCaFile?: string;
  alwaysAllowPaths: string[];
  /** TokenReview client (--authentication-kubeconfig). */
  authnClient?: Client;
  /** SubjectAccessReview client (--authorization-kubeconfig). */
  authzClient?: Client;
  health: HealthChecks[];
  metrics: MetricsRegistry;
}

const TLS_VERSIONS: Record<string, 'TLSv1' | 'TLSv1.1' | 'TLSv1.2' | 'TLSv1.3'> = {
  VersionTLS10: 'TLSv1',
  VersionTLS11: 'TLSv1.1',
  VersionTLS12: 'TLSv1.2',
  VersionTLS13: 'TLSv1.3',
};

/** MaybeDefaultWithSelfSignedCerts: a localhost CA and serving certificate, as one chain. */
async function selfSigned(certDir: string | undefined, bindAddress: string): Promise<KeyPair> {
  const make = async (): Promise<KeyPair> => {
    const stamp = Math.floor(Date.now() / 1000);
    const ca = await createCA(`localhost-ca@${stamp}`, 365);
    const ips = [
      '127.0.0.1',
      ...(bindAddress && bindAddress !== '0.0.0.0' && bindAddress !== '::' ? [bindAddress] : []),
    ];
    const serving = await createServingCert(ca, `localhost@${stamp}`, {
      dnsNames: ['localhost'],
      ips,
      days: 365,
    });
    return { certPem: serving.certPem + ca.certPem, keyPem: serving.keyPem };
  };
  if (!certDir) return make();
  const kp = await loadOrCreate(certDir, 'kube-controller-manager', make);
  log.info('using self-signed serving certificate', {
    certFile: join(certDir, 'kube-controller-manager.crt'),
  });
  return kp;
}

function pathMatches(path: string, allowed: string[]): boolean {
  return allowed.some((p) => (p.endsWith('*') ? path.startsWith(p.slice(0, -1)) : p === path));
}

function statusBody(code: number, reason: StatusReason, message: string): string {
  return JSON.stringify(new StatusError(code, reason, message).status);
}

export class SecureServer {
  private server?: Server;
  port = 0;

  constructor(private readonly o: SecureServingOptions) {}

  async start(): Promise<void> {
    const o = this.o;
    const kp =
      o.tlsCertFile && o.tlsPrivateKeyFile
        ? { certPem: readFileSync(o.tlsCertFile, 'utf8'), keyPem: readFileSync(o.tlsPrivateKeyFile, 'utf8') }
        : await selfSigned(o.certDir, o.bindAddress);
    const clientCa = o.clientCaFile ? readFileSync(o.clientCaFile, 'utf8') : undefined;
    this.server = createServer(
      {
        cert: kp.certPem,
        key: kp.keyPem,
        ...(clientCa ? { ca: clientCa, requestCert: true, rejectUnauthorized: false } : {}),
        ...(o.tlsMinVersion ? { minVersion: TLS_VERSIONS[o.tlsMinVersion] } : {}),
      },
      (req, res) => {
        this.handle(req, res).catch((err) => {
          log.error('request failed', { path: req.url, err: String(err) });
          if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' });
          res.end('internal server error\n');
        });
      },
    );
    const host = o.bindAddress || '0.0.0.0';
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(o.port, host, () => {
        this.server!.off('error', reject);
        resolve();
      });
    });
    const a = this.server.address();
    this.port = typeof a === 'object' && a ? a.port : o.port;
    log.info('serving securely', { address: `${host}:${this.port}` });
  }

  async stop(): Promise<void> {
    const s = this.server;
    if (!s) return;
    this.server = undefined;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections?.();
    });
  }

  /** Who sent the request: client certificate, bearer token (TokenReview), or anonymous. */
  private async authenticate(req: IncomingMessage): Promise<User | undefined | 'unauthorized'> {
    const sock = req.socket as TLSSocket;
    if (this.o.clientCaFile && sock.authorized) {
      const cert = sock.getPeerCertificate();
      if (cert && cert.subject) {
        const s = cert.subject as unknown as Record<string, string | string[] | undefined>;
        const list = (v: string | string[] | undefined) =>
          v === undefined ? [] : Array.isArray(v) ? v : [v];
        return { name: list(s.CN)[0] ?? '', groups: [...list(s.O), 'system:authenticated'] };
      }
    }
    const auth = req.headers.authorization;
    const m = auth ? /^Bearer\s+(\S+)$/i.exec(auth) : null;
    if (m && this.o.authnClient) {
      try {
        const review: any = await this.o.authnClient.rest.request({
          method: 'POST',
          path: '/apis/authentication.k8s.io/v1/tokenreviews',
          body: { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenReview', spec: { token: m[1] } },
        });
        if (review?.status?.authenticated && review.status.user) {
          return { name: review.status.user.username ?? '', groups: review.status.user.groups ?? [] };
        }
      } catch (err) {
        log.warn('token review failed', { err: String(err) });
      }
      return 'unauthorized';
    }
    return undefined;
  }

  private async authorize(user: User | undefined, path: string, verb: string): Promise<boolean> {
    if (pathMatches(path, this.o.alwaysAllowPaths)) return true;
    if (user?.groups.includes('system:masters')) return true;
    if (!this.o.authzClient) return false;
    try {
      const sar: any = await this.o.authzClient.rest.request({
        method: 'POST',
        path: '/apis/authorization.k8s.io/v1/subjectaccessreviews',
        body: {
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          spec: {
            user: user?.name ?? 'system:anonymous',
            groups: user?.groups ?? ['system:unauthenticated'],
            nonResourceAttributes: { path, verb },
          },
        },
      });
      return !!sar?.status?.allowed;
    } catch (err) {
      log.warn('subject access review failed', { err: String(err) });
      return false;
    }
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://localhost');
    const path = url.pathname;
    const user = await this.authenticate(req);
    if (user === 'unauthorized') {
      res.writeHead(401, { 'content-type': 'application/json' });
      res.end(statusBody(401, 'Unauthorized', 'Unauthorized'));
      return;
    }
    const verb = (req.method ?? 'GET').toLowerCase();
    if (!(await this.authorize(user, path, verb === 'head' ? 'get' : verb))) {
      const who = user?.name || 'system:anonymous';
      res.writeHead(403, { 'content-type': 'application/json' });
      res.end(statusBody(403, 'Forbidden', `forbidden: User "${who}" cannot ${verb} path "${path}"`));
      return;
    }
    for (const h of this.o.health) {
      if (path === h.path || path.startsWith(`${h.path}/`)) {
        const r = await h.serve(path.slice(h.path.length + 1), url.searchParams);
        res.writeHead(r.code, {
          'content-type': 'text/plain; charset=utf-8',
          'x-content-type-options': 'nosniff',
          'cache-control': 'no-cache, private',
        });
        res.end(r.body);
        return;
      }
    }
    if (path === '/metrics') {
      res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE });
      res.end(this.o.metrics.expose());
      return;
    }
    res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
    res.end('404 page not found\n');
  }
}
