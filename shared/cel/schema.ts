// From structural OpenAPI schemas to CEL, as Kubernetes maps them: declared
// types for `self`/`oldSelf` (objects with their properties, maps from
// additionalProperties, lists, int-or-string and preserve-unknown-fields as
// dyn, embedded resources and the resource root with apiVersion, kind and
// metadata.name/generateName), property names escaped (`foo-bar` is
// `self.foo__dash__bar`), and JSON values turned into CEL values (integers as
// int, objects keyed by escaped names).
import { compile, newEnvironment, type CelEnvironment } from './engine';
import type * as Values from './library/values';

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

const isType = (s: unknown, type: string) => isObj(s) && s.type === type;

/**
 * The schema as CEL sees it: resource roots and embedded resources get apiVersion, kind, metadata
 * (unless the schema already types them, as a built-in kind's full ObjectMeta does).
 */
export function withTypeAndObjectMeta(s: Schema): Schema {
  const p = props(s);
  const meta = isObj(p.metadata) ? props(p.metadata) : {};
  if (
    isType(p.kind, 'string') &&
    isType(p.apiVersion, 'string') &&
    isType(p.metadata, 'object') &&
    isType(meta.name, 'string') &&
    isType(meta.generateName, 'string')
  )
    return s;
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
  s.format === 'int-or-string' || // built-in kinds mark IntOrString by its format
  (s['x-kubernetes-preserve-unknown-fields'] === true && !hasProps(s) && !isObj(s.additionalProperties)) ||
  (s.type === undefined && !hasProps(s) && !isObj(s.items) && !isObj(s.additionalProperties));

/** Strings whose format Kubernetes gives a CEL type of its own. */
const STRING_FORMATS: Record<string, { type: string; value(s: string): unknown }> = {
  byte: { type: 'bytes', value: (s) => new Uint8Array(Buffer.from(s, 'base64')) },
  date: { type: 'google.protobuf.Timestamp', value: (s) => new Date(`${s}T00:00:00Z`) },
  'date-time': { type: 'google.protobuf.Timestamp', value: (s) => new Date(s) },
  duration: { type: 'google.protobuf.Duration', value: (s) => parseDuration(s) },
};

let durationProgram: ((vars: Record<string, unknown>) => unknown) | undefined;
/** A Go duration string ("1h30m") as the engine's duration value. */
function parseDuration(s: string): unknown {
  if (!durationProgram) {
    const env = newEnvironment();
    env.registerVariable('s', 'string');
    const p = compile(env, 'duration(s)');
    durationProgram = (vars) => p.evaluate(vars);
  }
  try {
    return durationProgram({ s });
  } catch {
    return s;
  }
}

const withMeta = new WeakMap<Schema, Schema>();
/** The schema CEL sees at a node (cached, so each node keeps one identity). */
function celSchema(s: Schema, root: boolean): Schema {
  if (!root && s['x-kubernetes-embedded-resource'] !== true) return s;
  let m = withMeta.get(s);
  if (!m) withMeta.set(s, (m = withTypeAndObjectMeta(s)));
  return m;
}

/** The values of one declared object type: a class of its own, so the engine knows their type. */
type ObjectClass = new (fields: Record<string, unknown>) => object;

function objectClass(): ObjectClass {
  return class {
    constructor(fields: Record<string, unknown>) {
      Object.assign(this, fields);
    }
  };
}

/**
 * The CEL types of schemas declared in one environment, and JSON values made
 * into values of those types. Object types are named after their path
 * (`Object.spec.ports._items`).
 */
export class SchemaTypes {
  private readonly classes = new WeakMap<Schema, ObjectClass>();

  constructor(private readonly env: CelEnvironment) {}

  /** Declares the types of s and returns the CEL type of its values. */
  declare(s: Schema, name: string, root = false): string {
    s = celSchema(s, root);
    if (isDyn(s)) return 'dyn';
    switch (s.type) {
      case 'integer':
        return 'int';
      case 'number':
        return 'double';
      case 'boolean':
        return 'bool';
      case 'string':
        return STRING_FORMATS[s.format]?.type ?? 'string';
      case 'array':
        return `list<${isObj(s.items) ? this.declare(s.items, `${name}._items`) : 'dyn'}>`;
      case 'object': {
        if (!hasProps(s) && isObj(s.additionalProperties))
          return `map<string, ${this.declare(s.additionalProperties, `${name}._values`)}>`;
        const fields: Record<string, string> = {};
        for (const [k, sub] of Object.entries(props(s))) {
          const cel = escapeName(k);
          if (cel && isObj(sub)) fields[cel] = this.declare(sub, `${name}.${cel}`);
        }
        const ctor = objectClass();
        this.classes.set(s, ctor);
        this.env.registerType(name, { ctor, fields });
        this.env.registerOperator(
          `${name} == ${name}`,
          // Loaded with the environment (cel-js under it loads on first use: engine.ts).
          // eslint-disable-next-line @typescript-eslint/no-require-imports
          (require('./library/values') as typeof Values).celEquals,
        );
        return name;
      }
      default:
        return 'dyn';
    }
  }

  /** A JSON value as a CEL value of the type declared for s. */
  value(v: unknown, s: Schema | undefined, root = false): unknown {
    if (!s) return dynValue(v);
    const resource = root || s['x-kubernetes-embedded-resource'] === true;
    s = celSchema(s, root);
    if (resource && isObj(v) && isObj(v.metadata)) {
      const { name, generateName } = v.metadata;
      v = {
        ...v,
        metadata: {
          ...(name !== undefined ? { name } : {}),
          ...(generateName !== undefined ? { generateName } : {}),
        },
      };
    }
    if (isDyn(s)) return dynValue(v);
    if (s.type === 'integer' && typeof v === 'number' && Number.isInteger(v)) return BigInt(v);
    if (s.type === 'number' && typeof v === 'number') return v; // a double even when it has no fraction
    if (s.type === 'string' && typeof v === 'string' && STRING_FORMATS[s.format])
      return STRING_FORMATS[s.format].value(v);
    if (Array.isArray(v)) return v.map((x) => this.value(x, isObj(s.items) ? s.items : undefined));
    if (!isObj(v)) return dynValue(v);
    const out: Record<string, unknown> = {};
    if (!hasProps(s) && isObj(s.additionalProperties)) {
      for (const [k, x] of Object.entries(v)) out[k] = this.value(x, s.additionalProperties);
      return out;
    }
    const p = props(s);
    for (const [k, x] of Object.entries(v)) {
      const cel = escapeName(k);
      if (cel && isObj(p[k]) && x !== null) out[cel] = this.value(x, p[k]);
    }
    const ctor = this.classes.get(s);
    return ctor ? new ctor(out) : out;
  }
}

/** A JSON value as an untyped (dyn) CEL value: integers as int, objects as maps. */
export function jsonToCel(v: unknown): unknown {
  return dynValue(v);
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
