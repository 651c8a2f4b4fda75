// Generic metadata checks (name, namespace by scope) for kinds that have no
// built-in schema; built-in kinds get the full rules of shared/api/validation.
import { forbidden, invalid, required, type FieldError } from '../../shared/api/field-errors';
import type { SchemaHooks, StoreResource } from './resource';

const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export function validateObjectMeta(obj: any, res: StoreResource): FieldError[] {
  const errs: FieldError[] = [];
  const md = obj.metadata ?? {};
  if (!md.name) errs.push(required('metadata.name', 'name or generateName is required'));
  else if (md.name.includes('/') || md.name.includes('%') || md.name === '.' || md.name === '..')
    errs.push(invalid('metadata.name', md.name, "may not contain '/' or '%' and may not be '.' or '..'"));
  if (res.namespaced && !md.namespace) errs.push(required('metadata.namespace', ''));
  if (!res.namespaced && md.namespace) errs.push(forbidden('metadata.namespace', 'not allowed on this type'));
  return errs;
}

export function validateObjectMetaUpdate(obj: any, old: any): FieldError[] {
  const errs: FieldError[] = [];
  if (obj.metadata?.name !== old.metadata?.name)
    errs.push(invalid('metadata.name', obj.metadata?.name, 'field is immutable'));
  if ((obj.metadata?.namespace ?? '') !== (old.metadata?.namespace ?? ''))
    errs.push(invalid('metadata.namespace', obj.metadata?.namespace, 'field is immutable'));
  return errs;
}

export const isDNS1123Subdomain = (s: string) => s.length <= 253 && DNS1123_SUBDOMAIN.test(s);

/** Hooks for kinds without a built-in schema: the generic metadata checks only. */
export function genericSchemaHooks(res: StoreResource): SchemaHooks {
  return {
    applyDefaults: () => {},
    validate: (obj) => validateObjectMeta(obj, res),
    validateUpdate: (obj, old) => [...validateObjectMeta(obj, res), ...validateObjectMetaUpdate(obj, old)],
  };
}
