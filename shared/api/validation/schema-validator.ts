// Schema validation with ajv, compiled lazily per kind from the facts (one
// validator per kind, compiled on its first object, never all up front), and
// ajv's errors translated to Kubernetes FieldErrors with Kubernetes paths
// (`spec.containers[0].name`, `metadata.labels[app]`).
//
// For built-in kinds Kubernetes enforces types while decoding (see
// unknown-fields.ts) and its Go validation decides what is required; the schema
// here keeps the enums and the `required` of string and list fields, minus the
// ones Go validation reports differently (REQUIRED_SKIP).
import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type addFormatsFn from 'ajv-formats';
import { definitionOf, typeSchema } from '../schema';
import { typedDecoded } from '../unknown-fields';
import type { FieldSchema, GroupVersionKind } from '../schema-types';
import type { FieldError } from '../field-errors';
import { notSupported, required } from '../field-errors';
import { parseQuantity } from './quantity';
import { child, index, key } from './path';

const ID = 'https://tkube.local/defs/';
const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';

/** Definition.field pairs whose `required` Go validation words differently or does not enforce. */
const REQUIRED_SKIP = new Set([
  META + 'OwnerReference.*',
  META + 'LabelSelectorRequirement.*',
  META + 'Condition.*',
  'io.k8s.api.core.v1.NodeSelectorRequirement.*',
  'io.k8s.api.core.v1.ScopedResourceSelectorRequirement.*',
  'io.k8s.api.core.v1.NodeSystemInfo.*',
  'io.k8s.api.core.v1.NodeSelector.nodeSelectorTerms',
  'io.k8s.api.core.v1.Taint.key',
  'io.k8s.api.core.v1.HTTPHeader.value',
  'io.k8s.api.core.v1.TopologySpreadConstraint.*',
  'io.k8s.api.core.v1.PodAffinityTerm.topologyKey',
  'io.k8s.api.core.v1.SeccompProfile.type',
  'io.k8s.api.core.v1.AppArmorProfile.type',
  'io.k8s.api.core.v1.ContainerResizePolicy.*',
  'io.k8s.api.core.v1.ContainerRestartRule.*',
  'io.k8s.api.rbac.v1.PolicyRule.verbs',
  'io.k8s.api.rbac.v1.Subject.kind',
  'io.k8s.api.rbac.v1.RoleRef.kind',
  'io.k8s.api.certificates.v1.CertificateSigningRequestSpec.request',
  'io.k8s.api.autoscaling.v2.MetricSpec.type',
  'io.k8s.api.autoscaling.v2.MetricTarget.type',
  'io.k8s.api.autoscaling.v2.ResourceMetricSource.name',
  'io.k8s.api.networking.v1.HTTPIngressPath.pathType',
  'io.k8s.api.discovery.v1.Endpoint.addresses',
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook.sideEffects',
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook.admissionReviewVersions',
  'io.k8s.api.admissionregistration.v1.MutatingWebhook.sideEffects',
  'io.k8s.api.admissionregistration.v1.MutatingWebhook.admissionReviewVersions',
  'io.k8s.api.admissionregistration.v1.ServiceReference.*',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.ServiceReference.*',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec.versions',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion.name',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.WebhookConversion.conversionReviewVersions',
  // Status conditions: the status strategies of these kinds leave their type and status unchecked
  // (a CRD's status validation, for one, checks acceptedNames only).
  'io.k8s.api.apps.v1.DaemonSetCondition.*',
  'io.k8s.api.apps.v1.DeploymentCondition.*',
  'io.k8s.api.apps.v1.ReplicaSetCondition.*',
  'io.k8s.api.apps.v1.StatefulSetCondition.*',
  'io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerCondition.*',
  'io.k8s.api.batch.v1.JobCondition.*',
  'io.k8s.api.core.v1.ComponentCondition.*',
  'io.k8s.api.core.v1.NamespaceCondition.*',
  'io.k8s.api.core.v1.NodeCondition.*',
  'io.k8s.api.core.v1.PersistentVolumeClaimCondition.*',
  'io.k8s.api.core.v1.PodCondition.*',
  'io.k8s.api.core.v1.ReplicationControllerCondition.*',
  'io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition.*',
  'io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceCondition.*',
]);

