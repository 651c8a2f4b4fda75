// Imports the Kubernetes 1.36 API facts (../shared/k8s-api-facts) into this
// project's own format under shared/api/facts/. Run after a facts update:
//   npm run build && node dist/scripts/import-api-facts.js ../shared/k8s-api-facts
// Only names, numbers and types travel; the output is committed so a clean
// clone builds without the facts folder.
import { readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type {
  GoField,
  GoFields,
  FieldSchema,
  ProtoField,
  ProtoMessage,
  ResourceFacts,
  TypeSchema,
} from '../shared/api/schema-types';

const src = resolve(process.argv[2] ?? '../shared/k8s-api-facts');
const out = resolve(__dirname, '../../shared/api/facts');
const read = (f: string) => JSON.parse(readFileSync(join(src, f), 'utf8'));

function field(p: any): FieldSchema {
  const f: FieldSchema = {};
  if (p.type) f.type = p.type;
  if (p.format) f.format = p.format;
  if (p.$ref) f.ref = p.$ref;
  if (p.items) f.items = field(p.items);
  if (p.additionalProperties) f.values = field(p.additionalProperties);
  if (p.enum) f.enum = p.enum;
  if (p.patchStrategy) f.patchStrategy = p.patchStrategy;
  if (p.patchMergeKey) f.patchMergeKey = p.patchMergeKey;
  if (p.listType) f.listType = p.listType;
  if (p.listMapKeys) f.listMapKeys = p.listMapKeys;
  if (p.mapType) f.mapType = p.mapType;
  if (p.intOrString) f.intOrString = true;
  if (p.unionDiscriminator) f.unionDiscriminator = true;
  const pr = p.proto;
  if (pr?.envelope) f.envelope = true;
  else if (pr?.number) {
    const proto: ProtoField = { n: pr.number, t: pr.protoType };
    if (pr.repeated) proto.repeated = true;
    if (pr.map) {
      proto.map = true;
      proto.key = pr.mapKey;
    }
    if (pr.protoName) proto.name = pr.protoName;
    if (pr.inlineVia)
      proto.via = pr.inlineVia.map((v: any) => ({ message: v.message, name: v.name, n: v.number }));
    f.proto = proto;
  }
  return f;
}

const types: Record<string, TypeSchema> = {};
for (const [name, d] of Object.entries<any>(read('types.json'))) {
  const t: TypeSchema = {};
  if (d.type) t.type = d.type;
  if (d.format) t.format = d.format;
  if (d.gvk) t.gvk = d.gvk.map((g: any) => ({ group: g.group, version: g.version, kind: g.kind }));
  if (d.required) t.required = d.required;
  if (d.structType) t.structType = d.structType;
  if (d.unions) t.unions = d.unions;
  if (d.proto?.message) t.protoMessage = d.proto.message;
  if (d.properties) {
    t.properties = {};
    for (const [k, p] of Object.entries<any>(d.properties)) t.properties[k] = field(p);
  }
  types[name] = t;
}

// Proto messages as of the 1.36 release (drop what exists only on master).
const proto: Record<string, ProtoMessage> = {};
for (const [name, m] of Object.entries<any>(read('proto-messages.json'))) {
  if (m.onlyIn === 'master') continue;
  const msg: ProtoMessage = {
    fields: m.fields
      .filter((f: any) => f.onlyIn !== 'master')
      .map((f: any) => {
        const pf: ProtoMessage['fields'][number] = { name: f.name, n: f.number, type: f.type };
        if (f.label === 'repeated' && f.type !== 'map') pf.repeated = true;
        if (f.type === 'map') {
          pf.key = f.mapKey;
          pf.value = f.mapValue;
        }
        return pf;
      }),
  };
  const o = m.options ?? {};
  if (o['protobuf.as']) msg.as = o['protobuf.as'];
  if (o['protobuf.embed']) msg.embed = o['protobuf.embed'];
  if (o['protobuf.nullable']) msg.nullable = true;
  proto[name] = msg;
}

const r = read('resources.json');
const resources: ResourceFacts[] = r.resources.map((x: any) => {
  const res: ResourceFacts = {
    group: x.group,
    version: x.version,
    resource: x.resource,
    kind: x.kind,
    singular: x.singularName,
    namespaced: x.namespaced,
    verbs: x.verbs,
    definition: x.definition,
  };
  // Derived here so serving needs no walk of every type schema at start.
  const t = types[x.definition];
  if (t?.properties?.spec) res.hasSpec = true;
  const statusRef = t?.properties?.status?.ref;
  if (statusRef && types[statusRef]?.properties?.observedGeneration) res.statusObservedGeneration = true;
  if (x.shortNames?.length) res.shortNames = x.shortNames;
  if (x.categories?.length) res.categories = x.categories;
  if (x.deprecated) res.deprecated = true;
  if (x.subresources?.length) {
    res.subresources = x.subresources.map((s: any) => {
      const sub: NonNullable<ResourceFacts['subresources']>[number] = {
        name: s.name,
        kind: s.kind,
        verbs: s.verbs,
      };
      if (s.group !== undefined && s.group !== x.group) sub.group = s.group;
      if (s.version !== undefined && s.version !== x.version) sub.version = s.version;
      if (s.connect) sub.connect = true;
      return sub;
    });
  }
  return res;
});

writeFileSync(join(out, 'types.json'), JSON.stringify(types));
writeFileSync(join(out, 'go-fields.json'), JSON.stringify(goFields(read('go-fields.json'))));
writeFileSync(join(out, 'proto.json'), JSON.stringify(proto));
writeFileSync(join(out, 'resources.json'), JSON.stringify(resources, null, 1) + '\n');
console.log(
  `wrote ${Object.keys(types).length} types, ${Object.keys(proto).length} proto messages, ${resources.length} resources to ${out}`,
);

/**
 * Go struct facts for encoding/json (go-fields.json): every struct's fields in
 * declaration order with JSON name, flags and the value Go writes for a zero.
 */
function goFields(src: any): GoFields {
  const custom = new Set<string>(src.customJSON);
  const named = src.namedBasics as Record<string, { kind: string; resolved?: string; underlying: string }>;
  // What Go writes for the zero value of a custom-marshalled type.
  const customZero: Record<string, unknown> = {
    Time: null,
    MicroTime: null,
    Duration: '0s',
    Quantity: '0',
    IntOrString: 0,
    JSONSchemaPropsOrBool: false,
    GroupVersion: '',
  };
  const basicZero = (elem: string): unknown => {
    if (elem === 'string' || elem.endsWith('types.UID') || elem.endsWith('types.NodeName')) return '';
    if (elem === 'bool') return false;
    if (/^(u?int(8|16|32|64)?|float(32|64)|byte|time\.Duration)$/.test(elem)) return 0;
    const n = named[elem];
    if (!n) return null;
    const kind = n.resolved ?? n.kind;
    if (kind === 'string') return '';
    if (kind === 'int32' || kind === 'int64') return 0;
    if (kind === 'named') return basicZero(n.underlying);
    return null; // slices and maps: nil
  };
  const out: GoFields = { defs: {} };
  for (const [name, def] of Object.entries<any>(src)) {
    if (name === 'customJSON' || name === 'namedBasics') continue;
    if (custom.has(name)) {
      out.defs[name] = { custom: true, fields: [] };
      continue;
    }
    const fields: GoField[] = [];
    for (const f of def.fields) {
      if (f.json === '-') continue;
      const g: GoField = { j: f.inline ? '' : f.json };
      let flags = 0;
      if (f.omitempty) flags |= 1;
      if (f.omitzero) flags |= 2;
      if (f.pointer) flags |= 4;
      if (f.slice) flags |= 8;
      if (f.map) flags |= 16;
      if (f.inline) flags |= 32;
      if (flags) g.f = flags;
      if (f.ref) g.r = f.ref;
      if (!f.pointer && !f.slice && !f.map && !f.inline) {
        if (f.ref && custom.has(f.ref)) g.z = customZero[f.ref.split('.').pop()!] ?? null;
        else if (!f.ref) g.z = basicZero(f.elem);
      }
      fields.push(g);
    }
    out.defs[name] = { fields };
  }
  return out;
}
