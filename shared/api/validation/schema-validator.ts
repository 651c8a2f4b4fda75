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
const added = new Set<string>();
const compiled = new Map<string, ValidateFunction>();

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

function convertField(owner: string, name: string, f: FieldSchema, refs: Set<string>): JSONSchema {
  if (f.ref) {
    refs.add(f.ref);
    return { $ref: ID + f.ref };
  }
  if (f.type === 'array')
    return { type: 'array', items: f.items ? convertField(owner, name, f.items, refs) : {} };
  if (f.type === 'object') {
    return f.values
      ? { type: 'object', additionalProperties: convertField(owner, name, f.values, refs) }
      : { type: 'object' };
  }
  const s = scalar(f.type, f.format);
  if (f.enum) {
    const key = `${owner}.${name}`;
    const override = ENUM_OVERRIDE[key];
    // '' is how an unset optional enum looks in Go; it is never reported.
    if (override !== null) s.enum = [...(override ?? f.enum.filter((v) => v !== '')), ''];
  }
  return s;
}

function convertDefinition(def: string, refs: Set<string>): JSONSchema {
  switch (def) {
    case 'io.k8s.apimachinery.pkg.api.resource.Quantity':
      return { type: ['string', 'number'], format: 'quantity' };
    case 'io.k8s.apimachinery.pkg.util.intstr.IntOrString':
      return { type: ['integer', 'string'] };
    case META + 'Time':
    case META + 'MicroTime':
      return { type: 'string', format: 'date-time' };
  }
  const t = typeSchema(def);
  if (!t || !t.type || (t.type === 'object' && !t.properties)) return {};
  if (t.type !== 'object') return scalar(t.type, t.format);
  const properties: JSONSchema = {};
  for (const [name, f] of Object.entries(t.properties ?? {}))
    properties[name] = convertField(def, name, f, refs);
  const out: JSONSchema = { type: 'object', properties };
  if (!REQUIRED_SKIP.has(def + '.*')) {
    const req = (t.required ?? []).filter((name) => {
      const f = t.properties?.[name];
      if (!f || REQUIRED_SKIP.has(`${def}.${name}`)) return false;
      return f.type === 'string' || f.type === 'array' || (!!f.ref && isScalarRef(f.ref));
    });
    if (req.length) out.required = req;
  }
  return out;
}

/** Adds the definition and everything it references, each once, without compiling. */
function addClosure(def: string): void {
  const todo = [def];
  const a = instance();
  while (todo.length) {
    const d = todo.pop()!;
    if (added.has(d)) continue;
    added.add(d);
    const refs = new Set<string>();
    a.addSchema(convertDefinition(d, refs), ID + d);
    for (const r of refs) if (!added.has(r)) todo.push(r);
  }
}

/** The compiled validator of a kind's definition, compiling it on first use. */
export function validatorFor(definition: string): ValidateFunction {
  let v = compiled.get(definition);
  if (!v) {
    addClosure(definition);
    v = instance().getSchema(ID + definition)!;
    compiled.set(definition, v);
  }
  return v;
}

/** Definitions compiled so far (for tests and metrics). */
export const compiledDefinitions = (): string[] => [...compiled.keys()];

/** Schema errors of a built-in object, as FieldErrors. Unknown kinds return []. */
export function schemaErrors(obj: Record<string, unknown>, gvk: GroupVersionKind): FieldError[] {
  const def = definitionOf(gvk);
  if (!def) return [];
  const validate = validatorFor(def);
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

/** The type names kube-openapi prints for a value. */
export function goKind(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
