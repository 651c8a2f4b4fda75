// RBAC: Roles, ClusterRoles and their bindings, kept in memory from the
// registry's watch cache. Bindings are indexed by subject (user, group,
// service account); the rules a user holds in a namespace are resolved once
// and cached until any RBAC object changes, so a request is a scan of a short
// list of rules.
import { StatusError } from '../../../shared/api/status';
import type { UserInfo } from '../../registry/context';
import type { Registry } from '../../registry/registry';
import { StoreInformer } from './informer';
import { ALLOW, type Attributes, type Authorizer, type AuthorizerResult, type RulesResult } from './types';
import { ruleAllows, type PolicyRule } from './rules';

export const RBAC_GROUP = 'rbac.authorization.k8s.io';

export interface RoleRef {
  apiGroup?: string;
  kind: string;
  name: string;
}

interface Resolved {
  rules: PolicyRule[];
  errors: string[];
}

const MAX_CACHED = 10_000;

/** An aggregate of errors as utilerrors.NewAggregate prints it. */
export const aggregate = (errs: string[]) => (errs.length === 1 ? errs[0] : `[${errs.join(', ')}]`);

/** The NotFound a lister answers for a missing role. */
export function roleNotFound(kind: string, name: string): StatusError {
  const resource = kind === 'Role' ? 'role' : 'clusterrole';
  return new StatusError(404, 'NotFound', `${resource}.${RBAC_GROUP} ${JSON.stringify(name)} not found`, {
    name,
    group: RBAC_GROUP,
    kind: resource,
  });
}

export class RBACIndex {
  readonly roles: StoreInformer;
  readonly clusterRoles: StoreInformer;
  readonly roleBindings: StoreInformer;
  readonly clusterRoleBindings: StoreInformer;
  /** subject key -> cluster role binding names. */
  private readonly crbBySubject = new Map<string, Set<string>>();
  /** namespace -> subject key -> role binding keys (ns/name). */
  private readonly rbBySubject = new Map<string, Map<string, Set<string>>>();
  private readonly cache = new Map<string, Resolved>();
  private startPromise: Promise<void> | null = null;
  private readonly listeners: (() => void)[] = [];

  constructor(registry: () => Registry) {
    this.roles = new StoreInformer(registry, RBAC_GROUP, 'roles');
    this.clusterRoles = new StoreInformer(registry, RBAC_GROUP, 'clusterroles');
    this.roleBindings = new StoreInformer(registry, RBAC_GROUP, 'rolebindings');
    this.clusterRoleBindings = new StoreInformer(registry, RBAC_GROUP, 'clusterrolebindings');
    const invalidate = () => {
      this.cache.clear();
      for (const l of this.listeners) l();
    };
    this.roles.onChange(invalidate);
    this.clusterRoles.onChange(invalidate);
    this.clusterRoleBindings.onChange((type, obj, old) => {
      if (old) this.unindex(this.crbBySubject, old, '', old.metadata.name);
      if (type !== 'DELETED') this.index(this.crbBySubject, obj, '', obj.metadata.name);
      invalidate();
    });
    this.roleBindings.onChange((type, obj, old) => {
      const ns = (old ?? obj).metadata.namespace ?? '';
      if (old) this.unindex(this.nsIndex(ns), old, ns, `${ns}/${old.metadata.name}`);
      if (type !== 'DELETED') this.index(this.nsIndex(ns), obj, ns, `${ns}/${obj.metadata.name}`);
      invalidate();
    });
  }

  /** Called after any RBAC change (the aggregation controller listens). */
  onChange(l: () => void): void {
    this.listeners.push(l);
  }

  start(): Promise<void> {
    this.startPromise ??= Promise.all([
      this.roles.start(),
      this.clusterRoles.start(),
      this.roleBindings.start(),
      this.clusterRoleBindings.start(),
    ]).then(() => undefined);
    return this.startPromise;
  }

  get synced(): boolean {
    return (
      this.roles.hasSynced &&
      this.clusterRoles.hasSynced &&
      this.roleBindings.hasSynced &&
      this.clusterRoleBindings.hasSynced
    );
  }

  stop(): void {
    for (const i of [this.roles, this.clusterRoles, this.roleBindings, this.clusterRoleBindings]) i.stop();
  }

  private nsIndex(ns: string): Map<string, Set<string>> {
    let m = this.rbBySubject.get(ns);
    if (!m) this.rbBySubject.set(ns, (m = new Map()));
    return m;
  }

