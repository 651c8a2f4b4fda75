// The schema of a CRD version (spec.versions[*].schema.openAPIV3Schema) as
// apiextensions-apiserver checks it: the structural-schema rules
// (schema/validation.go), then — for a structural schema only — that every
// `default:` is valid for its own schema.
import type { FieldError } from '../field-errors';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { asArr, asObj, asStr, child, index, key, type Obj } from './path';
import { validateWithSchema } from './custom-schema';

const LIST_TYPES = ['atomic', 'map', 'set'];
const MAP_TYPES = ['atomic', 'granular'];
const NESTED_FORBIDDEN: [string, string][] = [
  ['type', 'must be empty to be structural'],
  ['default', 'must be undefined to be structural'],
  ['additionalProperties', 'must be undefined to be structural'],
  ['nullable', 'must be false to be structural'],
  ['x-kubernetes-preserve-unknown-fields', 'must be false to be structural'],
  ['x-kubernetes-embedded-resource', 'must be false to be structural'],
  ['x-kubernetes-int-or-string', 'must be false to be structural'],
  ['x-kubernetes-list-map-keys', 'must be empty to be structural'],
  ['x-kubernetes-list-type', 'must be undefined to be structural'],
  ['x-kubernetes-map-type', 'must be undefined to be structural'],
];

const isIntOrStringPattern = (anyOf: unknown) => {
  const a = asArr(anyOf).map((x) => asObj(x) ?? {});
  return (
    a.length === 2 &&
    a[0].type === 'integer' &&
    a[1].type === 'string' &&
    a.every((x) => Object.keys(x).length === 1)
  );
};

/** Value validations (allOf, anyOf, oneOf, not) may not say anything structural. */
function validateNested(v: Obj, p: string, skipAnyOf = false): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, msg] of NESTED_FORBIDDEN) {
    if (k === 'type' && skipAnyOf) continue;
    const x = v[k];
    if (x !== undefined && x !== false && !(Array.isArray(x) && x.length === 0))
      errs.push(forbidden(child(p, k), msg));
  }
  if (asObj(v.properties)?.metadata !== undefined)
    errs.push(
      forbidden(key(child(p, 'properties'), 'metadata'), 'must not be specified in a nested context'),
    );
  for (const [name, sub] of Object.entries(asObj(v.properties) ?? {}))
    errs.push(...validateNested(asObj(sub) ?? {}, key(child(p, 'properties'), name)));
  if (asObj(v.items)) errs.push(...validateNested(asObj(v.items)!, child(p, 'items')));
  errs.push(...validateJunctors(v, p));
  return errs;
}

function validateJunctors(s: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const skipAnyOf = isIntOrStringPattern(s.anyOf);
  if (!skipAnyOf)
    asArr(s.anyOf).forEach((x, i) =>
      errs.push(...validateNested(asObj(x) ?? {}, index(child(p, 'anyOf'), i))),
    );
  asArr(s.allOf).forEach((x, i) => {
    const o = asObj(x) ?? {};
    errs.push(...validateNested(o, index(child(p, 'allOf'), i), i === 0 && isIntOrStringPattern(o.anyOf)));
  });
  asArr(s.oneOf).forEach((x, i) => errs.push(...validateNested(asObj(x) ?? {}, index(child(p, 'oneOf'), i))));
  if (asObj(s.not)) errs.push(...validateNested(asObj(s.not)!, child(p, 'not')));
  return errs;
}

