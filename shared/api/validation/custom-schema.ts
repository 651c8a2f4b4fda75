// Validation against an arbitrary OpenAPI v3 schema (a CRD version's
// openAPIV3Schema), with kube-openapi's messages as Kubernetes returns them for
// custom resources: `spec.replicas: Invalid value: "string": spec.replicas in
// body must be of type integer: "string"`. Validators are cached per schema object.
import type Ajv from 'ajv';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { FieldError } from '../field-errors';
import { notSupported, required } from '../field-errors';
import { goKind, loadAjv } from './schema-validator';

type Schema = Record<string, unknown>;

let ajv: Ajv | undefined;
const cache = new WeakMap<object, ValidateFunction>();

function instance(): Ajv {
  if (!ajv) {
    const { Ajv, addFormats } = loadAjv();
    ajv = new Ajv({ allErrors: true, strict: false, validateSchema: false, logger: false, messages: false });
    addFormats(ajv);
    for (const f of [
      'int32',
      'int64',
      'float',
      'double',
      'password',
      'bsonobjectid',
      'cidr',
      'mac',
      'isbn',
      'creditcard',
      'ssn',
      'hexcolor',
      'rgbcolor',
    ])
      if (!ajv.formats[f]) ajv.addFormat(f, true);
  }
  return ajv;
}

const KEEP = new Set([
  'type',
  'format',
  'enum',
  'required',
  'pattern',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'uniqueItems',
  'multipleOf',
  'minProperties',
  'maxProperties',
  'nullable',
]);

/** OpenAPI v3 (with x-kubernetes extensions) to the JSON Schema ajv runs. */
function convert(s: Schema): Schema {
  const out: Schema = {};
  for (const [k, v] of Object.entries(s)) {
    if (KEEP.has(k)) out[k] = v;
    else if (k === 'properties' && v && typeof v === 'object')
      out.properties = Object.fromEntries(
        Object.entries(v as Schema).map(([n, sub]) => [n, convert(sub as Schema)]),
      );
    else if ((k === 'items' || k === 'not') && v && typeof v === 'object' && !Array.isArray(v))
      out[k] = convert(v as Schema);
    else if ((k === 'allOf' || k === 'anyOf' || k === 'oneOf') && Array.isArray(v))
      out[k] = v.map((x) => convert(x as Schema));
    else if (k === 'additionalProperties') out[k] = typeof v === 'boolean' ? v : convert(v as Schema);
  }
  // OpenAPI v3.0 spells exclusive bounds as booleans.
  if (s.exclusiveMinimum === true && typeof s.minimum === 'number') {
    out.exclusiveMinimum = s.minimum;
    delete out.minimum;
  }
  if (s.exclusiveMaximum === true && typeof s.maximum === 'number') {
    out.exclusiveMaximum = s.maximum;
    delete out.maximum;
  }
  if (s['x-kubernetes-int-or-string'] === true) {
    out.type = ['integer', 'string'];
    delete out.nullable;
  }
  if (out.nullable === true && !out.type) delete out.nullable;
  return out;
}

function compile(schema: Schema): ValidateFunction {
  let v = cache.get(schema);
  if (!v) {
    v = instance().compile(convert(schema));
    cache.set(schema, v);
  }
  return v;
}

function location(obj: unknown, pointer: string): { path: string; value: unknown } {
  let path = '';
  let value = obj;
  if (pointer)
    for (const raw of pointer.slice(1).split('/')) {
      const seg = raw.replace(/~1/g, '/').replace(/~0/g, '~');
      path = Array.isArray(value) ? `${path}[${seg}]` : path ? `${path}.${seg}` : seg;
      value =
        value !== null && typeof value === 'object' ? (value as Record<string, unknown>)[seg] : undefined;
    }
  return { path, value };
}

const shown = (v: unknown) => (typeof v === 'string' ? v : JSON.stringify(v));

