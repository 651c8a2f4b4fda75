// The rbac/bootstrap-roles post-start hook: creates the default roles and
// bindings, and reconciles existing ones that carry
// rbac.authorization.kubernetes.io/autoupdate != "false" (missing rules,
// selectors, subjects, labels and annotations are added; nothing is removed).
import { isStatusError } from '../../../shared/api/status';
import { systemContext } from '../../registry/context';
import type { Registry, ServedResource } from '../../registry/registry';
import { ensureSystemNamespaces } from '../../server/bootstrap';
import {
  AGGREGATE_TO,
  clusterRoleBindings,
  clusterRoles,
  controllerRoleBindings,
  controllerRoles,
  namespaceRoleBindings,
  namespaceRoles,
  type Subject,
} from './bootstrap-policy';
import { RBAC_GROUP } from './rbac';
import { covers, type PolicyRule } from './rules';
import { jsonEqual } from '../../../shared/api/json-value';

const LABELS = { 'kubernetes.io/bootstrapping': 'rbac-defaults' };
const ANNOTATIONS = { 'rbac.authorization.kubernetes.io/autoupdate': 'true' };
const API_VERSION = `${RBAC_GROUP}/v1`;

function meta(name: string, namespace?: string, labels: Record<string, string> = {}) {
  return {
    name,
    ...(namespace ? { namespace } : {}),
    labels: { ...labels, ...LABELS },
    annotations: { ...ANNOTATIONS },
  };
}

function subject(s: Subject) {
  return s.kind === 'ServiceAccount'
    ? { kind: s.kind, name: s.name, namespace: s.namespace }
    : { kind: s.kind, apiGroup: RBAC_GROUP, name: s.name };
}

/** Adds what is missing from the expected object to the existing one; null when nothing is. */
function reconcile(existing: any, expected: any): any | null {
  if (existing.metadata?.annotations?.['rbac.authorization.kubernetes.io/autoupdate'] === 'false')
    return null;
  const out = structuredClone(existing);
  out.metadata.labels = { ...(expected.metadata.labels ?? {}), ...(existing.metadata.labels ?? {}) };
  out.metadata.annotations = {
    ...(expected.metadata.annotations ?? {}),
    ...(existing.metadata.annotations ?? {}),
  };
  if (expected.rules !== undefined && !expected.aggregationRule) {
    const { missing } = covers(existing.rules ?? [], expected.rules as PolicyRule[]);
    if (missing.length) out.rules = [...(existing.rules ?? []), ...missing];
  }
  if (expected.aggregationRule) {
    const have: any[] = existing.aggregationRule?.clusterRoleSelectors ?? [];
    const add = (expected.aggregationRule.clusterRoleSelectors as any[]).filter(
      (s) => !have.some((h) => jsonEqual(h, s)),
    );
    if (add.length || !existing.aggregationRule)
      out.aggregationRule = { clusterRoleSelectors: [...have, ...add] };
  }
  if (expected.subjects !== undefined) {
    const have: any[] = existing.subjects ?? [];
    const add = (expected.subjects as any[]).filter(
      (s) =>
        !have.some(
          (h) => h.kind === s.kind && h.name === s.name && (h.namespace ?? '') === (s.namespace ?? ''),
        ),
    );
    if (add.length) out.subjects = [...have, ...add];
  }
  return jsonEqual(out, existing) ? null : out;
}

async function ensure(s: ServedResource, namespace: string, expected: any): Promise<void> {
  const ctx = systemContext(namespace);
  const name = expected.metadata.name;
  for (let attempt = 0; attempt < 5; attempt++) {
    let existing: any;
    try {
      existing = s.fromStorage((await s.store.reader.get(ctx, name)).obj);
    } catch (err) {
      if (!isStatusError(err, 'NotFound')) throw err;
      try {
        await s.store.create(ctx, s.toStorage(expected));
        return;
      } catch (e) {
        if (isStatusError(e, 'AlreadyExists')) continue;
        throw e;
      }
    }
    if (expected.roleRef && !jsonEqual(existing.roleRef, expected.roleRef)) {
      // roleRef is immutable: replace the binding.
      if (existing.metadata?.annotations?.['rbac.authorization.kubernetes.io/autoupdate'] === 'false') return;
      await s.store.delete(ctx, name).catch(() => undefined);
      continue;
    }
    const next = reconcile(existing, expected);
    if (!next) return;
    try {
      await s.store.update(ctx, name, () => s.toStorage(next), {}, { allowCreate: false });
      return;
    } catch (err) {
      if (!isStatusError(err, 'Conflict') && !isStatusError(err, 'NotFound')) throw err;
    }
  }
}

function served(registry: Registry, resource: string): ServedResource | undefined {
  return registry.preferred(RBAC_GROUP, resource);
}

export async function bootstrapRBAC(registry: Registry): Promise<void> {
  const cr = served(registry, 'clusterroles');
  const crb = served(registry, 'clusterrolebindings');
  const role = served(registry, 'roles');
  const rb = served(registry, 'rolebindings');
  if (!cr || !crb || !role || !rb) return;
  const roles = [...clusterRoles(), ...controllerRoles()].map((f) => {
    const obj: any = {
      apiVersion: API_VERSION,
      kind: 'ClusterRole',
      metadata: meta(f.name, undefined, f.labels),
    };
    if (f.aggregateFrom)
      obj.aggregationRule = {
        clusterRoleSelectors: [{ matchLabels: { [AGGREGATE_TO(f.aggregateFrom)]: 'true' } }],
      };
    else obj.rules = f.rules ?? [];
    return obj;
  });
  const bindings = [...clusterRoleBindings(), ...controllerRoleBindings()].map((f) => {
    const obj: any = {
      apiVersion: API_VERSION,
      kind: 'ClusterRoleBinding',
      metadata: meta(f.name),
      roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name: f.role },
    };
    if (f.subjects.length) obj.subjects = f.subjects.map(subject);
    return obj;
  });
  await Promise.all([...roles.map((o) => ensure(cr, '', o)), ...bindings.map((o) => ensure(crb, '', o))]);
  await ensureSystemNamespaces(registry);
  await Promise.all([
    ...namespaceRoles().map((f) =>
      ensure(role, f.namespace, {
        apiVersion: API_VERSION,
        kind: 'Role',
        metadata: meta(f.name, f.namespace),
        rules: f.rules,
      }),
    ),
    ...namespaceRoleBindings().map((f) =>
      ensure(rb, f.namespace, {
        apiVersion: API_VERSION,
        kind: 'RoleBinding',
        metadata: meta(f.name, f.namespace),
        roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name: f.role },
        subjects: f.subjects.map(subject),
      }),
    ),
  ]);
}
