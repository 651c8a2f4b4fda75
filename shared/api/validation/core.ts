// Core group (v1) kinds: Pod, PodTemplate, ReplicationController, ConfigMap,
// Secret, Namespace, Node, PersistentVolumeClaim (Service: service.ts).
import type { FieldError } from '../field-errors';
import { duplicate, forbidden, invalid, notSupported, required, tooLong } from '../field-errors';
import {
  semanticEqual,
  validateAnnotations,
  validateImmutableField,
  validateLabels,
  validateNonnegative,
} from './metadata';
import { isConfigMapKey, isQualifiedName, isValidLabelValue } from './names';
import { asArr, asObj, asStr, asStrMap, child, index, isSet, key, type Obj } from './path';
import { validatePodSpec, type PodSpecContext } from './pod-spec';
import { parseQuantity, compareQuantity, formatQuantity } from './quantity';
import { registerKindRules } from './registry';

export const MAX_SECRET_SIZE = 1024 * 1024;
const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

/** Core's extra finalizer rule for built-in kinds: no bare names but the standard ones. */
export function validateKubeFinalizers(finalizers: unknown, p: string): FieldError[] {
  const errs: FieldError[] = [];
  asArr(finalizers).forEach((f, i) => {
    const s = asStr(f);
    if (!s.includes('/') && !STANDARD_FINALIZERS.has(s))
      errs.push(
        invalid(index(p, i), s, 'name is neither a standard finalizer name nor is it fully qualified'),
      );
  });
  return errs;
}

/** A pod template's metadata (labels, annotations) and spec. */
export function validatePodTemplateSpec(
  template: unknown,
  p: string,
  ctx: PodSpecContext = {},
): FieldError[] {
  const t = asObj(template) ?? {};
  const meta = asObj(t.metadata) ?? {};
  return [
    ...validateLabels(meta.labels, child(child(p, 'metadata'), 'labels')),
    ...validateAnnotations(meta.annotations, child(child(p, 'metadata'), 'annotations')),
    ...validatePodSpec(asObj(t.spec), child(p, 'spec'), { ...ctx, template: true }),
  ];
}

const spec = (o: Obj) => asObj(o.spec) ?? {};

// --- Pod -----------------------------------------------------------------------

registerKindRules('', 'Pod', {
  validate: (o) => validatePodSpec(spec(o), 'spec'),
  validateUpdate(o, old) {
    const s = spec(o);
    const os = spec(old);
    if (semanticEqual(s, os)) return [];
    const cs = asArr(s.containers);
    const ocs = asArr(os.containers);
    if (cs.length !== ocs.length)
      return [forbidden('spec.containers', 'pod updates may not add or remove containers')];
    // Mutable: container images, activeDeadlineSeconds, tolerations (additions), scheduling gates.
    const munge = (sp: Obj, from: Obj) => {
      const m: Obj = {
        ...sp,
        activeDeadlineSeconds: from.activeDeadlineSeconds,
        tolerations: from.tolerations,
        schedulingGates: from.schedulingGates,
      };
      for (const f of ['containers', 'initContainers'])
        m[f] = asArr(sp[f]).map((c, i) => ({ ...(asObj(c) ?? {}), image: asObj(asArr(from[f])[i])?.image }));
      return m;
    };
    if (semanticEqual(munge(s, os), munge(os, os))) return [];
    return [
      forbidden(
        'spec',
        'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)',
      ),
    ];
  },
  updateOnly: false,
});

registerKindRules('', 'PodTemplate', { validate: (o) => validatePodTemplateSpec(o.template, 'template') });

