// x-kubernetes-validations at work on custom resource writes: each compiled
// rule runs where the object has a value, with oldSelf for transition rules
// where the old value correlates (object fields, map-list entries by key, map
// values), message, messageExpression, reason and fieldPath, the per-call
// limit and the runtime cost budget, and ratcheting: an error of a rule
// without oldSelf on a value that did not change is a warning, not a refusal.
import { CelEvalError, celOptional } from '../../../shared/cel/engine';
import { actualCost, PER_CALL_LIMIT, RUNTIME_CEL_COST_BUDGET } from '../../../shared/cel/cost';
import { fieldErrorMessage, type FieldError } from '../../../shared/api/field-errors';
import { featureGates } from '../../../shared/options/feature-gates';
import type { RequestContext } from '../context';
import { jsonEqual } from '../../../shared/api/json-value';
import {
  compileSchemaRules,
  hasValidationRules,
  isObj,
  type NodeValidator,
  type Rule,
  type Schema,
} from './validation-rules';

export interface RuleOutcome {
  errors: FieldError[];
  warnings: string[];
}

interface EvalState extends RuleOutcome {
  budget: number;
}

const OUT_OF_BUDGET =
  'validation failed due to running out of cost budget, no further validation rules will be run';

function ruleErrorString(r: Rule): string {
  return (r.message ?? '').trim() || (r.rule ?? '').trim();
}

function errorForReason(field: string, type: unknown, detail: string, reason?: string): FieldError {
  switch (reason) {
    case 'FieldValueForbidden':
      return { type: 'FieldValueForbidden', field, detail };
    case 'FieldValueRequired':
      return { type: 'FieldValueRequired', field, detail };
    case 'FieldValueDuplicate':
      return { type: 'FieldValueDuplicate', field, badValue: type };
    default:
      return { type: 'FieldValueInvalid', field, badValue: type, detail };
  }
}

const join = (base: string, child: string) =>
  !base ? child : child.startsWith('[') ? base + child : `${base}.${child}`;

function evalNode(n: NodeValidator, path: string, obj: unknown, old: unknown, st: EvalState): void {
  if (obj === undefined || obj === null || st.budget < 0) return;
  if (n.rules.length) {
    const type = n.schema.type ?? 'object';
    if (st.budget <= 0) {
      st.errors.push({ type: 'FieldValueInvalid', field: path, badValue: type, detail: OUT_OF_BUDGET });
      st.budget = -1;
      return;
    }
    const hasOld = old !== undefined && old !== null;
    const unchanged = hasOld && jsonEqual(obj, old);
    for (const c of n.rules) {
      const self = c.types.value(obj, n.schema, n.root);
      const oldSelf = hasOld ? c.types.value(old, n.schema, n.root) : undefined;
      if (c.usesOldSelf && oldSelf === undefined && !c.rule.optionalOldSelf) continue;
      const vars = {
        self,
        oldSelf: c.rule.optionalOldSelf
          ? oldSelf === undefined
            ? celOptional().none()
            : celOptional().of(oldSelf)
          : oldSelf,
      };
      const cost = actualCost(c.program.ast, n.schema, obj, hasOld ? old : undefined, n.root);
      if (cost > PER_CALL_LIMIT) {
        st.errors.push({
          type: 'FieldValueInvalid',
          field: path,
          badValue: type,
          detail: `'operation cancelled: actual cost limit exceeded': no further validation rules will be run due to call cost exceeds limit for rule: ${ruleErrorString(c.rule)}`,
        });
        st.budget = -1;
        return;
      }
      st.budget -= cost;
      if (st.budget < 0) {
        st.errors.push({ type: 'FieldValueInvalid', field: path, badValue: type, detail: OUT_OF_BUDGET });
        return;
      }
      let result: unknown;
      try {
        result = c.program.evaluate(vars);
      } catch (e) {
        if (!(e instanceof CelEvalError)) throw e;
        const detail = /^no such overload/.test(e.message)
          ? `'${e.message}': call arguments did not match a supported operator, function or macro signature for rule: ${ruleErrorString(c.rule)}`
          : `${e.message} evaluating rule: ${ruleErrorString(c.rule)}`;
        st.errors.push({ type: 'FieldValueInvalid', field: path, badValue: type, detail });
        continue;
      }
      if (result === true) continue;
      const field = c.fieldPath ? join(path, c.fieldPath) : path;
      let detail = '';
      if (c.message) {
        try {
          const m = c.message.evaluate(vars);
          const trimmed = typeof m === 'string' ? m.trim() : '';
          if (trimmed && !trimmed.includes('\n') && trimmed.length <= 5 * 1024) detail = trimmed;
        } catch (e) {
          if (!(e instanceof CelEvalError)) throw e;
        }
      }
      if (!detail) detail = c.rule.message?.trim() || `failed rule: ${ruleErrorString(c.rule)}`;
      const err = errorForReason(field, type, detail, c.rule.reason);
      if (!c.usesOldSelf && unchanged) st.warnings.push(fieldErrorMessage(err));
      else st.errors.push(err);
    }
  }
  if (Array.isArray(obj)) {
    if (!n.items) return;
    const keys: string[] =
      n.schema['x-kubernetes-list-type'] === 'map' ? (n.schema['x-kubernetes-list-map-keys'] ?? []) : [];
    const oldList = Array.isArray(old) ? old : [];
    obj.forEach((v, i) => {
      const prior = keys.length
        ? oldList.find((o) => isObj(o) && isObj(v) && keys.every((k) => jsonEqual(o[k], v[k])))
        : undefined;
      evalNode(n.items!, `${path}[${i}]`, v, prior, st);
    });
    return;
  }
  if (!isObj(obj)) return;
  const oldObj = isObj(old) ? old : undefined;
  for (const [k, v] of Object.entries(obj)) {
    const child =
      n.properties.get(k) ??
      (isObj(n.schema.properties) && k in n.schema.properties ? undefined : n.additional);
    if (!child) continue;
    const childPath = n.properties.has(k) ? join(path, k) : `${path}[${k}]`;
    evalNode(child, childPath, v, oldObj?.[k], st);
  }
}

/** Runs the rules on an object (old on updates); errors refuse the write, warnings are sent back. */
export function evaluateRules(v: NodeValidator, obj: unknown, old?: unknown): RuleOutcome {
  const st: EvalState = { errors: [], warnings: [], budget: RUNTIME_CEL_COST_BUDGET };
  evalNode(v, '', obj, old, st);
  // A rule on the resource root reports a nil field path, which Kubernetes prints as "<nil>".
  for (const e of st.errors) if (!e.field) e.field = '<nil>';
  return { errors: st.errors, warnings: st.warnings };
}

/** The CEL rules of a version's schema as a validation step (none while the feature gate is off). */
export type RulesCheck = (obj: any, old: any, ctx: RequestContext) => FieldError[];

export function rulesCheck(schema: Schema | undefined): RulesCheck {
  if (!schema || !featureGates.enabled('CustomResourceValidationExpressions') || !hasValidationRules(schema))
    return () => [];
  // The CRD was validated with the same compiler: compile errors here were reported on it.
  const { validator } = compileSchemaRules(schema, '');
  if (!validator) return () => [];
  return (obj, old, ctx) => {
    const out = evaluateRules(validator, obj, old);
    ctx.warnings.push(...out.warnings);
    return out.errors;
  };
}
