// What authorizers decide on, and what they answer: Kubernetes' authorizer.Attributes,
// Decision (allow / deny / no opinion) and the rule-listing side (RuleResolver)
// that SelfSubjectRulesReview and `kubectl auth can-i --list` read.
import type { UserInfo } from '../../registry/context';
import type { RequestInfo } from '../../endpoints/request-info';
import type { Req } from '../../server/http';

export interface Attributes {
  user: UserInfo;
  verb: string;
  isResourceRequest: boolean;
  /** The URL path of a non-resource request. */
  path: string;
  namespace: string;
  apiGroup: string;
  apiVersion: string;
  resource: string;
  subresource: string;
  name: string;
  /** Raw fieldSelector of list/watch/deletecollection requests (the Node authorizer reads spec.nodeName). */
  fieldSelector?: string;
  labelSelector?: string;
}

export type Decision = 'allow' | 'deny' | 'noopinion';

export interface AuthorizerResult {
  decision: Decision;
  reason: string;
  /** An evaluation error (webhook unreachable ...): the request fails with 500 unless someone allows it. */
  error?: string;
}

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
