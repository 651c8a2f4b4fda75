// Virtual kinds: core/v1 Binding and the authorization reviews
// (pkg/apis/core/validation ValidatePodBinding, pkg/apis/authorization/validation).
import type { FieldError } from '../field-errors';
import { invalid, notSupported, required } from '../field-errors';
import { asArr, asObj, asStr, isSet, type Obj } from './path';
import { registerKindRules } from './registry';

registerKindRules('', 'Binding', {
  validate(o) {
    const target = asObj(o.target) ?? {};
    const errs: FieldError[] = [];
    const kind = asStr(target.kind);
    if (kind && kind !== 'Node') errs.push(notSupported('target.kind', kind, ['Node', '<empty>']));
    if (!asStr(target.name)) errs.push(required('target.name', ''));
    return errs;
  },
});

function validateReviewSpec(spec: Obj, requireSubject: boolean): FieldError[] {
  const errs: FieldError[] = [];
  const res = isSet(spec.resourceAttributes);
  const nonRes = isSet(spec.nonResourceAttributes);
  if (res && nonRes)
    errs.push(
      invalid(
        'spec.nonResourceAttributes',
        spec.nonResourceAttributes,
        'cannot be specified in combination with resourceAttributes',
      ),
    );
  if (!res && !nonRes)
    errs.push(
      invalid(
        'spec.resourceAttributes',
        null,
        'exactly one of nonResourceAttributes or resourceAttributes must be specified',
      ),
    );
  if (requireSubject && !asStr(spec.user) && asArr(spec.groups).length === 0)
    errs.push(invalid('spec.user', asStr(spec.user), 'at least one of user or group must be specified'));
  return errs;
}

const GROUP = 'authorization.k8s.io';
registerKindRules(GROUP, 'SubjectAccessReview', {
  validate: (o) => validateReviewSpec(asObj(o.spec) ?? {}, true),
});
registerKindRules(GROUP, 'LocalSubjectAccessReview', {
  validate: (o) => validateReviewSpec(asObj(o.spec) ?? {}, true),
});
registerKindRules(GROUP, 'SelfSubjectAccessReview', {
  validate: (o) => validateReviewSpec(asObj(o.spec) ?? {}, false),
});
