// Authentication: each method looks at the request; the first that recognises
// credentials decides. A method returns null when the request carries no
// credentials of its kind, and throws 401 when it carries bad ones.
import type { TLSSocket } from 'node:tls';
import { unauthorized } from '../../../shared/api/status';
import type { UserInfo } from '../../registry/context';
import type { Req } from '../../server/http';
import { subjectOf } from '../../../shared/pki/certs';

export interface Authenticator {
  readonly name: string;
  authenticate(req: Req): Promise<UserInfo | null> | UserInfo | null;
}

export const ANONYMOUS: UserInfo = { name: 'system:anonymous', groups: ['system:unauthenticated'] };

/** The TLS socket of a request, for HTTP/1.1 and HTTP/2 alike. */
export function tlsSocketOf(req: Req): TLSSocket | undefined {
  const s = (req as any).stream?.session?.socket ?? req.socket;
  return s && typeof s.getPeerCertificate === 'function' ? (s as TLSSocket) : undefined;
}

/** Client certificates verified against --client-ca-file: CN is the user, O the groups. */
export class X509Authenticator implements Authenticator {
  readonly name = 'x509';
  authenticate(req: Req): UserInfo | null {
    const sock = tlsSocketOf(req);
    if (!sock) return null;
    const cert = sock.getPeerCertificate();
    if (!cert || !cert.subject) return null;
    if (!sock.authorized) throw unauthorized();
    const { commonName, organizations } = subjectOf(cert as any);
    if (!commonName) throw unauthorized();
    return { name: commonName, groups: organizations ?? [] };
  }
}

export class AuthenticatorChain {
  constructor(
    private readonly methods: Authenticator[],
    private readonly anonymous: boolean,
  ) {}

  async authenticate(req: Req): Promise<UserInfo> {
    for (const m of this.methods) {
      const u = await m.authenticate(req);
      if (u) {
        const groups = u.groups.includes('system:authenticated')
          ? u.groups
          : [...u.groups, 'system:authenticated'];
        return { ...u, groups };
      }
    }
    if (this.anonymous) return ANONYMOUS;
    throw unauthorized();
  }
}
