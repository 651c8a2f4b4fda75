// The storage-level identity of a resource: where its objects live in the
// store and in which version they are kept. Several served versions (and, for
// events, two groups) may share one StoreResource.
import type { FieldError } from '../../shared/api/field-errors';

export interface StoreResource {
  /** Group and resource as Kubernetes names them in errors ("" and "pods"). */
  group: string;
  resource: string;
  /** Kind and apiVersion of the storage version. */
  kind: string;
  apiVersion: string;
  namespaced: boolean;
  /** Store key of the resource without trailing slash, e.g. /registry/pods. */
  keyRoot: string;
  /** The resource has a status subresource: the main resource ignores status. */
  hasStatus: boolean;
}

/**
 * Schema-derived behaviour the store applies to every write (from shared/api):
 * validate on create; validateUpdate on update (complete on its own);
 * validateStatusUpdate for /status writes.
 */
export interface SchemaHooks {
  applyDefaults(obj: any): void;
  /** internal: the apiserver built the object (see RequestContext.internal). */
  validate(obj: any, internal?: boolean): FieldError[];
  validateUpdate(obj: any, old: any, internal?: boolean): FieldError[];
  validateStatusUpdate?(obj: any, old: any): FieldError[];
}

export function objectKey(res: StoreResource, namespace: string, name: string): string {
  return res.namespaced ? `${res.keyRoot}/${namespace}/${name}` : `${res.keyRoot}/${name}`;
}

/** Key prefix of all objects, or of one namespace's. Always ends in "/". */
export function keyPrefix(res: StoreResource, namespace?: string): string {
  return res.namespaced && namespace ? `${res.keyRoot}/${namespace}/` : `${res.keyRoot}/`;
}
