// The CRI v1 (runtime.v1) message and service types, built at run time from
// the facts in facts/cri-v1.json (names, field numbers, types — no .proto
// text). Field names are camelCased, as protobufjs does for parsed .proto
// files, so the rest of the client reads like the CRI's JSON mapping.
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import * as protobuf from 'protobufjs';

/** Where the committed facts sit (the build copies nothing: read from the source tree). */
const FACTS = resolve(__dirname, '../../../shared/cri/facts/cri-v1.json');

interface FactField {
  name: string;
  number: number;
  type: string;
  label: 'optional' | 'repeated';
  map?: { keyType: string; valueType: string };
}

interface Facts {
  package: string;
  services: Record<string, { rpcs: { name: string; request: string; response: string; since: string }[] }>;
  messages: Record<string, { fields: FactField[]; newer?: boolean }>;
  enums: Record<string, { values: Record<string, number> }>;
  changedTypes: { message: string; field: string; number: number; older: string; newer: string }[];
}

const SCALARS = new Set([
  'double',
  'float',
  'int32',
  'int64',
  'uint32',
  'uint64',
  'sint32',
  'sint64',
  'fixed32',
  'fixed64',
  'sfixed32',
  'sfixed64',
  'bool',
  'string',
  'bytes',
]);

/** proto field names as protobufjs camelCases them (cgroup_parent -> cgroupParent). */
export const camel = (name: string) => protobuf.util.camelCase(name);

export interface CriSchema {
  root: protobuf.Root;
  /** runtime.v1 type by its short name (PodSandboxConfig, SecurityProfile.ProfileType ...). */
  type(name: string): protobuf.Type;
  /** rpc name -> its service, request and response type names, and whether containerd 1.6 has it. */
  rpcs: Map<string, { service: string; request: string; response: string; newer: boolean }>;
}

let cached: CriSchema | undefined;

/** The CRI schema, built once per process. */
export function criSchema(): CriSchema {
  if (cached) return cached;
  const facts: Facts = JSON.parse(readFileSync(FACTS, 'utf8'));
  const root = new protobuf.Root();
  const ns = root.define(facts.package);
  const ref = (t: string) => (SCALARS.has(t) ? t : `.${facts.package}.${t}`);
  // Nested names (SecurityProfile.ProfileType) go inside their parent, so parents come first.
  const byDepth = (a: string, b: string) => a.split('.').length - b.split('.').length;
  const parentOf = (name: string): protobuf.Namespace => {
    const parts = name.split('.');
    let at: protobuf.Namespace = ns;
    for (const p of parts.slice(0, -1)) at = at.get(p) as protobuf.Namespace;
    return at;
  };
  const leaf = (name: string) => name.split('.').pop()!;
  // Where a field's type changed, the older one: the wire is the same, and containerd 1.6 checks
  // KeyValue.value (env values) as the UTF-8 string it was, which a string field always is.
  const older = new Map(facts.changedTypes.map((c) => [`${c.message}.${c.number}`, c.older]));
  const names = [...Object.keys(facts.messages), ...Object.keys(facts.enums)].sort(byDepth);
  for (const name of names) {
    const parent = parentOf(name);
    if (facts.enums[name]) {
      parent.add(protobuf.Enum.fromJSON(leaf(name), { values: facts.enums[name].values }));
      continue;
    }
    // An empty proto3 type first (see the facts' README: no proto2 features, packed repeated scalars).
    const t = protobuf.Type.fromJSON(leaf(name), { fields: {}, edition: 'proto3' } as any);
    for (const f of facts.messages[name].fields) {
      f.type = older.get(`${name}.${f.number}`) ?? f.type;
      if (f.map) t.add(new protobuf.MapField(camel(f.name), f.number, f.map.keyType, ref(f.map.valueType)));
      else
        t.add(
          new protobuf.Field(
            camel(f.name),
            f.number,
            ref(f.type),
            f.label === 'repeated' ? 'repeated' : undefined,
          ),
        );
    }
    parent.add(t);
  }
  const rpcs: CriSchema['rpcs'] = new Map();
  for (const [service, s] of Object.entries(facts.services))
    for (const r of s.rpcs)
      rpcs.set(r.name, { service, request: r.request, response: r.response, newer: r.since === 'newer' });
  root.resolveAll();
  cached = {
    root,
    type: (name) => root.lookupType(`${facts.package}.${name}`),
    rpcs,
  };
  return cached;
}