/** x-kubernetes-list-type / -list-map-keys / -map-type (as server-side apply reads them). */
function validateListAndMapTypes(schema: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const listType = schema['x-kubernetes-list-type'];
  const keys = schema['x-kubernetes-list-map-keys'];
  const type = asStr(schema.type);
  if (listType !== undefined) {
    if (!LIST_TYPES.includes(String(listType)))
      errs.push(notSupported(child(p, 'x-kubernetes-list-type'), listType, LIST_TYPES));
    else if (type !== 'array')
      errs.push(invalid(child(p, 'type'), type, 'must be array if x-kubernetes-list-type is specified'));
  }
  const items = asObj(schema.items);
  if (listType === 'map') {
    if (!asArr(keys).length)
      errs.push(
        required(
          child(p, 'x-kubernetes-list-map-keys'),
          'must not be empty if x-kubernetes-list-type is map',
        ),
      );
    if (items && asStr(items.type) !== 'object')
      errs.push(
        invalid(
          child(child(p, 'items'), 'type'),
          asStr(items.type),
          "must be object if parent array's x-kubernetes-list-type is map",
        ),
      );
    const props = asObj(items?.properties) ?? {};
    const req = asArr(items?.required).map(String);
    asArr(keys).forEach((k, i) => {
      const f = asObj(props[String(k)]);
      const kp = index(child(p, 'x-kubernetes-list-map-keys'), i);
      if (!f) errs.push(invalid(kp, k, 'entries must all be names of item properties'));
      else {
        if (
          !['string', 'integer', 'number', 'boolean'].includes(asStr(f.type)) &&
          f['x-kubernetes-int-or-string'] !== true
        )
          errs.push(invalid(kp, k, 'must be a scalar field (string, integer, number or boolean)'));
        if (!req.includes(String(k)) && f.default === undefined && f.nullable !== true)
          errs.push(invalid(kp, k, 'entries must all be names of required properties or have a default'));
      }
    });
  } else if (keys !== undefined && asArr(keys).length) {
    errs.push(
      forbidden(child(p, 'x-kubernetes-list-map-keys'), 'can only be set if x-kubernetes-list-type is map'),
    );
  }
  if (
    listType === 'set' &&
    items &&
    asStr(items.type) === 'object' &&
    items['x-kubernetes-map-type'] !== 'atomic'
  )
    errs.push(
      invalid(
        child(child(p, 'items'), 'x-kubernetes-map-type'),
        items['x-kubernetes-map-type'] ?? null,
        'must be atomic as item of a list with x-kubernetes-list-type=set',
      ),
    );
  const mapType = schema['x-kubernetes-map-type'];
  if (mapType !== undefined && !MAP_TYPES.includes(String(mapType)))
    errs.push(notSupported(child(p, 'x-kubernetes-map-type'), mapType, MAP_TYPES));
  return errs;
}

