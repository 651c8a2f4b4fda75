// x-kubernetes-validations: CEL rules of a CRD's schema, as
// apiextensions-apiserver has them. At CRD create/update every rule is
// compiled against the type of its schema node (errors and estimated costs
// reported on the CRD); on writes of custom resources the rules run where the
// object has a value, with oldSelf for transition rules (only where the old
// value correlates: object fields, map-list entries, map values), message,
// messageExpression, reason and fieldPath, a runtime cost budget, and
// ratcheting: an error of a rule without oldSelf on a value that did not
// change is a warning, not a refusal.
import {
  CelCompileError,
  CelEvalError,
  compile,
  newEnvironment,
  Optional,
  type Program,
} from '../../cel/engine';
import { SchemaTypes, type Schema } from '../../cel/schema';
import {
  actualCost,
  costErrorMessage,
  estimateCost,
  maxSize,
  PER_CALL_LIMIT,
  RUNTIME_CEL_COST_BUDGET,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from '../../cel/cost';
import { fieldErrorMessage, type FieldError } from '../../../shared/api/field-errors';
import { jsonEqual } from '../meta';

const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

interface Rule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

const REASONS = ['FieldValueRequired', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueDuplicate'];

interface CompiledRule {
  rule: Rule;
  /** The types self and oldSelf were declared with (values are made for them). */
  types: SchemaTypes;
  program: Program;
  message?: Program;
  usesOldSelf: boolean;
  /** fieldPath as a suffix of the error's field ("spec.x" form, no leading dot). */
  fieldPath: string;
}

/** The rules of one schema node and of the nodes beneath it. */
interface NodeValidator {
  schema: Schema;
  root: boolean;
  rules: CompiledRule[];
  properties: Map<string, NodeValidator>;
  additional?: NodeValidator;
  items?: NodeValidator;
}

export interface CompileResult {
  /** Errors to report on the CRD (paths below schemaPath). */
  errors: FieldError[];
  /** undefined when the schema has no rules. */
  validator?: NodeValidator;
}

const usesOldSelf = (src: string) => /\boldSelf\b/.test(src);

function compileRule(
  s: Schema,
  root: boolean,
  rule: Rule,
  path: string,
  errs: FieldError[],
): CompiledRule | undefined {
  const rulePath = `${path}.rule`;
  if (typeof rule.rule !== 'string' || rule.rule.trim() === '') {
    errs.push({ type: 'FieldValueRequired', field: rulePath, detail: 'rule is not specified' });
    return undefined;
  }
  const env = newEnvironment();
  const types = new SchemaTypes(env);
  const selfType = types.declare(s, 'Object', root);
  env.registerVariable('self', selfType);
  env.registerVariable('oldSelf', rule.optionalOldSelf ? `optional<${selfType}>` : selfType);
  let program: Program;
  try {
    program = compile(env, rule.rule);
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    errs.push({
      type: 'FieldValueInvalid',
      field: rulePath,
      badValue: rule,
      detail: `compilation failed: ${e.message}`,
    });
    return undefined;
  }
  if (program.outputType !== 'bool') {
    errs.push({
      type: 'FieldValueInvalid',
      field: rulePath,
      badValue: rule,
      detail: 'cel expression must evaluate to a bool',
    });
    return undefined;
  }
  let message: Program | undefined;
  if (rule.messageExpression !== undefined) {
    try {
      message = compile(env, rule.messageExpression);
      if (message.outputType !== 'string') {
        errs.push({
          type: 'FieldValueInvalid',
          field: `${path}.messageExpression`,
          badValue: rule,
          detail: 'must evaluate to a string',
        });
        message = undefined;
      }
    } catch (e) {
      if (!(e instanceof CelCompileError)) throw e;
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.messageExpression`,
        badValue: rule,
        detail: `messageExpression compilation failed: ${e.message}`,
      });
    }
  }
  if (rule.reason !== undefined && !REASONS.includes(rule.reason)) {
    errs.push({
      type: 'FieldValueNotSupported',
      field: `${path}.reason`,
      badValue: rule.reason,
      detail: `supported values: ${REASONS.map((r) => JSON.stringify(r)).join(', ')}`,
    });
  }
  let fieldPath = '';
  if (rule.fieldPath !== undefined && rule.fieldPath !== '') {
    const fp = validFieldPath(rule.fieldPath, root ? { ...s } : s);
    if (fp === undefined)
      errs.push({
        type: 'FieldValueInvalid',
        field: `${path}.fieldPath`,
        badValue: rule.fieldPath,
        detail: 'fieldPath must be a valid path: does not refer to a valid field',
      });
    else fieldPath = fp;
  }
  return { rule, types, program, message, usesOldSelf: usesOldSelf(rule.rule), fieldPath };
}

/** A rule's fieldPath (".a.b" or "['a'].b") as a field path suffix, or undefined when the schema lacks it. */
function validFieldPath(jsonPath: string, s: Schema): string | undefined {
  const parts: string[] = [];
  const re = /\.([^.[\]]+)|\['((?:[^'\\]|\\.)*)'\]/y;
  let at = 0;
  let cur: Schema | undefined = s;
  while (at < jsonPath.length) {
    re.lastIndex = at;
    const m = re.exec(jsonPath);
    if (!m) return undefined;
    at = re.lastIndex;
    const name = m[1] ?? m[2].replace(/\\(.)/g, '$1');
    if (isObj(cur?.properties) && isObj(cur.properties[name])) {
      cur = cur.properties[name];
      parts.push(parts.length ? `.${name}` : name);
    } else if (isObj(cur?.additionalProperties)) {
      cur = cur.additionalProperties;
      parts.push(`[${name}]`);
    } else return undefined;
  }
  return parts.join('');
}

interface CompileState {
  errors: FieldError[];
  total: number;
  costs: { path: string; cost: number }[];
}

function compileNode(
  s: Schema,
  path: string,
  root: boolean,
  cardinality: number,
  uncorrelatable: string | undefined,
  st: CompileState,
): NodeValidator | undefined {
  const node: NodeValidator = { schema: s, root, rules: [], properties: new Map() };
  const rules: unknown[] = Array.isArray(s['x-kubernetes-validations']) ? s['x-kubernetes-validations'] : [];
  rules.forEach((r, i) => {
    const rulePath = `${path}.x-kubernetes-validations[${i}]`;
    const compiled = compileRule(s, root, isObj(r) ? r : {}, rulePath, st.errors);
    if (!compiled) return;
    const cost = Math.min(Number.MAX_SAFE_INTEGER, estimateCost(compiled.program.ast, s, root) * cardinality);
    if (cost > STATIC_ESTIMATED_COST_LIMIT)
      st.errors.push({
        type: 'FieldValueForbidden',
        field: `${rulePath}.rule`,
        detail: costErrorMessage('estimated rule cost', cost, STATIC_ESTIMATED_COST_LIMIT),
      });
    st.total += cost;
    st.costs.push({ path: `${rulePath}.rule`, cost });
    if (compiled.message) {
      const msgCost = Math.min(
        Number.MAX_SAFE_INTEGER,
        estimateCost(compiled.message.ast, s, root) * cardinality,
      );
      if (msgCost > STATIC_ESTIMATED_COST_LIMIT)
        st.errors.push({
          type: 'FieldValueForbidden',
          field: `${rulePath}.messageExpression`,
          detail: costErrorMessage('estimated messageExpression cost', msgCost, STATIC_ESTIMATED_COST_LIMIT),
        });
      st.total += msgCost;
      st.costs.push({ path: `${rulePath}.messageExpression`, cost: msgCost });
    }
    if (compiled.usesOldSelf && uncorrelatable !== undefined)
      st.errors.push({
        type: 'FieldValueInvalid',
        field: `${rulePath}.rule`,
        badValue: compiled.rule.rule,
        detail: `oldSelf cannot be used on the uncorrelatable portion of the schema within ${uncorrelatable}`,
      });
    node.rules.push(compiled);
  });
  let any = node.rules.length > 0;
  if (isObj(s.properties)) {
    for (const [k, sub] of Object.entries(s.properties)) {
      if (!isObj(sub) || (root && k === 'metadata')) continue;
      const child = compileNode(sub, `${path}.properties[${k}]`, false, cardinality, uncorrelatable, st);
      if (child) {
        node.properties.set(k, child);
        any = true;
      }
    }
  }
  if (isObj(s.additionalProperties)) {
    // Map values correlate by key (granular and atomic maps alike).
    const child = compileNode(
      s.additionalProperties,
      `${path}.additionalProperties`,
      false,
      cardinality * maxSize(s),
      uncorrelatable,
      st,
    );
    if (child) {
      node.additional = child;
      any = true;
    }
  }
  if (isObj(s.items)) {
    const correlates = s['x-kubernetes-list-type'] === 'map';
    const child = compileNode(
      s.items,
      `${path}.items`,
      false,
      cardinality * maxSize(s),
      correlates ? uncorrelatable : (uncorrelatable ?? path),
      st,
    );
    if (child) {
      node.items = child;
      any = true;
    }
  }
  return any ? node : undefined;
}

/** Compiles every rule of a version's schema; schemaPath is where the schema sits in the CRD. */
export function compileSchemaRules(schema: Schema, schemaPath: string): CompileResult {
  const st: CompileState = { errors: [], total: 0, costs: [] };
  const validator = compileNode(schema, schemaPath, true, 1, undefined, st);
  if (st.total > STATIC_ESTIMATED_CRD_COST_LIMIT) {
    const floor = STATIC_ESTIMATED_CRD_COST_LIMIT * 0.01;
    for (const c of st.costs)
      if (c.cost > floor && c.cost <= STATIC_ESTIMATED_COST_LIMIT)
        st.errors.push({
          type: 'FieldValueForbidden',
          field: c.path,
          detail:
            'contributed to estimated rule & messageExpression cost total exceeding cost limit for entire OpenAPIv3 schema',
        });
    st.errors.push({
      type: 'FieldValueForbidden',
      field: schemaPath,
      detail: costErrorMessage(
        'x-kubernetes-validations estimated rule cost total for entire OpenAPIv3 schema',
        st.total,
        STATIC_ESTIMATED_CRD_COST_LIMIT,
      ),
    });
  }
  return { errors: st.errors, validator };
}

/** Whether a schema holds any x-kubernetes-validations (most CRDs have none: nothing to compile). */
export function hasValidationRules(s: unknown): boolean {
  if (Array.isArray(s)) return s.some(hasValidationRules);
  if (!isObj(s)) return false;
  if (Array.isArray(s['x-kubernetes-validations']) && s['x-kubernetes-validations'].length) return true;
  return Object.values(s).some(hasValidationRules);
}

// ---- evaluation -----------------------------------------------------------------

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
            ? Optional.none()
            : Optional.of(oldSelf)
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
