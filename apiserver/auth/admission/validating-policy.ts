// ValidatingAdmissionPolicy (k8s.io/apiserver/pkg/admission/plugin/policy/validating):
// every ValidatingAdmissionPolicyBinding whose policy exists and whose match
// rules (the policy's matchConstraints, then the binding's matchResources)
// select the request runs the policy's CEL: matchConditions first, then
// variables, validations and auditAnnotations, once per param object
// (paramKind + paramRef). A failed validation acts as the binding says: Deny
// refuses the request (422 Invalid unless the validation names a reason), Warn
// adds a Warning header, Audit an audit annotation. Expression errors follow
// the policy's failurePolicy.
import { StatusError } from '../../../shared/api/status';
import { selectorFromObject } from '../../../shared/api/labels';
import { logger } from '../../../shared/log';
import {
  CelCompileError,
  CelEvalError,
  compile,
  newEnvironment,
  type Program,
} from '../../../shared/cel/engine';
import { jsonToCel } from '../../../shared/cel/schema';
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { Lister } from './util';
import { ruleMatches } from './webhook';

const log = logger('admission');
export const GROUP = 'admissionregistration.k8s.io';
const OWN_RESOURCES = new Set(['validatingadmissionpolicies', 'validatingadmissionpolicybindings']);
const REASON_CODES: Record<string, number> = {
  Unauthorized: 401,
  Forbidden: 403,
  Invalid: 422,
  RequestEntityTooLarge: 413,
};
/** The variables every policy expression may use (all dyn: see docs/comparison.md). */
export const VARIABLES = [
  'object',
  'oldObject',
  'params',
  'request',
  'namespaceObject',
  'variables',
  'authorizer',
];

/** An expression compiled once per policy generation; the error is kept to be reported when it is needed. */
interface Expr {
  source: string;
  program?: Program;
  error?: string;
}

interface CompiledPolicy {
  resourceVersion: string;
  matchConditions: { name: string; expr: Expr }[];
  variables: { name: string; expr: Expr }[];
  validations: { v: any; expr: Expr; message?: Expr }[];
  auditAnnotations: { key: string; expr: Expr }[];
}

function compileExpr(source: string): Expr {
  const env = newEnvironment();
  for (const v of VARIABLES) env.registerVariable(v, 'dyn');
  try {
    return { source, program: compile(env, source) };
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    return { source, error: `compilation error: ${e.message}` };
  }
}

function compilePolicy(p: any): CompiledPolicy {
  const spec = p.spec ?? {};
  return {
    resourceVersion: p.metadata?.resourceVersion ?? '',
    matchConditions: (spec.matchConditions ?? []).map((m: any) => ({
      name: m.name,
      expr: compileExpr(m.expression),
    })),
    variables: (spec.variables ?? []).map((v: any) => ({ name: v.name, expr: compileExpr(v.expression) })),
    validations: (spec.validations ?? []).map((v: any) => ({
      v,
      expr: compileExpr(v.expression),
      ...(v.messageExpression ? { message: compileExpr(v.messageExpression) } : {}),
    })),
    auditAnnotations: (spec.auditAnnotations ?? []).map((a: any) => ({
      key: a.key,
      expr: compileExpr(a.valueExpression),
    })),
  };
}

/** Evaluates an expression; throws Error with the text Kubernetes shows for it. */
function run(e: Expr, vars: Record<string, unknown>): unknown {
  if (e.error) throw new Error(e.error);
  try {
    return e.program!.evaluate(vars);
  } catch (err) {
    if (!(err instanceof CelEvalError)) throw err;
    throw new Error(`expression '${e.source}' resulted in error: ${err.message}`, { cause: err });
  }
}

function selects(sel: any, labels: Record<string, string> | undefined): boolean {
  if (!sel || !Object.keys(sel).length) return true;
  try {
    const s = selectorFromObject(sel);
    return s ? s.matches(labels ?? {}) : true;
  } catch {
    return false;
  }
}

/** Variables are resolved lazily, in order, like Kubernetes' composited activations. */
function lazyVariables(
  defs: CompiledPolicy['variables'],
  vars: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const d of defs) {
    let done = false;
    let value: unknown;
    Object.defineProperty(out, d.name, {
      enumerable: true,
      get: () => {
        if (!done) {
          value = run(d.expr, vars);
          done = true;
        }
        return value;
      },
    });
  }
  return out;
}

