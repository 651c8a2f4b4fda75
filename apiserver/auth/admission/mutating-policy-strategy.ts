// The registry side of MutatingAdmissionPolicy and its bindings: what
// Kubernetes' validation refuses when they are written (422 Invalid with its
// field paths): matchConstraints (no DELETE), reinvocationPolicy and mutations
// required, patchType and the matching expression field, failurePolicy values,
// and CEL that does not
// compile ("spec.mutations[0].jsonPatch.expression: Invalid value: ...:
// compilation failed: ...").
import {
  forbidden,
  invalid,
  notSupported,
  required,
  type FieldError,
} from '../../../shared/api/field-errors';
import type { ResourceBehaviour } from '../../registry/registry';
import { GROUP } from './admission-policy';
import { compileMutation, type Mutation } from './mutating-policy-compile';
import { expressionErrors, matchConstraintsErrors } from './validating-policy-strategy';

const PATCH_TYPES = ['ApplyConfiguration', 'JSONPatch'];

function mutationErrors(m: any, path: string): FieldError[] {
  const errs: FieldError[] = [];
  const type = m?.patchType;
  if (!type) errs.push(required(`${path}.patchType`, ''));
  else if (!PATCH_TYPES.includes(type)) errs.push(notSupported(`${path}.patchType`, type, PATCH_TYPES));
  const fields: Record<string, string> = { JSONPatch: 'jsonPatch', ApplyConfiguration: 'applyConfiguration' };
  for (const [t, field] of Object.entries(fields)) {
    const set = m?.[field] != null;
    if (type === t && !set)
      errs.push(required(`${path}.${field}`, `must be specified when patchType is ${t}`));
    if (type && type !== t && set)
      errs.push(forbidden(`${path}.${field}`, `must not be specified when patchType is ${type}`));
    if (type === t && set) {
      const src = m[field].expression;
      if (typeof src !== 'string' || src.trim() === '')
        errs.push(required(`${path}.${field}.expression`, ''));
      else {
        const msg = compileMutation(t as Mutation['patchType'], src).error;
        if (msg) errs.push(invalid(`${path}.${field}.expression`, src, msg));
      }
    }
  }
  return errs;
}

const OPERATIONS = ['*', 'CONNECT', 'CREATE', 'UPDATE'];

/** matchConstraints as any policy's, but DELETE may not be matched. */
function mutatingMatchErrors(m: any): FieldError[] {
  const errs = matchConstraintsErrors(m);
  if (errs.length) return errs;
  m.resourceRules.forEach((r: any, i: number) =>
    (Array.isArray(r?.operations) ? r.operations : []).forEach((op: unknown, j: number) => {
      if (typeof op !== 'string' || !OPERATIONS.includes(op))
        errs.push(notSupported(`spec.matchConstraints.resourceRules[${i}].operations[${j}]`, op, OPERATIONS));
    }),
  );
  return errs;
}

/** A MutatingAdmissionPolicy as Kubernetes validates it on create and update. */
export function mutatingPolicyErrors(policy: any): FieldError[] {
  const spec = policy?.spec ?? {};
  const errs: FieldError[] = [];
  if (spec.failurePolicy !== undefined && !['Ignore', 'Fail'].includes(spec.failurePolicy))
    errs.push(notSupported('spec.failurePolicy', spec.failurePolicy, ['Fail', 'Ignore']));
  if (spec.reinvocationPolicy === undefined || spec.reinvocationPolicy === '')
    errs.push(required('spec.reinvocationPolicy', ''));
  else if (!['Never', 'IfNeeded'].includes(spec.reinvocationPolicy))
    errs.push(notSupported('spec.reinvocationPolicy', spec.reinvocationPolicy, ['IfNeeded', 'Never']));
  errs.push(...mutatingMatchErrors(spec.matchConstraints));
  const mutations = Array.isArray(spec.mutations) ? spec.mutations : [];
  if (!mutations.length) errs.push(required('spec.mutations', 'mutations must contain at least one item'));
  mutations.forEach((m: any, i: number) => errs.push(...mutationErrors(m, `spec.mutations[${i}]`)));
  errs.push(...expressionErrors(spec.matchConditions, 'matchConditions', 'expression', true));
  errs.push(...expressionErrors(spec.variables, 'variables', 'expression', false));
  return errs;
}

/** A MutatingAdmissionPolicyBinding must name its policy. */
export function mutatingBindingErrors(binding: any): FieldError[] {
  const name = binding?.spec?.policyName;
  return typeof name === 'string' && name !== '' ? [] : [required('spec.policyName', '')];
}

export const mutatingPolicyBehaviours: Record<string, ResourceBehaviour> = {
  [`${GROUP}/mutatingadmissionpolicies`]: {
    strategy: {
      validate: (obj) => mutatingPolicyErrors(obj),
      validateUpdate: (obj) => mutatingPolicyErrors(obj),
    },
  },
  [`${GROUP}/mutatingadmissionpolicybindings`]: {
    strategy: {
      validate: (obj) => mutatingBindingErrors(obj),
      validateUpdate: (obj) => mutatingBindingErrors(obj),
    },
  },
};
