// rbac.authorization.k8s.io/v1 (pkg/apis/rbac/validation).
import type { FieldError } from '../field-errors';
import { invalid, notSupported, required } from '../field-errors';
import { validateLabelSelector } from './metadata';
import { isDNS1123Subdomain, nameIsPathSegment } from './names';
import { asArr, asObj, asStr, child, index, type Obj } from './path';
import { registerKindRules } from './registry';

const GROUP = 'rbac.authorization.k8s.io';

function validateRules(rules: unknown, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  asArr(rules).forEach((x, i) => {
    const r = asObj(x) ?? {};
    const p = index('rules', i);
    if (asArr(r.verbs).length === 0)
      errs.push(required(child(p, 'verbs'), 'verbs must contain at least one value'));
    const nonResource = asArr(r.nonResourceURLs);
    if (nonResource.length > 0) {
      if (namespaced)
        errs.push(
          invalid(
            child(p, 'nonResourceURLs'),
            nonResource,
            'namespaced rules cannot apply to non-resource URLs',
          ),
        );
      if (asArr(r.apiGroups).length || asArr(r.resources).length || asArr(r.resourceNames).length)
        errs.push(
          invalid(
            child(p, 'nonResourceURLs'),
            nonResource,
            'rules cannot apply to both regular resources and non-resource URLs',
          ),
        );
      return;
    }
    if (asArr(r.apiGroups).length === 0)
      errs.push(required(child(p, 'apiGroups'), 'resource rules must supply at least one api group'));
    if (asArr(r.resources).length === 0)
      errs.push(required(child(p, 'resources'), 'resource rules must supply at least one resource'));
  });
  return errs;
}

function validateSubject(s: Obj, p: string, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const name = asStr(s.name);
  if (!name) errs.push(required(child(p, 'name'), ''));
  switch (s.kind) {
    case 'ServiceAccount':
      if (name) for (const m of isDNS1123Subdomain(name)) errs.push(invalid(child(p, 'name'), name, m));
      if (asStr(s.apiGroup)) errs.push(notSupported(child(p, 'apiGroup'), s.apiGroup, ['']));
      if (!namespaced && !asStr(s.namespace)) errs.push(required(child(p, 'namespace'), ''));
      break;
    case 'User':
    case 'Group':
      if (s.apiGroup !== GROUP) errs.push(notSupported(child(p, 'apiGroup'), asStr(s.apiGroup), [GROUP]));
      break;
    default:
      errs.push(notSupported(child(p, 'kind'), asStr(s.kind), ['ServiceAccount', 'User', 'Group']));
  }
  return errs;
}

function validateBinding(o: Obj, namespaced: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const ref = asObj(o.roleRef) ?? {};
  if (ref.apiGroup !== GROUP) errs.push(notSupported('roleRef.apiGroup', asStr(ref.apiGroup), [GROUP]));
  const kinds = namespaced ? ['Role', 'ClusterRole'] : ['ClusterRole'];
  if (!kinds.includes(asStr(ref.kind))) errs.push(notSupported('roleRef.kind', asStr(ref.kind), kinds));
  const name = asStr(ref.name);
  if (!name) errs.push(required('roleRef.name', ''));
  else for (const m of nameIsPathSegment(name, false)) errs.push(invalid('roleRef.name', name, m));
  asArr(o.subjects).forEach((s, i) =>
    errs.push(...validateSubject(asObj(s) ?? {}, index('subjects', i), namespaced)),
  );
  return errs;
}

const roleRefUnchanged = (o: Obj, old: Obj): FieldError[] => {
  const a = asObj(o.roleRef) ?? {};
  const b = asObj(old.roleRef) ?? {};
  return a.apiGroup === b.apiGroup && a.kind === b.kind && a.name === b.name
    ? []
    : [invalid('roleRef', o.roleRef ?? null, 'cannot change roleRef')];
};

registerKindRules(GROUP, 'Role', { validate: (o) => validateRules(o.rules, true) });
registerKindRules(GROUP, 'ClusterRole', {
  validate(o) {
    const errs = validateRules(o.rules, false);
    asArr(asObj(o.aggregationRule)?.clusterRoleSelectors).forEach((s, i) =>
      errs.push(...validateLabelSelector(s, index('aggregationRule.clusterRoleSelectors', i))),
    );
    return errs;
  },
});
registerKindRules(GROUP, 'RoleBinding', {
  validate: (o) => validateBinding(o, true),
  validateUpdate: roleRefUnchanged,
});
registerKindRules(GROUP, 'ClusterRoleBinding', {
  validate: (o) => validateBinding(o, false),
  validateUpdate: roleRefUnchanged,
});
