// Type checking of a ValidatingAdmissionPolicy, as kube-controller-manager's
// policy status controller does it (k8s.io/apiserver .../policy/validating
// TypeChecker): the expressions of spec.validations (expression and
// messageExpression) are compiled once per kind the policy's
// matchConstraints.resourceRules select, with `object` and `oldObject` typed
// by that kind's schema, `params` by the paramKind's schema, `request` and
// `namespaceObject` by Kubernetes' hand-made types, and `variables` by the
// types of the policy's variables. Compile errors become the warnings of
// status.typeChecking: "apps/v1, Kind=Deployment: ERROR: <input>:1:12: ...".
// Nothing here changes how the policy is enforced.
import { CelCompileError, compile, newEnvironment, type CelEnvironment } from './engine';
import { SchemaTypes, type Schema } from './schema';
import type { GroupVersionKind } from './openapi-refs';
import { AUTHORIZER_TYPE } from './library/authz';

/** At most this many kinds are checked per policy (Kubernetes' maxTypesToCheck). */
export const MAX_TYPES_TO_CHECK = 10;

export interface GroupVersionResource {
  group: string;
  version: string;
  resource: string;
}

/** Where the checker finds kinds and their schemas (kube: the RESTMapper and the schema resolver). */
export interface PolicySchemaSource {
  /** The kinds served as gvr; undefined when the server does not know it. */
  kindsFor(gvr: GroupVersionResource): Promise<GroupVersionKind[] | undefined>;
  /** Forget what discovery answered (kube: resetting the RESTMapper). */
  refresh(): void;
  /** The kind's schema with every ref resolved; undefined when there is none. */
  schemaFor(gvk: GroupVersionKind): Promise<Schema | undefined>;
}

export interface ExpressionWarning {
  fieldRef: string;
  warning: string;
}

/** apimachinery's GroupVersionKind.String(): "apps/v1, Kind=Deployment", "/v1, Kind=Pod". */
export const gvkString = (g: GroupVersionKind) => `${g.group}/${g.version}, Kind=${g.kind}`;

const str = { type: 'string' };
const time = { type: 'string', format: 'date-time' };
const strings = { type: 'array', items: str };
const obj = (properties: Record<string, Schema>): Schema => ({ type: 'object', properties });
const gvkSchema = obj({ group: str, version: str, kind: str });
const gvrSchema = obj({ group: str, version: str, resource: str });

/** Kubernetes' type of `request` (the admission request without uid, object and oldObject). */
const REQUEST_SCHEMA = obj({
  kind: gvkSchema,
  resource: gvrSchema,
  subResource: str,
  requestKind: gvkSchema,
  requestResource: gvrSchema,
  requestSubResource: str,
  name: str,
  namespace: str,
  operation: str,
  userInfo: obj({
    username: str,
    uid: str,
    groups: strings,
    extra: { type: 'object', additionalProperties: strings },
  }),
  dryRun: { type: 'boolean' },
  options: {},
});

/** Kubernetes' type of `namespaceObject` (some metadata, spec.finalizers, status). */
const NAMESPACE_SCHEMA = obj({
  metadata: obj({
    name: str,
    generateName: str,
    namespace: str,
    labels: { type: 'object', additionalProperties: str },
    annotations: { type: 'object', additionalProperties: str },
    UID: str,
    creationTimestamp: time,
    deletionGracePeriodSeconds: { type: 'integer' },
    deletionTimestamp: time,
    generation: { type: 'integer' },
    resourceVersion: str,
    finalizers: strings,
  }),
  spec: obj({ finalizers: strings }),
  status: obj({
    conditions: {
      type: 'array',
      items: obj({ status: str, type: str, lastTransitionTime: time, message: str, reason: str }),
    },
    phase: str,
  }),
});

/** One checked kind and the environment its expressions compile in. */
interface KindEnv {
  gvk: GroupVersionKind;
  /** object, oldObject, params, request, namespaceObject, authorizer and variables declared. */
  env?: CelEnvironment;
  /** Set when the environment could not be built: reported as "type checking error". */
  error?: string;
}

const VARIABLES_TYPE = 'kubernetes.variables';

/** The engine reports list<dyn> and map<dyn, dyn> as "list" and "map"; declarations want the full name. */
function declarable(t: string): string {
  if (t === 'list') return 'list<dyn>';
  if (t === 'map') return 'map<dyn, dyn>';
  return t;
}

/** A child of base with `variables` typed by vars. */
function withVariables(base: CelEnvironment, vars: Record<string, string>): CelEnvironment {
  const env = base.clone();
  const fields: Record<string, string> = {};
  for (const [name, t] of Object.entries(vars)) fields[name] = t;
  class Variables {}
  try {
    env.registerType(VARIABLES_TYPE, { ctor: Variables, fields });
  } catch {
    // A variable type the engine cannot declare as a field: every variable is dyn then.
    env.registerType(VARIABLES_TYPE, {
      ctor: Variables,
      fields: Object.fromEntries(Object.keys(vars).map((k) => [k, 'dyn'])),
    });
  }
  env.registerVariable('variables', VARIABLES_TYPE);
  return env;
}

/** The engine wants type names of two characters or more (Kubernetes appends a number to the kind). */
const typeName = (kind: string) => (kind.length < 2 ? `${kind}.type` : kind);

