// What ValidatingAdmissionPolicy and MutatingAdmissionPolicy share
// (k8s.io/apiserver/pkg/admission/plugin/policy/generic and .../cel): which
// bindings select a request (the policy's matchConstraints, then the binding's
// matchResources), the param objects of a binding (paramKind + paramRef), the
// CEL expressions compiled once per policy generation, lazily evaluated
// variables, matchConditions and the `request` variable.
import { selectorFromObject } from '../../../shared/api/labels';
import {
  CelCompileError,
  CelEvalError,
  compile,
  newEnvironment,
  type CelEnvironment,
  type Program,
  type SourceForm,
} from '../../../shared/cel/engine';
import { jsonToCel } from '../../../shared/cel/schema';
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes } from './types';
import { Lister } from './util';
import { ruleMatches } from './webhook';
import { AUTHORIZER_TYPE, CelAuthorizer, type AuthzCheck } from '../../../shared/cel/library/authz';

export { ADMISSION_CONFIGURATION_RESOURCES } from './util';

export const GROUP = 'admissionregistration.k8s.io';

/** The variables every policy expression may use (dyn but the authorizer: see docs/comparison.md). */
export const VARIABLES = ['object', 'oldObject', 'params', 'request', 'namespaceObject', 'variables'];

/** An environment declaring the policy variables. */
export function policyEnvironment(): CelEnvironment {
  const env = newEnvironment();
  for (const v of VARIABLES) env.registerVariable(v, 'dyn');
  env.registerVariable('authorizer', AUTHORIZER_TYPE);
  return env;
}

/**
 * An expression compiled once per policy generation; the error (cel's detail,
 * "compilation failed: ...") is kept to be reported when it is needed.
 */
export interface Expr {
  source: string;
  program?: Program;
  error?: string;
}

export function compileExpr(
  source: string,
  env: () => CelEnvironment = policyEnvironment,
  form?: (s: string) => SourceForm,
): Expr {
  try {
    return { source, program: compile(env(), source, form?.(source)) };
  } catch (e) {
    if (!(e instanceof CelCompileError)) throw e;
    return { source, error: `compilation failed: ${e.message}` };
  }
}

/** Evaluates an expression; throws Error with the text Kubernetes shows for it. */
export function run(e: Expr, vars: Record<string, unknown>): unknown {
  if (e.error) throw new Error(`compilation error: ${e.error}`);
  try {
    return e.program!.evaluate(vars);
  } catch (err) {
    if (!(err instanceof CelEvalError)) throw err;
    throw new Error(`expression '${e.source}' resulted in error: ${err.message}`, { cause: err });
  }
}

/** Compiled forms of policies, kept per name and recompiled when the resourceVersion changes. */
export class CompiledPolicies<T> {
  private readonly cache = new Map<string, { rv: string; compiled: T }>();
  constructor(private readonly compile: (policy: any) => T) {}

  get(p: any): T {
    const name = p.metadata.name;
    const rv = p.metadata.resourceVersion ?? '';
    let c = this.cache.get(name);
    if (!c || c.rv !== rv) {
      c = { rv, compiled: this.compile(p) };
      this.cache.set(name, c);
    }
    return c.compiled;
  }
}

export function selects(sel: any, labels: Record<string, string> | undefined): boolean {
  if (!sel || !Object.keys(sel).length) return true;
  try {
    const s = selectorFromObject(sel);
    return s ? s.matches(labels ?? {}) : true;
  } catch {
    return false;
  }
}

