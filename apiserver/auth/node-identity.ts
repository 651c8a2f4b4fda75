// pkg/auth/nodeidentifier: which node a kubelet's credentials name, for the
// Node authorizer and the NodeRestriction admission plugin.
import type { UserInfo } from '../registry/context';

const NODE_PREFIX = 'system:node:';

/** The node a user is, if it is one (name "" when unidentifiable). */
export function nodeIdentity(user: UserInfo): { isNode: boolean; name: string } {
  if (!user.name.startsWith(NODE_PREFIX) || !user.groups.includes('system:nodes'))
    return { isNode: false, name: '' };
  return { isNode: true, name: user.name.slice(NODE_PREFIX.length) };
}