/**
 * Enum fields: the values Go validation accepts, in the order its message
 * lists them (facts are sorted, and some list constants Go does not accept).
 * `null` means semantic validation reports this field; the schema leaves it alone.
 */
const ENUM_OVERRIDE: Record<string, string[] | null> = {
  'io.k8s.api.core.v1.PodSpec.restartPolicy': ['Always', 'OnFailure', 'Never'],
  'io.k8s.api.core.v1.Toleration.operator': ['Equal', 'Exists'],
  'io.k8s.api.core.v1.Toleration.effect': ['NoSchedule', 'PreferNoSchedule', 'NoExecute'],
  'io.k8s.api.core.v1.Taint.effect': ['NoSchedule', 'PreferNoSchedule', 'NoExecute'],
  'io.k8s.api.core.v1.ServiceSpec.ipFamilyPolicy': ['SingleStack', 'PreferDualStack', 'RequireDualStack'],
  'io.k8s.api.core.v1.ServiceSpec.ipFamilies': ['IPv4', 'IPv6'],
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec.accessModes': null,
  'io.k8s.api.core.v1.PersistentVolumeSpec.accessModes': null,
  'io.k8s.api.core.v1.NodeSelectorRequirement.operator': null,
  'io.k8s.api.batch.v1.JobSpec.completionMode': ['NonIndexed', 'Indexed'],
  'io.k8s.api.apps.v1.DeploymentStrategy.type': null,
  'io.k8s.api.apps.v1.DaemonSetUpdateStrategy.type': null,
  'io.k8s.api.apps.v1.StatefulSetUpdateStrategy.type': null,
  'io.k8s.api.apps.v1.StatefulSetSpec.podManagementPolicy': null,
  'io.k8s.api.admissionregistration.v1.ValidatingWebhook.sideEffects': null,
  'io.k8s.api.admissionregistration.v1.MutatingWebhook.sideEffects': null,
  'io.k8s.api.networking.v1.NetworkPolicySpec.policyTypes': ['Ingress', 'Egress'],
  'io.k8s.api.storage.v1.StorageClass.reclaimPolicy': ['Delete', 'Retain'],
};

let ajv: Ajv | undefined;

/** ajv and ajv-formats, loaded on the first validation: ~60 ms we keep out of start-up. */
export function loadAjv(): { Ajv: typeof Ajv; addFormats: typeof addFormatsFn } {
  /* eslint-disable @typescript-eslint/no-require-imports */
  return {
    Ajv: (require('ajv') as { default: typeof Ajv }).default,
    addFormats: (require('ajv-formats') as { default: typeof addFormatsFn }).default,
  };
  /* eslint-enable @typescript-eslint/no-require-imports */
}

function instance(): Ajv {
  if (!ajv) {
    const { Ajv, addFormats } = loadAjv();
    ajv = new Ajv({
      allErrors: true,
      strict: false,
      validateSchema: false,
      inlineRefs: false,
      messages: false,
    });
    addFormats(ajv, ['date-time', 'byte', 'int32', 'int64', 'double']);
    ajv.addFormat('quantity', {
      type: 'string',
      validate: (s: string) => {
        try {
          parseQuantity(s.trim());
          return true;
        } catch {
          return false;
        }
      },
    });
    ajv.addFormat('int-or-string', true);
  }
  return ajv;
}

type JSONSchema = Record<string, unknown>;

function scalar(type: string | undefined, format: string | undefined): JSONSchema {
  const s: JSONSchema = { type: type === 'integer' ? 'integer' : type };
  if (format === 'byte' || format === 'int32' || format === 'int64' || format === 'date-time')
    s.format = format;
  return s;
}

function isScalarRef(def: string): boolean {
  const t = typeSchema(def);
  return !!t && t.type !== undefined && t.type !== 'object';
}

/**
 * Two schemas per definition. The full one checks types and formats too, for objects
 * no typed decode has seen (patch results, converted objects). The typed one is for
 * objects the typed decode accepted (unknown-fields.ts, typedDecoded): their every
 * field already has its Go type, format and range, so it keeps only the enums and
 * the `required` lists, and leaves out the fields with none below them.
 */
type Variant = { id: string; typed: boolean; added: Set<string>; compiled: Map<string, ValidateFunction> };
const FULL: Variant = { id: ID, typed: false, added: new Set(), compiled: new Map() };
const TYPED: Variant = { id: ID + 'typed/', typed: true, added: new Set(), compiled: new Map() };

