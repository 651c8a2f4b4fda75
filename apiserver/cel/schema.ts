// From structural OpenAPI schemas to CEL, as Kubernetes maps them: declared
// types for `self`/`oldSelf` (objects with their properties, maps from
// additionalProperties, lists, int-or-string and preserve-unknown-fields as
// dyn, embedded resources and the resource root with apiVersion, kind and
// metadata.name/generateName), property names escaped (`foo-bar` is
// `self.foo__dash__bar`), and JSON values turned into CEL values (integers as
// int, objects keyed by escaped names).
import type { CelEnvironment } from './engine';
import { celEquals } from './library/values';

export type Schema = Record<string, any>;

const RESERVED = new Set([
  'true',
  'false',
  'null',
  'in',
  'as',
  'break',
  'const',
  'continue',
  'else',
  'for',
  'function',
  'if',
  'import',
  'let',
  'loop',
  'package',
  'namespace',
  'return',
  'var',
  'void',
  'while',
]);
const ACCESSIBLE = /^[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*$/;

/** The CEL name of a property, or undefined when CEL cannot reach it. */
export function escapeName(name: string): string | undefined {
  if (RESERVED.has(name)) return `__${name}__`;
  if (!ACCESSIBLE.test(name)) return undefined;
  return name
    .replace(/__/g, '__underscores__')
    .replace(/\./g, '__dot__')
    .replace(/-/g, '__dash__')
    .replace(/\//g, '__slash__');
}

const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);
const props = (s: Schema): Record<string, Schema> => (isObj(s.properties) ? s.properties : {});
const hasProps = (s: Schema) => Object.keys(props(s)).length > 0;

/** Kubernetes' view of the metadata of a resource root or embedded resource. */
const META_SCHEMA: Schema = {
  type: 'object',
  properties: { name: { type: 'string' }, generateName: { type: 'string' } },
};

/** The schema as CEL sees it: resource roots and embedded resources get apiVersion, kind, metadata. */
export function withTypeAndObjectMeta(s: Schema): Schema {
  return {
    ...s,
    type: 'object',
    properties: {
      ...props(s),
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      metadata: META_SCHEMA,
    },
  };
}

const isDyn = (s: Schema) =>
  s['x-kubernetes-int-or-string'] === true ||
  (s['x-kubernetes-preserve-unknown-fields'] === true && !hasProps(s) && !isObj(s.additionalProperties)) ||
  (s.type === undefined && !hasProps(s) && !isObj(s.items) && !isObj(s.additionalProperties));

/**
 * Declares the types of a schema in env and returns the CEL type of its
 * value. Object types are named after their path (`Object.spec.ports._items`).
 */
export function declareSchemaType(env: CelEnvironment, s: Schema, name: string, root = false): string {
  if (root || s['x-kubernetes-embedded-resource'] === true) s = withTypeAndObjectMeta(s);
  if (isDyn(s)) return 'dyn';
  switch (s.type) {
    case 'integer':
      return 'int';
    case 'number':
      return 'double';
    case 'boolean':
      return 'bool';
    case 'string':
      return 'string';
    case 'array':
      return `list<${isObj(s.items) ? declareSchemaType(env, s.items, `${name}._items`) : 'dyn'}>`;
    case 'object': {
      if (!hasProps(s) && isObj(s.additionalProperties))
        return `map<string, ${declareSchemaType(env, s.additionalProperties, `${name}._values`)}>`;
      const fields: Record<string, string> = {};
      for (const [k, sub] of Object.entries(props(s))) {
        const cel = escapeName(k);
        if (cel && isObj(sub)) fields[cel] = declareSchemaType(env, sub, `${name}.${cel}`);
      }
      env.registerType(name, { fields });
      env.registerOperator(`${name} == ${name}`, celEquals);
      return name;
    }
    default:
      return 'dyn';
  }
}

function dynValue(v: unknown): unknown {
  if (typeof v === 'number') return Number.isInteger(v) ? BigInt(v) : v;
  if (Array.isArray(v)) return v.map(dynValue);
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    for (const [k, x] of Object.entries(v)) out[k] = dynValue(x);
    return out;
  }
  return v;
}

/** A JSON value as the CEL value of its schema's declared type. */
export function toCelValue(v: unknown, s: Schema | undefined, root = false): unknown {
  if (!s) return dynValue(v);
  if (root || s['x-kubernetes-embedded-resource'] === true) {
    s = withTypeAndObjectMeta(s);
    if (isObj(v) && isObj(v.metadata)) {
      const { name, generateName } = v.metadata;
      v = {
        ...v,
        metadata: {
          ...(name !== undefined ? { name } : {}),
          ...(generateName !== undefined ? { generateName } : {}),
        },
      };
    }
  }
  if (isDyn(s)) return dynValue(v);
  if (s.type === 'integer' && typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
  if (s.type === 'number' && typeof v === 'number') return v;
  if (Array.isArray(v)) return v.map((x) => toCelValue(x, isObj(s.items) ? s.items : undefined));
  if (isObj(v)) {
    const out: Record<string, unknown> = {};
    if (!hasProps(s) && isObj(s.additionalProperties)) {
      for (const [k, x] of Object.entries(v)) out[k] = toCelValue(x, s.additionalProperties);
      return out;
    }
    const p = props(s);
    for (const [k, x] of Object.entries(v)) {
      const cel = escapeName(k);
      if (cel && isObj(p[k]) && x !== null) out[cel] = toCelValue(x, p[k]);
    }
    return out;
  }
  return dynValue(v);
}
