// Client certificates: verified against a CA bundle (chain through the
// intermediates the client sent, validity dates, client-auth usage), once per
// TLS connection. x509 users are CN (name) and O (groups); front-proxy
// certificates (--requestheader-client-ca-file, --requestheader-allowed-names)
// vouch for the user named in the --requestheader-* headers and never
// authenticate as themselves.
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';
import { subjectOf, type SubjectInfo } from '../../../shared/pki/certs';
import type { Req } from '../../server/http';
import { AuthError, tlsSocketOf, type AuthResponse, type RequestAuthenticator } from './authenticator';
import { userFromRequestHeaders, type RequestHeaderNames } from '../../../shared/auth/request-headers';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';
const ANY_USAGE = '2.5.29.37.0';

/** The PEM certificates of a bundle. */
export function splitPEM(pem: string): string[] {
  return pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
}

function validAt(c: X509Certificate, now: number): boolean {
  return Date.parse(c.validFrom) <= now && now <= Date.parse(c.validTo);
}

export class CertPool {
  readonly roots: X509Certificate[];
  constructor(pem: string) {
    this.roots = splitPEM(pem).map((p) => new X509Certificate(p));
  }

  get empty(): boolean {
    return this.roots.length === 0;
  }

  /** null when the chain verifies to one of the roots, else the reason. */
  verify(chain: X509Certificate[], now = Date.now()): string | null {
    const leaf = chain[0];
    if (!leaf) return 'no certificate';
    if (!validAt(leaf, now))
      return `x509: certificate has expired or is not yet valid: current time ${new Date(now).toISOString()} is after ${new Date(Date.parse(leaf.validTo)).toISOString()}`;
    const usages = leaf.keyUsage;
    if (usages && usages.length && !usages.includes(CLIENT_AUTH) && !usages.includes(ANY_USAGE))
      return 'x509: certificate specifies an incompatible key usage';
    let current = leaf;
    const intermediates = chain.slice(1);
    for (let depth = 0; depth < 8; depth++) {
      for (const root of this.roots) {
        if (current.fingerprint256 === root.fingerprint256 && validAt(root, now)) return null;
        if (validAt(root, now) && current.checkIssued(root) && current.verify(root.publicKey)) return null;
      }
      const next = intermediates.find(
        (i) => i.ca && validAt(i, now) && current.checkIssued(i) && current.verify(i.publicKey),
      );
      if (!next || next === current) break;
      current = next;
    }
    return 'x509: certificate signed by unknown authority';
  }
}

interface PeerInfo {
  chain: X509Certificate[];
  results: Map<CertPool, string | null>;
  /** The failure of each pool, made once: a connection's requests all fail alike. */
  errors: Map<CertPool, AuthError>;
  /** The leaf's CN and O, parsed on first use. */
  subject?: SubjectInfo;
}

const peers = new WeakMap<TLSSocket, PeerInfo>();

/** The client's certificate chain (leaf first), read once per connection. */
function peerOf(req: Req): PeerInfo | null {
  const sock = tlsSocketOf(req);
  if (!sock) return null;
  let info = peers.get(sock);
  if (!info) {
    const chain: X509Certificate[] = [];
    let c: any = sock.getPeerCertificate(true);
    const seen = new Set<string>();
    while (c && c.raw && !seen.has(c.fingerprint256)) {
      seen.add(c.fingerprint256);
      chain.push(new X509Certificate(c.raw));
      c = c.issuerCertificate;
    }
    info = { chain, results: new Map(), errors: new Map() };
    peers.set(sock, info);
  }
  return info.chain.length ? info : null;
}

const leafSubject = (info: PeerInfo): SubjectInfo =>
  (info.subject ??= subjectOf({ subject: info.chain[0].subject }));

function verified(info: PeerInfo, pool: CertPool): string | null {
  if (!info.results.has(pool)) info.results.set(pool, pool.verify(info.chain));
  return info.results.get(pool) ?? null;
}

function failure(info: PeerInfo, pool: CertPool, why: string): AuthError {
  let e = info.errors.get(pool);
  if (!e) info.errors.set(pool, (e = new AuthError(`verifying certificate failed: ${why}`)));
  return e;
}

export interface RequestHeaderOptions extends RequestHeaderNames {
  pool: CertPool;
  allowedNames: string[];
}

/** Front-proxy authentication (--requestheader-*). */
export class RequestHeaderAuthenticator implements RequestAuthenticator {
  readonly name = 'requestheader';
  constructor(private readonly o: RequestHeaderOptions) {}

  /** The client certificate is a valid front-proxy certificate. */
  isProxyCert(req: Req): boolean {
    const info = peerOf(req);
    if (!info || verified(info, this.o.pool)) return false;
    const cn = leafSubject(info).commonName;
    return !this.o.allowedNames.length || this.o.allowedNames.includes(cn);
  }

  authenticate(req: Req): AuthResponse | null {
    const info = peerOf(req);
    if (!info) return null;
    const err = verified(info, this.o.pool);
    if (err) throw failure(info, this.o.pool, err);
    const cn = leafSubject(info).commonName;
    if (this.o.allowedNames.length && !this.o.allowedNames.includes(cn))
      throw new AuthError(`x509: subject with cn=${cn} is not in the allowed list`);
    const user = userFromRequestHeaders(req.rawHeaders ?? [], this.o);
    return user ? { user } : null;
  }
}

/** Client certificates verified against --client-ca-file (and the cluster CA): CN is the user, O the groups. */
export class X509Authenticator implements RequestAuthenticator {
  readonly name = 'x509';
  constructor(
    private readonly pool: CertPool,
    private readonly proxy?: RequestHeaderAuthenticator,
  ) {}

  authenticate(req: Req): AuthResponse | null {
    const info = peerOf(req);
    if (!info) return null;
    const err = verified(info, this.pool);
    if (err) throw failure(info, this.pool, err);
    // A front-proxy certificate speaks for others, never for itself (even when one CA signs both kinds).
    if (this.proxy?.isProxyCert(req)) return null;
    const { commonName, organizations } = leafSubject(info);
    if (!commonName) return null;
    return { user: { name: commonName, groups: organizations ? [...organizations] : [] } };
  }
}
