// RBAC escalation prevention (pkg/registry/rbac/*/policybased): a user may
// write a Role/ClusterRole only with rules they hold themselves, and bind a
// role only when they hold its rules, unless they may `escalate` (roles) or
// `bind` (the referenced role). system:masters is exempt. Runs on dry-run too.
import { jsonEqual } from '../../../shared/api/json-value';
import type { RequestContext, UserInfo } from '../../registry/context';
import type { ResourceBehaviour } from '../../registry/registry';
import { newForbidden } from './union';
import type { Attributes, Authorizer } from './types';
import { compactRules, compactString, covers, goQuoteList, type PolicyRule } from './rules';
import { aggregate, RBAC_GROUP, type RBACIndex, type RoleRef } from './rbac';

const FULL_AUTHORITY: PolicyRule[] = [
  { verbs: ['*'], apiGroups: ['*'], resources: ['*'] },
  { verbs: ['*'], nonResourceURLs: ['*'] },
];

export const escalationAllowed = (u: UserInfo) => u.groups.includes('system:masters');

/** True when old and new differ only in what the garbage collector changes (owners, finalizers). */
function onlyGCFieldsChanged(obj: any, old: any): boolean {
  const strip = (o: any) => {
    const md = { ...(o.metadata ?? {}) };
    for (const k of ['ownerReferences', 'finalizers', 'managedFields', 'resourceVersion', 'generation'])
      delete md[k];
    return { ...o, metadata: md };
  };
  return jsonEqual(strip(obj), strip(old));
}

export class EscalationCheck {
  constructor(
    private readonly index: RBACIndex,
    private readonly authorizer: () => Authorizer,
  ) {}

  private async allowed(a: Omit<Attributes, 'path' | 'isResourceRequest' | 'apiVersion'>): Promise<boolean> {
    const r = await this.authorizer().authorize({ ...a, path: '', isResourceRequest: true, apiVersion: '*' });
    return r.decision === 'allow';
  }

  /** ConfirmNoEscalation: the user's own rules (in the namespace) must cover the requested ones. */
  async confirmNoEscalation(user: UserInfo, namespace: string, rules: PolicyRule[]): Promise<string | null> {
    await this.index.start();
    const own = this.index.rulesFor(user, namespace);
    const { covered, missing } = covers(own.rules, rules);
    if (covered) return null;
    const descriptions = [...new Set(compactRules(missing).map(compactString))].sort();
    let msg = `user ${JSON.stringify(user.name)} (groups=${goQuoteList(user.groups)}) is attempting to grant RBAC permissions not currently held:\n${descriptions.join('\n')}`;
    if (own.errors.length) msg += `; resolution errors: [${aggregate(own.errors)}]`;
    return msg;
  }

  /** Roles and ClusterRoles. */
  async checkRole(
    resource: 'roles' | 'clusterroles',
    obj: any,
    old: any | null,
    ctx: RequestContext,
  ): Promise<void> {
    const user = ctx.user;
    if (escalationAllowed(user)) return;
    if (old && onlyGCFieldsChanged(obj, old)) return;
    const name = obj.metadata?.name ?? '';
    const namespace = resource === 'roles' ? ctx.namespace : '';
    if (
      await this.allowed({
        user,
        verb: 'escalate',
        apiGroup: RBAC_GROUP,
        resource,
        subresource: '',
        // The request's name: none for a create (POST to the collection).
        name: old ? name : '',
        namespace,
      })
    )
      return;
    const why = await this.confirmNoEscalation(user, namespace, obj.rules ?? []);
    if (why) throw newForbidden(RBAC_GROUP, resource, name, why);
    if (
      resource === 'clusterroles' &&
      obj.aggregationRule &&
      (!old || !jsonEqual(obj.aggregationRule, old.aggregationRule))
    ) {
      if (await this.confirmNoEscalation(user, '', FULL_AUTHORITY))
        throw newForbidden(
          RBAC_GROUP,
          resource,
          name,
          'must have cluster-admin privileges to use the aggregationRule',
        );
    }
  }

  /** RoleBindings and ClusterRoleBindings. */
  async checkBinding(
    resource: 'rolebindings' | 'clusterrolebindings',
    obj: any,
    old: any | null,
    ctx: RequestContext,
  ): Promise<void> {
    const user = ctx.user;
    if (escalationAllowed(user)) return;
    if (old && onlyGCFieldsChanged(obj, old)) return;
    const namespace = resource === 'rolebindings' ? ctx.namespace : '';
    const ref: RoleRef = obj.roleRef ?? {};
    const refResource = ref.kind === 'ClusterRole' ? 'clusterroles' : ref.kind === 'Role' ? 'roles' : '';
    if (
      refResource &&
      (await this.allowed({
        user,
        verb: 'bind',
        apiGroup: ref.apiGroup ?? RBAC_GROUP,
        resource: refResource,
        subresource: '',
        name: ref.name,
        namespace,
      }))
    )
      return;
    await this.index.start();
    const rules = this.index.roleRefRules(ref, namespace);
    const why = await this.confirmNoEscalation(user, namespace, rules);
    if (why) throw newForbidden(RBAC_GROUP, resource, obj.metadata?.name ?? '', why);
  }

  behaviours(): Record<string, ResourceBehaviour> {
    const role =
      (resource: 'roles' | 'clusterroles') =>
      (obj: any, old: any | null, ctx: RequestContext): Promise<void> =>
        this.checkRole(resource, obj, old, ctx);
    const binding =
      (resource: 'rolebindings' | 'clusterrolebindings') =>
      (obj: any, old: any | null, ctx: RequestContext): Promise<void> =>
        this.checkBinding(resource, obj, old, ctx);
    return {
      [`${RBAC_GROUP}/roles`]: { strategy: { authorizeWrite: role('roles') } },
      [`${RBAC_GROUP}/clusterroles`]: { strategy: { authorizeWrite: role('clusterroles') } },
      [`${RBAC_GROUP}/rolebindings`]: { strategy: { authorizeWrite: binding('rolebindings') } },
      [`${RBAC_GROUP}/clusterrolebindings`]: { strategy: { authorizeWrite: binding('clusterrolebindings') } },
    };
  }
}
