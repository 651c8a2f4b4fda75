// ObjectMeta rules (k8s.io/apimachinery/pkg/api/validation/objectmeta.go and
// meta/v1/validation), label selectors, and the small helpers every kind's
// validation uses, with Kubernetes' messages.
import type { FieldError } from '../field-errors';
import { forbidden, invalid, required, tooLong } from '../field-errors';
import type { NameValidator } from './names';
import {
  isDNS1123Label,
  isQualifiedName,
  isValidLabelValue,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  nameIsPathSegment,
} from './names';
import { asArr, asObj, asStr, child, index, type Obj } from './path';

export const TOTAL_ANNOTATION_SIZE_LIMIT = 256 * 1024;
export const FIELD_IMMUTABLE = 'field is immutable';
export const IS_NEGATIVE = 'must be greater than or equal to 0';

/** Which name rule a kind uses (ValidateXName in Kubernetes); DNS-1123 subdomain otherwise. */
const NAME_RULES: Record<string, NameValidator> = {
  '/Namespace': nameIsDNSLabel,
  '/Service': nameIsDNS1035Label,
  'rbac.authorization.k8s.io/Role': nameIsPathSegment,
  'rbac.authorization.k8s.io/ClusterRole': nameIsPathSegment,
  'rbac.authorization.k8s.io/RoleBinding': nameIsPathSegment,
  'rbac.authorization.k8s.io/ClusterRoleBinding': nameIsPathSegment,
  'certificates.k8s.io/CertificateSigningRequest': nameIsPathSegment,
  // The version.group form is checked with the spec (validation/apiregistration.ts).
  'apiregistration.k8s.io/APIService': nameIsPathSegment,
};

export const nameRuleFor = (group: string, kind: string): NameValidator =>
  NAME_RULES[`${group}/${kind}`] ?? nameIsDNSSubdomain;

export interface ObjectMetaRules {
  namespaced: boolean;
  name: NameValidator;
}

export function validateObjectMeta(
  meta: Obj | undefined,
  rules: ObjectMetaRules,
  p = 'metadata',
): FieldError[] {
  const m = meta ?? {};
  const errs: FieldError[] = [];
  const generateName = asStr(m.generateName);
  const name = asStr(m.name);
  if (generateName)
    for (const msg of rules.name(generateName, true))
      errs.push(invalid(child(p, 'generateName'), generateName, msg));
  if (!name) errs.push(required(child(p, 'name'), 'name or generateName is required'));
  else for (const msg of rules.name(name, false)) errs.push(invalid(child(p, 'name'), name, msg));
  const ns = asStr(m.namespace);
  if (rules.namespaced) {
    if (!ns) errs.push(required(child(p, 'namespace'), ''));
    else for (const msg of isDNS1123Label(ns)) errs.push(invalid(child(p, 'namespace'), ns, msg));
  } else if (ns) errs.push(forbidden(child(p, 'namespace'), 'not allowed on this type'));
  errs.push(...validateNonnegative(m.generation, child(p, 'generation')));
  errs.push(...validateCommonMeta(m, p));
  errs.push(...validateFinalizers(m.finalizers, child(p, 'finalizers')));
  return errs;
}

function validateCommonMeta(m: Obj, p: string): FieldError[] {
  return [
    ...validateLabels(m.labels, child(p, 'labels')),
    ...validateAnnotations(m.annotations, child(p, 'annotations')),
    ...validateOwnerReferences(m.ownerReferences, child(p, 'ownerReferences')),
    ...validateManagedFields(m.managedFields, child(p, 'managedFields')),
  ];
}

