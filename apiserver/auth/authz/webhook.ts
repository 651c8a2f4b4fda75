// The Webhook authorizer (--authorization-webhook-config-file): each decision
// is a SubjectAccessReview POSTed to a remote service (v1 or v1beta1), cached
// for --authorization-webhook-cache-authorized-ttl when allowed and
// --authorization-webhook-cache-unauthorized-ttl otherwise.
import type { UserInfo } from '../../registry/context';
import { TTLCache, WebhookClient } from '../webhook-client';
import type { Attributes, Authorizer, AuthorizerResult, RulesResult } from './types';

export interface WebhookAuthorizerOptions {
  configFile: string;
  version: 'v1' | 'v1beta1';
  authorizedTTLMs: number;
  unauthorizedTTLMs: number;
}

export class WebhookAuthorizer implements Authorizer {
  readonly name = 'Webhook';
  private readonly client: WebhookClient;
  private readonly cache = new TTLCache<AuthorizerResult>();
  /** Reviews sent (tests read it to see the cache at work). */
  calls = 0;

  constructor(private readonly o: WebhookAuthorizerOptions) {
    this.client = new WebhookClient(o.configFile);
  }

  private spec(a: Attributes): Record<string, unknown> {
    const spec: Record<string, unknown> = a.isResourceRequest
      ? {
          resourceAttributes: {
            ...(a.namespace ? { namespace: a.namespace } : {}),
            verb: a.verb,
            group: a.apiGroup,
            version: a.apiVersion,
            resource: a.resource,
            ...(a.subresource ? { subresource: a.subresource } : {}),
            ...(a.name ? { name: a.name } : {}),
          },
        }
      : { nonResourceAttributes: { path: a.path, verb: a.verb } };
    spec.user = a.user.name;
    if (a.user.uid) spec.uid = a.user.uid;
    if (a.user.groups.length) spec[this.o.version === 'v1' ? 'groups' : 'group'] = a.user.groups;
    if (a.user.extra && Object.keys(a.user.extra).length) spec.extra = a.user.extra;
    return spec;
  }

  async authorize(a: Attributes): Promise<AuthorizerResult> {
    const spec = this.spec(a);
    const key = JSON.stringify(spec);
    const hit = this.cache.get(key);
    if (hit) return hit;
    let review: any;
    try {
      this.calls++;
      review = await this.client.post({
        apiVersion: `authorization.k8s.io/${this.o.version}`,
        kind: 'SubjectAccessReview',
        metadata: { creationTimestamp: null },
        spec,
        status: { allowed: false },
      });
    } catch (err) {
      return { decision: 'noopinion', reason: '', error: (err as Error).message };
    }
    const status = review?.status ?? {};
    const reason = typeof status.reason === 'string' ? status.reason : '';
    let result: AuthorizerResult;
    if (status.allowed === true) {
      result = { decision: 'allow', reason };
      this.cache.set(key, result, this.o.authorizedTTLMs);
    } else {
      result = { decision: status.denied === true ? 'deny' : 'noopinion', reason };
      this.cache.set(key, result, this.o.unauthorizedTTLMs);
    }
    return result;
  }

  rulesFor(_user: UserInfo, _namespace: string): RulesResult {
    // The webhook cannot list rules.
    return { resourceRules: [], nonResourceRules: [], incomplete: true };
  }

  close(): void {
    this.client.close();
  }
}