  /** Keys of the subjects of a binding: "u:<user>" (service accounts become their user name) or "g:<group>". */
  private subjectKeys(binding: any, bindingNamespace: string): string[] {
    const keys: string[] = [];
    for (const s of binding.subjects ?? []) {
      switch (s.kind) {
        case 'User':
          keys.push(`u:${s.name}`);
          break;
        case 'Group':
          keys.push(`g:${s.name}`);
          break;
        case 'ServiceAccount': {
          const ns = s.namespace || bindingNamespace;
          if (ns) keys.push(`u:system:serviceaccount:${ns}:${s.name}`);
          break;
        }
      }
    }
    return keys;
  }

  private index(m: Map<string, Set<string>>, binding: any, ns: string, id: string): void {
    for (const k of this.subjectKeys(binding, ns)) {
      let set = m.get(k);
      if (!set) m.set(k, (set = new Set()));
      set.add(id);
    }
  }

  private unindex(m: Map<string, Set<string>>, binding: any, ns: string, id: string): void {
    for (const k of this.subjectKeys(binding, ns)) {
      const set = m.get(k);
      if (!set) continue;
      set.delete(id);
      if (!set.size) m.delete(k);
    }
  }

  /** The rules a role reference grants (GetRoleReferenceRules); throws NotFound for a missing role. */
  roleRefRules(ref: RoleRef, namespace: string): PolicyRule[] {
    if (ref.kind === 'ClusterRole') {
      const cr = this.clusterRoles.items.get(ref.name);
      if (!cr) throw roleNotFound('ClusterRole', ref.name);
      return cr.rules ?? [];
    }
    if (ref.kind === 'Role') {
      const role = this.roles.items.get(`${namespace}/${ref.name}`);
      if (!role) throw roleNotFound('Role', ref.name);
      return role.rules ?? [];
    }
    throw new Error(`unsupported role reference kind: ${JSON.stringify(ref.kind)}`);
  }

  private collect(ids: Set<string>, m: Map<string, Set<string>> | undefined, user: UserInfo): void {
    if (!m) return;
    const add = (k: string) => {
      const set = m.get(k);
      if (set) for (const id of set) ids.add(id);
    };
    add(`u:${user.name}`);
    for (const g of user.groups) add(`g:${g}`);
  }

  /** Every rule the user holds at cluster scope and, with a namespace, in it; errors of dangling references. */
  rulesFor(user: UserInfo, namespace: string): Resolved {
    const key = `${user.name}\u0000${user.groups.join('\u0001')}\u0000${namespace}`;
    const hit = this.cache.get(key);
    if (hit) return hit;
    const rules: PolicyRule[] = [];
    const errors: string[] = [];
    const crbs = new Set<string>();
    this.collect(crbs, this.crbBySubject, user);
    for (const name of [...crbs].sort()) {
      const b = this.clusterRoleBindings.items.get(name);
      if (!b) continue;
      try {
        rules.push(...this.roleRefRules(b.roleRef ?? {}, ''));
      } catch (err) {
        errors.push((err as Error).message);
      }
    }
    if (namespace) {
      const rbs = new Set<string>();
      this.collect(rbs, this.rbBySubject.get(namespace), user);
      for (const id of [...rbs].sort()) {
        const b = this.roleBindings.items.get(id);
        if (!b) continue;
        try {
          rules.push(...this.roleRefRules(b.roleRef ?? {}, namespace));
        } catch (err) {
          errors.push((err as Error).message);
        }
      }
    }
    const resolved = { rules, errors };
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    this.cache.set(key, resolved);
    return resolved;
  }
}

export class RBACAuthorizer implements Authorizer {
  readonly name = 'RBAC';
  constructor(private readonly index: RBACIndex) {}

  authorize(a: Attributes): AuthorizerResult | Promise<AuthorizerResult> {
    if (!this.index.synced) return this.index.start().then(() => this.decide(a));
    return this.decide(a);
  }

  private decide(a: Attributes): AuthorizerResult {
    const { rules, errors } = this.index.rulesFor(a.user, a.namespace);
    for (const r of rules) if (ruleAllows(a, r)) return ALLOW;
    return { decision: 'noopinion', reason: errors.length ? `RBAC: ${aggregate(errors)}` : '' };
  }

  async rulesFor(user: UserInfo, namespace: string): Promise<RulesResult> {
    await this.index.start();
    const { rules, errors } = this.index.rulesFor(user, namespace);
    const out: RulesResult = { resourceRules: [], nonResourceRules: [], incomplete: false };
    for (const r of rules) {
      if (r.resources?.length)
        out.resourceRules.push({
          verbs: r.verbs ?? [],
          apiGroups: r.apiGroups ?? [],
          resources: r.resources,
          ...(r.resourceNames?.length ? { resourceNames: r.resourceNames } : {}),
        });
      if (r.nonResourceURLs?.length)
        out.nonResourceRules.push({ verbs: r.verbs ?? [], nonResourceURLs: r.nonResourceURLs });
    }
    if (errors.length) out.error = aggregate(errors);
    return out;
  }
}
