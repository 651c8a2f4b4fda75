// Authentication: the methods look at the request in Kubernetes' order; the
// first that authenticates wins. A method answers null when the request
// carries no credentials of its kind and throws when it carries bad ones;
// bad credentials make the request fail with 401 unless a later method
// succeeds (no fall-back to anonymous). Bearer tokens go through one union of
// token authenticators whose successes are cached for 10s (like
// kube-apiserver's token cache), keyed by token hash and audiences.
import { createHash } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { unauthorized } from '../../../shared/api/status';
import type { UserInfo } from '../../registry/context';
import type { Req } from '../../server/http';
import { TTLCache } from '../webhook-client';

export interface AuthResponse {
  user: UserInfo;
  /** Audiences the credential is valid for (audience-aware methods). */
  audiences?: string[];
}

/** Bad credentials of a method's kind (collected; the request gets 401). */
export class AuthError extends Error {}

export interface RequestAuthenticator {
  readonly name: string;
  authenticate(req: Req, audiences: string[] | undefined): Promise<AuthResponse | null> | AuthResponse | null;
}

export interface TokenAuthenticator {
  readonly name: string;
  authenticateToken(
    token: string,
    audiences: string[] | undefined,
  ): Promise<AuthResponse | null> | AuthResponse | null;
}

export const ANONYMOUS: UserInfo = Object.freeze({
  name: 'system:anonymous',
  groups: ['system:unauthenticated'],
}) as UserInfo;

/** The TLS socket of a request, for HTTP/1.1 and HTTP/2 alike. */
export function tlsSocketOf(req: Req): TLSSocket | undefined {
  const s = (req as any).stream?.session?.socket ?? req.socket;
  return s && typeof s.getPeerCertificate === 'function' ? (s as TLSSocket) : undefined;
}

export const intersect = (a: string[], b: string[]) => a.filter((x) => b.includes(x));

/** Adds system:authenticated unless the user already is in system:(un)authenticated. */
export function withAuthenticatedGroup(u: UserInfo): UserInfo {
  if (u.groups.includes('system:authenticated') || u.groups.includes('system:unauthenticated')) return u;
  return { ...u, groups: [...u.groups, 'system:authenticated'] };
}

/**
 * Methods not scoped to audiences (static and bootstrap tokens, OIDC) are
 * valid for the API audiences: with requested audiences, only if they intersect.
 */
export function audienceAgnostic(t: TokenAuthenticator, implicit: string[]): TokenAuthenticator {
  return {
    name: t.name,
    async authenticateToken(token, requested) {
      if (!requested) return t.authenticateToken(token, undefined);
      const auds = intersect(implicit, requested);
      if (!auds.length) return null;
      const r = await t.authenticateToken(token, undefined);
      return r ? { ...r, audiences: auds } : null;
    },
  };
}

export interface TokenResult {
  response: AuthResponse | null;
  errors: string[];
}

const SUCCESS_TTL_MS = 10_000;

/** The bearer-token authenticators, tried in order; successes are cached. */
export class TokenUnion {
  private readonly cache = new TTLCache<AuthResponse>();

  constructor(
    readonly authenticators: TokenAuthenticator[],
    private readonly successTTLMs = SUCCESS_TTL_MS,
  ) {}

  async authenticateToken(token: string, audiences: string[] | undefined): Promise<TokenResult> {
    const key = createHash('sha256')
      .update(JSON.stringify(audiences ?? null))
      .update('\u0000')
      .update(token)
      .digest('base64');
    const hit = this.cache.get(key);
    if (hit) return { response: hit, errors: [] };
    const errors: string[] = [];
    for (const a of this.authenticators) {
      try {
        const r = await a.authenticateToken(token, audiences);
        if (r) {
          const response = { ...r, user: withAuthenticatedGroup(r.user) };
          this.cache.set(key, response, this.successTTLMs);
          return { response, errors: [] };
        }
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    return { response: null, errors };
  }
}

const WS_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** The bearer token of a request (Authorization header, or the WebSocket subprotocol form). */
export function bearerToken(req: Req): string | null {
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && auth) {
    const parts = auth.trim().split(' ');
    if (parts.length >= 2 && parts[0].toLowerCase() === 'bearer') return parts[1] || null;
    return null;
  }
  const proto = req.headers['sec-websocket-protocol'];
  if (typeof proto === 'string') {
    for (const p of proto.split(',')) {
      const v = p.trim();
      if (v.startsWith(WS_PREFIX)) {
        const token = Buffer.from(v.slice(WS_PREFIX.length), 'base64url').toString('utf8');
        return token || null;
      }
    }
  }
  return null;
}

export class BearerTokenAuthenticator implements RequestAuthenticator {
  readonly name = 'bearer';
  constructor(private readonly union: TokenUnion) {}

  async authenticate(req: Req, audiences: string[] | undefined): Promise<AuthResponse | null> {
    const token = bearerToken(req);
    if (!token) return null;
    const { response, errors } = await this.union.authenticateToken(token, audiences);
    if (response) return response;
    throw new AuthError(errors.length ? errors.join(', ') : 'invalid bearer token');
  }
}

export class AuthenticatorChain {
  constructor(
    private readonly methods: RequestAuthenticator[],
    private readonly anonymous: boolean,
    private readonly apiAudiences: string[] = [],
  ) {}

  async authenticate(req: Req): Promise<UserInfo> {
    const auds = this.apiAudiences.length ? this.apiAudiences : undefined;
    let failed = false;
    for (const m of this.methods) {
      let r: AuthResponse | null;
      try {
        r = await m.authenticate(req, auds);
      } catch {
        failed = true;
        continue;
      }
      if (!r) continue;
      if (auds && r.audiences?.length && !intersect(auds, r.audiences).length) throw unauthorized();
      return withAuthenticatedGroup(r.user);
    }
    if (failed || !this.anonymous) throw unauthorized();
    return ANONYMOUS;
  }
}
