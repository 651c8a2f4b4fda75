// Entry points of object validation. The registry calls, per write:
//   decodeBody (field-validation.ts) → applyDefaults (defaults.ts) → validateObject / validateObjectUpdate,
// and turns a non-empty FieldError list into a 422 (status.ts invalid()).
import type { FieldError } from '../field-errors';
import { parseAPIVersion } from '../schema';
import type { GroupVersionKind } from '../schema-types';
import { resourceFacts } from '../schema';
import { nameRuleFor, validateObjectMeta, validateObjectMetaUpdate } from './metadata';
import { asObj, type Obj } from './path';
import { kindRules, type KindContext } from './registry';
import { schemaErrors } from './schema-validator';
import { validateKubeFinalizers } from './core';
import './service';
import './apps';
import './batch';
import './events';
import './rbac';
import './admission';
import './crd';
import './misc';
import './reviews';
import './apiregistration';

export { registerKindRules, type KindRules, type KindContext } from './registry';
export { validateWithSchema } from './custom-schema';
export { compiledDefinitions } from './schema-validator';

let scopes: Map<string, boolean> | undefined;

/** Whether a built-in kind is namespaced (undefined for unknown kinds). */
export function isNamespaced(group: string, kind: string): boolean | undefined {
  if (!scopes) {
    scopes = new Map();
    for (const r of resourceFacts())
      if (!scopes.has(`${r.group}/${r.kind}`)) scopes.set(`${r.group}/${r.kind}`, r.namespaced);
  }
  return scopes.get(`${group}/${kind}`);
}

let createOnly: Set<string> | undefined;

/** Virtual kinds (reviews, Binding): only created, never stored; Kubernetes skips ObjectMeta rules. */
function isCreateOnly(group: string, kind: string): boolean {
  if (!createOnly) {
    createOnly = new Set();
    for (const r of resourceFacts())
      if (r.verbs.length === 1 && r.verbs[0] === 'create') createOnly.add(`${r.group}/${r.kind}`);
  }
  return createOnly.has(`${group}/${kind}`);
}

export function gvkOf(obj: Obj): GroupVersionKind {
  const gv = parseAPIVersion(typeof obj.apiVersion === 'string' ? obj.apiVersion : '');
  return { ...gv, kind: typeof obj.kind === 'string' ? obj.kind : '' };
}

/** Merges schema errors after the semantic ones, without repeating a (type, field) pair. */
function merge(semantic: FieldError[], schema: FieldError[]): FieldError[] {
  const seen = new Set(semantic.map((e) => `${e.type}|${e.field}`));
  return [...semantic, ...schema.filter((e) => !seen.has(`${e.type}|${e.field}`))];
}

export interface ValidateOptions {
  /** Group/version/kind when the object does not carry apiVersion/kind. */
  gvk?: GroupVersionKind;
  /** false skips the schema's type and enum check (objects the apiserver built itself). */
  schema?: boolean;
}

/** Validation of a new object (create), after defaulting. Empty list: valid. */
export function validateObject(obj: Obj, opts: ValidateOptions = {}): FieldError[] {
  const gvk = opts.gvk ?? gvkOf(obj);
  const ctx: KindContext = gvk;
  const rules = kindRules(gvk.group, gvk.kind);
  const errs: FieldError[] = [];
  if (!rules?.ownMetadata && !isCreateOnly(gvk.group, gvk.kind)) {
    const namespaced = isNamespaced(gvk.group, gvk.kind) ?? true;
    errs.push(
      ...validateObjectMeta(asObj(obj.metadata), { namespaced, name: nameRuleFor(gvk.group, gvk.kind) }),
    );
    errs.push(...validateKubeFinalizers(asObj(obj.metadata)?.finalizers, 'metadata.finalizers'));
  }
  if (rules?.validate) errs.push(...rules.validate(obj, ctx));
  return opts.schema === false ? errs : merge(errs, schemaErrors(obj, gvk));
}

/** Validation of an update (PUT, PATCH result) against the stored object. */
export function validateObjectUpdate(obj: Obj, old: Obj, opts: ValidateOptions = {}): FieldError[] {
  const gvk = opts.gvk ?? gvkOf(obj);
  const rules = kindRules(gvk.group, gvk.kind);
  const errs: FieldError[] = [];
  if (!rules?.ownMetadata) {
    errs.push(...validateObjectMetaUpdate(asObj(obj.metadata), asObj(old.metadata)));
    errs.push(...validateKubeFinalizers(asObj(obj.metadata)?.finalizers, 'metadata.finalizers'));
  }
  if (rules?.validate && !rules.updateOnly) errs.push(...rules.validate(obj, gvk));
  if (rules?.validateUpdate) errs.push(...rules.validateUpdate(obj, old, gvk));
  return opts.schema === false ? errs : merge(errs, schemaErrors(obj, gvk));
}

/** Validation of a status subresource update: metadata rules and the schema only. */
export function validateStatusUpdate(obj: Obj, old: Obj, opts: ValidateOptions = {}): FieldError[] {
  const gvk = opts.gvk ?? gvkOf(obj);
  return merge(validateObjectMetaUpdate(asObj(obj.metadata), asObj(old.metadata)), schemaErrors(obj, gvk));
}
