// Service-account JWTs: issuing (claims as pkg/serviceaccount builds them,
// signed with the issuer's key) and authenticating them — bound tokens of our
// issuers (audiences, expiry with a minute of leeway, the service account and
// the bound pod/secret/node must still exist with the same uid) and legacy
// secret-based tokens (iss "kubernetes/serviceaccount", checked against their
// Secret with --service-account-lookup).
import { randomUUID, type KeyObject } from 'node:crypto';
import { isStatusError } from '../../../shared/api/status';
import { systemContext, type UserInfo } from '../../registry/context';
import type { Registry } from '../../registry/registry';
import { AuthError, intersect, type AuthResponse, type TokenAuthenticator } from '../authn/authenticator';
import { algorithmFor, audiencesOf, keyID, parseJWT, signJWS, verifyJWS, type ParsedJWT } from '../authn/jwt';

export const LEGACY_ISSUER = 'kubernetes/serviceaccount';
const LEEWAY_S = 60;
export const EXTRA = {
  podName: 'authentication.kubernetes.io/pod-name',
  podUID: 'authentication.kubernetes.io/pod-uid',
  nodeName: 'authentication.kubernetes.io/node-name',
  nodeUID: 'authentication.kubernetes.io/node-uid',
  credentialID: 'authentication.kubernetes.io/credential-id',
};

export const serviceAccountUser = (ns: string, name: string) => `system:serviceaccount:${ns}:${name}`;
export const serviceAccountGroups = (ns: string) => [
  'system:serviceaccounts',
  `system:serviceaccounts:${ns}`,
];

/** An object of the registry (watch cache first, then a quorum read), or null. */
export async function getObject(
  registry: Registry,
  resource: string,
  namespace: string,
  name: string,
): Promise<any | null> {
  const s = registry.preferred('', resource);
  if (!s) return null;
  const ctx = systemContext(namespace);
  for (const rv of ['0', undefined]) {
    try {
      return s.fromStorage((await s.store.reader.get(ctx, name, rv)).obj);
    } catch (err) {
      if (!isStatusError(err, 'NotFound')) throw err;
    }
  }
  return null;
}

export interface BoundRefs {
  pod?: any;
  secret?: any;
  node?: any;
}

export class TokenIssuer {
  readonly alg: string;
  readonly kid: string;
  constructor(
    private readonly key: KeyObject,
    public readonly publicKey: KeyObject,
    readonly issuer: string,
  ) {
    this.alg = algorithmFor(publicKey);
    this.kid = keyID(publicKey);
  }

  /** A bound token for the service account (claims as token.Claims makes them). */
  issue(
    sa: any,
    bound: BoundRefs,
    o: { expirationSeconds: number; warnAfterSeconds?: number; audiences: string[]; now?: number },
  ): { token: string; jti: string } {
    const now = Math.floor((o.now ?? Date.now()) / 1000);
    const jti = randomUUID();
    const ref = (x: any) => ({ name: x.metadata.name, uid: x.metadata.uid });
    const k: Record<string, unknown> = {
      namespace: sa.metadata.namespace,
      serviceaccount: ref(sa),
    };
    if (bound.pod) {
      k.pod = ref(bound.pod);
      if (bound.node) k.node = ref(bound.node);
    } else if (bound.secret) k.secret = ref(bound.secret);
    else if (bound.node) k.node = ref(bound.node);
    if (o.warnAfterSeconds) k.warnafter = now + o.warnAfterSeconds;
    const payload = {
      aud: o.audiences,
      exp: now + o.expirationSeconds,
      iat: now,
      iss: this.issuer,
      jti,
      'kubernetes.io': k,
      nbf: now,
      sub: serviceAccountUser(sa.metadata.namespace, sa.metadata.name),
    };
    return { token: signJWS({ alg: this.alg, kid: this.kid }, payload, this.key), jti };
  }
}

export interface SATokenAuthOptions {
  issuers: string[];
  keys: KeyObject[];
  apiAudiences: string[];
  /** Legacy tokens: check their Secret and service account exist (bound tokens are always checked). */
  lookup: boolean;
  registry: () => Registry;
  now?: () => number;
}

function verifySignature(jwt: ParsedJWT, keys: KeyObject[]): boolean {
  const kid = typeof jwt.header.kid === 'string' ? jwt.header.kid : undefined;
  for (const k of keys) {
    if (kid && keyID(k) !== kid) continue;
    if (verifyJWS(jwt, k)) return true;
  }
  // A kid we do not know: try every key (other issuers' kid schemes).
  return !!kid && keys.some((k) => verifyJWS(jwt, k));
}

