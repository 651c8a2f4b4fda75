// apiextensions.k8s.io/v1 CustomResourceDefinition (SPEC Notable change 3):
// name, group, scope, names, versions (unique, exactly one storage), a
// structural openAPIV3Schema per version, conversion.
import type { FieldError } from '../field-errors';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { validateObjectMeta, validateObjectMetaUpdate } from './metadata';
import { isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain } from './names';
import { asArr, asObj, asStr, child, index, isSet, key, type Obj } from './path';
import { registerKindRules } from './registry';
import { validateClientConfig, validateReviewVersions } from './admission';
import { validateWithSchema } from './custom-schema';

function validateNames(names: Obj, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const dns = (v: string, f: string, prefix = '') => {
    const e = isDNS1035Label(v);
    if (v && e.length) errs.push(invalid(child(p, f), v, prefix + e.join(',')));
  };
  const plural = asStr(names.plural);
  const singular = asStr(names.singular);
  const kind = asStr(names.kind);
  const listKind = asStr(names.listKind);
  dns(plural, 'plural');
  dns(singular, 'singular');
  if (kind && isDNS1035Label(kind.toLowerCase()).length)
    errs.push(
      invalid(
        child(p, 'kind'),
        kind,
        'may have mixed case, but should otherwise match: ' + isDNS1035Label(kind.toLowerCase()).join(','),
      ),
    );
  if (listKind && isDNS1035Label(listKind.toLowerCase()).length)
    errs.push(
      invalid(
        child(p, 'listKind'),
        listKind,
        'may have mixed case, but should otherwise match: ' +
          isDNS1035Label(listKind.toLowerCase()).join(','),
      ),
    );
  asArr(names.shortNames).forEach((s, i) => {
    const e = isDNS1035Label(asStr(s));
    if (e.length) errs.push(invalid(index(child(p, 'shortNames'), i), s, e.join(',')));
  });
  if (kind && kind === listKind)
    errs.push(invalid(child(p, 'listKind'), listKind, 'kind and listKind may not be the same'));
  asArr(names.categories).forEach((c, i) => {
    const e = isDNS1035Label(asStr(c));
    if (e.length) errs.push(invalid(index(child(p, 'categories'), i), c, e.join(',')));
  });
  return errs;
}

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

/** "Simple" JSON paths (.spec.replicas) of printer columns and the scale subresource. */
function validateSimpleJSONPath(s: string, p: string): FieldError[] {
  if (s === '') return [invalid(p, s, 'must not be empty')];
  if (s[0] !== '.') return [invalid(p, s, 'must be a simple json path starting with .')];
  return [];
}

const COLUMN_TYPES = ['boolean', 'date', 'integer', 'number', 'string'];
const COLUMN_FORMATS = ['byte', 'date', 'date-time', 'double', 'float', 'int32', 'int64', 'password'];
const MAX_SELECTABLE_FIELDS = 8;

function schemaAtPath(schema: Obj | undefined, segs: string[]): Obj | undefined {
  let s = schema;
  for (const k of segs) {
    s = asObj(asObj(s?.properties)?.[k]);
    if (!s) return undefined;
  }
  return s;
}

