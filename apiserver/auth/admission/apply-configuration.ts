// The ApplyConfiguration mutation of a MutatingAdmissionPolicy
// (k8s.io/apiserver/pkg/admission/plugin/policy/mutating/patch/smd.go): the
// expression's `Object{...}` value is merged into the object as server-side
// apply merges an applied configuration (the kind's type model: list map keys,
// sets, granular and atomic maps), without recording ownership. Atomic lists,
// maps and structs may not be set by it at all: Kubernetes refuses them so that
// a policy cannot wipe the rest of an atomic value by accident.
import { celToJson, ObjectVal, typeNameErrors } from '../../../shared/cel/mutation';
import { builtinModel, UNSTRUCTURED_WITH_METADATA, type TypeNode } from '../../apply';
import { merge } from '../../apply/fieldmanager/typed-merge';
import { listItemPE } from '../../apply/fieldmanager/typed';
import type { Registry } from '../../registry/registry';
import type { AdmissionAttributes } from './types';

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** The type of a request's kind as server-side apply sees it. */
function rootType(registry: Registry, a: AdmissionAttributes): TypeNode {
  const served = registry.lookup(a.group, a.version, a.resource);
  const model =
    served?.fieldModel ??
    builtinModel({ group: a.group, version: a.version, kind: a.kind }) ??
    UNSTRUCTURED_WITH_METADATA;
  return model.root();
}

/** A path element as structured-merge-diff prints it. */
function pathElement(t: TypeNode, item: unknown, index: number): string {
  if (t.kind !== 'list' || t.listType === 'atomic') return `[${index}]`;
  const pe = listItemPE(t, item, index);
  if (typeof pe === 'string') return `[${index}]`;
  if (pe.t === 'k') return `[${pe.fields.map(([k, v]) => `${k}=${JSON.stringify(v)}`).join(',')}]`;
  if (pe.t === 'v') return `[=${JSON.stringify(pe.value)}]`;
  return `[${index}]`;
}

/** Fields the configuration sets that the schema does not declare, and atomic values it sets. */
function check(
  v: unknown,
  t: TypeNode | undefined,
  path: string,
  undeclared: string[],
  atomics: string[],
): void {
  if (!t || t.kind === 'scalar' || t.kind === 'deduced') return;
  if (t.kind === 'map' && isObject(v)) {
    if (t.atomic) atomics.push(path);
    for (const [k, x] of Object.entries(v)) {
      const ft = t.field(k) ?? t.elements;
      if (!ft) undeclared.push(`${path}.${k}`);
      else check(x, ft, `${path}.${k}`, undeclared, atomics);
    }
  } else if (t.kind === 'list' && Array.isArray(v)) {
    if (t.listType === 'atomic') atomics.push(path);
    v.forEach((x, i) => check(x, t.element(), path + pathElement(t, x, i), undeclared, atomics));
  }
}

/** The object with the expression's apply configuration merged in; throws Kubernetes' errors. */
export function applyConfiguration(registry: Registry, a: AdmissionAttributes, result: unknown): any {
  if (!(result instanceof ObjectVal) || result.typeName !== 'Object')
    throw new Error(
      `unsupported return type from ApplyConfiguration expression: ${result instanceof ObjectVal ? result.typeName : typeof result}`,
    );
  const errs = typeNameErrors(result);
  if (errs.length) throw new Error(`type mismatch: ${errs.join('\n')}`);
  const patch = celToJson(result);
  if (!isObject(patch)) throw new Error(`invalid return type: ${typeof patch}`);
  patch.apiVersion = a.object?.apiVersion;
  patch.kind = a.object?.kind;
  const root = rootType(registry, a);
  const undeclared: string[] = [];
  const atomics: string[] = [];
  check(patch, root, '', undeclared, atomics);
  if (undeclared.length)
    throw new Error(
      `error applying patch: failed to convert patch object to typed object: ${undeclared.map((p) => `${p}: field not declared in schema`).join('\n')}`,
    );
  if (atomics.length)
    throw new Error(
      `error applying patch: invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: ${atomics.join(', ')}`,
    );
  return merge(a.object, patch, root);
}