function validPattern(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * The structural-schema rules (apiextensions-apiserver schema/validation.go):
 * a type everywhere, object at the root, metadata restricted to name and
 * generateName, embedded resources and int-or-string well formed, value
 * validations (allOf/anyOf/oneOf/not) without structure, list/map types.
 */
export function validateStructural(schema: Obj, p: string, root = true, embeddedOrRoot = root): FieldError[] {
  const errs: FieldError[] = [];
  const type = asStr(schema.type);
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'] === true;
  const embedded = schema['x-kubernetes-embedded-resource'] === true;
  const loose = intOrString || preserve;
  if (root) {
    if (!type) errs.push(required(child(p, 'type'), 'must not be empty at the root'));
    else if (type !== 'object') errs.push(invalid(child(p, 'type'), type, 'must be object at the root'));
    const meta = asObj(asObj(schema.properties)?.metadata);
    if (meta) {
      const extra = Object.keys(meta).filter((k) => k !== 'type');
      const props = Object.keys(asObj(meta.properties) ?? {}).filter(
        (k) => k !== 'name' && k !== 'generateName',
      );
      if (extra.length > 0 && (props.length > 0 || extra.some((k) => k !== 'properties')))
        errs.push(
          forbidden(
            key(child(p, 'properties'), 'metadata'),
            'must not specify anything other than name and generateName, but metadata is implicitly specified',
          ),
        );
    }
    if (schema.additionalProperties !== undefined && schema.additionalProperties !== false)
      errs.push(forbidden(child(p, 'additionalProperties'), 'must not be used at the root'));
  }
  if (schema['x-kubernetes-preserve-unknown-fields'] === false)
    errs.push(invalid(child(p, 'x-kubernetes-preserve-unknown-fields'), false, 'must be true or undefined'));
  for (const [name, sub] of Object.entries(asObj(schema.properties) ?? {})) {
    const sp = key(child(p, 'properties'), name);
    const s = asObj(sub) ?? {};
    if (
      !asStr(s.type) &&
      s['x-kubernetes-int-or-string'] !== true &&
      s['x-kubernetes-preserve-unknown-fields'] !== true &&
      s['x-kubernetes-embedded-resource'] !== true
    )
      errs.push(required(child(sp, 'type'), 'must not be empty for specified object fields'));
    if (embeddedOrRoot && (name === 'kind' || name === 'apiVersion') && asStr(s.type) !== 'string')
      errs.push(invalid(child(sp, 'type'), asStr(s.type), 'must be string'));
    if (embeddedOrRoot && name === 'metadata' && asStr(s.type) && asStr(s.type) !== 'object')
      errs.push(invalid(child(sp, 'type'), asStr(s.type), 'must be object'));
    errs.push(...validateStructural(s, sp, false, s['x-kubernetes-embedded-resource'] === true));
  }
  const items = asObj(schema.items);
  if (type === 'array' && !items && !loose) errs.push(required(child(p, 'items'), 'must be specified'));
  if (items) {
    if (
      !asStr(items.type) &&
      items['x-kubernetes-int-or-string'] !== true &&
      items['x-kubernetes-preserve-unknown-fields'] !== true &&
      items['x-kubernetes-embedded-resource'] !== true
    )
      errs.push(required(child(child(p, 'items'), 'type'), 'must not be empty for specified array items'));
    errs.push(
      ...validateStructural(
        items,
        child(p, 'items'),
        false,
        items['x-kubernetes-embedded-resource'] === true,
      ),
    );
  }
  const additional = asObj(schema.additionalProperties);
  if (additional)
    errs.push(
      ...validateStructural(
        additional,
        child(p, 'additionalProperties'),
        false,
        additional['x-kubernetes-embedded-resource'] === true,
      ),
    );
  if (schema.additionalProperties !== undefined && Object.keys(asObj(schema.properties) ?? {}).length) {
    if (schema.additionalProperties === false || additional)
      errs.push(
        forbidden(
          child(p, 'additionalProperties'),
          'additionalProperties and properties are mutual exclusive',
        ),
      );
  }
  if (embedded) {
    if (type !== 'object') {
      if (!type)
        errs.push(required(child(p, 'type'), 'must be object if x-kubernetes-embedded-resource is true'));
      else
        errs.push(
          invalid(child(p, 'type'), type, 'must be object if x-kubernetes-embedded-resource is true'),
        );
    }
    if (schema.additionalProperties !== undefined)
      errs.push(
        forbidden(
          child(p, 'additionalProperties'),
          'must not be used if x-kubernetes-embedded-resource is set',
        ),
      );
    if (!preserve && !Object.keys(asObj(schema.properties) ?? {}).length)
      errs.push(
        required(
          child(p, 'properties'),
          'must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields',
        ),
      );
  }
  if (intOrString && preserve)
    errs.push(
      invalid(
        child(p, 'x-kubernetes-preserve-unknown-fields'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  if (intOrString && embedded)
    errs.push(
      invalid(
        child(p, 'x-kubernetes-embedded-resource'),
        true,
        'must be false if x-kubernetes-int-or-string is true',
      ),
    );
  if (schema.uniqueItems === true)
    errs.push(
      forbidden(
        child(p, 'uniqueItems'),
        'uniqueItems cannot be set to true since the runtime complexity becomes quadratic',
      ),
    );
  if (typeof schema.pattern === 'string') {
    const e = validPattern(schema.pattern);
    if (e)
      errs.push(
        invalid(child(p, 'pattern'), schema.pattern, `must be a valid regular expression, but isn't: ${e}`),
      );
  }
  errs.push(...validateListAndMapTypes(schema, p));
  errs.push(...validateJunctors(schema, p));
  return errs;
}

/** `default:` values must be valid for their schema (and are pruned like objects). */
export function validateDefaults(
  schema: Obj,
  p: string,
  check: (schema: Obj, value: unknown) => string[],
  inMetadata = false,
): FieldError[] {
  const errs: FieldError[] = [];
  if (schema.default !== undefined) {
    if (inMetadata) errs.push(forbidden(child(p, 'default'), 'must not be set in metadata'));
    else if (schema.default === null && schema.nullable !== true)
      errs.push(invalid(child(p, 'default'), null, 'must not be null for a non-nullable field'));
    else
      for (const msg of check(schema, schema.default))
        errs.push(invalid(child(p, 'default'), schema.default, msg));
  }
  for (const [name, sub] of Object.entries(asObj(schema.properties) ?? {}))
    errs.push(
      ...validateDefaults(
        asObj(sub) ?? {},
        key(child(p, 'properties'), name),
        check,
        inMetadata || name === 'metadata',
      ),
    );
  if (asObj(schema.items))
    errs.push(...validateDefaults(asObj(schema.items)!, child(p, 'items'), check, inMetadata));
  if (asObj(schema.additionalProperties))
    errs.push(
      ...validateDefaults(
        asObj(schema.additionalProperties)!,
        child(p, 'additionalProperties'),
        check,
        inMetadata,
      ),
    );
  return errs;
}

const defaultErrors = (schema: Obj, value: unknown): string[] =>
  validateWithSchema(schema, value).map((e) => (e.field ? `${e.field}: ` : '') + (e.detail ?? e.type));

/** A version's openAPIV3Schema: structural, and when it is, valid defaults. */
export function validateVersionSchema(schema: Obj, p: string): FieldError[] {
  const structural = validateStructural(schema, p);
  if (structural.length) return structural;
  return validateDefaults(schema, p, defaultErrors);
}
