// The schema-derived write hooks for one definition, in the shape the registry's
// store takes (apiserver/registry/resource.ts SchemaHooks): defaults, create
// validation, update validation. validateUpdate is complete on its own (it
// includes the spec rules Kubernetes runs on update); do not add validate().
import { applyDefaults } from '../defaults';
import type { FieldError } from '../field-errors';
import { typeSchema } from '../schema';
import { validateObject, validateObjectUpdate } from './index';

export interface WriteSchemaHooks {
  applyDefaults(obj: Record<string, unknown>): void;
  /** internal: an object the apiserver built; the schema's type check is skipped. */
  validate(obj: Record<string, unknown>, internal?: boolean): FieldError[];
  validateUpdate(
    obj: Record<string, unknown>,
    old: Record<string, unknown>,
    internal?: boolean,
  ): FieldError[];
}

export function schemaHooks(definition: string | undefined): WriteSchemaHooks {
  const gvk = definition ? typeSchema(definition)?.gvk?.[0] : undefined;
  if (!gvk) return { applyDefaults: () => {}, validate: () => [], validateUpdate: () => [] };
  return {
    applyDefaults: (obj) => void applyDefaults(obj, gvk),
    validate: (obj, internal) => validateObject(obj, { gvk, schema: !internal }),
    validateUpdate: (obj, old, internal) => validateObjectUpdate(obj, old, { gvk, schema: !internal }),
  };
}