function translate(e: ErrorObject, obj: unknown): FieldError {
  const { path, value } = location(obj, e.instancePath);
  const p = e.params as Record<string, unknown>;
  const at = path || '.';
  const inv = (detail: string, bad: unknown = value): FieldError => ({
    type: 'FieldValueInvalid',
    field: path,
    badValue: bad,
    detail,
  });
  switch (e.keyword) {
    case 'required':
      return required(path ? `${path}.${String(p.missingProperty)}` : String(p.missingProperty), '');
    case 'enum':
      return notSupported(path, value, (p.allowedValues as unknown[]).map(shown));
    case 'type':
      return {
        type: 'FieldValueTypeInvalid',
        field: path,
        badValue: goKind(value),
        detail: `${at} in body must be of type ${Array.isArray(p.type) ? p.type.join(',') : String(p.type)}: ${JSON.stringify(goKind(value))}`,
      };
    case 'format':
      return inv(`${at} in body must be of type ${String(p.format)}: ${JSON.stringify(value)}`);
    case 'pattern':
      return inv(`${at} in body should match '${String(p.pattern)}'`);
    case 'minimum':
    case 'exclusiveMinimum':
      return inv(
        `${at} in body should be greater than ${p.comparison === '>=' ? 'or equal to ' : ''}${String(p.limit)}`,
      );
    case 'maximum':
    case 'exclusiveMaximum':
      return inv(
        `${at} in body should be less than ${p.comparison === '<=' ? 'or equal to ' : ''}${String(p.limit)}`,
      );
    case 'minLength':
      return inv(`${at} in body should be at least ${String(p.limit)} chars long`);
    case 'maxLength':
      return {
        type: 'FieldValueTooLong',
        field: path,
        badValue: value,
        detail: `may not be longer than ${String(p.limit)}`,
      };
    case 'minItems':
      return inv(`${at} in body should have at least ${String(p.limit)} items`);
    case 'maxItems':
      return {
        type: 'FieldValueTooMany',
        field: path,
        badValue: Array.isArray(value) ? value.length : undefined,
        detail: `must have at most ${String(p.limit)} items`,
      };
    case 'minProperties':
      return inv(`${at} in body should have at least ${String(p.limit)} properties`);
    case 'maxProperties':
      return {
        type: 'FieldValueTooMany',
        field: path,
        badValue: value && typeof value === 'object' ? Object.keys(value).length : undefined,
        detail: `must have at most ${String(p.limit)} items`,
      };
    case 'uniqueItems':
      return inv(`${at} in body shouldn't contain duplicates`);
    case 'multipleOf':
      return inv(`${at} in body should be a multiple of ${String(p.multipleOf)}`);
    case 'oneOf':
      return inv(`${at} in body must validate one and only one schema (oneOf)`);
    case 'anyOf':
      return inv(`${at} in body must validate at least one schema (anyOf)`);
    case 'not':
      return inv(`${at} in body must not validate the schema (not)`);
    default:
      return inv(`${at} in body is invalid`);
  }
}

/**
 * Validates `obj` against an OpenAPI v3 schema (e.g. a CRD's openAPIV3Schema).
 * Compiles once per schema object. Empty list: valid.
 */
/** ajv knows no bigint: an integer past 2^53 (codec/json-int64) is an integer (and a number) all the same. */
function bigIntegerTypeError(e: ErrorObject, obj: unknown): boolean {
  if (e.keyword !== 'type') return false;
  const want = String((e.params as { type?: unknown }).type);
  return /integer|number/.test(want) && typeof location(obj, e.instancePath).value === 'bigint';
}

export function validateWithSchema(schema: Schema, obj: unknown): FieldError[] {
  const validate = compile(schema);
  if (validate(obj)) return [];
  const out: FieldError[] = [];
  const seen = new Set<string>();
  for (const e of validate.errors ?? []) {
    // anyOf/oneOf report their branches too; Kubernetes reports the combinator.
    if (e.schemaPath.includes('/anyOf/') || e.schemaPath.includes('/oneOf/')) continue;
    if (bigIntegerTypeError(e, obj)) continue;
    const fe = translate(e, obj);
    const k = `${fe.type}|${fe.field}|${fe.detail ?? ''}`;
    if (!seen.has(k)) {
      seen.add(k);
      out.push(fe);
    }
  }
  return out;
}
