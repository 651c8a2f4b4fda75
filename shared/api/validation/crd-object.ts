// The rules of a CustomResourceDefinition object itself, on create and on
// every update: name (<plural>.<group>), group, scope, names, versions
// (unique, exactly one storage, a schema each — the schema rules are
// crd-schema.ts — subresources, printer columns, selectable fields,
// deprecation), conversion, and the API approval of protected groups.
import type { FieldError } from '../field-errors';
import { forbidden, invalid, notSupported, required } from '../field-errors';
import { validateObjectMeta } from './metadata';
import { isDNS1035Label, isDNS1123Subdomain, nameIsDNSSubdomain } from './names';
import { asArr, asObj, asStr, child, index, isSet, key, type Obj } from './path';
import { validateClientConfig, validateReviewVersions } from './admission';
import { validateVersionSchema } from './crd-schema';

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

/** The annotation that records the API review of a protected group. */
export const APPROVAL = 'api-approved.kubernetes.io';
const APPROVAL_PR = 'https://github.com/kubernetes/enhancements/pull/1111';

/** Groups under k8s.io and kubernetes.io need the API approval annotation (a URL, or "unapproved..."). */
export function validateAPIApproval(o: Obj): FieldError[] {
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

export function validateCRD(o: Obj): FieldError[] {
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
    ...validateCRDStatus(o),
    ...validateAPIApproval(o),
  ];
}

/** ValidateCustomResourceDefinitionStatus: the accepted names only (conditions are left alone). */
export const validateCRDStatus = (o: Obj): FieldError[] =>
  validateNames(asObj(asObj(o.status)?.acceptedNames) ?? {}, 'status.acceptedNames');

export function validateCRDSpec(spec: Obj): FieldError[] {
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
    else errs.push(...validateVersionSchema(schema, child(vp, 'schema.openAPIV3Schema')));
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