export function validateObjectMetaUpdate(
  meta: Obj | undefined,
  old: Obj | undefined,
  p = 'metadata',
): FieldError[] {
  const m = meta ?? {};
  const o = old ?? {};
  const errs: FieldError[] = [];
  if (o.deletionTimestamp) {
    const before = new Set(asArr(o.finalizers).map(String));
    const extra = [...new Set(asArr(m.finalizers).map(String))].filter((f) => !before.has(f)).sort();
    if (extra.length)
      errs.push(
        forbidden(
          child(p, 'finalizers'),
          `no new finalizers can be added if the object is being deleted, found new finalizers []string{${extra.map((f) => JSON.stringify(f)).join(', ')}}`,
        ),
      );
  }
  if (!asStr(m.resourceVersion))
    errs.push(
      invalid(child(p, 'resourceVersion'), asStr(m.resourceVersion), 'must be specified for an update'),
    );
  const gen = typeof m.generation === 'number' ? m.generation : 0;
  if (gen < (typeof o.generation === 'number' ? o.generation : 0))
    errs.push(invalid(child(p, 'generation'), gen, 'must not be decremented'));
  for (const f of [
    'name',
    'namespace',
    'uid',
    'creationTimestamp',
    'deletionTimestamp',
    'deletionGracePeriodSeconds',
  ])
    errs.push(...validateImmutableField(m[f], o[f], child(p, f)));
  errs.push(...validateCommonMeta(m, p));
  errs.push(...validateFinalizers(m.finalizers, child(p, 'finalizers')));
  return errs;
}

export function validateLabels(labels: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [k, v] of Object.entries(asObj(labels) ?? {})) {
    for (const msg of isQualifiedName(k)) errs.push(invalid(p, k, msg));
    for (const msg of isValidLabelValue(asStr(v))) errs.push(invalid(p, v, msg));
  }
  return errs;
}

export function validateAnnotations(annotations: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  let size = 0;
  for (const [k, v] of Object.entries(asObj(annotations) ?? {})) {
    // Annotation keys are qualified names, case-insensitively.
    for (const msg of isQualifiedName(k.toLowerCase())) errs.push(invalid(p, k, msg));
    size += Buffer.byteLength(k) + Buffer.byteLength(asStr(v));
  }
  if (size > TOTAL_ANNOTATION_SIZE_LIMIT) errs.push(tooLong(p, '', TOTAL_ANNOTATION_SIZE_LIMIT));
  return errs;
}

export function validateFinalizers(finalizers: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  const list = asArr(finalizers).map(asStr);
  for (const f of list) for (const msg of isQualifiedName(f)) errs.push(invalid(p, f, msg));
  if (list.includes('orphan') && list.includes('foregroundDeletion'))
    errs.push(invalid(p, list, 'finalizer orphan and foregroundDeletion cannot be both set'));
  return errs;
}

export function validateOwnerReferences(refs: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  let firstController = '';
  const list = asArr(refs);
  for (const r of list) {
    const ref = asObj(r) ?? {};
    const apiVersion = asStr(ref.apiVersion);
    const version = apiVersion.includes('/') ? apiVersion.slice(apiVersion.indexOf('/') + 1) : apiVersion;
    const kind = asStr(ref.kind);
    if (!version) errs.push(invalid(child(p, 'apiVersion'), apiVersion, 'version must not be empty'));
    if (!kind) errs.push(invalid(child(p, 'kind'), kind, 'kind must not be empty'));
    if (!asStr(ref.name)) errs.push(invalid(child(p, 'name'), asStr(ref.name), 'name must not be empty'));
    if (!asStr(ref.uid)) errs.push(invalid(child(p, 'uid'), asStr(ref.uid), 'uid must not be empty'));
    if (apiVersion === 'v1' && kind === 'Event')
      errs.push(invalid(p, ref, '/v1, Kind=Event is disallowed from being an owner'));
    if (ref.controller === true) {
      const cur = `${kind}/${asStr(ref.name)}`;
      if (firstController)
        errs.push(
          invalid(
            p,
            list,
            `Only one reference can have Controller set to true. Found "true" in references for ${firstController} and ${cur}`,
          ),
        );
      else firstController = cur;
    }
  }
  return errs;
}

