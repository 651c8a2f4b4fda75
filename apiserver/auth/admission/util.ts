// Helpers shared by the admission plugins: Kubernetes' admission.NewForbidden,
// reads through the registry's watch cache, pod containers.
import { definitionOf } from '../../../shared/api/schema';
import { forbidden, internalError, isStatusError, StatusError } from '../../../shared/api/status';
import { checkFields } from '../../../shared/api/unknown-fields';
import type { Registry } from '../../registry/registry';
import { systemContext } from '../../registry/context';
import type { AdmissionAttributes } from './types';
import { parseJSONInt64, stringifyJSONInt64 } from '../../../shared/codec/json-int64';

/** admission.NewForbidden: `<resource> "<name>" is forbidden: <why>` (a Forbidden error passes through). */
export function admissionForbidden(a: AdmissionAttributes, why: string | Error): StatusError {
  if (isStatusError(why, 'Forbidden')) return why;
  const msg = typeof why === 'string' ? why : why.message;
  const md = (a.object ?? a.oldObject)?.metadata;
  const name = a.name || md?.name || md?.generateName || 'Unknown';
  return forbidden({ group: a.group, resource: a.resource }, name, msg);
}

/** Reads objects of one resource through the watch cache (falls back to the store). */
export class Lister {
  constructor(
    private readonly registry: () => Registry,
    readonly group: string,
    readonly resource: string,
  ) {}

  private served() {
    return this.registry().preferred(this.group, this.resource);
  }

  /** The object, or null when it does not exist. Cache first, then a live read (the cache may lag). */
  async get(namespace: string, name: string): Promise<any | null> {
    const s = this.served();
    if (!s) return null;
    try {
      return (await s.store.reader.get(systemContext(namespace), name, '0')).obj;
    } catch (err) {
      if (!isStatusError(err, 'NotFound')) throw err;
    }
    try {
      return (await s.store.reader.get(systemContext(namespace), name)).obj;
    } catch (err) {
      if (isStatusError(err, 'NotFound')) return null;
      throw err;
    }
  }

  /** True when the loaded cache holds no object (false while it is still loading). */
  isEmpty(): boolean {
    const all = this.list();
    return Array.isArray(all) && all.length === 0;
  }

  /** Every object (of a namespace when given), from the cache; the array and objects are read-only. */
  list(namespace = ''): readonly any[] | Promise<readonly any[]> {
    const s = this.served();
    if (!s) return [];
    return s.store.reader.cachedObjects(namespace);
  }
}

/** The admission configuration resources (admissionregistration.k8s.io) no API-defined policy or webhook applies to. */
export const ADMISSION_CONFIGURATION_RESOURCES = new Set([
  'mutatingwebhookconfigurations',
  'validatingwebhookconfigurations',
  'validatingadmissionpolicies',
  'validatingadmissionpolicybindings',
  'mutatingadmissionpolicies',
  'mutatingadmissionpolicybindings',
]);

export const isPods = (a: AdmissionAttributes) => a.group === '' && a.resource === 'pods';

export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** Every container of a pod spec (init, regular, ephemeral). */
export function allContainers(spec: any): any[] {
  return [...(spec?.initContainers ?? []), ...(spec?.containers ?? []), ...(spec?.ephemeralContainers ?? [])];
}

/**
 * An object a mutation produced, decoded into the request kind's Go type as
 * Kubernetes decodes it (in place; unknown fields dropped, or with `strict` an
 * error), then defaulted. A value of the wrong type is an internal error (500).
 * Custom resources decode as unstructured objects (no Go type).
 */
export function decodeMutated(registry: Registry, a: AdmissionAttributes, obj: any, strict: boolean): any {
  const definition = definitionOf({ group: a.group, version: a.version, kind: a.kind });
  if (definition && obj && typeof obj === 'object') {
    const r = checkFields(obj, definition, { collectUnknown: strict });
    if (r.error) throw internalError(new Error(r.error));
    const unknown = r.strict.filter((s) => s.startsWith('unknown field'));
    if (unknown.length) throw internalError(new Error(`strict decoding error: ${unknown.join(', ')}`));
  }
  registry.lookup(a.group, a.version, a.resource)?.store.defaulter(obj);
  return obj;
}

export function jsonClone<T>(v: T): T {
  return v === undefined ? v : (parseJSONInt64(stringifyJSONInt64(v)) as T);
}
