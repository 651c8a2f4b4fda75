// The authorization.k8s.io review APIs (create-only, stored nowhere):
// SubjectAccessReview, LocalSubjectAccessReview, SelfSubjectAccessReview and
// SelfSubjectRulesReview, answered by the server's own authorizer chain.
import { badRequest, invalid } from '../../../shared/api/status';
import type { FieldError } from '../../../shared/api/field-errors';
import type { RequestContext, UserInfo } from '../../registry/context';
import type { ResourceBehaviour } from '../../registry/registry';
import { nonResourceAttributes, type Attributes, type Authorizer } from '../authz/types';

const GROUP = 'authorization.k8s.io';

function invalidReview(kind: string, errs: FieldError[]) {
  return invalid({ group: GROUP, kind }, '', errs);
}

/** metadata must be empty (kubectl sends {creationTimestamp: null}); LSAR may carry its namespace. */
function metadataErrors(md: any, allowNamespace: boolean): FieldError[] {
  if (!md || typeof md !== 'object') return [];
  const rest: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(md)) {
    // Zero values (a decoded empty ObjectMeta) count as unset.
    if (v === null || v === undefined || v === '' || v === 0 || v === false) continue;
    if (Array.isArray(v) && v.length === 0) continue;
    if (k === 'managedFields' || (allowNamespace && k === 'namespace')) continue;
    if (typeof v === 'object' && !Array.isArray(v) && Object.keys(v as object).length === 0) continue;
    rest[k] = v;
  }
  if (!Object.keys(rest).length) return [];
  return [
    {
      type: 'FieldValueInvalid',
      field: 'metadata',
      badValue: md,
      detail: allowNamespace ? 'must be empty except for namespace' : 'must be empty',
    },
  ];
}

function specErrors(spec: any, needSubject: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ra = spec?.resourceAttributes;
  const nra = spec?.nonResourceAttributes;
  if ((ra && nra) || (!ra && !nra))
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec',
      badValue: nra ?? null,
      detail: 'exactly one of nonResourceAttributes or resourceAttributes must be specified',
    });
  if (needSubject && !spec?.user && !(spec?.groups ?? []).length)
    errs.push({
      type: 'FieldValueInvalid',
      field: 'spec.user',
      badValue: spec?.user ?? '',
      detail: 'at least one of user or group must be specified',
    });
  for (const which of ['fieldSelector', 'labelSelector'] as const) {
    const sel = ra?.[which];
    if (!sel) continue;
    const path = `spec.resourceAttributes.${which}`;
    if (sel.rawSelector && sel.requirements?.length)
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.rawSelector`,
        badValue: sel.rawSelector,
        detail: 'may not specified at the same time as requirements',
      });
    if (!sel.rawSelector && !sel.requirements?.length)
      errs.push({
        type: 'FieldValueRequired',
        field: `${path}.requirements`,
        detail: `when ${path} is specified, requirements or rawSelector is required`,
      });
  }
  return errs;
}

/** The request attributes a review spec describes. */
export function reviewAttributes(spec: any, user: UserInfo): Attributes {
  const ra = spec.resourceAttributes;
  if (ra)
    return {
      user,
      verb: ra.verb ?? '',
      isResourceRequest: true,
      path: '',
      namespace: ra.namespace ?? '',
      apiGroup: ra.group ?? '',
      apiVersion: ra.version ?? '',
      resource: ra.resource ?? '',
      subresource: ra.subresource ?? '',
      name: ra.name ?? '',
      fieldSelector: ra.fieldSelector?.rawSelector,
      labelSelector: ra.labelSelector?.rawSelector,
    };
  const nra = spec.nonResourceAttributes ?? {};
  return nonResourceAttributes(user, nra.verb ?? '', nra.path ?? '');
}

async function decide(authorizer: Authorizer, a: Attributes): Promise<Record<string, unknown>> {
  const r = await authorizer.authorize(a);
  return {
    allowed: r.decision === 'allow',
    ...(r.decision === 'deny' ? { denied: true } : {}),
    ...(r.reason ? { reason: r.reason } : {}),
    ...(r.error ? { evaluationError: r.error } : {}),
  };
}

const specUser = (spec: any): UserInfo => ({
  name: spec.user ?? '',
  groups: spec.groups ?? [],
  ...(spec.uid ? { uid: spec.uid } : {}),
  ...(spec.extra ? { extra: spec.extra } : {}),
});

function reply(body: any, status: Record<string, unknown>, metadata: Record<string, unknown> = {}) {
  return {
    kind: body.kind,
    apiVersion: body.apiVersion,
    metadata: { creationTimestamp: null, ...metadata },
    spec: body.spec ?? {},
    status,
  };
}

export function authorizationReviews(authorizer: () => Authorizer): Record<string, ResourceBehaviour> {
  return {
    [`${GROUP}/subjectaccessreviews`]: {
      virtual: {
        async create(_ctx: RequestContext, body: any) {
          const errs = [...specErrors(body.spec, true), ...metadataErrors(body.metadata, false)];
          if (errs.length) throw invalidReview('SubjectAccessReview', errs);
          return reply(body, await decide(authorizer(), reviewAttributes(body.spec, specUser(body.spec))));
        },
      },
    },
    [`${GROUP}/localsubjectaccessreviews`]: {
      virtual: {
        async create(ctx: RequestContext, body: any) {
          if (!ctx.namespace) throw badRequest(`namespace is required on this type: ${ctx.namespace}`);
          const namespace = body.metadata?.namespace || ctx.namespace;
          const errs = [...specErrors(body.spec, true), ...metadataErrors(body.metadata, true)];
          const ra = body.spec?.resourceAttributes;
          if (ra && (ra.namespace ?? '') !== namespace)
            errs.push({
              type: 'FieldValueInvalid',
              field: 'spec.resourceAttributes.namespace',
              badValue: ra.namespace ?? '',
              detail: 'must match metadata.namespace',
            });
          if (body.spec?.nonResourceAttributes)
            errs.push({
              type: 'FieldValueInvalid',
              field: 'spec.nonResourceAttributes',
              badValue: body.spec.nonResourceAttributes,
              detail: 'disallowed on this kind of request',
            });
          if (errs.length) throw invalidReview('LocalSubjectAccessReview', errs);
          return reply(body, await decide(authorizer(), reviewAttributes(body.spec, specUser(body.spec))), {
            namespace,
          });
        },
      },
    },
    [`${GROUP}/selfsubjectaccessreviews`]: {
      virtual: {
        async create(ctx: RequestContext, body: any) {
          const errs = [...specErrors(body.spec, false), ...metadataErrors(body.metadata, false)];
          if (errs.length) throw invalidReview('SelfSubjectAccessReview', errs);
          return reply(body, await decide(authorizer(), reviewAttributes(body.spec, ctx.user)));
        },
      },
    },
    [`${GROUP}/selfsubjectrulesreviews`]: {
      virtual: {
        async create(ctx: RequestContext, body: any) {
          const namespace = body.spec?.namespace ?? '';
          if (!namespace) throw badRequest('no namespace on request');
          const z = authorizer();
          const r = z.rulesFor
            ? await z.rulesFor(ctx.user, namespace)
            : { resourceRules: [], nonResourceRules: [], incomplete: true };
          // Kubernetes answers a fresh object: the spec is not echoed.
          return reply(
            { ...body, spec: {} },
            {
              resourceRules: r.resourceRules,
              nonResourceRules: r.nonResourceRules,
              incomplete: r.incomplete,
              ...(r.error ? { evaluationError: r.error } : {}),
            },
          );
        },
      },
    },
  };
}
