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
import { logger } from '../../../shared/log';
import type { Registry } from '../../registry/registry';
import {
  ADMISSION_CONFIGURATION_RESOURCES,
  celVariables,
  compileExpr,
  CompiledPolicies,
  GROUP,
  matchConditions,
  PolicySource,
  run,
  type Expr,
  type Invocation,
} from './admission-policy';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import type { AuthzCheck } from '../../../shared/cel/library/authz';

const log = logger('admission');
const REASON_CODES: Record<string, number> = {
  Unauthorized: 401,
  Forbidden: 403,
  Invalid: 422,
  RequestEntityTooLarge: 413,
};

interface CompiledPolicy {
  matchConditions: { name: string; expr: Expr }[];
  variables: { name: string; expr: Expr }[];
  validations: { v: any; expr: Expr; message?: Expr }[];
  auditAnnotations: { key: string; expr: Expr }[];
}

function compilePolicy(p: any): CompiledPolicy {
  const spec = p.spec ?? {};
  return {
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

export class ValidatingAdmissionPolicy implements AdmissionPlugin {
  readonly name = 'ValidatingAdmissionPolicy';
  private readonly source: PolicySource;
  private readonly compiled = new CompiledPolicies(compilePolicy);

  constructor(
    registry: () => Registry,
    private readonly authz: AuthzCheck,
  ) {
    this.source = new PolicySource(
      registry,
      'validatingadmissionpolicies',
      'validatingadmissionpolicybindings',
    );
  }

  validate(a: AdmissionAttributes): Promise<void> | undefined {
    if (a.group === GROUP && ADMISSION_CONFIGURATION_RESOURCES.has(a.resource)) return;
    if (this.source.unconfigured()) return;
    return this.validateSelected(a);
  }

  private async validateSelected(a: AdmissionAttributes): Promise<void> {
    const { invocations, namespaceObject } = await this.source.select(a);
    for (const inv of invocations) await this.evaluate(inv, a, namespaceObject);
  }

  private async evaluate(inv: Invocation, a: AdmissionAttributes, nsObject: any): Promise<void> {
    const { policy: policyObj, binding } = inv;
    const policy = this.compiled.get(policyObj);
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

    if (!Array.isArray(inv.params)) {
      if (failClosed) act(inv.params.error, undefined, -1);
      return;
    }
    for (const param of inv.params) {
      const vars = celVariables(a, param, nsObject, policy.variables, this.authz);
      const matched = matchConditions(policy.matchConditions, vars);
      if (matched instanceof Error) failed(matched);
      if (matched !== true) continue;
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
