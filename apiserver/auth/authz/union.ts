// The authorizer chain (--authorization-mode, in order): the first "allow" or
// "deny" wins, "no opinion" asks the next; and the 403 Kubernetes answers when
// no one allowed the request, in its words.
import { StatusError, internalError } from '../../../shared/api/status';
import type { UserInfo } from '../../registry/context';
import {
  ALLOW,
  type Attributes,
  type Authorizer,
  type AuthorizerResult,
  type NonResourceRule,
  type ResourceRule,
  type RulesResult,
} from './types';

/** The reasons and errors of the authorizers that had no opinion: the chain's answer when nobody decided. */
class NoOpinions {
  private readonly reasons: string[] = [];
  private readonly errors: string[] = [];
  add(r: AuthorizerResult): void {
    if (r.reason) this.reasons.push(r.reason);
    if (r.error) this.errors.push(r.error);
  }
  result(): AuthorizerResult {
    const e = this.errors;
    return {
      decision: 'noopinion',
      reason: this.reasons.join('\n'),
      ...(e.length ? { error: e.length === 1 ? e[0] : `[${e.join(', ')}]` } : {}),
    };
  }
}

export class UnionAuthorizer implements Authorizer {
  readonly name = 'union';
  constructor(readonly authorizers: Authorizer[]) {}

  async authorize(a: Attributes): Promise<AuthorizerResult> {
    const seen = new NoOpinions();
    for (const z of this.authorizers) {
      let r = z.authorize(a);
      if (r instanceof Promise) r = await r;
      if (r.decision !== 'noopinion') return r;
      seen.add(r);
    }
    return seen.result();
  }

  /**
   * The chain's answer when every authorizer asked answers at once (CEL's authz library
   * evaluates synchronously); undefined when one can only answer asynchronously (a webhook).
   */
  authorizeSync(a: Attributes): AuthorizerResult | undefined {
    const seen = new NoOpinions();
    for (const z of this.authorizers) {
      const r = z.authorize(a);
      if (r instanceof Promise) {
        r.catch(() => {});
        return undefined;
      }
      if (r.decision !== 'noopinion') return r;
      seen.add(r);
    }
    return seen.result();
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    const resourceRules: ResourceRule[] = [];
    const nonResourceRules: NonResourceRule[] = [];
    const errors: string[] = [];
    let incomplete = false;
    for (const z of this.authorizers) {
      if (!z.rulesFor) continue;
      const r = await z.rulesFor(user, namespace);
      resourceRules.push(...r.resourceRules);
      nonResourceRules.push(...r.nonResourceRules);
      if (r.incomplete) incomplete = true;
      if (r.error) errors.push(r.error);
    }
    return {
      resourceRules,
      nonResourceRules,
      incomplete,
      ...(errors.length ? { error: errors.length === 1 ? errors[0] : `[${errors.join(', ')}]` } : {}),
    };
  }
}

/** system:masters may do anything, before any configured mode (kube-apiserver's superuser authorizer). */
export class PrivilegedGroups implements Authorizer {
  readonly name = 'privileged-groups';
  constructor(private readonly groups: string[]) {}
  authorize(a: Attributes): AuthorizerResult {
    for (const g of a.user.groups) if (this.groups.includes(g)) return ALLOW;
    return { decision: 'noopinion', reason: '' };
  }
}

export class AlwaysAllow implements Authorizer {
  readonly name = 'AlwaysAllow';
  authorize(): AuthorizerResult {
    return ALLOW;
  }
  rulesFor(): RulesResult {
    return {
      resourceRules: [{ verbs: ['*'], apiGroups: ['*'], resources: ['*'] }],
      nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      incomplete: false,
    };
  }
}

export class AlwaysDeny implements Authorizer {
  readonly name = 'AlwaysDeny';
  authorize(): AuthorizerResult {
    return { decision: 'noopinion', reason: 'Everything is forbidden.' };
  }
  rulesFor(): RulesResult {
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

/** responsewriters.forbiddenMessage. */
export function forbiddenMessage(a: Attributes): string {
  const user = JSON.stringify(a.user?.name ?? '');
  if (!a.isResourceRequest) return `User ${user} cannot ${a.verb} path ${JSON.stringify(a.path)}`;
  const resource = a.subresource ? `${a.resource}/${a.subresource}` : a.resource;
  const where = a.namespace ? `in the namespace ${JSON.stringify(a.namespace)}` : 'at the cluster scope';
  return `User ${user} cannot ${a.verb} resource ${JSON.stringify(resource)} in API group ${JSON.stringify(a.apiGroup)} ${where}`;
}

/** apierrors.NewForbidden: "<resource>[.<group>] [\"name\"] is forbidden: <why>", or "forbidden: <why>". */
export function newForbidden(group: string, resource: string, name: string, why: string): StatusError {
  if (!group && !resource) return new StatusError(403, 'Forbidden', `forbidden: ${why}`, {});
  const gr = group ? `${resource}.${group}` : resource;
  const what = name ? `${gr} ${JSON.stringify(name)}` : gr;
  const details: Record<string, string> = {};
  if (name) details.name = name;
  if (group) details.group = group;
  details.kind = resource;
  return new StatusError(403, 'Forbidden', `${what} is forbidden: ${why}`, details);
}

/** The 403 of a request no authorizer allowed (responsewriters.Forbidden). */
export function forbiddenError(a: Attributes, reason: string): StatusError {
  const msg = forbiddenMessage(a);
  const why = reason ? `${msg}: ${reason}` : msg;
  if (!a.isResourceRequest) return newForbidden('', '', '', why);
  return newForbidden(a.apiGroup, a.resource, a.name, why);
}

/** Throws unless allowed: 403, or 500 when an authorizer failed to evaluate and no one allowed. */
export function enforce(a: Attributes, r: AuthorizerResult): void {
  if (r.decision === 'allow') return;
  if (r.error) throw internalError(new Error(r.error));
  throw forbiddenError(a, r.reason);
}
