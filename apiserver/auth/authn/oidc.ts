// OpenID Connect ID tokens (--oidc-*): the issuer's discovery document and key
// set are fetched over HTTPS (trusting --oidc-ca-file when given); a token of
// that issuer must be signed with an allowed algorithm by one of its keys, be
// for the client id and not expired, carry the required claims, and name the
// user in the username claim (prefixed per --oidc-username-prefix).
import https from 'node:https';
import type { KeyObject } from 'node:crypto';
import { logger } from '../../../shared/log';
import { AuthError, type AuthResponse, type TokenAuthenticator } from './authenticator';
import { audiencesOf, keyFromJWK, parseJWT, verifyJWS } from './jwt';

const log = logger('auth/oidc');

export interface OIDCOptions {
  issuerURL: string;
  clientID: string;
  caPem?: string;
  usernameClaim: string;
  /** undefined: the flag was not given. */
  usernamePrefix?: string;
  groupsClaim?: string;
  groupsPrefix?: string;
  requiredClaims: Record<string, string>;
  signingAlgs: string[];
  now?: () => number;
}

interface Key {
  kid?: string;
  key: KeyObject;
}

/** The flag rules for the username prefix: "-" none; unset: issuer# unless the claim is email. */
export function usernamePrefix(o: OIDCOptions): string {
  if (o.usernamePrefix === '-') return '';
  if (o.usernamePrefix === undefined || o.usernamePrefix === '')
    return o.usernameClaim === 'email' ? '' : `${o.issuerURL}#`;
  return o.usernamePrefix;
}

export class OIDCAuthenticator implements TokenAuthenticator {
  readonly name = 'oidc';
  private keys: Key[] = [];
  private jwksURI = '';
  private initializing: Promise<void> | null = null;
  private initialized = false;
  private lastRefresh = 0;
  private readonly agent: https.Agent;
  private readonly prefix: string;
  private stopped = false;
  private retry: NodeJS.Timeout | null = null;

  constructor(private readonly o: OIDCOptions) {
    const u = new URL(o.issuerURL);
    if (u.protocol !== 'https:') throw new Error(`oidc-issuer-url (${o.issuerURL}) must use https scheme`);
    if (!o.clientID) throw new Error('oidc-client-id must be specified if oidc-issuer-url is set');
    this.agent = new https.Agent({ keepAlive: true, ...(o.caPem ? { ca: o.caPem } : {}) });
    this.prefix = usernamePrefix(o);
  }

