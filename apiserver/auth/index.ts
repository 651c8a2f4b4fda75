// Composes the server's security bundle from its parts.
import type { Security, SecurityDeps } from './types';
import { buildAuthentication } from './authn';
import { buildAuthorization } from './authz';
import { UnionAuthorizer } from './authz/union';
import { buildAdmission } from './admission';
import { policyBehaviours } from './admission/validating-policy-strategy';
import { mutatingPolicyBehaviours } from './admission/mutating-policy-strategy';
import { buildAuditor } from './audit';
import { buildTransport } from './transport';

export type { Security, SecurityDeps } from './types';

export async function buildSecurity(deps: SecurityDeps): Promise<Security> {
  const authn = await buildAuthentication(deps);
  const authz = await buildAuthorization(deps);
  const union = authz.authorizer instanceof UnionAuthorizer ? authz.authorizer : undefined;
  // No chain (AlwaysAllow): every check is allowed, as the server allows every request.
  const admission = await buildAdmission(deps, (a) =>
    union ? union.authorizeSync(a) : { decision: 'allow', reason: '' },
  );
  const auditor = await buildAuditor(deps);
  const transport = await buildTransport(deps);
  return {
    authenticate: (req) => authn.authenticator.authenticate(req),
    loopbackToken: authn.loopbackToken,
    impersonate: authz.impersonate,
    authorize: authz.authorize,
    admission,
    auditor,
    ...transport,
    routes: authn.routes,
    behaviours: {
      ...authn.behaviours,
      ...authz.behaviours,
      ...policyBehaviours,
      ...mutatingPolicyBehaviours,
    },
    postStartHooks: [...authn.postStartHooks, ...authz.postStartHooks],
    async stop() {
      await auditor?.stop();
      await authz.stop?.();
      await authn.stop?.();
    },
  };
}
