// The OpenAPI definitions a CRD version publishes (kubectl explain, apply
// --validate, client generators): the version's structural schema with
// apiVersion, kind and metadata filled in, x-kubernetes-group-version-kind,
// and its List; in v2 the constructs Swagger 2.0 cannot say are dropped.
import type { ResourceFacts } from '../../../shared/api/schema-types';
import type { Schema } from './types';
import { reverseDomain } from './types';

const META = 'io.k8s.apimachinery.pkg.apis.meta.v1';
const CONVENTIONS = 'https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md';

const API_VERSION_DOC = `APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: ${CONVENTIONS}#resources`;
const KIND_DOC = `Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: ${CONVENTIONS}#types-kinds`;
const METADATA_DOC = `Standard object's metadata. More info: ${CONVENTIONS}#metadata`;
const EMBEDDED_API_VERSION_DOC = `apiVersion defines the versioned schema of this representation of an object. More info: ${CONVENTIONS}#resources`;
const EMBEDDED_KIND_DOC = `kind is a string value representing the type of this object. In CamelCase. More info: ${CONVENTIONS}#types-kinds`;
const LIST_METADATA_DOC = `Standard list metadata. More info: ${CONVENTIONS}#types-kinds`;

type Flavor = 'v2' | 'v3';

const isObj = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

function ref(flavor: Flavor, name: string, description: string): Schema {
  const $ref = `${flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'}${name}`;
  return flavor === 'v2' ? { description, $ref } : { description, allOf: [{ $ref }] };
}

const PRESERVE = 'x-kubernetes-preserve-unknown-fields';
const EMBEDDED = 'x-kubernetes-embedded-resource';

/**
 * Kubernetes' ToStructuralOpenAPIV2, node by node from the root down: Swagger 2.0
 * has no junctors or nullable, and kubectl's v2 validation closes any object
 * with properties, so preserve-unknown-fields subtrees lose their properties
 * and type, nullable values become untyped, and arrays left without items
 * become untyped too.
 */
function toV2(s: Schema): Schema {
  const out: Schema = { ...s };
  delete out.allOf;
  delete out.oneOf;
  delete out.anyOf;
  delete out.not;
  if (out.nullable === true) {
    delete out.type;
    delete out.items;
    delete out.properties;
  }
  delete out.nullable;
  if (out[PRESERVE] === true) {
    delete out.items;
    delete out.properties;
  }
  if (out.items === undefined && out.type === 'array') delete out.type;
  if (out[PRESERVE] === true && out.type === 'object') delete out.type;
  if (isObj(out.properties) && Array.isArray(out.required)) {
    const props = out.properties;
    const kept = (out.required as string[]).filter((f) => !(isObj(props[f]) && props[f].nullable === true));
    if (kept.length) out.required = kept;
    else delete out.required;
  }
  if (isObj(out.additionalProperties) && out.additionalProperties.nullable === true) delete out.required;
  if (isObj(out.properties))
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([n, p]) => [n, isObj(p) ? toV2(p) : p]),
    );
  if (isObj(out.items)) out.items = toV2(out.items);
  if (isObj(out.additionalProperties)) out.additionalProperties = toV2(out.additionalProperties);
  return out;
}

/** Applies f to every schema node below s (properties, items, additionalProperties), root first. */
function mapSchema(s: Schema, f: (s: Schema) => Schema): Schema {
  const out = f({ ...s });
  if (isObj(out.properties))
    out.properties = Object.fromEntries(
      Object.entries(out.properties).map(([n, p]) => [n, isObj(p) ? mapSchema(p, f) : p]),
    );
  if (isObj(out.items)) out.items = mapSchema(out.items, f);
  if (isObj(out.additionalProperties)) out.additionalProperties = mapSchema(out.additionalProperties, f);
  return out;
}

/** Structural Unfold: x-kubernetes-int-or-string spelled out as anyOf integer/string. */
function unfold(s: Schema): Schema {
  if (s['x-kubernetes-int-or-string'] !== true || isIntOrStringAnyOf(s.anyOf)) return s;
  if (Array.isArray(s.allOf) && isObj(s.allOf[0]) && isIntOrStringAnyOf(s.allOf[0].anyOf)) return s;
  const anyOf = [{ type: 'integer' }, { type: 'string' }];
  if (s.anyOf === undefined) s.anyOf = anyOf;
  else s.allOf = [{ anyOf }, ...((s.allOf as Schema[] | undefined) ?? [])];
  return s;
}