/** Variables are resolved lazily, in order, like Kubernetes' composited activations. */
export function lazyVariables(
  defs: { name: string; expr: Expr }[],
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

/**
 * matchConditions as Kubernetes' matcher evaluates them: any false means no
 * match (even when another condition failed); otherwise the errors, joined as
 * an aggregate, or true.
 */
export function matchConditions(
  conds: { name: string; expr: Expr }[],
  vars: Record<string, unknown>,
): boolean | Error {
  const errors: string[] = [];
  for (const m of conds) {
    try {
      if (run(m.expr, vars) === false) return false;
    } catch (e) {
      errors.push((e as Error).message);
    }
  }
  if (!errors.length) return true;
  return new Error(errors.length === 1 ? errors[0] : `[${errors.join(', ')}]`);
}

/** The `request` variable (an AdmissionRequest without its objects). */
export function admissionRequest(a: AdmissionAttributes): Record<string, unknown> {
  return {
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
}

/** The CEL variables of one evaluation (variables resolved lazily from the given definitions). */
export function celVariables(
  a: AdmissionAttributes,
  param: unknown,
  nsObject: any,
  variables: { name: string; expr: Expr }[],
  authz: AuthzCheck,
): Record<string, unknown> {
  const vars: Record<string, unknown> = {
    object: jsonToCel(a.operation === 'DELETE' ? null : a.object),
    oldObject: jsonToCel(a.oldObject ?? null),
    params: jsonToCel(param),
    request: jsonToCel(admissionRequest(a)),
    namespaceObject: jsonToCel(nsObject),
    // authorizer.requestResource: the request's own resource, at its version.
    authorizer: new CelAuthorizer(authz, a.user, {
      group: a.group,
      version: a.version,
      resource: a.resource,
      subresource: a.subresource,
      namespace: a.namespace,
      name: a.name,
    }),
  };
  vars.variables = lazyVariables(variables, vars);
  return vars;
}

/** resourceNames of a rule (empty: every name). */
function names(r: any, a: AdmissionAttributes): boolean {
  const list: string[] = r.resourceNames ?? [];
  return !list.length || list.includes(a.name);
}

/** One policy and binding selecting a request: its param objects, or the configuration error. */
export interface Invocation {
  policy: any;
  binding: any;
  params: unknown[] | { error: string };
}

/** The policies and bindings of one kind (validating or mutating) as the dispatcher selects them. */
export class PolicySource {
  private readonly policies: Lister;
  private readonly bindings: Lister;
  private readonly namespaces: Lister;

  constructor(
    private readonly registry: () => Registry,
    policyResource: string,
    bindingResource: string,
  ) {
    this.policies = new Lister(registry, GROUP, policyResource);
    this.bindings = new Lister(registry, GROUP, bindingResource);
    this.namespaces = new Lister(registry, '', 'namespaces');
  }

  private matches(
    m: any,
    a: AdmissionAttributes,
    namespaced: boolean,
    nsLabels: Record<string, string> | null,
  ): boolean {
    if (!m) return true;
    const rules: any[] = m.resourceRules ?? [];
    // No resourceRules (a binding's matchResources that only selects namespaces or objects):
    // every resource the policy's matchConstraints let through.
    if (rules.length && !rules.some((r) => ruleMatches(r, a, a.version, namespaced) && names(r, a)))
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

  /** The param objects of a binding; an empty list skips it (parameterNotFoundAction Allow). */
  private async params(policy: any, binding: any, a: AdmissionAttributes): Promise<Invocation['params']> {
    const kind = policy.spec?.paramKind;
    if (!kind) return [null];
    const ref = binding.spec?.paramRef;
    const configError = (m: string) => ({ error: `failed to configure binding: ${m}` });
    if (!ref) return configError('param resource is required but no paramRef was specified');
    const missing = () =>
      ref.parameterNotFoundAction === 'Deny'
        ? configError('no params found for policy binding with `Deny` parameterNotFoundAction')
        : [];
    const [group, version] = String(kind.apiVersion ?? '').includes('/')
      ? String(kind.apiVersion).split('/')
      : ['', kind.apiVersion];
    const served = this.registry()
      .all()
      .find((s) => s.info.group === group && s.info.version === version && s.info.kind === kind.kind);
    if (!served)
      return configError(
        `failed to find resource referenced by paramKind: '${kind.apiVersion}, Kind=${kind.kind}'`,
      );
    const lister = new Lister(this.registry, group, served.info.resource);
    const ns = served.info.namespaced ? (ref.namespace ?? a.namespace) : '';
    if (ref.name) {
      const obj = await lister.get(ns, ref.name);
      if (!obj) return missing();
      if (served.prepare) await served.prepare([obj]);
      return [served.fromStorage(obj)];
    }
    const all = (await lister.list(ns)).filter((o) => selects(ref.selector ?? {}, o.metadata?.labels));
    if (!all.length) return missing();
    if (served.prepare) await served.prepare(all);
    return all.map((o) => served.fromStorage(o));
  }

  /** The namespace object of the request (null for cluster-scoped requests and namespaces themselves). */
  private async namespaceObject(a: AdmissionAttributes): Promise<any> {
    if (!a.namespace || (a.group === '' && a.resource === 'namespaces')) return null;
    return (await this.namespaces.get('', a.namespace)) ?? null;
  }

  /** No binding of this kind exists (the usual case): select() would find nothing. */
  unconfigured(): boolean {
    return this.bindings.isEmpty();
  }

  /**
   * Every binding (by name) whose policy exists and whose match rules select
   * the request, and the request's namespace object (read only when there are bindings).
   */
  async select(a: AdmissionAttributes): Promise<{ invocations: Invocation[]; namespaceObject: any }> {
    const bindings = await this.bindings.list();
    if (!bindings.length) return { invocations: [], namespaceObject: null };
    const nsObject = await this.namespaceObject(a);
    const served = this.registry().lookup(a.group, a.version, a.resource);
    const namespaced = served ? served.info.namespaced && a.resource !== 'namespaces' : !!a.namespace;
    const nsLabels: Record<string, string> | null =
      a.group === '' && a.resource === 'namespaces'
        ? ((a.object ?? a.oldObject)?.metadata?.labels ?? {})
        : a.namespace
          ? (nsObject?.metadata?.labels ?? {})
          : null;
    const out: Invocation[] = [];
    const sorted = bindings.slice().sort((x, y) => (x.metadata.name < y.metadata.name ? -1 : 1));
    for (const binding of sorted) {
      const policy = await this.policies.get('', binding.spec?.policyName ?? '');
      if (!policy) continue;
      // A policy matches only by its resource rules (required when it is written; one stored
      // without them matches nothing, not everything).
      const constraints = policy.spec?.matchConstraints;
      if (!constraints?.resourceRules?.length || !this.matches(constraints, a, namespaced, nsLabels))
        continue;
      if (binding.spec?.matchResources && !this.matches(binding.spec.matchResources, a, namespaced, nsLabels))
        continue;
      out.push({ policy, binding, params: await this.params(policy, binding, a) });
    }
    return { invocations: out, namespaceObject: nsObject };
  }
}
