// Authentication from the flags: the methods in Kubernetes' order, then anonymous.
import type { SecurityDeps, Route, PostStartHook } from '../types';
import type { ResourceBehaviour } from '../../registry/registry';
import { AuthenticatorChain, X509Authenticator } from './authenticator';

export interface Authentication {
  authenticator: AuthenticatorChain;
  routes: Route[];
  behaviours: Record<string, ResourceBehaviour>;
  postStartHooks: PostStartHook[];
}

export async function buildAuthentication(deps: SecurityDeps): Promise<Authentication> {
  const methods = deps.tls.clientCaPem ? [new X509Authenticator()] : [];
  return {
    authenticator: new AuthenticatorChain(methods, deps.values.anonymousAuth),
    routes: [],
    behaviours: {},
    postStartHooks: [],
  };
}
