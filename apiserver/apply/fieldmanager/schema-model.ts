// Type models for server-side apply: built-in kinds from shared/api's schema,
// custom resources from their structural schema, and unstructured objects.
// Nodes are built lazily and cached per definition, so a write never walks
// the schema beyond the fields its object has.
import { definitionOf, typeSchema } from '../../../shared/api/schema';
import type { FieldSchema, GroupVersionKind } from '../../../shared/api/schema-types';
import { isObject } from '../json-util';
import { DEDUCED, SCALAR, type ListNode, type MapNode, type TypeModel, type TypeNode } from './types';

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';

/**
 * List-map key fields with defaults (+default markers in the Go types), used
 * when an applied item omits the key: ports without protocol are TCP.
 */
const KEY_DEFAULTS: Record<string, Record<string, unknown>> = {
  'io.k8s.api.core.v1.ContainerPort': { protocol: 'TCP' },
  'io.k8s.api.core.v1.ServicePort': { protocol: 'TCP' },
};

/**
 * Struct fields Go types hold by value, so a Kubernetes object always carries
 * them (at least as {}). The facts do not record pointer-ness; this covers the
 * workload types, where it shows in the "." entries of Update ownership.
 */
const VALUE_STRUCTS: Record<string, readonly string[]> = {
  'io.k8s.api.core.v1.PodTemplateSpec': ['metadata', 'spec'],
  'io.k8s.api.apps.v1.DeploymentSpec': ['template', 'strategy'],
  'io.k8s.api.apps.v1.ReplicaSetSpec': ['template'],
  'io.k8s.api.apps.v1.StatefulSetSpec': ['template', 'updateStrategy'],
  'io.k8s.api.apps.v1.DaemonSetSpec': ['template', 'updateStrategy'],
  'io.k8s.api.batch.v1.JobSpec': ['template'],
  'io.k8s.api.batch.v1.CronJobSpec': ['jobTemplate'],
  'io.k8s.api.batch.v1.JobTemplateSpec': ['metadata', 'spec'],
  'io.k8s.api.core.v1.Container': ['resources'],
  'io.k8s.api.core.v1.EphemeralContainer': ['resources'],
  'io.k8s.api.core.v1.PersistentVolumeClaimSpec': ['resources'],
  'io.k8s.api.core.v1.ContainerStatus': ['state', 'lastState'],
  'io.k8s.api.core.v1.ServiceStatus': ['loadBalancer'],
  'io.k8s.api.networking.v1.IngressStatus': ['loadBalancer'],
  'io.k8s.api.core.v1.NodeStatus': ['daemonEndpoints', 'nodeInfo'],
  'io.k8s.api.core.v1.NodeDaemonEndpoints': ['kubeletEndpoint'],
  'io.k8s.api.core.v1.Event': ['involvedObject', 'source'],
};

/** metav1.Time/MicroTime values marshal as null when unset, so Go objects always carry these. */
const TIME_REFS = new Set([
  'io.k8s.apimachinery.pkg.apis.meta.v1.Time',
  'io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime',
]);
const VALUE_TIMES = new Set([
  'lastProbeTime',
  'lastTransitionTime',
  'lastUpdateTime',
  'lastHeartbeatTime',
  'startedAt',
  'finishedAt',
  'firstTimestamp',
  'lastTimestamp',
  'eventTime',
  'lastObservedTime',
]);

const structs = new Map<string, TypeNode>();
const fieldNodes = new WeakMap<FieldSchema, TypeNode>();

/** The node of a built-in definition (cached). `atomic` overrides the struct's own map type. */
export function definitionNode(definition: string, atomic?: boolean): TypeNode {
  const cacheKey = atomic === undefined ? definition : `${definition}|${atomic}`;
  let n = structs.get(cacheKey);
  if (n) return n;
  const t = typeSchema(definition);
  if (!t) n = DEDUCED;
  else if (t.properties && Object.keys(t.properties).length > 0) {
    n = new BuiltinStruct(definition, atomic ?? t.structType === 'atomic');
  } else if (t.type === 'string' || t.type === 'integer' || t.type === 'number' || t.type === 'boolean') {
    n = SCALAR;
  } else n = DEDUCED; // RawExtension, JSON, FieldsV1: any shape
  structs.set(cacheKey, n);
  return n;
}

/** The node of one field's schema (exported for tests of the conversion rules). */
export function fieldNode(f: FieldSchema): TypeNode {
  let n = fieldNodes.get(f);
  if (n) return n;
  if (f.type === 'array' && f.items) n = new BuiltinList(f);
  else if (f.ref) n = definitionNode(f.ref, f.mapType ? f.mapType === 'atomic' : undefined);
  else if (f.type === 'object') {
    n = f.values ? new BuiltinMap(f) : DEDUCED;
  } else if (f.type) n = SCALAR;
  else n = DEDUCED;
  fieldNodes.set(f, n);
  return n;
}