/** Subresources, printer columns, selectable fields and the deprecation warning of one version. */
function validateVersionExtras(v: Obj, vp: string, schema: Obj | undefined): FieldError[] {
  const errs: FieldError[] = [];
  const scale = asObj(asObj(v.subresources)?.scale);
  if (scale) {
    const sp = child(vp, 'subresources.scale');
    const path = (f: string, prefixes: string[], msg: string, requiredPath: boolean) => {
      const val = asStr(scale[f]);
      if (!val) {
        if (requiredPath) errs.push(required(child(sp, f), ''));
        return;
      }
      const e = validateSimpleJSONPath(val, child(sp, f));
      if (e.length) errs.push(...e);
      else if (!prefixes.some((pre) => val.startsWith(pre))) errs.push(invalid(child(sp, f), val, msg));
    };
    path('specReplicasPath', ['.spec.'], 'should be a json path under .spec', true);
    path('statusReplicasPath', ['.status.'], 'should be a json path under .status', true);
    path(
      'labelSelectorPath',
      ['.spec.', '.status.'],
      'should be a json path under either .spec or .status',
      false,
    );
  }
  asArr(v.additionalPrinterColumns).forEach((c, i) => {
    const col = asObj(c) ?? {};
    const cp = index(child(vp, 'additionalPrinterColumns'), i);
    if (!asStr(col.name)) errs.push(required(child(cp, 'name'), ''));
    const type = asStr(col.type);
    if (!type) errs.push(required(child(cp, 'type'), `must be one of ${COLUMN_TYPES.join(',')}`));
    else if (!COLUMN_TYPES.includes(type)) errs.push(notSupported(child(cp, 'type'), type, COLUMN_TYPES));
    const format = asStr(col.format);
    if (format && !COLUMN_FORMATS.includes(format))
      errs.push(notSupported(child(cp, 'format'), format, COLUMN_FORMATS));
    const jp = asStr(col.jsonPath);
    if (!jp) errs.push(required(child(cp, 'jsonPath'), ''));
    else errs.push(...validateSimpleJSONPath(jp, child(cp, 'jsonPath')));
  });
  const selectable = asArr(v.selectableFields);
  if (selectable.length) {
    const fp = child(vp, 'selectableFields');
    const unique = new Set<string>();
    if (!schema)
      errs.push(
        invalid(
          fp,
          '',
          'selectableFields may only be set when version.schema.openAPIV3Schema is not included',
        ),
      );
    else
      selectable.forEach((f, i) => {
        const jp = asStr(asObj(f)?.jsonPath);
        const jpp = child(index(fp, i), 'jsonPath');
        if (!jp) {
          errs.push(required(jpp, ''));
          return;
        }
        const segs = jp.startsWith('.') ? jp.slice(1).split('.') : [];
        const target = segs.length && segs.every(Boolean) ? schemaAtPath(schema, segs) : undefined;
        if (!target) {
          errs.push(invalid(jpp, jp, `is an invalid path: does not refer to a valid field`));
          return;
        }
        if (segs[0] === 'metadata') errs.push(invalid(jpp, jp, 'must not point to fields in metadata'));
        if (!['string', 'boolean', 'integer'].includes(asStr(target.type)))
          errs.push(
            invalid(
              jpp,
              jp,
              'must point to a field of type string, boolean or integer. Enum string fields and strings with formats are allowed.',
            ),
          );
        if (unique.has(jp)) errs.push({ type: 'FieldValueDuplicate', field: jpp, badValue: jp });
        unique.add(jp);
      });
    if (unique.size > MAX_SELECTABLE_FIELDS)
      errs.push({
        type: 'FieldValueTooMany',
        field: fp,
        badValue: unique.size,
        detail: `must have at most ${MAX_SELECTABLE_FIELDS} items`,
      });
  }
  if (v.deprecationWarning !== undefined && v.deprecationWarning !== null) {
    const w = asStr(v.deprecationWarning);
    const wp = child(vp, 'deprecationWarning');
    if (v.deprecated !== true) errs.push(invalid(wp, w, 'can only be set for deprecated versions'));
    else if (w.length > 256)
      errs.push({ type: 'FieldValueTooLong', field: wp, badValue: w, detail: 'may not be longer than 256' });
    else if ([...w].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f))
      errs.push(invalid(wp, w, 'must only contain printable UTF-8 characters'));
  }
  return errs;
}

const APPROVAL = 'api-approved.kubernetes.io';
const APPROVAL_PR = 'https://github.com/kubernetes/enhancements/pull/1111';

/** Groups under k8s.io and kubernetes.io need the API approval annotation (a URL, or "unapproved..."). */
function validateAPIApproval(o: Obj): FieldError[] {
  const group = asStr(asObj(o.spec)?.group);
  const protectedGroup =
    group === 'k8s.io' ||
    group.endsWith('.k8s.io') ||
    group === 'kubernetes.io' ||
    group.endsWith('.kubernetes.io');
  if (!protectedGroup) return [];
  const p = key('metadata.annotations', APPROVAL);
  const value = asStr(asObj(asObj(o.metadata)?.annotations)?.[APPROVAL]);
  if (!value)
    return [required(p, `protected groups must have approval annotation "${APPROVAL}", see ${APPROVAL_PR}`)];
  if (value.startsWith('unapproved')) return [];
  try {
    const u = new URL(value);
    if ((u.protocol === 'http:' || u.protocol === 'https:') && u.host) return [];
  } catch {
    // not a URL
  }
  return [
    invalid(
      p,
      value,
      `protected groups must have approval annotation "${APPROVAL}" with either a URL or a reason starting with "unapproved", see ${APPROVAL_PR}`,
    ),
  ];
}

/** Every stored version must still be a version of the spec. */
function validateStoredVersions(o: Obj): FieldError[] {
  const names = new Set(asArr(asObj(o.spec)?.versions).map((v) => asStr(asObj(v)?.name)));
  const errs: FieldError[] = [];
  asArr(asObj(o.status)?.storedVersions).forEach((v, i) => {
    if (!names.has(asStr(v)))
      errs.push(invalid(index('status.storedVersions', i), v, 'must appear in spec.versions'));
  });
  return errs;
}

function validateCRD(o: Obj): FieldError[] {
  const spec = asObj(o.spec) ?? {};
  const names = asObj(spec.names) ?? {};
  const requiredName = `${asStr(names.plural)}.${asStr(spec.group)}`;
  return [
    ...validateObjectMeta(asObj(o.metadata), {
      namespaced: false,
      name: (n, prefix) => [
        ...nameIsDNSSubdomain(n, prefix),
        ...(n !== requiredName ? ['must be spec.names.plural+"."+spec.group'] : []),
      ],
    }),
    ...validateCRDSpec(spec),
    ...validateAPIApproval(o),
  ];
}