const isIntOrStringAnyOf = (a: unknown) =>
  Array.isArray(a) &&
  a.length === 2 &&
  isObj(a[0]) &&
  isObj(a[1]) &&
  a[0].type === 'integer' &&
  a[1].type === 'string' &&
  Object.keys(a[0]).length === 1 &&
  Object.keys(a[1]).length === 1;

/** The published v2 carries no defaults (Kubernetes prunes them from every definition). */
function pruneDefaults(s: Schema): Schema {
  delete s.default;
  return s;
}

/**
 * Adds apiVersion, kind and metadata to embedded resources below the root
 * (x-kubernetes-embedded-resource) and requires kind and apiVersion; in v2 not
 * under preserve-unknown-fields, where kubectl would then refuse unknown fields.
 */
function addEmbedded(flavor: Flavor): (s: Schema) => Schema {
  return (s) => {
    if (s[EMBEDDED] !== true || (flavor === 'v2' && s[PRESERVE] === true)) return s;
    s.properties = {
      ...(isObj(s.properties) ? s.properties : {}),
      apiVersion: { description: EMBEDDED_API_VERSION_DOC, type: 'string' },
      kind: { description: EMBEDDED_KIND_DOC, type: 'string' },
      metadata: ref(flavor, `${META}.ObjectMeta`, METADATA_DOC),
    };
    const required = Array.isArray(s.required) ? [...(s.required as string[])] : [];
    if (!required.includes('kind')) required.push('kind');
    if (!required.includes('apiVersion')) required.push('apiVersion');
    s.required = required;
    return s;
  };
}

const sortProperties = (s: Schema): Schema => {
  if (isObj(s.properties)) s.properties = sortKeys(s.properties);
  return s;
};

export interface PublishedVersion {
  /** Facts for the OpenAPI paths (definition: the published name). */
  facts: ResourceFacts;
  v2: Record<string, Schema>;
  v3: Record<string, Schema>;
}

export function definitionName(group: string, version: string, kind: string): string {
  return `${reverseDomain(group)}.${version}.${kind}`;
}

/** The definitions of one served version of a CRD. */
export function publishVersion(
  facts: Omit<ResourceFacts, 'definition'>,
  listKind: string,
  schema: Schema | undefined,
  preserveUnknownFields = false,
): PublishedVersion {
  const { group, version, kind } = facts;
  const name = definitionName(group, version, kind);
  const listName = definitionName(group, version, listKind);
  const gvk = (k: string) => [{ group, kind: k, version }];
  const build = (flavor: Flavor): Record<string, Schema> => {
    const gvkExt = { 'x-kubernetes-group-version-kind': gvk(kind) };
    let root: Schema;
    // Without a schema, or in v2 with preserve-unknown-fields at the root, only an open
    // object: any property would make kubectl refuse every field not listed.
    if (!isObj(schema) || (flavor === 'v2' && (schema[PRESERVE] === true || preserveUnknownFields)))
      root = { type: 'object', ...gvkExt };
    else {
      let s = mapSchema(structuredClone(schema), unfold);
      if (flavor === 'v2') s = mapSchema(toV2(s), pruneDefaults);
      s = { ...s, properties: { ...(isObj(s.properties) ? s.properties : {}) } };
      s.properties.metadata = ref(flavor, `${META}.ObjectMeta`, METADATA_DOC);
      s.properties.apiVersion = { description: API_VERSION_DOC, type: 'string' };
      s.properties.kind = { description: KIND_DOC, type: 'string' };
      root = { ...mapSchema(mapSchema(s, addEmbedded(flavor)), sortProperties), ...gvkExt };
    }
    const itemRef = `${flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'}${name}`;
    const list: Schema = {
      description: `${listKind} is a list of ${kind}`,
      type: 'object',
      required: ['items'],
      properties: {
        apiVersion: { description: API_VERSION_DOC, type: 'string' },
        items: {
          description: `List of ${facts.resource}. More info: ${CONVENTIONS}`,
          type: 'array',
          items: { $ref: itemRef },
        },
        kind: { description: KIND_DOC, type: 'string' },
        metadata: ref(flavor, `${META}.ListMeta`, LIST_METADATA_DOC),
      },
      'x-kubernetes-group-version-kind': gvk(listKind),
    };
    return { [name]: root, [listName]: list };
  };
  return { facts: { ...facts, definition: name }, v2: build('v2'), v3: build('v3') };
}

function sortKeys(o: Schema): Schema {
  return Object.fromEntries(
    Object.keys(o)
      .sort()
      .map((k) => [k, o[k]]),
  );
}
