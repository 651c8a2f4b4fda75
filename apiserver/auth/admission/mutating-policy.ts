// MutatingAdmissionPolicy (k8s.io/apiserver/pkg/admission/plugin/policy/mutating):
// every MutatingAdmissionPolicyBinding whose policy exists and whose match
// rules select a CREATE, UPDATE or CONNECT request applies the policy's
// mutations in order, once per param object, after its matchConditions:
// `JSONPatch` mutations evaluate to a list of JSONPatch operations applied to
// the object, `ApplyConfiguration` mutations to an `Object{...}` merged into it
// as server-side apply merges (apply-configuration.ts). A change asks the
// chain for a second run, where policies with reinvocationPolicy IfNeeded run
// again. A failing mutation is skipped under failurePolicy Ignore and refuses
// the request under Fail ("policy 'p' with binding 'b' denied request: ...").
// Mutations are not recorded in managedFields (as in Kubernetes: the field
// manager runs before admission).
import { jsonEqual } from '../../../shared/api/json-value';
import { isStatusError, StatusError, type Status } from '../../../shared/api/status';
import { logger } from '../../../shared/log';
import { JSONPatch, celToJson, typeNameErrors } from '../../../shared/cel/mutation';
import { JSONPatchError, applyJSONPatchOps, type JSONPatchOperation } from '../../apply/json-patch';
import type { Registry } from '../../registry/registry';
import {
  ADMISSION_CONFIGURATION_RESOURCES,
  celVariables,
  CompiledPolicies,
  GROUP,
  matchConditions,
  PolicySource,
  run,
  type Invocation,
} from './admission-policy';
import { compileMutatingPolicy, type CompiledMutatingPolicy, type Mutation } from './mutating-policy-compile';
import { HookReinvocation } from './reinvocation';
import type { AdmissionAttributes, AdmissionPlugin } from './types';
import { decodeMutated } from './util';
import { applyConfiguration } from './apply-configuration';
import type { AuthzCheck } from '../../../shared/cel/library/authz';

const log = logger('admission');
const PLUGIN = 'MutatingAdmissionPolicy';

/** A failed policy: reported when its failurePolicy is Fail. */
interface PolicyError {
  policy: any;
  binding: any;
  message: string;
  reason?: Status['reason'];
}

export class MutatingAdmissionPolicy implements AdmissionPlugin {
  readonly name = PLUGIN;
  private readonly source: PolicySource;
  private readonly compiled = new CompiledPolicies(compileMutatingPolicy);

  constructor(
    private readonly registry: () => Registry,
    private readonly authz: AuthzCheck,
  ) {
    this.source = new PolicySource(registry, 'mutatingadmissionpolicies', 'mutatingadmissionpolicybindings');
  }

  admit(a: AdmissionAttributes): Promise<void> | undefined {
    if (a.operation === 'DELETE') return;
    if (a.group === GROUP && ADMISSION_CONFIGURATION_RESOURCES.has(a.resource)) return;
    if (this.source.unconfigured()) return;
    return this.admitSelected(a);
  }

  private async admitSelected(a: AdmissionAttributes): Promise<void> {
    const { invocations, namespaceObject } = await this.source.select(a);
    if (!invocations.length) return;
    const errors: PolicyError[] = [];
    const runnable: { inv: Invocation; param: any }[] = [];
    for (const inv of invocations) {
      if (Array.isArray(inv.params)) for (const param of inv.params) runnable.push({ inv, param });
      else errors.push({ policy: inv.policy, binding: inv.binding, message: inv.params.error });
    }
    if (runnable.length) {
      const r = a.reinvocation;
      const state = r?.value(PLUGIN, () => new HookReinvocation());
      if (r?.isReinvoke && state?.changedSinceLastInvocation(a.object))
        state.requireReinvokingPreviouslyInvoked();
      try {
        for (const { inv, param } of runnable)
          await this.invoke(a, inv, param, namespaceObject, state, errors);
      } finally {
        state?.setLastInvocationOutput(a.object);
      }
    }
    const failing = errors.filter((e) => (e.policy.spec?.failurePolicy ?? 'Fail') !== 'Ignore');
    for (const e of errors)
      if (!failing.includes(e))
        log.v(2)?.info('mutating policy failed; failurePolicy Ignore', {
          policy: e.policy.metadata.name,
          err: e.message,
        });
    if (failing.length) throw deniedByPolicy(a, failing);
  }

