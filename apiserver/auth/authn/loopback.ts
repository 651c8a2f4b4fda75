// The apiserver's own loopback client (kube-apiserver's AuthorizeClientBearerToken): a random
// bearer token made at start and kept in memory, authenticated as system:apiserver in
// system:masters. In-process clients (the embedded controller manager) use it, so no
// certificate authority is needed to talk to oneself.
import { randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import type { UserInfo } from '../../registry/context';
import type { AuthResponse, TokenAuthenticator } from './authenticator';

export const APISERVER_USER = 'system:apiserver';

export class LoopbackTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'loopback';
  readonly token = randomBytes(32).toString('base64url');
  private readonly expected = Buffer.from(this.token);
  private readonly user: UserInfo = {
    name: APISERVER_USER,
    uid: randomUUID(),
    groups: ['system:authenticated', 'system:masters'],
  };

  authenticateToken(token: string): AuthResponse | null {
    const given = Buffer.from(token);
    if (given.length !== this.expected.length || !timingSafeEqual(given, this.expected)) return null;
    return { user: { ...this.user, groups: [...this.user.groups] } };
  }
}