export class ValidatingAdmissionPolicy implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly policies: Lister;
  private readonly bindings: Lister;
  private readonly namespaces: Lister;
  private readonly compiled = new Map<string, CompiledPolicy>();

  constructor(private readonly registry: () => Registry) {
    this.policies = new Lister(registry, GROUP, 'validatingadmissionpolicies');
    this.bindings = new Lister(registry, GROUP, 'validatingadmissionpolicybindings');
    this.namespaces = new Lister(registry, '', 'namespaces');
  }

  private policy(p: any): CompiledPolicy {
    const name = p.metadata.name;
    let c = this.compiled.get(name);
    if (!c || c.resourceVersion !== (p.metadata.resourceVersion ?? '')) {
      c = compilePolicy(p);
      this.compiled.set(name, c);
    }
    return c;
  }

  private matches(
    m: any,
    a: AdmissionAttributes,
    namespaced: boolean,
    nsLabels: Record<string, string> | null,
  ): boolean {
    if (!m) return true;
    if (!(m.resourceRules ?? []).some((r: any) => ruleMatches(r, a, a.version, namespaced) && names(r, a)))
      return false;
    if (
      (m.excludeResourceRules ?? []).some((r: any) => ruleMatches(r, a, a.version, namespaced) && names(r, a))
    )
      return false;
    if (nsLabels !== null && !selects(m.namespaceSelector, nsLabels)) return false;
    const labels = (a.object ?? a.oldObject)?.metadata?.labels;
    const oldLabels = a.oldObject?.metadata?.labels;
    if (
      m.objectSelector &&
      !selects(m.objectSelector, labels) &&
      !(a.oldObject && selects(m.objectSelector, oldLabels))
    )
      return false;
    return true;
  }

  /** The param objects of a binding, or the reason there are none (Deny) / null (Allow: skip). */
  private async params(
    policy: any,
    binding: any,
    a: AdmissionAttributes,
  ): Promise<unknown[] | string | null> {
    const kind = policy.spec?.paramKind;
    if (!kind) return [null];
    const ref = binding.spec?.paramRef;
    const denyMissing = ref?.parameterNotFoundAction === 'Deny';
    const missing = denyMissing
      ? 'no params found for policy binding with `Deny` parameterNotFoundAction'
      : null;
    if (!ref) return `failed to configure binding: param resource is required but no paramRef was specified`;
    const [group, version] = String(kind.apiVersion ?? '').includes('/')
      ? String(kind.apiVersion).split('/')
      : ['', kind.apiVersion];
    const served = this.registry()
      .all()
      .find((s) => s.info.group === group && s.info.version === version && s.info.kind === kind.kind);
    if (!served)
      return `failed to configure binding: failed to find resource referenced by paramKind: '${kind.apiVersion}, Kind=${kind.kind}'`;
    const lister = new Lister(this.registry, group, served.info.resource);
    const ns = served.info.namespaced ? (ref.namespace ?? a.namespace) : '';
    if (ref.name) {
      const obj = await lister.get(ns, ref.name);
      if (!obj) return missing && `failed to configure binding: ${missing}`;
      if (served.prepare) await served.prepare([obj]);
      return [served.fromStorage(obj)];
    }
    const all = (await lister.list(ns)).filter((o) => selects(ref.selector ?? {}, o.metadata?.labels));
    if (!all.length) return missing && `failed to configure binding: ${missing}`;
    if (served.prepare) await served.prepare(all);
    return all.map((o) => served.fromStorage(o));
  }

  async validate(a: AdmissionAttributes): Promise<void> {
    if (a.group === GROUP && OWN_RESOURCES.has(a.resource)) return;
    const bindings = await this.bindings.list();
    if (!bindings.length) return;
    const served = this.registry().lookup(a.group, a.version, a.resource);
    const namespaced = served ? served.info.namespaced && a.resource !== 'namespaces' : !!a.namespace;
    let nsObject: any = undefined;
    const nsLabels = async (): Promise<Record<string, string> | null> => {
      if (a.group === '' && a.resource === 'namespaces')
        return (a.object ?? a.oldObject)?.metadata?.labels ?? {};
      if (!a.namespace) return null;
      if (nsObject === undefined) nsObject = await this.namespaces.get('', a.namespace);
      return nsObject?.metadata?.labels ?? {};
    };
    const sorted = bindings.slice().sort((x, y) => (x.metadata.name < y.metadata.name ? -1 : 1));
    for (const binding of sorted) {
      const policyObj = await this.policies.get('', binding.spec?.policyName ?? '');
      if (!policyObj) continue;
      const labels = await nsLabels();
      if (!this.matches(policyObj.spec?.matchConstraints, a, namespaced, labels)) continue;
      if (binding.spec?.matchResources && !this.matches(binding.spec.matchResources, a, namespaced, labels))
        continue;
      await this.evaluate(policyObj, binding, a, nsObject ?? null);
    }
  }

  private async evaluate(policyObj: any, binding: any, a: AdmissionAttributes, nsObject: any): Promise<void> {
    const policy = this.policy(policyObj);
    const pName = policyObj.metadata.name;
    const bName = binding.metadata.name;
    const actions: string[] = binding.spec?.validationActions ?? [];
    const failClosed = (policyObj.spec?.failurePolicy ?? 'Fail') === 'Fail';
    const prefix = `ValidatingAdmissionPolicy '${pName}' with binding '${bName}'`;
    const deny = (message: string, reason = 'Invalid'): never => {
      const full = `${prefix} denied request: ${message}`;
      const md = (a.object ?? a.oldObject)?.metadata;
      const name = a.name || md?.name || md?.generateName || 'Unknown';
      const qualified = a.group ? `${a.resource}.${a.group}` : a.resource;
      throw new StatusError(
        REASON_CODES[reason] ?? 422,
        reason as any,
        `${qualified} "${name}" is forbidden: ${full}`,
        {
          name,
          group: a.group,
          kind: a.resource,
          causes: [{ message: full }],
        },
      );
    };
    /** An expression error: failurePolicy Fail acts like a failed validation, Ignore skips it. */
    const failed = (err: Error) => {
      log.v(2)?.info('policy expression failed', { policy: pName, binding: bName, err: err.message });
      if (failClosed) act(err.message, undefined, -1);
    };
    const act = (message: string, reason: string | undefined, index: number) => {
      if (actions.includes('Warn')) (a.warnings ??= []).push(`Validation failed for ${prefix}: ${message}`);
      if (actions.includes('Audit') && a.auditAnnotations)
        a.auditAnnotations['validation.policy.admission.k8s.io/validation_failure'] = JSON.stringify([
          { message, policy: pName, binding: bName, expressionIndex: index, validationActions: actions },
        ]);
      if (actions.includes('Deny')) deny(message, reason);
    };

    const params = await this.params(policyObj, binding, a);
    if (params === null) return;
    if (typeof params === 'string') {
      if (failClosed) act(params, undefined, -1);
      return;
    }
    const request = {
      kind: { group: a.group, version: a.version, kind: a.kind },
      resource: { group: a.group, version: a.version, resource: a.resource },
      subResource: a.subresource,
      requestKind: { group: a.group, version: a.version, kind: a.kind },
      requestResource: { group: a.group, version: a.version, resource: a.resource },
      name: a.name,
      namespace: a.namespace,
      operation: a.operation,
      userInfo: {
        username: a.user.name,
        uid: a.user.uid ?? '',
        groups: a.user.groups ?? [],
        extra: a.user.extra ?? {},
      },
      dryRun: a.dryRun,
    };
    for (const param of params) {
      const vars: Record<string, unknown> = {
        object: jsonToCel(a.operation === 'DELETE' ? null : a.object),
        oldObject: jsonToCel(a.oldObject ?? null),
        params: jsonToCel(param),
        request: jsonToCel(request),
        namespaceObject: jsonToCel(nsObject),
        authorizer: null,
      };
      vars.variables = lazyVariables(policy.variables, vars);
      let matched = true;
      for (const m of policy.matchConditions) {
        try {
          if (run(m.expr, vars) !== true) {
            matched = false;
            break;
          }
        } catch (e) {
          failed(e as Error);
          matched = false;
          break;
        }
      }
      if (!matched) continue;
      policy.validations.forEach((v, i) => {
        let ok: unknown;
        try {
          ok = run(v.expr, vars);
        } catch (e) {
          failed(e as Error);
          return;
        }
        if (ok === true) return;
        let message = '';
        if (v.message) {
          try {
            const m = run(v.message, vars);
            if (typeof m === 'string' && m.trim() && !m.includes('\n')) message = m.trim();
          } catch {
            /* Kubernetes falls back to message */
          }
        }
        if (!message) message = v.v.message?.trim() || `failed expression: ${v.v.expression.trim()}`;
        act(message, v.v.reason, i);
      });
      for (const an of policy.auditAnnotations) {
        try {
          const value = run(an.expr, vars);
          if (typeof value === 'string' && a.auditAnnotations)
            a.auditAnnotations[`${pName}/${an.key}`] = value;
        } catch (e) {
          failed(e as Error);
        }
      }
    }
  }
}

/** resourceNames of a rule (empty: every name). */
function names(r: any, a: AdmissionAttributes): boolean {
  const list: string[] = r.resourceNames ?? [];
  return !list.length || list.includes(a.name);
}