/** The enum values of a scalar field, as the schema lists them (undefined: none, or Go validation reports it). */
function enumOf(owner: string, name: string, f: FieldSchema): string[] | undefined {
  if (!f.enum) return undefined;
  const override = ENUM_OVERRIDE[`${owner}.${name}`];
  // '' is how an unset optional enum looks in Go; it is never reported.
  return override === null ? undefined : [...(override ?? f.enum.filter((v) => v !== '')), ''];
}

function requiredOf(def: string): string[] {
  const t = typeSchema(def);
  if (!t || REQUIRED_SKIP.has(def + '.*')) return [];
  return (t.required ?? []).filter((name) => {
    const f = t.properties?.[name];
    if (!f || REQUIRED_SKIP.has(`${def}.${name}`)) return false;
    return f.type === 'string' || f.type === 'array' || (!!f.ref && isScalarRef(f.ref));
  });
}

const constrainedDefs = new Map<string, boolean>();

/** Whether a definition, or anything below it, has an enum or a required field (a cycle counts as yes). */
function constrained(def: string, visiting = new Set<string>()): boolean {
  const known = constrainedDefs.get(def);
  if (known !== undefined) return known;
  if (visiting.has(def)) return true;
  visiting.add(def);
  const t = typeSchema(def);
  let found = false;
  if (t?.type === 'object' && t.properties && !SPECIAL_SCHEMAS[def]) {
    found = requiredOf(def).length > 0;
    for (const [name, f] of Object.entries(t.properties)) {
      if (found) break;
      found = fieldConstrained(def, name, f, visiting);
    }
  }
  visiting.delete(def);
  constrainedDefs.set(def, found);
  return found;
}

function fieldConstrained(owner: string, name: string, f: FieldSchema, visiting: Set<string>): boolean {
  if (f.ref) return constrained(f.ref, visiting);
  if (f.items) return fieldConstrained(owner, name, f.items, visiting);
  if (f.values) return fieldConstrained(owner, name, f.values, visiting);
  return enumOf(owner, name, f) !== undefined;
}

/** A field's schema; undefined when the typed variant has nothing to check there. */
function convertField(
  owner: string,
  name: string,
  f: FieldSchema,
  refs: Set<string>,
  v: Variant,
): JSONSchema | undefined {
  if (f.ref) {
    if (v.typed && !constrained(f.ref)) return undefined;
    refs.add(f.ref);
    return { $ref: v.id + f.ref };
  }
  if (f.type === 'array') {
    const items = f.items ? convertField(owner, name, f.items, refs, v) : {};
    if (!v.typed) return { type: 'array', items };
    return items ? { items } : undefined;
  }
  if (f.type === 'object') {
    const values = f.values ? convertField(owner, name, f.values, refs, v) : undefined;
    if (!v.typed) return values ? { type: 'object', additionalProperties: values } : { type: 'object' };
    return values ? { additionalProperties: values } : undefined;
  }
  const allowed = enumOf(owner, name, f);
  if (v.typed) return allowed ? { enum: allowed } : undefined;
  const s = scalar(f.type, f.format);
  if (allowed) s.enum = allowed;
  return s;
}

/** Definitions with a custom Go decoder: their JSON form, checked by the full schema only. */
const SPECIAL_SCHEMAS: Record<string, JSONSchema> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { type: ['string', 'number'], format: 'quantity' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { type: ['integer', 'string'] },
  [META + 'Time']: { type: 'string', format: 'date-time' },
  [META + 'MicroTime']: { type: 'string', format: 'date-time' },
};

function convertDefinition(def: string, refs: Set<string>, v: Variant): JSONSchema {
  const special = SPECIAL_SCHEMAS[def];
  if (special) return v.typed ? {} : { ...special };
  const t = typeSchema(def);
  if (!t || !t.type || (t.type === 'object' && !t.properties)) return {};
  if (t.type !== 'object') return v.typed ? {} : scalar(t.type, t.format);
  const properties: JSONSchema = {};
  for (const [name, f] of Object.entries(t.properties ?? {})) {
    const p = convertField(def, name, f, refs, v);
    if (p) properties[name] = p;
  }
  const out: JSONSchema = v.typed ? { properties } : { type: 'object', properties };
  const req = requiredOf(def);
  if (req.length) out.required = req;
  return out;
}