export class ServiceAccountTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'serviceaccount';
  constructor(private readonly o: SATokenAuthOptions) {}

  private nowSec(): number {
    return (this.o.now ?? Date.now)() / 1000;
  }

  async authenticateToken(token: string, requested: string[] | undefined): Promise<AuthResponse | null> {
    const jwt = parseJWT(token);
    if (!jwt) return null;
    const iss = jwt.payload.iss;
    const legacy = iss === LEGACY_ISSUER;
    if (!legacy && !this.o.issuers.includes(iss)) return null;
    if (!this.o.keys.length) return null;
    if (!verifySignature(jwt, this.o.keys))
      throw new AuthError('invalid bearer token, service account token signature is invalid');

    // Audiences: a token without any is only good for the API audiences.
    let tokenAuds = audiencesOf(jwt.payload.aud);
    if (!tokenAuds.length) tokenAuds = this.o.apiAudiences;
    const want = requested ?? this.o.apiAudiences;
    const auds = intersect(tokenAuds, want);
    if (!auds.length && this.o.apiAudiences.length)
      throw new AuthError(
        `token audiences ${JSON.stringify(tokenAuds)} is invalid for the target audiences ${JSON.stringify(want)}`,
      );
    const user = legacy ? await this.legacy(jwt, token) : await this.bound(jwt);
    return { user, audiences: auds };
  }

  private deletedLongAgo(obj: any): boolean {
    const ts = obj?.metadata?.deletionTimestamp;
    return !!ts && Date.parse(ts) / 1000 < this.nowSec() - LEEWAY_S;
  }

  private async bound(jwt: ParsedJWT): Promise<UserInfo> {
    const c = jwt.payload;
    const now = this.nowSec();
    if (typeof c.exp === 'number' && now > c.exp + LEEWAY_S)
      throw new AuthError('service account token has expired');
    if (typeof c.nbf === 'number' && now + LEEWAY_S < c.nbf)
      throw new AuthError('service account token is not valid yet');
    const k = c['kubernetes.io'];
    if (!k || typeof k !== 'object' || !k.namespace || !k.serviceaccount?.name)
      throw new AuthError('service account token claims could not be retrieved');
    const ns: string = k.namespace;
    const registry = this.o.registry();
    const sa = await getObject(registry, 'serviceaccounts', ns, k.serviceaccount.name);
    if (!sa) throw new AuthError(`serviceaccounts ${JSON.stringify(k.serviceaccount.name)} not found`);
    if (sa.metadata.uid !== k.serviceaccount.uid)
      throw new AuthError(
        `service account UID (${sa.metadata.uid}) does not match claim (${k.serviceaccount.uid})`,
      );
    if (this.deletedLongAgo(sa)) throw new AuthError('service account has been deleted');
    const extra: Record<string, string[]> = {};
    if (k.secret) {
      const secret = await getObject(registry, 'secrets', ns, k.secret.name);
      if (!secret) throw new AuthError(`secrets ${JSON.stringify(k.secret.name)} not found`);
      if (secret.metadata.uid !== k.secret.uid)
        throw new AuthError(
          `secret UID (${secret.metadata.uid}) does not match service account secret ref claim (${k.secret.uid})`,
        );
      if (this.deletedLongAgo(secret)) throw new AuthError('secret has been deleted');
    }
    if (k.pod) {
      const pod = await getObject(registry, 'pods', ns, k.pod.name);
      if (!pod) throw new AuthError(`pods ${JSON.stringify(k.pod.name)} not found`);
      if (pod.metadata.uid !== k.pod.uid)
        throw new AuthError(
          `pod UID (${pod.metadata.uid}) does not match service account pod ref claim (${k.pod.uid})`,
        );
      if (this.deletedLongAgo(pod)) throw new AuthError('pod has been deleted');
      extra[EXTRA.podName] = [k.pod.name];
      extra[EXTRA.podUID] = [k.pod.uid];
    }
    if (k.node) {
      if (!k.pod) {
        const node = await getObject(registry, 'nodes', '', k.node.name);
        if (!node) throw new AuthError(`nodes ${JSON.stringify(k.node.name)} not found`);
        if (node.metadata.uid !== k.node.uid)
          throw new AuthError(
            `node UID (${node.metadata.uid}) does not match service account node ref claim (${k.node.uid})`,
          );
        if (this.deletedLongAgo(node)) throw new AuthError('node has been deleted');
      }
      extra[EXTRA.nodeName] = [k.node.name];
      if (k.node.uid) extra[EXTRA.nodeUID] = [k.node.uid];
    }
    if (typeof c.jti === 'string' && c.jti) extra[EXTRA.credentialID] = [`JTI=${c.jti}`];
    return {
      name: serviceAccountUser(ns, k.serviceaccount.name),
      uid: sa.metadata.uid,
      groups: serviceAccountGroups(ns),
      ...(Object.keys(extra).length ? { extra } : {}),
    };
  }

  private async legacy(jwt: ParsedJWT, token: string): Promise<UserInfo> {
    const c = jwt.payload;
    const ns = c['kubernetes.io/serviceaccount/namespace'];
    const secretName = c['kubernetes.io/serviceaccount/secret.name'];
    const saName = c['kubernetes.io/serviceaccount/service-account.name'];
    const saUID = c['kubernetes.io/serviceaccount/service-account.uid'];
    if (!ns || !secretName || !saName || !saUID)
      throw new AuthError('service account token claims could not be retrieved');
    if (c.sub !== serviceAccountUser(ns, saName))
      throw new AuthError('sub claim is not a service account user');
    if (this.o.lookup) {
      const registry = this.o.registry();
      const secret = await getObject(registry, 'secrets', ns, secretName);
      if (!secret) throw new AuthError('Token has been invalidated');
      if (secret.metadata.deletionTimestamp) throw new AuthError('Token has been invalidated');
      const stored = secret.data?.token ? Buffer.from(secret.data.token, 'base64').toString('utf8') : '';
      if (stored !== token) throw new AuthError("Token does not match server's copy");
      const sa = await getObject(registry, 'serviceaccounts', ns, saName);
      if (!sa || sa.metadata.deletionTimestamp) throw new AuthError('ServiceAccount has been deleted');
      if (sa.metadata.uid !== saUID)
        throw new AuthError(`ServiceAccount UID (${sa.metadata.uid}) does not match claim (${saUID})`);
    }
    return { name: serviceAccountUser(ns, saName), uid: saUID, groups: serviceAccountGroups(ns) };
  }
}