  private get(url: string): Promise<any> {
    return new Promise((resolve, reject) => {
      const req = https.get(
        url,
        { agent: this.agent, timeout: 10_000, headers: { accept: 'application/json' } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => {
            if ((res.statusCode ?? 0) !== 200) return reject(new Error(`${res.statusCode}: ${url}`));
            try {
              resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
            } catch (err) {
              reject(err);
            }
          });
          res.on('error', reject);
        },
      );
      req.on('timeout', () => req.destroy(new Error(`timeout fetching ${url}`)));
      req.on('error', reject);
    });
  }

  private async refreshKeys(): Promise<void> {
    const set = await this.get(this.jwksURI);
    const keys: Key[] = [];
    for (const jwk of set?.keys ?? []) {
      const key = keyFromJWK(jwk);
      if (key) keys.push({ kid: typeof jwk.kid === 'string' ? jwk.kid : undefined, key });
    }
    this.keys = keys;
    this.lastRefresh = Date.now();
  }

  private async discover(): Promise<void> {
    const wellKnown = `${this.o.issuerURL.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    const doc = await this.get(wellKnown);
    if (doc?.issuer !== this.o.issuerURL)
      throw new Error(
        `oidc: issuer did not match the issuer returned by provider, expected ${JSON.stringify(this.o.issuerURL)} got ${JSON.stringify(doc?.issuer)}`,
      );
    if (typeof doc.jwks_uri !== 'string') throw new Error('oidc: discovery document has no jwks_uri');
    this.jwksURI = doc.jwks_uri;
    await this.refreshKeys();
    this.initialized = true;
  }

  /** Starts discovery; retries in the background until it succeeds. */
  init(): Promise<void> {
    this.initializing ??= new Promise<void>((resolve) => {
      const attempt = (delay: number) => {
        if (this.stopped) return resolve();
        this.discover()
          .then(resolve)
          .catch((err) => {
            log.warn('oidc authenticator: initializing plugin', { err: String(err) });
            this.retry = setTimeout(() => attempt(Math.min(delay * 2, 10_000)), delay);
            this.retry.unref?.();
          });
      };
      attempt(250);
    });
    return this.initializing;
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.agent.destroy();
  }

  async authenticateToken(token: string): Promise<AuthResponse | null> {
    const jwt = parseJWT(token);
    if (!jwt || jwt.payload.iss !== this.o.issuerURL) return null;
    if (!this.initialized) {
      await Promise.race([this.init(), new Promise((r) => setTimeout(r, 5000).unref?.())]);
      if (!this.initialized) throw new AuthError('oidc: authenticator not initialized');
    }
    const alg = jwt.header.alg;
    if (!this.o.signingAlgs.includes(alg))
      throw new AuthError(
        `oidc: verify token: oidc: id token signed with unsupported algorithm, expected ${JSON.stringify(this.o.signingAlgs)} got ${JSON.stringify(alg)}`,
      );
    const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : undefined;
    const candidates = () => this.keys.filter((k) => !kid || !k.kid || k.kid === kid);
    let ok = candidates().some((k) => verifyJWS(jwt, k.key));
    if (!ok && Date.now() - this.lastRefresh > 10_000) {
      // Keys rotate: fetch the set again (at most every 10s).
      await this.refreshKeys().catch(() => undefined);
      ok = candidates().some((k) => verifyJWS(jwt, k.key));
    }
    if (!ok)
      throw new AuthError(
        'oidc: verify token: failed to verify signature: failed to verify id token signature',
      );
    const claims = jwt.payload;
    const auds = audiencesOf(claims.aud);
    if (!auds.includes(this.o.clientID))
      throw new AuthError(
        `oidc: verify token: oidc: expected audience ${JSON.stringify(this.o.clientID)} got ${JSON.stringify(auds)}`,
      );
    const now = (this.o.now ?? Date.now)() / 1000;
    if (typeof claims.exp !== 'number' || claims.exp < now)
      throw new AuthError(
        `oidc: verify token: oidc: token is expired (Token Expiry: ${typeof claims.exp === 'number' ? new Date(claims.exp * 1000).toISOString() : 'none'})`,
      );
    if (typeof claims.nbf === 'number' && claims.nbf > now + 60)
      throw new AuthError('oidc: verify token: oidc: current time is before the nbf (not before) time');
    for (const [k, want] of Object.entries(this.o.requiredClaims)) {
      if (!(k in claims)) throw new AuthError(`oidc: required claim ${k} not present in ID token`);
      if (claims[k] !== want)
        throw new AuthError(
          `oidc: required claim ${k} value does not match. Got = ${String(claims[k])}, want = ${want}`,
        );
    }
    const raw = claims[this.o.usernameClaim];
    if (raw === undefined)
      throw new AuthError(
        `oidc: parse username claims ${JSON.stringify(this.o.usernameClaim)}: claim not present`,
      );
    if (typeof raw !== 'string' || !raw)
      throw new AuthError(
        `oidc: parse username claims ${JSON.stringify(this.o.usernameClaim)}: claim is not a string`,
      );
    if (this.o.usernameClaim === 'email' && 'email_verified' in claims && claims.email_verified !== true)
      throw new AuthError('oidc: email not verified');
    let groups: string[] = [];
    if (this.o.groupsClaim && claims[this.o.groupsClaim] !== undefined) {
      const g = claims[this.o.groupsClaim];
      if (typeof g === 'string') groups = [g];
      else if (Array.isArray(g) && g.every((x) => typeof x === 'string')) groups = g;
      else
        throw new AuthError(
          `oidc: parse groups claim ${JSON.stringify(this.o.groupsClaim)}: not a string or list of strings`,
        );
      const gp = this.o.groupsPrefix ?? '';
      groups = groups.map((x) => gp + x);
    }
    return { user: { name: this.prefix + raw, groups } };
  }
}
