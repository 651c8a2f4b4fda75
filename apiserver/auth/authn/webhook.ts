// Webhook token authentication (--authentication-token-webhook-config-file):
// bearer tokens are sent to a remote service as TokenReviews (v1 or v1beta1);
// answers, good and bad, are cached for --authentication-token-webhook-cache-ttl.
import { createHash } from 'node:crypto';
import { AuthError, intersect, type AuthResponse, type TokenAuthenticator } from './authenticator';
import { TTLCache, WebhookClient } from '../webhook-client';

export interface WebhookTokenOptions {
  configFile: string;
  version: 'v1' | 'v1beta1';
  cacheTTLMs: number;
  /** The API audiences (implicit audiences of the webhook's answers). */
  implicitAudiences: string[];
}

type Cached = { ok: true; response: AuthResponse } | { ok: false; error?: string };

export class WebhookTokenAuthenticator implements TokenAuthenticator {
  readonly name = 'webhook';
  private readonly client: WebhookClient;
  private readonly cache = new TTLCache<Cached>();
  /** Reviews sent (tests read it to see the cache at work). */
  calls = 0;

  constructor(private readonly o: WebhookTokenOptions) {
    this.client = new WebhookClient(o.configFile);
  }

  private async review(token: string, wantAuds: string[] | undefined): Promise<Cached> {
    let review: any;
    try {
      this.calls++;
      review = await this.client.post({
        apiVersion: `authentication.k8s.io/${this.o.version}`,
        kind: 'TokenReview',
        metadata: { creationTimestamp: null },
        spec: { token, ...(wantAuds?.length ? { audiences: wantAuds } : {}) },
        status: { user: {} },
      });
    } catch (err) {
      return { ok: false, error: (err as Error).message };
    }
    const status = review?.status ?? {};
    let audiences: string[] | undefined;
    if (wantAuds) {
      const got: string[] =
        Array.isArray(status.audiences) && status.audiences.length
          ? status.audiences
          : this.o.implicitAudiences;
      audiences = intersect(wantAuds, got);
      if (!audiences.length) return { ok: false };
    }
    if (status.authenticated !== true)
      return { ok: false, error: status.error ? String(status.error) : undefined };
    const u = status.user ?? {};
    return {
      ok: true,
      response: {
        user: {
          name: u.username ?? '',
          ...(u.uid ? { uid: u.uid } : {}),
          groups: Array.isArray(u.groups) ? u.groups : [],
          ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
        },
        ...(audiences ? { audiences } : {}),
      },
    };
  }

  async authenticateToken(token: string, audiences: string[] | undefined): Promise<AuthResponse | null> {
    const key = createHash('sha256')
      .update(JSON.stringify(audiences ?? null))
      .update('\u0000')
      .update(token)
      .digest('base64');
    let r = this.cache.get(key);
    if (!r) {
      r = await this.review(token, audiences);
      this.cache.set(key, r, this.o.cacheTTLMs);
    }
    if (r.ok) return r.response;
    if (r.error) throw new AuthError(r.error);
    return null;
  }

  close(): void {
    this.client.close();
  }
}
