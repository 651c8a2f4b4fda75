// Authentication and authorization of the node agent's secure port, as the
// kubelet does them: x509 client certificates (--client-ca-file), bearer
// tokens through a TokenReview to the apiserver (--authentication-token-webhook),
// anonymous requests (--anonymous-auth); then AlwaysAllow, or a
// SubjectAccessReview per request (--authorization-mode=Webhook) on
// nodes/<subresource> of this node: stats, metrics, log, or proxy for
// everything else. Webhook answers are cached for their TTLs.
import type { TLSSocket } from 'node:tls';
import type { IncomingMessage } from 'node:http';
import type { Client } from '../../shared/client/client';
import { realClock, type Clock } from '../../shared/client/clock';
import { subjectOf } from '../../shared/pki/certs';
import { logger } from '../../shared/log';

const log = logger('nodeagent/auth');

export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

export interface Attributes {
  user: UserInfo;
  verb: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  path: string;
}

const isSubpath = (p: string, base: string) => p === base || p.startsWith(`${base}/`);

/** The kubelet's nodeAuthorizerAttributesGetter. */
export function requestAttributes(
  user: UserInfo,
  method: string,
  path: string,
  nodeName: string,
): Attributes {
  const verb =
    (
      { POST: 'create', GET: 'get', HEAD: 'get', PUT: 'update', PATCH: 'patch', DELETE: 'delete' } as Record<
        string,
        string
      >
    )[method.toUpperCase()] ?? '';
  let subresource = 'proxy';
  if (isSubpath(path, '/stats')) subresource = 'stats';
  else if (isSubpath(path, '/metrics')) subresource = 'metrics';
  else if (isSubpath(path, '/logs')) subresource = 'log';
  return {
    user,
    verb,
    namespace: '',
    apiGroup: '',
    apiVersion: 'v1',
    resource: 'nodes',
    subresource,
    name: nodeName,
    path,
  };
}

/** The 403 text the kubelet answers with. */
export function forbiddenMessage(a: Attributes): string {
  return `Forbidden (user=${a.user.name}, verb=${a.verb}, resource=${a.resource}, subresource=${a.subresource})`;
}

class TTLCache<V> {
  private readonly m = new Map<string, { v: V; until: number }>();
  constructor(private readonly clock: Clock) {}
  get(k: string): V | undefined {
    const e = this.m.get(k);
    if (!e) return undefined;
    if (e.until <= this.clock.now()) {
      this.m.delete(k);
      return undefined;
    }
    return e.v;
  }
  set(k: string, v: V, ttlMs: number): void {
    if (ttlMs <= 0) return;
    if (this.m.size > 10_000) this.m.clear();
    this.m.set(k, { v, until: this.clock.now() + ttlMs });
  }
}

export interface AuthOptions {
  nodeName: string;
  anonymous: boolean;
  /** x509 is on when the listener verifies client certificates against --client-ca-file. */
  x509: boolean;
  webhookAuthentication: boolean;
  webhookAuthenticationCacheTTLMs: number;
  authorizationMode: 'AlwaysAllow' | 'Webhook';
  authorizedCacheTTLMs: number;
  unauthorizedCacheTTLMs: number;
  /** For the webhooks (absent in standalone mode: webhooks then deny). */
  client?: Client;
  clock?: Clock;
}

export type AuthResult = { ok: true; user: UserInfo } | { ok: false; code: 401 | 403; message: string };

export class NodeAuth {
  private readonly clock: Clock;
  private readonly tokens: TTLCache<UserInfo | null>;
  private readonly decisions: TTLCache<boolean>;

  constructor(private readonly o: AuthOptions) {
    this.clock = o.clock ?? realClock;
    this.tokens = new TTLCache(this.clock);
    this.decisions = new TTLCache(this.clock);
  }

