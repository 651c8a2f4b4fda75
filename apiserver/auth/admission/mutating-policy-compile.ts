// The CEL of a MutatingAdmissionPolicy compiled: matchConditions and
// variables in the policy environment, mutations in the mutation environment
// (JSONPatch, object construction, jsonpatch.escapeKey; see
// shared/cel/mutation.ts). Used by the plugin (once per policy generation) and
// by the registry when the policy is written (mutating-policy-strategy.ts).
import type { CelEnvironment } from '../../../shared/cel/engine';
import { registerMutationLibrary, rewriteObjectConstruction } from '../../../shared/cel/mutation';
import { compileExpr, policyEnvironment, type Expr } from './admission-policy';

export interface Mutation {
  patchType: 'JSONPatch' | 'ApplyConfiguration';
  expr: Expr;
}

export interface CompiledMutatingPolicy {
  matchConditions: { name: string; expr: Expr }[];
  variables: { name: string; expr: Expr }[];
  mutations: Mutation[];
}

let mutationEnv: CelEnvironment | undefined;

/** The environment of mutation expressions (one per process; children are cheap clones). */
export function mutationEnvironment(): CelEnvironment {
  if (!mutationEnv) {
    mutationEnv = policyEnvironment();
    registerMutationLibrary(mutationEnv);
  }
  return mutationEnv.clone();
}

/** The expression of a mutation (and the field it sits in), or undefined when the mutation has none. */
export function mutationExpression(
  m: any,
): { patchType: Mutation['patchType']; field: string; source: string } | undefined {
  if (m?.patchType === 'JSONPatch' && typeof m.jsonPatch?.expression === 'string')
    return { patchType: 'JSONPatch', field: 'jsonPatch', source: m.jsonPatch.expression };
  if (m?.patchType === 'ApplyConfiguration' && typeof m.applyConfiguration?.expression === 'string')
    return {
      patchType: 'ApplyConfiguration',
      field: 'applyConfiguration',
      source: m.applyConfiguration.expression,
    };
  return undefined;
}

/** What each patch type's expression must evaluate to (cel-go's names). */
const RETURN_TYPES: Record<Mutation['patchType'], string> = {
  JSONPatch: 'list(JSONPatch)',
  ApplyConfiguration: 'Object',
};

/** cel-go's name of a type (list(int), map(string, dyn)). */
const celGoType = (t: string) => t.replace(/</g, '(').replace(/>/g, ')');

/** A mutation's expression compiled, refused when it does not return what its patch type needs. */
export function compileMutation(patchType: Mutation['patchType'], source: string): Expr {
  const e = compileExpr(source, mutationEnvironment, rewriteObjectConstruction);
  if (!e.program) return e;
  const got = celGoType(e.program.outputType);
  if (got !== RETURN_TYPES[patchType])
    return { source, error: `must evaluate to ${RETURN_TYPES[patchType]} but got ${got}` };
  return e;
}

export function compileMutatingPolicy(p: any): CompiledMutatingPolicy {
  const spec = p.spec ?? {};
  const mutations: Mutation[] = [];
  for (const m of spec.mutations ?? []) {
    const e = mutationExpression(m);
    if (e) mutations.push({ patchType: e.patchType, expr: compileMutation(e.patchType, e.source) });
  }
  return {
    matchConditions: (spec.matchConditions ?? []).map((m: any) => ({
      name: m.name,
      expr: compileExpr(m.expression),
    })),
    variables: (spec.variables ?? []).map((v: any) => ({ name: v.name, expr: compileExpr(v.expression) })),
    mutations,
  };
}
