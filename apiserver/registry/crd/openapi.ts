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
const LIST_METADATA_DOC = `Standard list metadata. More info: ${CONVENTIONS}#types-kinds`;

type Flavor = 'v2' | 'v3';

const isObj = (v: unknown): v is Schema => v !== null && typeof v === 'object' && !Array.isArray(v);

function ref(flavor: Flavor, name: string, description: string): Schema {
  const $ref = `${flavor === 'v2' ? '#/definitions/' : '#/components/schemas/'}${name}`;
  return flavor === 'v2' ? { description, $ref } : { description, allOf: [{ $ref }] };
}

/** Swagger 2.0 has no nullable, oneOf/anyOf/allOf or not: drop them as Kubernetes' v2 publishing does. */
function toV2(s: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'nullable' || k === 'oneOf' || k === 'anyOf' || k === 'allOf' || k === 'not') continue;
    if (k === 'properties' && isObj(v))
      out.properties = Object.fromEntries(Object.entries(v).map(([n, p]) => [n, isObj(p) ? toV2(p) : p]));
    else if ((k === 'items' || k === 'additionalProperties') && isObj(v)) out[k] = toV2(v);
    else out[k] = v;
  }
  if (s.nullable === true) {
    // An untyped value: kubectl would otherwise reject the null the schema allows.
    delete out.type;
    delete out.items;
    delete out.properties;
    delete out.additionalProperties;
  }
  return out;
}

/** Adds apiVersion/kind/metadata to embedded resources (x-kubernetes-embedded-resource). */
function withEmbedded(s: Schema, root: boolean): Schema {
  const out: Schema = { ...s };
  if (isObj(s.properties))
    out.properties = Object.fromEntries(
      Object.entries(s.properties).map(([n, p]) => [n, isObj(p) ? withEmbedded(p, false) : p]),
    );
  if (isObj(s.items)) out.items = withEmbedded(s.items, false);
  if (isObj(s.additionalProperties)) out.additionalProperties = withEmbedded(s.additionalProperties, false);
  if (!root && s['x-kubernetes-embedded-resource'] === true) {
    const props = { ...(out.properties ?? {}) };
    props.apiVersion ??= { type: 'string' };
    props.kind ??= { type: 'string' };
    props.metadata ??= { type: 'object' };
    out.properties = props;
  }
  return out;
}

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
): PublishedVersion {
  const { group, version, kind } = facts;
  const name = definitionName(group, version, kind);
  const listName = definitionName(group, version, listKind);
  const gvk = (k: string) => [{ group, kind: k, version }];
  const build = (flavor: Flavor): Record<string, Schema> => {
    const base = withEmbedded(isObj(schema) ? structuredClone(schema) : { type: 'object' }, true);
    const s = flavor === 'v2' ? toV2(base) : base;
    const props = { ...(isObj(s.properties) ? s.properties : {}) };
    props.apiVersion = { description: API_VERSION_DOC, type: 'string' };
    props.kind = { description: KIND_DOC, type: 'string' };
    props.metadata = ref(flavor, `${META}.ObjectMeta`, METADATA_DOC);
    const root: Schema = { ...s, type: 'object', properties: sortKeys(props) };
    if (Array.isArray(root.required)) {
      root.required = (root.required as string[]).filter((r) => r !== 'metadata');
      if (!root.required.length) delete root.required;
    }
    root['x-kubernetes-group-version-kind'] = gvk(kind);
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