/** Adds the definition and everything it references, each once, without compiling. */
function addClosure(def: string, v: Variant): void {
  const todo = [def];
  const a = instance();
  while (todo.length) {
    const d = todo.pop()!;
    if (v.added.has(d)) continue;
    v.added.add(d);
    const refs = new Set<string>();
    a.addSchema(convertDefinition(d, refs, v), v.id + d);
    for (const r of refs) if (!v.added.has(r)) todo.push(r);
  }
}

/** The compiled validator of a definition in one variant, compiling it on first use. */
function compiledFor(definition: string, v: Variant): ValidateFunction {
  let fn = v.compiled.get(definition);
  if (!fn) {
    addClosure(definition, v);
    fn = instance().getSchema(v.id + definition)!;
    v.compiled.set(definition, fn);
  }
  return fn;
}

/** Definitions compiled so far (for tests and metrics). */
export const compiledDefinitions = (): string[] => [...FULL.compiled.keys(), ...TYPED.compiled.keys()];

/**
 * Schema errors of a built-in object, as FieldErrors. Unknown kinds return [].
 * An object the typed decode accepted gets the typed schema: the same errors, found with less work.
 */
export function schemaErrors(obj: Record<string, unknown>, gvk: GroupVersionKind): FieldError[] {
  const def = definitionOf(gvk);
  if (!def) return [];
  const validate = compiledFor(def, typedDecoded(obj, def) ? TYPED : FULL);
  if (validate(obj)) return [];
  const out: FieldError[] = [];
  for (const e of validate.errors ?? []) {
    const fe = translate(e, obj, def);
    if (fe) out.push(fe);
  }
  return out;
}

/** Follows a JSON pointer through data and facts to build Kubernetes' path. */
export function kubePath(
  obj: unknown,
  def: string,
  pointer: string,
): { path: string; value: unknown; owner?: string; field?: string } {
  const segs =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((s) => s.replace(/~1/g, '/').replace(/~0/g, '~'));
  let path = '';
  let value: unknown = obj;
  let cur: FieldSchema | undefined = { ref: def };
  let owner: string | undefined;
  let field: string | undefined;
  for (const seg of segs) {
    if (Array.isArray(value)) {
      path = index(path, Number(seg));
      cur = cur?.items;
    } else if (cur?.values) {
      path = key(path, seg);
      cur = cur.values;
    } else {
      owner = cur?.ref;
      field = seg;
      path = child(path, seg);
      cur = owner ? typeSchema(owner)?.properties?.[seg] : undefined;
    }
    value = value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[seg] : undefined;
  }
  return { path, value, owner, field };
}

function translate(e: ErrorObject, obj: unknown, def: string): FieldError | undefined {
  const at = kubePath(obj, def, e.instancePath);
  if (at.value === null) return undefined; // a null is an unset field in Go
  switch (e.keyword) {
    case 'required':
      return required(child(at.path, (e.params as { missingProperty: string }).missingProperty), '');
    case 'enum': {
      const allowed = (e.params as { allowedValues: string[] }).allowedValues.filter((v) => v !== '');
      return notSupported(at.path, at.value, allowed);
    }
    case 'type':
      // ajv knows no bigint: an integer past 2^53 (codec/json-int64) is an int64 all the same.
      if (typeof at.value === 'bigint' && /integer/.test(String((e.params as { type: string }).type)))
        return BigInt.asIntN(64, at.value) === at.value ? undefined : outOfInt64(at.path, at.value);
      return {
        type: 'FieldValueTypeInvalid',
        field: at.path,
        badValue: at.value,
        detail: `${at.path} in body must be of type ${(e.params as { type: string }).type}: ${JSON.stringify(goKind(at.value))}`,
      };
    default:
      return {
        type: 'FieldValueInvalid',
        field: at.path,
        badValue: at.value,
        detail: `${at.path} in body is invalid`,
      };
  }
}

function outOfInt64(path: string, value: bigint): FieldError {
  return { type: 'FieldValueInvalid', field: path, badValue: value, detail: `${path} in body is invalid` };
}

/** The type names kube-openapi prints for a value. */
export function goKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
