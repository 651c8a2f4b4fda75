// Estimated cost of a CEL expression before it runs, after cel-go's estimator
// as Kubernetes uses it: every node costs about 1, comprehensions multiply
// their body by the largest size their range can have, and string and list
// operations scale with the largest length. Sizes come from the schema's
// maxItems/maxProperties/maxLength; without them, from what fits in the
// largest request (3 MiB), which is why unbounded nested loops exceed budgets.
import type { ASTNode } from './engine';
import { escapeName, withTypeAndObjectMeta, type Schema } from './schema';

/** Kubernetes' limits (apiextensions validation and celconfig). */
export const PER_CALL_LIMIT = 1_000_000;
export const STATIC_ESTIMATED_COST_LIMIT = 10_000_000;
export const STATIC_ESTIMATED_CRD_COST_LIMIT = 100_000_000;
export const RUNTIME_CEL_COST_BUDGET = 10_000_000;
const MAX_REQUEST_SIZE_BYTES = 3 * 1024 * 1024;

const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The smallest JSON a value of the schema serializes to (bounds unbounded lists). */
function minSerializedSize(s: Schema | undefined): number {
  switch (s?.type) {
    case 'string':
      return 2; // ""
    case 'boolean':
      return 4; // true
    case 'integer':
    case 'number':
      return 1;
    case 'array':
    case 'object':
      return 2; // [] or {}
    default:
      return 1;
  }
}

/** The largest number of elements (lists, maps) or characters (strings) a value of s can have. */
export function maxSize(s: Schema | undefined): number {
  if (!s) return MAX_REQUEST_SIZE_BYTES;
  if (s.type === 'array') {
    if (typeof s.maxItems === 'number') return s.maxItems;
    return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(s.items) + 1));
  }
  if (s.type === 'object') {
    if (typeof s.maxProperties === 'number') return s.maxProperties;
    return Math.floor((MAX_REQUEST_SIZE_BYTES - 2) / (minSerializedSize(s.additionalProperties) + 4));
  }
  if (s.type === 'string') {
    if (typeof s.maxLength === 'number') return s.maxLength;
    if (Array.isArray(s.enum)) return Math.max(0, ...s.enum.map((e: unknown) => String(e).length));
    return MAX_REQUEST_SIZE_BYTES - 2;
  }
  return 1;
}

const MACROS = new Set([
  'all',
  'exists',
  'exists_one',
  'existsOne',
  'map',
  'filter',
  'sortBy',
  'transformList',
  'transformMap',
  'transformMapEntry',
]);
const STRING_SCANS = new Set([
  'contains',
  'startsWith',
  'endsWith',
  'matches',
  'find',
  'findAll',
  'indexOf',
  'lastIndexOf',
  'replace',
  'split',
  'lowerAscii',
  'upperAscii',
  'trim',
]);

/**
 * What a name or path stands for: its schema, and at run time the values it
 * can have (every element, for a loop variable).
 */
interface Shape {
  schema?: Schema;
  values?: unknown[];
}

interface Scope {
  [name: string]: Shape | undefined;
}

function elementShape(sh: Shape | undefined): Shape | undefined {
  const s = sh?.schema;
  if (!s) return undefined;
  const values = sh.values?.flatMap((v) => (Array.isArray(v) ? v : isObj(v) ? Object.keys(v) : []));
  if (s.type === 'array') return { schema: isObj(s.items) ? s.items : undefined, values };
  // Iterating a map yields its keys.
  if (s.type === 'object' && isObj(s.additionalProperties)) return { schema: { type: 'string' }, values };
  return undefined;
}

function fieldShape(sh: Shape | undefined, celName: string): Shape | undefined {
  const s = sh?.schema;
  if (!s) return undefined;
  const pick = (key: string | undefined, schema: Schema): Shape => ({
    schema,
    values: sh.values?.flatMap((v) => {
      if (!isObj(v)) return [];
      const x = key !== undefined ? v[key] : v[celName];
      return x === undefined ? [] : [x];
    }),
  });
  if (isObj(s.properties)) {
    for (const [k, sub] of Object.entries(s.properties))
      if (escapeName(k) === celName) return pick(k, sub as Schema);
  }
  if (isObj(s.additionalProperties)) return pick(undefined, s.additionalProperties);
  return undefined;
}

