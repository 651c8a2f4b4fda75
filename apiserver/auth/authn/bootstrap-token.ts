// Bootstrap tokens (--enable-bootstrap-token-auth): "<token-id>.<token-secret>"
// matching a Secret "bootstrap-token-<token-id>" of type
// bootstrap.kubernetes.io/token in kube-system that allows authentication and
// has not expired. The user is system:bootstrap:<token-id>, in
// system:bootstrappers plus the secret's auth-extra-groups.
import { timingSafeEqual } from 'node:crypto';
import { isStatusError } from '../../../shared/api/status';
import { logger } from '../../../shared/log';
import { systemContext } from '../../registry/context';
import type { Registry } from '../../registry/registry';
import type { AuthResponse, TokenAuthenticator } from './authenticator';

const log = logger('auth/bootstrap-token');

const TOKEN = /^([a-z0-9]{6})\.([a-z0-9]{16})$/;
const EXTRA_GROUP = /^system:bootstrappers:[a-z0-9:-]{0,255}[a-z0-9]$/;
export const BOOTSTRAP_SECRET_TYPE = 'bootstrap.kubernetes.io/token';

/** A secret's value: data is base64, stringData (not yet folded in) is plain. */
function secretValue(secret: any, key: string): string {
  const d = secret.data?.[key];
  if (typeof d === 'string') return Buffer.from(d, 'base64').toString('utf8');
  const s = secret.stringData?.[key];
  return typeof s === 'string' ? s : '';
}

function sameString(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

export class BootstrapTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'bootstrap-token';
  constructor(
    private readonly registry: () => Registry,
    private readonly now: () => Date = () => new Date(),
  ) {}

  private async secret(name: string): Promise<any | null> {
    const s = this.registry().preferred('', 'secrets');
    if (!s) return null;
    const ctx = systemContext('kube-system');
    for (const rv of ['0', undefined]) {
      try {
        return s.fromStorage((await s.store.reader.get(ctx, name, rv)).obj);
      } catch (err) {
        if (!isStatusError(err, 'NotFound')) throw err;
      }
    }
    return null;
  }

  async authenticateToken(token: string): Promise<AuthResponse | null> {
    const m = TOKEN.exec(token);
    if (!m) return null;
    const [, id, secretPart] = m;
    const name = `bootstrap-token-${id}`;
    const secret = await this.secret(name);
    const bad = (why: string) => {
      log.v(3)?.info(`bootstrap secret kube-system/${name} ${why}`);
      return null;
    };
    if (!secret) return bad('not found');
    if (secret.metadata?.deletionTimestamp) return bad('is deleted and awaiting removal');
    if (secret.type !== BOOTSTRAP_SECRET_TYPE || (!secret.data && !secret.stringData))
      return bad(`has invalid type, expected ${BOOTSTRAP_SECRET_TYPE}.`);
    if (!sameString(secretValue(secret, 'token-secret'), secretPart))
      return bad('has invalid value for key token-secret.');
    if (secretValue(secret, 'token-id') !== id) return bad('has invalid value for key token-id.');
    const exp = secretValue(secret, 'expiration');
    if (exp) {
      const t = Date.parse(exp);
      if (Number.isNaN(t) || t < this.now().getTime()) return bad('has expired.');
    }
    if (secretValue(secret, 'usage-bootstrap-authentication') !== 'true')
      return bad('not marked usage-bootstrap-authentication=true.');
    const groups = new Set(['system:bootstrappers']);
    const extra = secretValue(secret, 'auth-extra-groups');
    if (extra) {
      for (const g of extra.split(',')) {
        const group = g.trim();
        if (!group) continue;
        if (!EXTRA_GROUP.test(group)) return bad('has invalid value for key auth-extra-groups.');
        groups.add(group);
      }
    }
    return { user: { name: `system:bootstrap:${id}`, groups: [...groups].sort() } };
  }
}