function kindEnv(
  gvk: GroupVersionKind,
  objectSchema: Schema,
  params: { gvk: GroupVersionKind; schema: Schema } | undefined,
  variables: { name?: unknown; expression?: unknown }[],
): KindEnv {
  const base = newEnvironment();
  const types = new SchemaTypes(base);
  const objectType = types.declare(objectSchema, typeName(gvk.kind), true);
  base.registerVariable('object', objectType);
  base.registerVariable('oldObject', objectType);
  if (params) {
    const name = typeName(params.gvk.kind === gvk.kind ? `${params.gvk.kind}.params` : params.gvk.kind);
    base.registerVariable('params', types.declare(params.schema, name, true));
  }
  base.registerVariable('request', types.declare(REQUEST_SCHEMA, 'kubernetes.AdmissionRequest'));
  base.registerVariable('namespaceObject', types.declare(NAMESPACE_SCHEMA, 'kubernetes.Namespace'));
  base.registerVariable('authorizer', AUTHORIZER_TYPE);
  const vars: Record<string, string> = {};
  for (const v of variables) {
    if (typeof v?.name !== 'string' || typeof v.expression !== 'string') continue;
    let t = 'dyn';
    try {
      t = declarable(compile(withVariables(base, vars), v.expression).outputType);
    } catch (e) {
      if (!(e instanceof CelCompileError)) throw e;
    }
    vars[v.name] = t;
  }
  return { gvk, env: withVariables(base, vars) };
}

/** The warning of one expression over every checked kind ("" when it compiles for all). */
function checkExpression(envs: KindEnv[], source: string): string {
  const messages: string[] = [];
  for (const e of envs) {
    if (!e.env) {
      messages.push(`${gvkString(e.gvk)}: type checking error: ${e.error}\n`);
      continue;
    }
    try {
      compile(e.env, source);
    } catch (err) {
      if (!(err instanceof CelCompileError)) throw err;
      messages.push(`${gvkString(e.gvk)}: ${err.message}\n`);
    }
  }
  return messages.join('\n');
}

function parseGroupVersion(apiVersion: unknown): { group: string; version: string } | undefined {
  if (typeof apiVersion !== 'string' || apiVersion === '') return undefined;
  const parts = apiVersion.split('/');
  if (parts.length === 1) return { group: '', version: parts[0] };
  if (parts.length === 2 && parts[0] && parts[1]) return { group: parts[0], version: parts[1] };
  return undefined;
}

const exact = (list: unknown, skip: RegExp): string[] | undefined => {
  if (!Array.isArray(list)) return [];
  const out: string[] = [];
  for (const x of list) {
    if (typeof x !== 'string') continue;
    if (skip.test(x)) return undefined;
    out.push(x);
  }
  return out;
};

const compareGVK = (a: GroupVersionKind, b: GroupVersionKind) =>
  a.group.localeCompare(b.group) || a.version.localeCompare(b.version) || a.kind.localeCompare(b.kind);

/**
 * The kinds a policy's resourceRules select, sorted by group, version, kind:
 * a rule with a wildcard group or version is skipped whole, wildcard resources
 * and subresources are left out, at most MAX_TYPES_TO_CHECK kinds.
 */
export async function typesToCheck(policy: any, source: PolicySchemaSource): Promise<GroupVersionKind[]> {
  const rules = policy?.spec?.matchConstraints?.resourceRules;
  if (!Array.isArray(rules) || rules.length === 0) return [];
  const found = new Map<string, GroupVersionKind>();
  let refreshed = false;
  let count = 0;
  const done = () => [...found.values()].sort(compareGVK);
  for (const rule of rules) {
    const groups = exact(rule?.apiGroups, /\*/);
    const versions = exact(rule?.apiVersions, /\*/);
    const resources = (Array.isArray(rule?.resources) ? rule.resources : []).filter(
      (r: unknown): r is string => typeof r === 'string' && !/[*/]/.test(r),
    );
    if (!groups?.length || !versions?.length || !resources.length) continue;
    for (const group of [...groups].sort())
      for (const version of [...versions].sort())
        for (const resource of [...resources].sort()) {
          const gvr = { group, version, resource };
          let kinds = await source.kindsFor(gvr);
          if (!kinds) {
            // Discovery may be older than the resource: ask again, once per policy.
            if (refreshed) continue;
            source.refresh();
            refreshed = true;
            kinds = await source.kindsFor(gvr);
            if (!kinds) continue;
          }
          for (const k of kinds) {
            found.set(gvkString(k), k);
            if (++count === MAX_TYPES_TO_CHECK) return done();
          }
        }
  }
  return done();
}

/** status.typeChecking.expressionWarnings of a policy (empty when every expression checks). */
export async function checkPolicy(policy: any, source: PolicySchemaSource): Promise<ExpressionWarning[]> {
  const spec = policy?.spec ?? {};
  const variables = Array.isArray(spec.variables) ? spec.variables : [];
  const gv = parseGroupVersion(spec.paramKind?.apiVersion);
  const paramsGVK =
    gv && typeof spec.paramKind?.kind === 'string' ? { ...gv, kind: spec.paramKind.kind } : undefined;
  const paramsSchema = paramsGVK ? await source.schemaFor(paramsGVK) : undefined;
  const params = paramsGVK && paramsSchema ? { gvk: paramsGVK, schema: paramsSchema } : undefined;

  const envs: KindEnv[] = [];
  for (const gvk of await typesToCheck(policy, source)) {
    const schema = await source.schemaFor(gvk);
    if (!schema) continue; // not found: this kind is not checked
    try {
      envs.push(kindEnv(gvk, schema, params, variables));
    } catch (e) {
      envs.push({ gvk, error: (e as Error).message });
    }
  }
  const warnings: ExpressionWarning[] = [];
  const validations = Array.isArray(spec.validations) ? spec.validations : [];
  validations.forEach((v: any, i: number) => {
    for (const key of ['expression', 'messageExpression']) {
      const source = v?.[key];
      if (typeof source !== 'string' || source === '') continue;
      const warning = checkExpression(envs, source);
      if (warning) warnings.push({ fieldRef: `spec.validations[${i}].${key}`, warning });
    }
  });
  return warnings;
}