class BuiltinStruct implements MapNode {
  readonly kind = 'map';
  readonly elements = undefined;
  private readonly fields = new Map<string, TypeNode | undefined>();
  private readonly zeros: Map<string, 'struct' | 'null'>;
  constructor(
    readonly definition: string,
    readonly atomic: boolean,
  ) {
    const t = typeSchema(definition);
    this.zeros = new Map();
    for (const r of t?.required ?? []) this.zeros.set(r, 'null');
    for (const [name, f] of Object.entries(t?.properties ?? {})) {
      if (f.ref && TIME_REFS.has(f.ref) && VALUE_TIMES.has(name)) this.zeros.set(name, 'null');
    }
    const values = [...(VALUE_STRUCTS[definition] ?? []), ...(t?.gvk ? ['metadata', 'spec', 'status'] : [])];
    for (const v of values) if (t?.properties?.[v]) this.zeros.set(v, 'struct');
  }
  field(name: string): TypeNode | undefined {
    if (this.fields.has(name)) return this.fields.get(name);
    const f = typeSchema(this.definition)?.properties?.[name];
    const n = f ? fieldNode(f) : undefined;
    this.fields.set(name, n);
    return n;
  }
  zeroValue(name: string): 'struct' | 'null' | undefined {
    return this.zeros.get(name);
  }
  zeroFields(): readonly string[] {
    return (this.zeroNames ??= [...this.zeros.keys()]);
  }
  private zeroNames: string[] | undefined;
}

class BuiltinMap implements MapNode {
  readonly kind = 'map';
  readonly atomic: boolean;
  private el: TypeNode | undefined;
  constructor(private readonly f: FieldSchema) {
    this.atomic = f.mapType === 'atomic';
  }
  field(): undefined {
    return undefined;
  }
  get elements(): TypeNode {
    return (this.el ??= fieldNode(this.f.values as FieldSchema));
  }
}

class BuiltinList implements ListNode {
  readonly kind = 'list';
  readonly listType: 'atomic' | 'set' | 'map';
  readonly keys: readonly string[];
  private el: TypeNode | undefined;
  constructor(private readonly f: FieldSchema) {
    // Without x-kubernetes-list-type, patchStrategy merge reads as a set, or a map keyed by the merge key.
    const merge = f.patchStrategy?.split(',').includes('merge');
    this.listType = f.listType ?? (merge ? (f.patchMergeKey ? 'map' : 'set') : 'atomic');
    this.keys = this.listType === 'map' ? (f.listMapKeys ?? (f.patchMergeKey ? [f.patchMergeKey] : [])) : [];
  }
  element(): TypeNode {
    return (this.el ??= fieldNode(this.f.items as FieldSchema));
  }
  keyDefault(field: string): unknown {
    const ref = this.f.items?.ref;
    return ref ? KEY_DEFAULTS[ref]?.[field] : undefined;
  }
}

const models = new Map<string, TypeModel>();

/** The type model of a built-in kind, or undefined when the kind has no schema. */
export function builtinModel(gvk: GroupVersionKind): TypeModel | undefined {
  const def = definitionOf(gvk);
  if (!def) return undefined;
  let m = models.get(def);
  if (!m) {
    const root = definitionNode(def);
    m = { root: () => root };
    models.set(def, m);
  }
  return m;
}

/** Unstructured objects (no schema) with typed metadata, as custom resources without a schema. */
export const UNSTRUCTURED_WITH_METADATA: TypeModel = (() => {
  const root: MapNode = {
    kind: 'map',
    atomic: false,
    elements: DEDUCED,
    field: (name) =>
      name === 'metadata'
        ? definitionNode(OBJECT_META)
        : name === 'apiVersion' || name === 'kind'
          ? SCALAR
          : undefined,
  };
  return { root: () => root };
})();

/** A structural schema (a CRD version's openAPIV3Schema), as a type model. */
export function structuralModel(openAPIV3Schema: unknown): TypeModel {
  const root = structuralNode(openAPIV3Schema, true);
  return { root: () => root };
}

type Props = Record<string, unknown>;

function structuralNode(s: unknown, isRoot = false): TypeNode {
  if (!isObject(s)) return DEDUCED;
  const ext = (k: string) => s[`x-kubernetes-${k}`];
  if (ext('int-or-string') === true) return SCALAR;
  const type = s.type;
  if (type === 'array') {
    const listType = (ext('list-type') as ListNode['listType'] | undefined) ?? 'atomic';
    const items = s.items;
    const keys = listType === 'map' ? ((ext('list-map-keys') as string[] | undefined) ?? []) : [];
    let el: TypeNode | undefined;
    const itemProps = isObject(items) && isObject(items.properties) ? (items.properties as Props) : {};
    const node: ListNode = {
      kind: 'list',
      listType,
      keys,
      element: () => (el ??= structuralNode(items)),
      keyDefault: (f) => (isObject(itemProps[f]) ? (itemProps[f] as Props).default : undefined),
    };
    return node;
  }
  const props = isObject(s.properties) ? (s.properties as Props) : undefined;
  const embedded = ext('embedded-resource') === true;
  const preserve = ext('preserve-unknown-fields') === true;
  if (type === 'object' || props || embedded || isRoot) {
    const additional = s.additionalProperties;
    let elements: TypeNode | undefined;
    if (isObject(additional)) elements = structuralNode(additional);
    else if (additional === true || preserve || (!props && !embedded && !isRoot)) elements = DEDUCED;
    const cache = new Map<string, TypeNode | undefined>();
    const withMeta = isRoot || embedded;
    const node: MapNode = {
      kind: 'map',
      atomic: ext('map-type') === 'atomic',
      elements,
      field(name) {
        if (cache.has(name)) return cache.get(name);
        let n: TypeNode | undefined;
        if (withMeta && name === 'metadata') n = definitionNode(OBJECT_META);
        else if (withMeta && (name === 'apiVersion' || name === 'kind')) n = SCALAR;
        else if (props && props[name] !== undefined) n = structuralNode(props[name]);
        cache.set(name, n);
        return n;
      },
    };
    return node;
  }
  if (preserve) return DEDUCED;
  return type ? SCALAR : DEDUCED;
}