function validateCRDSpec(spec: Obj): FieldError[] {
  const names = asObj(spec.names) ?? {};
  const group = asStr(spec.group);
  const errs: FieldError[] = [];
  if (!group) errs.push(required('spec.group', ''));
  else if (isDNS1123Subdomain(group).length)
    errs.push(invalid('spec.group', group, isDNS1123Subdomain(group).join(',')));
  else if (group.split('.').length < 2)
    errs.push(invalid('spec.group', group, 'should be a domain with at least one dot'));
  const scope = asStr(spec.scope);
  if (!scope) errs.push(required('spec.scope', ''));
  else if (scope !== 'Cluster' && scope !== 'Namespaced')
    errs.push(notSupported('spec.scope', scope, ['Cluster', 'Namespaced']));
  const versions = asArr(spec.versions).map((v) => asObj(v) ?? {});
  const seen = new Set<string>();
  let unique = true;
  let storage = 0;
  versions.forEach((v, i) => {
    const vp = index('spec.versions', i);
    const name = asStr(v.name);
    if (v.storage === true) storage++;
    if (seen.has(name)) unique = false;
    seen.add(name);
    const e = isDNS1035Label(name);
    if (e.length) errs.push(invalid(child(vp, 'name'), name, e.join(',')));
    const schema = asObj(asObj(v.schema)?.openAPIV3Schema);
    if (!schema) errs.push(required(child(vp, 'schema.openAPIV3Schema'), 'schemas are required'));
    else {
      const structural = validateStructural(schema, child(vp, 'schema.openAPIV3Schema'));
      errs.push(...structural);
      if (!structural.length)
        errs.push(...validateDefaults(schema, child(vp, 'schema.openAPIV3Schema'), defaultErrors));
    }
    errs.push(...validateVersionExtras(v, vp, schema));
  });
  if (!unique) errs.push(invalid('spec.versions', versions, 'must contain unique version names'));
  if (storage !== 1)
    errs.push(invalid('spec.versions', versions, 'must have exactly one version marked as storage version'));
  for (const f of ['plural', 'singular', 'kind', 'listKind'])
    if (!asStr(names[f])) errs.push(required(`spec.names.${f}`, ''));
  errs.push(...validateNames(names, 'spec.names'));
  if (spec.preserveUnknownFields === true)
    errs.push(
      invalid(
        'spec.preserveUnknownFields',
        true,
        'cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead',
      ),
    );
  const conv = asObj(spec.conversion);
  if (conv) {
    const strategy = asStr(conv.strategy);
    if (strategy !== 'None' && strategy !== 'Webhook')
      errs.push(notSupported('spec.conversion.strategy', strategy, ['None', 'Webhook']));
    const hook = asObj(conv.webhook);
    if (strategy === 'Webhook') {
      if (!hook) errs.push(required('spec.conversion.webhook', 'required when strategy is set to Webhook'));
      else {
        if (hook.clientConfig)
          errs.push(
            ...validateClientConfig(asObj(hook.clientConfig) ?? {}, 'spec.conversion.webhook.clientConfig'),
          );
        else
          errs.push(
            required('spec.conversion.webhook.clientConfig', 'required when strategy is set to Webhook'),
          );
        errs.push(
          ...validateReviewVersions(
            hook.conversionReviewVersions,
            'spec.conversion.webhook.conversionReviewVersions',
          ),
        );
      }
    } else if (isSet(conv.webhook))
      errs.push(
        forbidden('spec.conversion.webhook', 'should not be set when strategy is not set to Webhook'),
      );
  }
  return errs;
}

registerKindRules('apiextensions.k8s.io', 'CustomResourceDefinition', {
  ownMetadata: true,
  validate: validateCRD,
  validateUpdate(o, old) {
    const s = asObj(o.spec) ?? {};
    const os = asObj(old.spec) ?? {};
    const errs = [...validateObjectMetaUpdate(asObj(o.metadata), asObj(old.metadata)), ...validateCRDSpec(s)];
    const n = asObj(s.names) ?? {};
    const on = asObj(os.names) ?? {};
    const established = asArr(asObj(old.status)?.conditions).some(
      (c) => asObj(c)?.type === 'Established' && asObj(c)?.status === 'True',
    );
    if (established) {
      // These decide where and what is stored.
      if (s.scope !== os.scope) errs.push(invalid('spec.scope', s.scope ?? '', 'field is immutable'));
      if (n.kind !== on.kind) errs.push(invalid('spec.names.kind', n.kind ?? '', 'field is immutable'));
    }
    if (s.group !== os.group) errs.push(invalid('spec.group', s.group ?? '', 'field is immutable'));
    if (n.plural !== on.plural) errs.push(invalid('spec.names.plural', n.plural ?? '', 'field is immutable'));
    errs.push(...validateStoredVersions(o));
    const oldApproval = asStr(asObj(asObj(old.metadata)?.annotations)?.['api-approved.kubernetes.io']);
    const newApproval = asStr(asObj(asObj(o.metadata)?.annotations)?.['api-approved.kubernetes.io']);
    if (oldApproval !== newApproval || !validateAPIApproval(old).length) errs.push(...validateAPIApproval(o));
    return errs;
  },
  updateOnly: true,
});
