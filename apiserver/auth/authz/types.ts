// What authorizers decide on, and what they answer: Kubernetes' authorizer.Attributes,
// Decision (allow / deny / no opinion) and the rule-listing side (RuleResolver)
// that SelfSubjectRulesReview and `kubectl auth can-i --list` read.
import type { UserInfo } from '../../registry/context';
import type { AuthzAttributes, AuthzResult } from '../../../shared/cel/library/authz';
import type { RequestInfo } from '../../endpoints/request-info';
import type { Req } from '../../server/http';

/**
 * Kubernetes' authorizer.Attributes and an authorizer's answer. They are defined beside
 * CEL's authz library (shared/cel), which asks the same chain from admission policies.
 */
export type Attributes = AuthzAttributes;
export { nonResourceAttributes } from '../../../shared/cel/library/authz';
export type Decision = AuthzResult['decision'];
export type AuthorizerResult = AuthzResult;

export interface ResourceRule {
  verbs: string[];
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
}

export interface NonResourceRule {
  verbs: string[];
  nonResourceURLs: string[];
}

export interface RulesResult {
  resourceRules: ResourceRule[];
  nonResourceRules: NonResourceRule[];
  incomplete: boolean;
  error?: string;
}

export interface Authorizer {
  readonly name: string;
  authorize(a: Attributes): AuthorizerResult | Promise<AuthorizerResult>;
  /** Lists what the user may do in a namespace (RuleResolver); absent: the authorizer lists nothing. */
  rulesFor?(user: UserInfo, namespace: string): RulesResult | Promise<RulesResult>;
}

export const ALLOW: AuthorizerResult = Object.freeze({ decision: 'allow', reason: '' }) as AuthorizerResult;
export const NO_OPINION: AuthorizerResult = Object.freeze({
  decision: 'noopinion',
  reason: '',
}) as AuthorizerResult;

export const noOpinion = (reason: string): AuthorizerResult => ({ decision: 'noopinion', reason });

const READ_ONLY = new Set(['get', 'list', 'watch']);
export const isReadOnly = (a: Attributes) => READ_ONLY.has(a.verb);

/** The attributes of an HTTP request (the selectors only for collection reads, where they matter). */
export function attributesOf(user: UserInfo, info: RequestInfo, req?: Req): Attributes {
  const a: Attributes = {
    user,
    verb: info.verb,
    isResourceRequest: info.isResourceRequest,
    path: info.path,
    namespace: info.namespace,
    apiGroup: info.apiGroup,
    apiVersion: info.apiVersion,
    resource: info.resource,
    subresource: info.subresource,
    name: info.name,
  };
  if (
    req &&
    info.isResourceRequest &&
    (info.verb === 'list' || info.verb === 'watch' || info.verb === 'deletecollection')
  ) {
    const url = req.url ?? '';
    const qi = url.indexOf('?');
    if (qi >= 0) {
      const q = new URLSearchParams(url.slice(qi + 1));
      a.fieldSelector = q.get('fieldSelector') ?? undefined;
      a.labelSelector = q.get('labelSelector') ?? undefined;
    }
  }
  return a;
}