  private async invoke(
    a: AdmissionAttributes,
    inv: Invocation,
    param: any,
    nsObject: any,
    state: HookReinvocation | undefined,
    errors: PolicyError[],
  ): Promise<void> {
    const policy: CompiledMutatingPolicy = this.compiled.get(inv.policy);
    const fail = (message: string, reason?: Status['reason']) =>
      errors.push({ policy: inv.policy, binding: inv.binding, message, reason });
    const matched = matchConditions(
      policy.matchConditions,
      celVariables(a, param, nsObject, policy.variables, this.authz),
    );
    if (matched instanceof Error) {
      // Kubernetes' matcher: an error under Ignore is a non-match, under Fail an Invalid policy error.
      if ((inv.policy.spec?.failurePolicy ?? 'Fail') !== 'Ignore') fail(matched.message, 'Invalid');
      return;
    }
    if (!matched) return;
    const key = JSON.stringify([
      inv.policy.metadata.name,
      inv.binding.metadata.name,
      param?.metadata?.namespace ?? '',
      param?.metadata?.name ?? '',
    ]);
    if (a.reinvocation?.isReinvoke && !state?.shouldReinvoke(key)) return;
    const before = structuredClone(a.object);
    for (const m of policy.mutations) {
      if (!a.object) continue;
      try {
        const vars = celVariables(a, param, nsObject, policy.variables, this.authz);
        a.object = await this.mutate(a, m, vars);
      } catch (err) {
        if (isStatusError(err)) throw err;
        fail((err as Error).message, 'Invalid');
      }
    }
    if (!jsonEqual(before, a.object)) {
      state?.requireReinvokingPreviouslyInvoked();
      if (a.reinvocation) a.reinvocation.shouldReinvoke = true;
    }
    if (inv.policy.spec?.reinvocationPolicy === 'IfNeeded') state?.addReinvocable(key);
  }

  /**
   * One mutation's result (a new object, decoded and defaulted as Kubernetes
   * does after each mutation); throws an Error worded as Kubernetes words it.
   */
  private async mutate(a: AdmissionAttributes, m: Mutation, vars: Record<string, unknown>): Promise<any> {
    if (m.expr.error) throw new Error(m.expr.error);
    const result = run(m.expr, vars);
    if (m.patchType === 'JSONPatch')
      return decodeMutated(this.registry(), a, applyPatch(a.object, jsonPatchOps(result)), true);
    return decodeMutated(this.registry(), a, applyConfiguration(this.registry(), a, result), false);
  }
}

/** The operations of a JSONPatch expression's result. */
function jsonPatchOps(result: unknown): JSONPatchOperation[] {
  if (!Array.isArray(result))
    throw new Error('type mismatch: JSONPatchType.expression should evaluate to array');
  return result.map((v) => {
    if (!(v instanceof JSONPatch))
      throw new Error(
        `type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch: unsupported type conversion`,
      );
    const op: JSONPatchOperation = { op: v.op ?? '', path: v.path ?? '' } as JSONPatchOperation;
    if (v.from) (op as any).from = v.from;
    if (v.value !== undefined) {
      const errs = typeNameErrors(v.value);
      if (errs.length) throw new Error(`type mismatch: ${errs.join('\n')}`);
      (op as any).value = celToJson(v.value);
    }
    return op;
  });
}

/** The object after the operations; a failed `test` leaves it unchanged, as Kubernetes does. */
function applyPatch(object: any, ops: JSONPatchOperation[]): any {
  try {
    return applyJSONPatchOps(object, ops);
  } catch (err) {
    if (!(err instanceof JSONPatchError)) throw err;
    if (/^testing value .* failed: test failed$/.test(err.message)) return structuredClone(object);
    throw new Error(`JSON Patch: ${err.message}`, { cause: err });
  }
}

/**
 * Kubernetes' generic policy dispatcher error: admission.NewForbidden with the
 * first failure's message (and reason), every failure a cause.
 */
function deniedByPolicy(a: AdmissionAttributes, errors: PolicyError[]): StatusError {
  const messages = errors.map(
    (e) =>
      `policy '${e.policy.metadata.name}' with binding '${e.binding.metadata.name}' denied request: ${e.message}`,
  );
  const md = (a.object ?? a.oldObject)?.metadata;
  const name = a.name || md?.name || md?.generateName || 'Unknown';
  return new StatusError(403, errors[0].reason ?? 'Forbidden', messages[0], {
    name,
    group: a.group,
    kind: a.resource,
    causes: messages.map((message) => ({ message })),
  });
}