registerKindRules('', 'ReplicationController', {
  validate(o) {
    const s = spec(o);
    const errs = validateNonnegative(s.replicas, 'spec.replicas');
    const selector = asStrMap(s.selector);
    if (Object.keys(selector).length === 0) errs.push(required('spec.selector', ''));
    else errs.push(...validateLabels(selector, 'spec.selector'));
    const tpl = asObj(s.template);
    if (!tpl) errs.push(required('spec.template', ''));
    else {
      const labels = asStrMap(asObj(tpl.metadata)?.labels);
      if (Object.keys(selector).length && Object.entries(selector).some(([k, v]) => labels[k] !== v))
        errs.push(
          invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`'),
        );
      errs.push(...validatePodTemplateSpec(tpl, 'spec.template'));
      const rp = asStr(asObj(tpl.spec)?.restartPolicy);
      if (rp !== 'Always') errs.push(notSupported('spec.template.spec.restartPolicy', rp, ['Always']));
    }
    return errs;
  },
});

// --- ConfigMap / Secret ----------------------------------------------------------

registerKindRules('', 'ConfigMap', {
  validate(o) {
    const errs: FieldError[] = [];
    let size = 0;
    const binary = asObj(o.binaryData) ?? {};
    for (const [k, v] of Object.entries(asObj(o.data) ?? {})) {
      for (const m of isConfigMapKey(k)) errs.push(invalid(key('data', k), k, m));
      if (k in binary) errs.push(invalid(key('data', k), k, 'duplicate of key present in binaryData'));
      size += Buffer.byteLength(asStr(v));
    }
    for (const [k, v] of Object.entries(binary)) {
      for (const m of isConfigMapKey(k)) errs.push(invalid(key('binaryData', k), k, m));
      size += Buffer.from(asStr(v), 'base64').length;
    }
    if (size > MAX_SECRET_SIZE) errs.push(tooLong('', '', MAX_SECRET_SIZE));
    return errs;
  },
  validateUpdate: (o, old) => immutableData(o, old, ['data', 'binaryData']),
});

function immutableData(o: Obj, old: Obj, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errs: FieldError[] = [];
  if (o.immutable !== true) errs.push(forbidden('immutable', 'field is immutable when `immutable` is set'));
  for (const f of fields)
    if (!semanticEqual(o[f], old[f])) errs.push(forbidden(f, 'field is immutable when `immutable` is set'));
  return errs;
}

registerKindRules('', 'Secret', {
  validate(o) {
    const errs: FieldError[] = [];
    const data = asObj(o.data) ?? {};
    let size = 0;
    for (const [k, v] of Object.entries(data)) {
      for (const m of isConfigMapKey(k)) errs.push(invalid(key('data', k), k, m));
      size += Buffer.from(asStr(v), 'base64').length;
    }
    if (size > MAX_SECRET_SIZE) errs.push(tooLong('data', '', MAX_SECRET_SIZE));
    const has = (k: string) => Object.prototype.hasOwnProperty.call(data, k);
    const decoded = (k: string) => Buffer.from(asStr(data[k]), 'base64').toString('utf8');
    const json = (k: string) => {
      if (!has(k)) return errs.push(required(key('data', k), ''));
      try {
        JSON.parse(decoded(k));
      } catch (e) {
        errs.push(invalid(key('data', k), '<secret contents redacted>', (e as Error).message));
      }
    };
    switch (asStr(o.type)) {
      case 'kubernetes.io/service-account-token':
        if (!asStr(asObj(asObj(o.metadata)?.annotations)?.['kubernetes.io/service-account.name']))
          errs.push(required(key('metadata.annotations', 'kubernetes.io/service-account.name'), ''));
        break;
      case 'kubernetes.io/dockercfg':
        json('.dockercfg');
        break;
      case 'kubernetes.io/dockerconfigjson':
        json('.dockerconfigjson');
        break;
      case 'kubernetes.io/basic-auth':
        if (!has('username') && !has('password')) {
          errs.push(required(key('data', 'username'), ''));
          errs.push(required(key('data', 'password'), ''));
        }
        break;
      case 'kubernetes.io/ssh-auth':
        if (!asStr(data['ssh-privatekey'])) errs.push(required(key('data', 'ssh-privatekey'), ''));
        break;
      case 'kubernetes.io/tls':
        if (!has('tls.crt')) errs.push(required(key('data', 'tls.crt'), ''));
        if (!has('tls.key')) errs.push(required(key('data', 'tls.key'), ''));
        break;
    }
    return errs;
  },
  validateUpdate: (o, old) => [
    ...validateImmutableField(o.type, old.type, 'type'),
    ...immutableData(o, old, ['data']),
  ],
});

// --- Namespace / Node / PVC ------------------------------------------------------

registerKindRules('', 'Namespace', {
  validate(o) {
    const errs: FieldError[] = [];
    for (const f of asArr(spec(o).finalizers).map(asStr)) {
      for (const m of isQualifiedName(f)) errs.push(invalid('spec.finalizers', f, m));
      if (!f.includes('/') && !STANDARD_FINALIZERS.has(f))
        errs.push(
          invalid(
            'spec.finalizers',
            f,
            'name is neither a standard finalizer name nor is it fully qualified',
          ),
        );
    }
    return errs;
  },
});

const TAINT_EFFECTS = ['NoSchedule', 'PreferNoSchedule', 'NoExecute'];

registerKindRules('', 'Node', {
  validate(o) {
    const errs: FieldError[] = [];
    const seen = new Set<string>();
    asArr(spec(o).taints).forEach((x, i) => {
      const t = asObj(x) ?? {};
      const ip = index('spec.taints', i);
      for (const m of isQualifiedName(asStr(t.key))) errs.push(invalid(child(ip, 'key'), asStr(t.key), m));
      if (isSet(t.value))
        for (const m of isValidLabelValue(asStr(t.value))) errs.push(invalid(child(ip, 'value'), t.value, m));
      const effect = asStr(t.effect);
      if (!effect) errs.push(required(child(ip, 'effect'), ''));
      else if (!TAINT_EFFECTS.includes(effect))
        errs.push(notSupported(child(ip, 'effect'), effect, TAINT_EFFECTS));
      const k = `${asStr(t.key)}:${effect}`;
      if (seen.has(k)) errs.push(duplicate(ip, t));
      seen.add(k);
    });
    return errs;
  },
  validateUpdate(o, old) {
    const before = asArr(spec(old).podCIDRs);
    if (before.length > 0 && !semanticEqual(spec(o).podCIDRs, before))
      return [forbidden('spec.podCIDRs', 'node updates may not change podCIDR except from "" to valid')];
    return [];
  },
});

const ACCESS_MODES = ['ReadOnlyMany', 'ReadWriteMany', 'ReadWriteOnce', 'ReadWriteOncePod'];
const BETA_STORAGE_CLASS = 'volume.beta.kubernetes.io/storage-class';

registerKindRules('', 'PersistentVolumeClaim', {
  validate(o) {
    const s = spec(o);
    const errs: FieldError[] = [];
    const modes = asArr(s.accessModes).map(asStr);
    if (modes.length === 0) errs.push(required('spec.accessModes', 'at least 1 access mode is required'));
    for (const m of modes)
      if (!ACCESS_MODES.includes(m)) errs.push(notSupported('spec.accessModes', m, ACCESS_MODES));
    const storage = asObj(asObj(s.resources)?.requests)?.storage;
    if (!isSet(storage) && !isSet(s.dataSource) && !isSet(s.dataSourceRef))
      errs.push(required(key('spec.resources', 'storage'), ''));
    else if (isSet(storage)) {
      try {
        const q = parseQuantity(String(storage));
        if (compareQuantity(q, parseQuantity('0')) <= 0)
          errs.push(
            invalid(key('spec.resources', 'storage'), formatQuantity(q), 'must be greater than zero'),
          );
      } catch {
        /* rejected while decoding */
      }
    }
    return errs;
  },
  validateUpdate(o, old) {
    const oldSpec = spec(old);
    const newSpec = spec(o);
    const oldBetaClass = asObj(asObj(old.metadata)?.annotations)?.[BETA_STORAGE_CLASS];
    // Only a bound claim's storage request may change (PersistentVolumeClaimResize admission decides growth).
    const bound = asObj(old.status)?.phase === 'Bound';
    const storageOf = (s: Obj) => asObj(asObj(s.resources)?.requests)?.storage;
    const resourcesWithOldStorage = (s: Obj) => {
      const res = asObj(s.resources);
      if (!bound || !res || !asObj(res.requests)) return res;
      return { ...res, requests: { ...asObj(res.requests), storage: storageOf(oldSpec) } };
    };
    // The binder sets volumeName once, and (RetroactiveDefaultStorageClass, GA) a class that was never named.
    const strip = (s: Obj) => ({
      ...s,
      resources: resourcesWithOldStorage(s),
      volumeAttributesClassName: undefined,
      volumeName: isSet(oldSpec.volumeName) && oldSpec.volumeName !== '' ? s.volumeName : undefined,
      storageClassName:
        !isSet(oldSpec.storageClassName) &&
        isSet(newSpec.storageClassName) &&
        (!isSet(oldBetaClass) || oldBetaClass === '' || oldBetaClass === newSpec.storageClassName)
          ? undefined
          : s.storageClassName,
    });
    const errs: FieldError[] = [];
    if (!semanticEqual(strip(newSpec), strip(oldSpec)))
      errs.push(
        forbidden(
          'spec',
          'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims',
        ),
      );
    // RecoverVolumeExpansionFailure (GA 1.34): a request may shrink back, but not to the capacity or below.
    const size = (v: unknown) => {
      try {
        return isSet(v) ? parseQuantity(String(v)) : undefined;
      } catch {
        return undefined;
      }
    };
    const newSize = size(storageOf(newSpec));
    const oldSize = size(storageOf(oldSpec));
    const capacity = size(asObj(asObj(old.status)?.capacity)?.storage) ?? parseQuantity('0');
    if (
      newSize &&
      oldSize &&
      compareQuantity(newSize, oldSize) < 0 &&
      compareQuantity(newSize, capacity) <= 0
    )
      errs.push(forbidden('spec.resources.requests.storage', 'field can not be less than status.capacity'));
    return errs;
  },
});
