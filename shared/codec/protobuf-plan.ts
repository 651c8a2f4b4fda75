// What the Protobuf codec knows about each message, derived from the schema
// source (shared/api/facts): JSON names and field numbers come from the
// OpenAPI twin (types.json) where one exists, else from the proto message
// itself (proto.json). Nothing here restates a field number.
import { goField, isOmittedScalar } from './go-json';
import { allProtoMessages, allTypes, definitionOf, parseAPIVersion } from '../api/schema';
import type { ProtoMessage, TypeSchema } from '../api/schema-types';

export interface FieldPlan {
  kind: 'field';
  /** JSON property name. */
  json: string;
  n: number;
  /** A proto scalar type or a message name; for maps, the value type. */
  type: string;
  repeated: boolean;
  map: boolean;
}

/** A proto message the JSON flattens into its parent (Volume → volumeSource). */
export interface ViaPlan {
  kind: 'via';
  n: number;
  name: string;
  message: string;
  entries: Entry[];
}

export type Entry = FieldPlan | ViaPlan;

/**
 * Messages whose JSON form is not an object of their fields:
 * time/microtime ↔ RFC 3339 string, quantity ↔ string, intorstring ↔ number|string,
 * json ↔ any JSON value (RawExtension, FieldsV1, apiextensions JSON),
 * stringlist ↔ string[] (Verbs, ExtraValue), union ↔ one of bool|object|array (JSONSchemaPropsOr*).
 */
export type Special = 'time' | 'microtime' | 'quantity' | 'intorstring' | 'json' | 'stringlist' | 'union';

export interface MessagePlan {
  name: string;
  /** Short name for error messages. */
  label: string;
  special?: Special;
  /** Struct messages: fields (and flattened groups) in field-number order. */
  entries: Entry[];
  proto: ProtoMessage;
}

export const PROTO_SCALARS = new Set([
  'string',
  'bool',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'double',
  'bytes',
]);

const META = 'k8s.io.apimachinery.pkg.apis.meta';
export const RUNTIME_UNKNOWN = 'k8s.io.apimachinery.pkg.runtime.Unknown';
export const RUNTIME_TYPEMETA = 'k8s.io.apimachinery.pkg.runtime.TypeMeta';
export const RUNTIME_RAWEXTENSION = 'k8s.io.apimachinery.pkg.runtime.RawExtension';
export const META_WATCHEVENT = `${META}.v1.WatchEvent`;

let twins: Map<string, TypeSchema> | undefined;

/** The OpenAPI definition describing a proto message's JSON form, if any. */
export function twinOf(message: string): TypeSchema | undefined {
  if (!twins) {
    twins = new Map();
    for (const t of Object.values(allTypes())) if (t.protoMessage) twins.set(t.protoMessage, t);
  }
  return twins.get(message);
}

export function protoMessage(name: string): ProtoMessage {
  const m = allProtoMessages()[name];
  if (!m) throw new Error(`protobuf: no message ${name} in the facts`);
  return m;
}

/** A field number of a proto message, by its proto field name. */
export function fieldNumber(message: string, field: string): number {
  const f = protoMessage(message).fields.find((x) => x.name === field);
  if (!f) throw new Error(`protobuf: no field ${field} in ${message}`);
  return f.n;
}

function specialOf(name: string, m: ProtoMessage, twin: TypeSchema | undefined): Special | undefined {
  if (m.as === 'Timestamp') return name.endsWith('.MicroTime') ? 'microtime' : 'time';
  if (m.embed === 'string') return 'quantity';
  if (m.nullable) {
    if (m.fields.length !== 1 || !m.fields[0].repeated || m.fields[0].type !== 'string') {
      throw new Error(`protobuf: nullable wrapper ${name} is not a string list`);
    }
    return 'stringlist';
  }
  if (!twin) return undefined;
  if (twin.format === 'int-or-string') return 'intorstring';
  const noProps = !twin.properties || Object.keys(twin.properties).length === 0;
  if (noProps && m.fields.length === 1 && m.fields[0].type === 'bytes' && twin.type !== 'string')
    return 'json';
  if (!twin.properties && !twin.type && m.fields.length > 1) return 'union';
  return undefined;
}

const plans = new Map<string, MessagePlan>();

export function planOf(name: string): MessagePlan {
  let p = plans.get(name);
  if (!p) {
    p = buildPlan(name);
    plans.set(name, p);
  }
  return p;
}