export function validateManagedFields(entries: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  asArr(entries).forEach((e, i) => {
    const f = asObj(e) ?? {};
    const ip = index(p, i);
    const op = asStr(f.operation);
    if (op !== 'Apply' && op !== 'Update')
      errs.push(invalid(child(ip, 'operation'), op, 'must be `Apply` or `Update`'));
    const ft = asStr(f.fieldsType);
    if (ft && ft !== 'FieldsV1') errs.push(invalid(child(ip, 'fieldsType'), ft, 'must be `FieldsV1`'));
    const manager = asStr(f.manager);
    if (manager.length > 128) errs.push(tooLong(child(ip, 'manager'), manager, 128));
    if (asStr(f.subresource).length > 256) errs.push(tooLong(child(ip, 'subresource'), f.subresource, 256));
  });
  return errs;
}

// --- label selectors ----------------------------------------------------------

export function validateLabelSelector(sel: unknown, p: string, allowInvalidValues = false): FieldError[] {
  const s = asObj(sel);
  if (!s) return [];
  const errs = validateLabels(s.matchLabels, child(p, 'matchLabels'));
  asArr(s.matchExpressions).forEach((r, i) => {
    const req = asObj(r) ?? {};
    const ip = index(child(p, 'matchExpressions'), i);
    const op = asStr(req.operator);
    const values = asArr(req.values);
    if (op === 'In' || op === 'NotIn') {
      if (values.length === 0)
        errs.push(required(child(ip, 'values'), "must be specified when `operator` is 'In' or 'NotIn'"));
    } else if (op === 'Exists' || op === 'DoesNotExist') {
      if (values.length > 0)
        errs.push(
          forbidden(
            child(ip, 'values'),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
    } else errs.push(invalid(child(ip, 'operator'), op, 'not a valid selector operator'));
    for (const msg of isQualifiedName(asStr(req.key)))
      errs.push(invalid(child(ip, 'key'), asStr(req.key), msg));
    if (!allowInvalidValues)
      values.forEach((v, vi) => {
        for (const msg of isValidLabelValue(asStr(v)))
          errs.push(invalid(index(child(ip, 'values'), vi), v, msg));
      });
  });
  return errs;
}

/** Whether a LabelSelector matches a label set (nil selector: nothing; empty: everything). */
export function selectorMatches(sel: unknown, labels: Record<string, string> | undefined): boolean {
  const s = asObj(sel);
  if (!s) return false;
  const l = labels ?? {};
  for (const [k, v] of Object.entries(asObj(s.matchLabels) ?? {})) if (l[k] !== v) return false;
  for (const r of asArr(s.matchExpressions)) {
    const req = asObj(r) ?? {};
    const k = asStr(req.key);
    const values = asArr(req.values).map(String);
    const has = Object.prototype.hasOwnProperty.call(l, k);
    switch (req.operator) {
      case 'In':
        if (!has || !values.includes(l[k])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(l[k])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        return false;
    }
  }
  return true;
}

export const isEmptySelector = (sel: unknown) => {
  const s = asObj(sel) ?? {};
  return Object.keys(asObj(s.matchLabels) ?? {}).length + asArr(s.matchExpressions).length === 0;
};

// --- common helpers -------------------------------------------------------------

export function validateNonnegative(v: unknown, p: string): FieldError[] {
  return typeof v === 'number' && v < 0 ? [invalid(p, v, IS_NEGATIVE)] : [];
}

/** Semantic deep equality of two JSON values (missing, null, empty map/list are alike). */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) =>
    v === undefined ||
    v === null ||
    v === '' ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === 'object' && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    return a.every((x, i) => semanticEqual(x, b[i]));
  }
  if (typeof a === 'object' && typeof b === 'object' && a !== null && b !== null) {
    const ao = a as Obj;
    const bo = b as Obj;
    const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
    for (const k of keys) if (!semanticEqual(ao[k], bo[k])) return false;
    return true;
  }
  return a === b;
}

export function validateImmutableField(newV: unknown, oldV: unknown, p: string): FieldError[] {
  return semanticEqual(newV, oldV) ? [] : [invalid(p, newV ?? null, FIELD_IMMUTABLE)];
}
