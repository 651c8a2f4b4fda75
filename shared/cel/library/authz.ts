// Kubernetes' CEL authz library, as admission policies use it:
// `authorizer.group('apps').resource('deployments').namespace(ns).check('create').allowed()`,
// `authorizer.path('/healthz').check('get')`, `authorizer.serviceAccount(ns, name)` for
// another identity, `authorizer.requestResource` for the request's own resource, and the
// Decision's allowed(), reason(), errored() and error(). The checks ask the server's
// authorizer chain through the callback the caller gives; CEL is synchronous, so an
// authorizer that can only answer asynchronously (a webhook) makes the decision errored.
import type { Environment } from '@marcbachmann/cel-js';

export interface AuthzUser {
  name: string;
  uid?: string;
  groups: string[];
  extra?: Record<string, string[]>;
}

/** What one check asks: the authorizer chain's attributes (Kubernetes' authorizer.Attributes). */
export interface AuthzAttributes {
  user: AuthzUser;
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

/** An authorizer's answer. */
export interface AuthzResult {
  decision: 'allow' | 'deny' | 'noopinion';
  reason: string;
  /** An evaluation error (webhook unreachable ...): the request fails with 500 unless someone allows it. */
  error?: string;
}

/** The attributes of a request for a URL path (not a resource). */
export function nonResourceAttributes(user: AuthzUser, verb: string, path: string): AuthzAttributes {
  return {
    user,
    verb,
    isResourceRequest: false,
    path,
    namespace: '',
    apiGroup: '',
    apiVersion: '',
    resource: '',
    subresource: '',
    name: '',
  };
}

/** Asks the authorizer chain; undefined when it cannot answer synchronously. */
export type AuthzCheck = (a: AuthzAttributes) => AuthzResult | undefined;

export const AUTHORIZER_TYPE = 'kubernetes.authorization.Authorizer';
const PATH_CHECK = 'kubernetes.authorization.PathCheck';
const GROUP_CHECK = 'kubernetes.authorization.GroupCheck';
const RESOURCE_CHECK = 'kubernetes.authorization.ResourceCheck';
const DECISION = 'kubernetes.authorization.Decision';

interface ResourceTarget {
  group: string;
  version: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  fieldSelector?: string;
  labelSelector?: string;
}

export class CelDecision {
  constructor(readonly result: AuthzResult) {}
}

export class CelResourceCheck {
  constructor(
    readonly check: AuthzCheck,
    readonly user: AuthzUser,
    readonly target: ResourceTarget,
  ) {}
  with(change: Partial<ResourceTarget>): CelResourceCheck {
    return new CelResourceCheck(this.check, this.user, { ...this.target, ...change });
  }
}

export class CelGroupCheck {
  constructor(
    readonly check: AuthzCheck,
    readonly user: AuthzUser,
    readonly group: string,
  ) {}
}

export class CelPathCheck {
  constructor(
    readonly check: AuthzCheck,
    readonly user: AuthzUser,
    readonly path: string,
  ) {}
}

export class CelAuthorizer {
  /** The request's own resource (a field, as Kubernetes declares `authorizer.requestResource`). */
  readonly requestResource: CelResourceCheck | null;
  constructor(
    readonly check: AuthzCheck,
    readonly user: AuthzUser,
    request?: ResourceTarget,
  ) {
    this.requestResource = request ? new CelResourceCheck(check, user, request) : null;
  }
}

const NOT_SYNCHRONOUS: AuthzResult = {
  decision: 'noopinion',
  reason: '',
  error: 'the authorizer chain cannot answer while the expression is evaluated',
};

function decide(check: AuthzCheck, a: AuthzAttributes): CelDecision {
  try {
    return new CelDecision(check(a) ?? NOT_SYNCHRONOUS);
  } catch (e) {
    return new CelDecision({ decision: 'noopinion', reason: '', error: String((e as Error)?.message ?? e) });
  }
}

/** A service account's user, as its token authenticates. */
function serviceAccountUser(namespace: string, name: string): AuthzUser {
  return {
    name: `system:serviceaccount:${namespace}:${name}`,
    groups: ['system:serviceaccounts', `system:serviceaccounts:${namespace}`, 'system:authenticated'],
  };
}

export function registerAuthz(env: Environment): void {
  env.registerType(DECISION, CelDecision);
  env.registerType(RESOURCE_CHECK, CelResourceCheck);
  env.registerType(GROUP_CHECK, CelGroupCheck);
  env.registerType(PATH_CHECK, CelPathCheck);
  env.registerType(AUTHORIZER_TYPE, { ctor: CelAuthorizer, fields: { requestResource: RESOURCE_CHECK } });

  const A = AUTHORIZER_TYPE;
  env.registerFunction(`${A}.path(string): ${PATH_CHECK}`, (z: CelAuthorizer, path: string) => {
    return new CelPathCheck(z.check, z.user, path);
  });
  env.registerFunction(`${A}.group(string): ${GROUP_CHECK}`, (z: CelAuthorizer, group: string) => {
    return new CelGroupCheck(z.check, z.user, group);
  });
  env.registerFunction(
    `${A}.serviceAccount(string, string): ${A}`,
    (z: CelAuthorizer, namespace: string, name: string) =>
      new CelAuthorizer(z.check, serviceAccountUser(namespace, name)),
  );
  env.registerFunction(
    `${GROUP_CHECK}.resource(string): ${RESOURCE_CHECK}`,
    (g: CelGroupCheck, resource: string) =>
      new CelResourceCheck(g.check, g.user, {
        group: g.group,
        version: '*',
        resource,
        subresource: '',
        namespace: '',
        name: '',
      }),
  );
  const R = RESOURCE_CHECK;
  for (const field of ['subresource', 'namespace', 'name', 'fieldSelector', 'labelSelector'] as const)
    env.registerFunction(`${R}.${field}(string): ${R}`, (r: CelResourceCheck, v: string) =>
      r.with({ [field]: v }),
    );
  env.registerFunction(`${R}.check(string): ${DECISION}`, (r: CelResourceCheck, verb: string) => {
    const t = r.target;
    return decide(r.check, {
      user: r.user,
      verb,
      isResourceRequest: true,
      path: '',
      namespace: t.namespace,
      apiGroup: t.group,
      apiVersion: t.version,
      resource: t.resource,
      subresource: t.subresource,
      name: t.name,
      ...(t.fieldSelector !== undefined ? { fieldSelector: t.fieldSelector } : {}),
      ...(t.labelSelector !== undefined ? { labelSelector: t.labelSelector } : {}),
    });
  });
  env.registerFunction(`${PATH_CHECK}.check(string): ${DECISION}`, (p: CelPathCheck, verb: string) =>
    decide(p.check, nonResourceAttributes(p.user, verb.toLowerCase(), p.path)),
  );
  env.registerFunction(`${DECISION}.allowed(): bool`, (d: CelDecision) => d.result.decision === 'allow');
  env.registerFunction(`${DECISION}.reason(): string`, (d: CelDecision) => d.result.reason);
  env.registerFunction(`${DECISION}.errored(): bool`, (d: CelDecision) => d.result.error !== undefined);
  env.registerFunction(`${DECISION}.error(): string`, (d: CelDecision) => d.result.error ?? '');
}
