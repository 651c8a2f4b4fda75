// Authorization from --authorization-mode, and impersonation.
import type { SecurityDeps, PostStartHook } from '../types';
import type { ResourceBehaviour } from '../../registry/registry';
import type { UserInfo } from '../../registry/context';
import type { RequestInfo } from '../../endpoints/request-info';
import type { Req } from '../../server/http';

export interface Authorization {
  authorize(user: UserInfo, info: RequestInfo, req: Req): Promise<void>;
  impersonate(req: Req, user: UserInfo, info: RequestInfo): Promise<UserInfo>;
  behaviours: Record<string, ResourceBehaviour>;
  postStartHooks: PostStartHook[];
}

export async function buildAuthorization(_deps: SecurityDeps): Promise<Authorization> {
  return {
    authorize: async () => {},
    impersonate: async (_req, user) => user,
    behaviours: {},
    postStartHooks: [],
  };
}