/** The shape of what an expression yields, when it is a path into self/oldSelf or a loop variable. */
function shapeOf(n: ASTNode, scope: Scope): Shape | undefined {
  const a: any = n.args;
  switch (n.op) {
    case 'id':
      return scope[a as string];
    case '.':
    case '.?':
      return fieldShape(shapeOf(a[0], scope), a[1]);
    case '[]':
    case '[?]': {
      const sh = shapeOf(a[0], scope);
      return sh?.schema?.type === 'array' ? elementShape(sh) : fieldShape(sh, String(a[1]?.args));
    }
    default:
      return undefined;
  }
}

/** Elements or characters of a value. */
function actualSize(v: unknown): number {
  if (Array.isArray(v) || typeof v === 'string') return v.length;
  if (isObj(v)) return Object.keys(v).length;
  return 1;
}

const TWO_VARIABLE_MACROS = new Set([
  'all',
  'exists',
  'existsOne',
  'transformList',
  'transformMap',
  'transformMapEntry',
]);

/** The shape of a list's elements or a map's values. */
function valueShape(recv: ASTNode, scope: Scope): Shape | undefined {
  const sh = shapeOf(recv, scope);
  const s = sh?.schema;
  if (s?.type !== 'object') return elementShape(sh);
  const values = sh?.values?.flatMap((v) => (isObj(v) ? Object.values(v) : []));
  return { schema: isObj(s.additionalProperties) ? s.additionalProperties : undefined, values };
}

/** Types whose values have no size: comparing or passing them scans nothing. */
const SCALARS = new Set([
  'int',
  'uint',
  'double',
  'bool',
  'null',
  'google.protobuf.Timestamp',
  'google.protobuf.Duration',
]);
const checkedTypeName = (n: ASTNode): string | undefined =>
  (n as { checkedType?: { name?: string } }).checkedType?.name;

function sizeOf(n: ASTNode, scope: Scope): number {
  if (n.op === 'value') return typeof n.args === 'string' ? n.args.length : 1;
  if (SCALARS.has(checkedTypeName(n) ?? '')) return 1;
  if (n.op === 'list') return (n.args as ASTNode[]).length;
  const sh = shapeOf(n, scope);
  if (sh?.values) return sh.values.reduce((m: number, v) => Math.max(m, actualSize(v)), 0);
  return maxSize(sh?.schema);
}

/** A literal int argument, else undefined (the estimate then assumes the worst). */
const literalInt = (n: ASTNode | undefined): number | undefined =>
  n?.op === 'value' && typeof n.args === 'bigint' ? Number(n.args) : undefined;

/** ListCreateBaseCost: what cel-go adds for a call that builds a list. */
const LIST_CREATE = 10;

/** What cel-go's sets and lists extensions estimate beyond the call itself. */
function extensionCost(name: string, recv: ASTNode, args: ASTNode[], scope: Scope): number {
  if (recv.op === 'id' && recv.args === 'sets' && args.length === 2) {
    const factor = name === 'equivalent' ? 2 : name === 'contains' || name === 'intersects' ? 1 : 0;
    return Math.ceil(factor * sizeOf(args[0], scope) * sizeOf(args[1], scope));
  }
  if (recv.op === 'id' && recv.args === 'lists' && name === 'range')
    return LIST_CREATE + (literalInt(args[0]) ?? Number.MAX_SAFE_INTEGER);
  const size = () => sizeOf(recv, scope);
  switch (name) {
    case 'slice': {
      const start = literalInt(args[0]) ?? 0;
      const end = literalInt(args[1]) ?? size();
      return LIST_CREATE + Math.max(0, end - start);
    }
    case 'reverse':
      return args.length === 0 ? LIST_CREATE + size() : 0;
    case 'flatten':
      return LIST_CREATE + (args.length ? (literalInt(args[0]) ?? Number.MAX_SAFE_INTEGER) : 1) * size();
    case 'distinct':
    case 'sort':
    case 'sortBy':
      return LIST_CREATE + 2 * size() * size();
    default:
      return 0;
  }
}

