// The registry side of ValidatingAdmissionPolicy: its expressions are compiled
// when the policy is written, and refused with Kubernetes' field errors
// ("spec.validations[0].expression: Invalid value: ...: compilation failed: ...").
import type { FieldError } from '../../../shared/api/field-errors';
import { CelCompileError, compile, newEnvironment } from '../../../shared/cel/engine';
import type { ResourceBehaviour } from '../../registry/registry';
import { GROUP, VARIABLES } from './validating-policy';

/** A policy expression as the validation of the policy object checks it (empty: fine). */
function expressionError(source: unknown, wantBool: boolean): string | undefined {
  if (typeof source !== 'string' || source === '') return undefined;
  const env = newEnvironment();
  for (const v of VARIABLES) env.registerVariable(v, 'dyn');
  try {
    const p = compile(env, source);
    if (wantBool && p.outputType !== 'bool' && p.outputType !== 'dyn')
      return 'cel expression must evaluate to a bool';
    return undefined;
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    return `compilation failed: ${e.message}`;
  }
}

/** The CEL of a ValidatingAdmissionPolicy compiled when it is written, with Kubernetes' field errors. */
export function policyExpressionErrors(policy: any): FieldError[] {
  const spec = policy?.spec ?? {};
  const errs: FieldError[] = [];
  const check = (list: unknown, field: string, key: string, wantBool: boolean) => {
    if (!Array.isArray(list)) return;
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
  };
  check(spec.validations, 'validations', 'expression', true);
  check(spec.validations, 'validations', 'messageExpression', false);
  check(spec.matchConditions, 'matchConditions', 'expression', true);
  check(spec.variables, 'variables', 'expression', false);
  check(spec.auditAnnotations, 'auditAnnotations', 'valueExpression', false);
  return errs;
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