function buildPlan(name: string): MessagePlan {
  const proto = protoMessage(name);
  const twin = twinOf(name);
  const label = name.slice(name.lastIndexOf('.') + 1);
  const special = specialOf(name, proto, twin);
  if (special) return { name, label, special, entries: [], proto };

  const entries: Entry[] = [];
  if (twin) {
    for (const [json, f] of Object.entries(twin.properties ?? {})) {
      const pf = f.proto;
      if (!pf) continue; // apiVersion/kind: envelope only
      const leaf: FieldPlan = {
        kind: 'field',
        json,
        n: pf.n,
        type: pf.t,
        repeated: pf.repeated === true,
        map: pf.map === true,
      };
      let list = entries;
      for (const v of pf.via ?? []) {
        let group = list.find((e): e is ViaPlan => e.kind === 'via' && e.n === v.n);
        if (!group) {
          group = { kind: 'via', n: v.n, name: v.name, message: v.message, entries: [] };
          list.push(group);
        }
        list = group.entries;
      }
      list.push(leaf);
    }
  } else {
    for (const f of proto.fields) {
      const map = f.type === 'map';
      entries.push({
        kind: 'field',
        json: f.name,
        n: f.n,
        type: map ? f.value! : f.type,
        repeated: f.repeated === true,
        map,
      });
    }
  }
  sortEntries(entries);
  return { name, label, entries, proto };
}

function sortEntries(entries: Entry[]): void {
  entries.sort((a, b) => a.n - b.n);
  for (let i = 1; i < entries.length; i++) {
    if (entries[i].n === entries[i - 1].n)
      throw new Error(`protobuf: field number ${entries[i].n} used twice`);
  }
  for (const e of entries) if (e.kind === 'via') sortEntries(e.entries);
}

const kindCache = new Map<string, string | null>();

/**
 * The proto message of a top-level kind, or undefined (custom resources, Table,
 * kinds without a proto message). Lists resolve through their own definitions.
 */
export function messageOfKind(apiVersion: string, kind: string): string | undefined {
  const key = `${apiVersion}\n${kind}`;
  let m = kindCache.get(key);
  if (m === undefined) {
    m = resolveKind(apiVersion, kind) ?? null;
    kindCache.set(key, m);
  }
  return m ?? undefined;
}

function resolveKind(apiVersion: string, kind: string): string | undefined {
  if (!kind || !apiVersion) return undefined;
  const { group, version } = parseAPIVersion(apiVersion);
  const def = definitionOf({ group, version, kind });
  if (def) {
    const msg = allTypes()[def]?.protoMessage;
    return msg && allProtoMessages()[msg] ? msg : undefined;
  }
  // meta.k8s.io kinds: PartialObjectMetadata(List) (no OpenAPI twin), the *Options, DeleteOptions.
  if (group === 'meta.k8s.io') {
    const msg = `${META}.${version}.${kind}`;
    if (allProtoMessages()[msg]) return msg;
  }
  return undefined;
}

/** Field numbers of a list message's metadata and items. */
export function listFields(listMessage: string): { metadata: FieldPlan; items: FieldPlan } {
  const p = planOf(listMessage);
  const find = (json: string) =>
    p.entries.find((e): e is FieldPlan => e.kind === 'field' && e.json === json && !e.map);
  const metadata = find('metadata');
  const items = find('items');
  if (!metadata || !items || !items.repeated) throw new Error(`protobuf: ${listMessage} is not a list`);
  return { metadata, items };
}

// Go's encoder writes every non-pointer field, zero or not, and its JSON leaves the omitempty
// ones out when zero. The Go struct facts say which fields those are: a zero read from Protobuf
// into a non-pointer omitempty field is as if absent; into a pointer field it is a value
// (replicas: 0); a non-omitempty field keeps it as Go's JSON would write it.

/** A zero of this field, as Go writes it, means the field is unset. */
export const omittedWhenZero = (message: string, field: string): boolean => {
  const f = goField(goDefinitionOfMessage(message), field);
  return !!f && isOmittedScalar(f);
};

/** The Go definition name of a proto message: k8s.io.api.core.v1.Pod → io.k8s.api.core.v1.Pod. */
const goDefinitionOfMessage = (message: string) =>
  message
    .replace(/^k8s\.io\./, 'io.k8s.')
    .replace('.apiextensions_apiserver.', '.apiextensions-apiserver.')
    .replace('.kube_aggregator.', '.kube-aggregator.');