function cost(n: ASTNode, scope: Scope): number {
  const a: any = n.args;
  switch (n.op) {
    case 'value':
      return 0;
    case 'id':
      return 1;
    case '.':
    case '.?':
      return 1 + cost(a[0], scope);
    case 'list':
      return 10 + (a as ASTNode[]).reduce((t, x) => t + cost(x, scope), 0);
    case 'map':
      return 30 + (a as [ASTNode, ASTNode][]).reduce((t, [k, v]) => t + cost(k, scope) + cost(v, scope), 0);
    case 'call': {
      const [, args] = a as [string, ASTNode[]];
      return 1 + args.reduce((t, x) => t + cost(x, scope), 0);
    }
    case 'rcall': {
      const [name, recv, args] = a as [string, ASTNode, ASTNode[]];
      if (MACROS.has(name) && args.length >= 2 && args[0].op === 'id') {
        const size = sizeOf(recv, scope);
        // all(x, p) binds the element (a map's key); all(i, v, p) the index or key, then the value.
        const twoVar = TWO_VARIABLE_MACROS.has(name) && args.length >= 3 && args[1].op === 'id';
        const inner = twoVar
          ? {
              ...scope,
              [args[0].args as string]: undefined,
              [args[1].args as string]: valueShape(recv, scope),
            }
          : { ...scope, [args[0].args as string]: elementShape(shapeOf(recv, scope)) };
        const body = args.slice(twoVar ? 2 : 1).reduce((t, x) => t + cost(x, inner), 0);
        return cost(recv, scope) + size * (body + 1) + extensionCost(name, recv, args, scope);
      }
      let c = 1 + cost(recv, scope) + args.reduce((t, x) => t + cost(x, scope), 0);
      // Namespaced functions (sets.contains: the receiver is a library's namespace value, of a
      // type named …Namespace) share names with string methods, not their cost.
      if (STRING_SCANS.has(name) && !checkedTypeName(recv)?.endsWith('Namespace'))
        c += Math.ceil(0.1 * sizeOf(recv, scope));
      return c + extensionCost(name, recv, args, scope);
    }
    case '==':
    case '!=':
    case 'in': {
      const [l, r] = a as [ASTNode, ASTNode];
      const scan = n.op === 'in' ? sizeOf(r, scope) : Math.min(sizeOf(l, scope), sizeOf(r, scope));
      return 1 + cost(l, scope) + cost(r, scope) + Math.ceil(0.1 * (scan > 1 ? scan : 0));
    }
    default:
      if (Array.isArray(a)) return 1 + a.reduce((t: number, x: any) => t + (x?.op ? cost(x, scope) : 0), 0);
      if (a?.op) return 1 + cost(a, scope);
      return 1;
  }
}

const celSchema = (s: Schema, root: boolean) =>
  root || s['x-kubernetes-embedded-resource'] === true ? withTypeAndObjectMeta(s) : s;

/** The estimated cost of one evaluation of a rule whose self (and oldSelf) has schema s. */
export function estimateCost(ast: ASTNode, s: Schema, root = false): number {
  const schema = celSchema(s, root);
  return cost(ast, { self: { schema }, oldSelf: { schema } });
}

/**
 * The cost of one evaluation on these values: the estimate with the sizes the
 * values have instead of the largest their schema allows (the engine does not
 * count its steps, so this stands in for cel-go's actual cost).
 */
export function actualCost(ast: ASTNode, s: Schema, self: unknown, oldSelf: unknown, root = false): number {
  const schema = celSchema(s, root);
  return cost(ast, {
    self: { schema, values: [self] },
    oldSelf: { schema, values: oldSelf === undefined ? [] : [oldSelf] },
  });
}

/** Kubernetes' wording of a cost over its limit. */
export function costErrorMessage(what: string, cost: number, limit: number): string {
  const factor = cost / limit;
  const by = factor > 100 ? 'more than 100x' : `${factor.toFixed(1)}x`;
  return `${what} exceeds budget by factor of ${by} (try simplifying the rule, or adding maxItems, maxProperties, and maxLength where arrays, maps, and strings are declared)`;
}