  /** The user of a request, undefined when no method accepts it (401). */
  async authenticate(req: IncomingMessage): Promise<UserInfo | undefined> {
    const socket = req.socket as TLSSocket;
    if (this.o.x509 && typeof socket.getPeerCertificate === 'function') {
      const cert = socket.getPeerCertificate();
      if (cert && Object.keys(cert).length) {
        // A certificate the client CA does not vouch for is an error, not an anonymous request.
        if (!socket.authorized) return undefined;
        const s = subjectOf(cert as any);
        if (s.commonName)
          return { name: s.commonName, groups: [...(s.organizations ?? []), 'system:authenticated'] };
      }
    }
    const auth = String(req.headers.authorization ?? '');
    const m = /^Bearer\s+(\S+)\s*$/i.exec(auth);
    if (m && this.o.webhookAuthentication) {
      const user = await this.reviewToken(m[1]);
      // A token that fails review is an error, not an anonymous request.
      return user ?? undefined;
    }
    if (this.o.anonymous) return { name: 'system:anonymous', groups: ['system:unauthenticated'] };
    return undefined;
  }

  private async reviewToken(token: string): Promise<UserInfo | null> {
    const cached = this.tokens.get(token);
    if (cached !== undefined) return cached;
    if (!this.o.client) return null;
    try {
      const review: any = await this.o.client
        .resource({ group: 'authentication.k8s.io', version: 'v1', resource: 'tokenreviews' })
        .create({
          apiVersion: 'authentication.k8s.io/v1',
          kind: 'TokenReview',
          metadata: {},
          spec: { token },
        } as any);
      const st = review?.status ?? {};
      const user: UserInfo | null = st.authenticated
        ? {
            name: st.user?.username ?? '',
            uid: st.user?.uid,
            groups: st.user?.groups ?? [],
            extra: st.user?.extra,
          }
        : null;
      this.tokens.set(token, user, this.o.webhookAuthenticationCacheTTLMs);
      return user;
    } catch (err) {
      log.error('token review failed', { err: String(err) });
      return null;
    }
  }

  /** Whether the user may make the request (403 otherwise). */
  async authorize(a: Attributes): Promise<boolean> {
    if (this.o.authorizationMode === 'AlwaysAllow') return true;
    const key = JSON.stringify([
      a.user.name,
      a.user.uid ?? '',
      a.user.groups,
      a.user.extra ?? {},
      a.verb,
      a.subresource,
      a.name,
    ]);
    const cached = this.decisions.get(key);
    if (cached !== undefined) return cached;
    if (!this.o.client) return false;
    try {
      const sar: any = await this.o.client
        .resource({ group: 'authorization.k8s.io', version: 'v1', resource: 'subjectaccessreviews' })
        .create({
          apiVersion: 'authorization.k8s.io/v1',
          kind: 'SubjectAccessReview',
          metadata: {},
          spec: {
            user: a.user.name,
            ...(a.user.uid ? { uid: a.user.uid } : {}),
            groups: a.user.groups,
            ...(a.user.extra ? { extra: a.user.extra } : {}),
            resourceAttributes: {
              verb: a.verb,
              group: a.apiGroup,
              version: a.apiVersion,
              resource: a.resource,
              subresource: a.subresource,
              name: a.name,
            },
          },
        } as any);
      const allowed = !!sar?.status?.allowed;
      this.decisions.set(key, allowed, allowed ? this.o.authorizedCacheTTLMs : this.o.unauthorizedCacheTTLMs);
      return allowed;
    } catch (err) {
      log.error('subject access review failed', { err: String(err) });
      return false;
    }
  }

  /** Authenticates and authorizes one request. */
  async check(req: IncomingMessage, path: string): Promise<AuthResult> {
    const user = await this.authenticate(req);
    if (!user) return { ok: false, code: 401, message: 'Unauthorized' };
    const attrs = requestAttributes(user, req.method ?? 'GET', path, this.o.nodeName);
    if (!(await this.authorize(attrs))) return { ok: false, code: 403, message: forbiddenMessage(attrs) };
    return { ok: true, user };
  }
}
