// The registry side of ValidatingAdmissionPolicy: its expressions are compiled
// when the policy is written, and refused with Kubernetes' field errors
// ("spec.validations[0].expression: Invalid value: ...: compilation failed: ...").
import type { FieldError } from '../../../shared/api/field-errors';
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

/** The CEL of a ValidatingAdmissionPolicy compiled when it is written, with Kubernetes' field errors. */
export function policyExpressionErrors(policy: any): FieldError[] {
  const spec = policy?.spec ?? {};
  return [
    ...expressionErrors(spec.validations, 'validations', 'expression', true),
    ...expressionErrors(spec.validations, 'validations', 'messageExpression', false),
    ...expressionErrors(spec.matchConditions, 'matchConditions', 'expression', true),
    ...expressionErrors(spec.variables, 'variables', 'expression', false),
    ...expressionErrors(spec.auditAnnotations, 'auditAnnotations', 'valueExpression', false),
  ];
}

/** Registry behaviour of validatingadmissionpolicies: their expressions must compile. */
export const policyBehaviours: Record<string, ResourceBehaviour> = {
  [`${GROUP}/validatingadmissionpolicies`]: {
    strategy: {
      validate: (obj) => policyExpressionErrors(obj),
      validateUpdate: (obj) => policyExpressionErrors(obj),
    },
  },
};
