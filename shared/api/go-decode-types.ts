// What Go type each field of a built-in definition decodes into, from the facts
// schemas: the decode pass (unknown-fields.ts) walks a body along these, and names
// their Go types in its errors (`[]v1.ContainerPort`, `map[string]string`).
import { typeSchema } from './schema';
import type { FieldSchema } from './schema-types';

export type Kind =
  | 'string'
  | 'bytes'
  | 'int32'
  | 'int64'
  | 'float'
  | 'bool'
  | 'struct'
  | 'array'
  | 'map'
  | 'quantity'
  | 'intstr'
  | 'time'
  | 'microtime'
  | 'any';

export interface Desc {
  kind: Kind;
  goType: string;
  def?: string;
  /** A struct's Go name, as its type errors name it (PodSpec). */
  name?: string;
  item?: Desc;
  value?: Desc;
  /** Go names of the embedded structs the JSON flattens (VolumeSource, ProbeHandler...). */
  via?: string[];
}

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1.';
const SPECIAL: Record<string, Desc> = {
  'io.k8s.apimachinery.pkg.api.resource.Quantity': { kind: 'quantity', goType: 'resource.Quantity' },
  'io.k8s.apimachinery.pkg.util.intstr.IntOrString': { kind: 'intstr', goType: 'intstr.IntOrString' },
  [META + 'Time']: { kind: 'time', goType: 'v1.Time' },
  [META + 'MicroTime']: { kind: 'microtime', goType: 'v1.MicroTime' },
  [META + 'FieldsV1']: { kind: 'any', goType: 'v1.FieldsV1' },
  [META + 'Patch']: { kind: 'any', goType: 'v1.Patch' },
  'io.k8s.apimachinery.pkg.runtime.RawExtension': { kind: 'any', goType: 'runtime.RawExtension' },
};

const shortName = (def: string) => def.slice(def.lastIndexOf('.') + 1);
/** Go package-qualified name: io.k8s.api.core.v1.PodSpec → v1.PodSpec. */
function goTypeOf(def: string): string {
  const parts = def.split('.');
  return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}

const structFields = new Map<string, Map<string, Desc>>();
const structDescs = new Map<string, Desc>();

export function structDesc(def: string): Desc {
  let d = structDescs.get(def);
  if (!d) structDescs.set(def, (d = { kind: 'struct', goType: goTypeOf(def), def, name: shortName(def) }));
  return d;
}

function refDesc(def: string): Desc {
  const special = SPECIAL[def];
  if (special) return special;
  const t = typeSchema(def);
  // JSON, JSONSchemaPropsOr*: custom decoders accepting any JSON.
  if (!t || !t.type) return { kind: 'any', goType: goTypeOf(def) };
  if (t.type === 'object') return structDesc(def);
  return scalarDesc(t.type, t.format);
}

function scalarDesc(type: string | undefined, format: string | undefined): Desc {
  switch (type) {
    case 'string':
      return format === 'byte' ? { kind: 'bytes', goType: '[]uint8' } : { kind: 'string', goType: 'string' };
    case 'integer':
      return format === 'int32' ? { kind: 'int32', goType: 'int32' } : { kind: 'int64', goType: 'int64' };
    case 'number':
      return { kind: 'float', goType: 'float64' };
    case 'boolean':
      return { kind: 'bool', goType: 'bool' };
    default:
      return { kind: 'any', goType: 'interface {}' };
  }
}

function fieldDesc(f: FieldSchema): Desc {
  let d: Desc;
  if (f.ref) d = refDesc(f.ref);
  else if (f.type === 'array' && f.items) {
    const item = fieldDesc(f.items);
    d =
      item.kind === 'any'
        ? { kind: 'any', goType: 'interface {}' }
        : { kind: 'array', goType: '[]' + item.goType, item };
  } else if (f.type === 'object' && f.values) {
    const value = fieldDesc(f.values);
    const key = value.kind === 'quantity' ? 'v1.ResourceName' : 'string';
    d = { kind: 'map', goType: `map[${key}]${value.goType}`, value };
  } else if (f.type === 'object') d = { kind: 'any', goType: 'map[string]interface {}' };
  else d = scalarDesc(f.type, f.format);
  const via = f.proto?.via;
  return via ? { ...d, via: via.map((v) => shortName(v.message)) } : d;
}

export function fieldsOf(def: string): Map<string, Desc> {
  let m = structFields.get(def);
  if (!m) {
    m = new Map();
    for (const [name, f] of Object.entries(typeSchema(def)?.properties ?? {})) m.set(name, fieldDesc(f));
    structFields.set(def, m);
  }
  return m;
}
