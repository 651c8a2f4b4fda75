// x-kubernetes-validations: CEL rules of a CRD's schema, as
// apiextensions-apiserver has them. At CRD create/update every rule is
// compiled against the type of its schema node, with errors and estimated
// costs (per rule, per CRD) reported on the CRD. Evaluation on custom
// resource writes is in validation-rules-eval.ts.
import { CelCompileError, compile, newEnvironment, type Program } from '../../../shared/cel/engine';
import { SchemaTypes, type Schema } from '../../../shared/cel/schema';
import {
  costErrorMessage,
  estimateCost,
  maxSize,
  STATIC_ESTIMATED_COST_LIMIT,
  STATIC_ESTIMATED_CRD_COST_LIMIT,
} from '../../../shared/cel/cost';
import type { FieldError } from '../../../shared/api/field-errors';

export type { Schema };

export const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

export interface Rule {
  rule?: string;
  message?: string;
  messageExpression?: string;
  reason?: string;
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

const REASONS = ['FieldValueRequired', 'FieldValueForbidden', 'FieldValueInvalid', 'FieldValueDuplicate'];

export interface CompiledRule {
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
export interface NodeValidator {
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
  try {
    const selfType = types.declare(s, 'Object', root);
    env.registerVariable('self', selfType);
    env.registerVariable('oldSelf', rule.optionalOldSelf ? `optional<${selfType}>` : selfType);
  } catch (e) {
    // A schema the type mapping cannot express: Kubernetes' "rule compiler initialization error".
    errs.push({
      type: 'InternalError',
      field: path,
      detail: `rule compiler initialization error: ${(e as Error).message}`,
    });
    return undefined;
  }
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
