// The registry side of ValidatingAdmissionPolicy: matchConstraints with resource
// rules and at least one validation or audit annotation are required, and the
// expressions are compiled when the policy is written, refused with Kubernetes'
// field errors ("spec.validations[0].expression: Invalid value: ...: compilation failed: ...").
import { required, type FieldError } from '../../../shared/api/field-errors';
import { CelCompileError, compile } from '../../../shared/cel/engine';
import type { ResourceBehaviour } from '../../registry/registry';
import { GROUP, policyEnvironment } from './admission-policy';

/** A policy expression as the validation of the policy object checks it (empty: fine). */
function expressionError(source: unknown, wantBool: boolean): string | undefined {
  if (typeof source !== 'string' || source === '') return undefined;
  try {
    const p = compile(policyEnvironment(), source);
    if (wantBool && p.outputType !== 'bool' && p.outputType !== 'dyn')
      return 'cel expression must evaluate to a bool';
    return undefined;
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    return `compilation failed: ${e.message}`;
  }
}

/** The compile errors of the expressions `key` of the items of spec.`field`. */
export function expressionErrors(list: unknown, field: string, key: string, wantBool: boolean): FieldError[] {
  if (!Array.isArray(list)) return [];
  const errs: FieldError[] = [];
  list.forEach((item, i) => {
    const src = item?.[key];
    const msg = expressionError(src, wantBool);
    if (msg)
      errs.push({
        type: 'FieldValueInvalid',
        field: `spec.${field}[${i}].${key}`,
        badValue: src,
        detail: msg,
      });
  });
  return errs;
}

/**
 * A policy's matchConstraints (either kind of policy) are required, with resource rules:
 * they give the policy its types, and a policy without them would match every request.
 */
export function matchConstraintsErrors(m: any): FieldError[] {
  if (!m) return [required('spec.matchConstraints', '')];
  const rules = Array.isArray(m.resourceRules) ? m.resourceRules : [];
  return rules.length ? [] : [required('spec.matchConstraints.resourceRules', '')];
}

const NOTHING_TO_CHECK = 'validations or auditAnnotations must contain at least one item';

/** A ValidatingAdmissionPolicy as Kubernetes validates it, its CEL compiled, with Kubernetes' field errors. */
export function policyErrors(policy: any): FieldError[] {
  const spec = policy?.spec ?? {};
  const empty = (l: unknown) => !Array.isArray(l) || !l.length;
  return [
    ...matchConstraintsErrors(spec.matchConstraints),
    ...(empty(spec.validations) && empty(spec.auditAnnotations)
      ? [required('spec.validations', NOTHING_TO_CHECK), required('spec.auditAnnotations', NOTHING_TO_CHECK)]
      : []),
    ...expressionErrors(spec.validations, 'validations', 'expression', true),
    ...expressionErrors(spec.validations, 'validations', 'messageExpression', false),
    ...expressionErrors(spec.matchConditions, 'matchConditions', 'expression', true),
    ...expressionErrors(spec.variables, 'variables', 'expression', false),
    ...expressionErrors(spec.auditAnnotations, 'auditAnnotations', 'valueExpression', false),
  ];
}

/** Registry behaviour of validatingadmissionpolicies: validated, their expressions must compile. */
export const policyBehaviours: Record<string, ResourceBehaviour> = {
  [`${GROUP}/validatingadmissionpolicies`]: {
    strategy: {
      validate: (obj) => policyErrors(obj),
      validateUpdate: (obj) => policyErrors(obj),
    },
  },
};
