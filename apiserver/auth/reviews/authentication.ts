// The authentication.k8s.io review APIs (create-only, stored nowhere):
// TokenReview (is this bearer token good, for these audiences, and whose is it)
// and SelfSubjectReview (who am I: `kubectl auth whoami`).
import { badRequest, internalError } from '../../../shared/api/status';
import type { RequestContext, UserInfo } from '../../registry/context';
import { rfc3339 } from '../../../shared/api/validation/gotime';
import type { ResourceBehaviour } from '../../registry/registry';
import { intersect, type TokenUnion } from '../authn/authenticator';

const GROUP = 'authentication.k8s.io';

export function userInfoOf(u: UserInfo): Record<string, unknown> {
  return {
    username: u.name,
    ...(u.uid ? { uid: u.uid } : {}),
    ...(u.groups.length ? { groups: u.groups } : {}),
    ...(u.extra && Object.keys(u.extra).length ? { extra: u.extra } : {}),
  };
}

export function authenticationReviews(o: {
  tokens: () => TokenUnion | undefined;
  apiAudiences: string[];
}): Record<string, ResourceBehaviour> {
  return {
    [`${GROUP}/tokenreviews`]: {
      virtual: {
        async create(_ctx: RequestContext, body: any) {
          const token = body.spec?.token;
          if (!token) throw badRequest('token is required for TokenReview in authentication');
          const requested: string[] = Array.isArray(body.spec?.audiences) ? body.spec.audiences : [];
          const auds = requested.length ? requested : o.apiAudiences;
          const union = o.tokens();
          const { response, errors } = union
            ? await union.authenticateToken(token, auds.length ? auds : undefined)
            : { response: null, errors: [] as string[] };
          if (auds.length && response && !intersect(auds, response.audiences ?? []).length)
            throw internalError(new Error('error validating audience'));
          const status: Record<string, unknown> = {};
          if (response) {
            status.authenticated = true;
            status.user = userInfoOf(response.user);
            if (response.audiences?.length) status.audiences = response.audiences;
          } else {
            status.user = {};
            status.error = errors.length ? errors.join(', ') : 'invalid bearer token';
          }
          return {
            kind: 'TokenReview',
            apiVersion: body.apiVersion,
            metadata: { creationTimestamp: null },
            spec: body.spec,
            status,
          };
        },
      },
    },
    [`${GROUP}/selfsubjectreviews`]: {
      virtual: {
        async create(ctx: RequestContext, body: any) {
          return {
            kind: 'SelfSubjectReview',
            apiVersion: body.apiVersion,
            metadata: { creationTimestamp: rfc3339(ctx.now()) },
            status: { userInfo: userInfoOf(ctx.user) },
          };
        },
      },
    },
  };
}
