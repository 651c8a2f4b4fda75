// Strategic-merge-patch metadata (patchStrategy, patchMergeKey) looked up in
// the built-in schema, the way strategicpatch.PatchMetaFromStruct reads Go tags.
import { typeSchema } from '../../shared/api/schema';
import type { FieldSchema, TypeSchema } from '../../shared/api/schema-types';

export interface PatchMeta {
  /** e.g. ['merge'], ['merge', 'retainKeys'], ['replace']; empty when none. */
  strategies: readonly string[];
  mergeKey: string;
  /** Schema of the field's value (of its items, for a list); undefined when unknown. */
  schema: PatchSchema | undefined;
}

export interface PatchSchema {
  readonly name: string;
  /** Metadata of `key` whose value is an object. */
  lookupStruct(key: string): PatchMeta;
  /** Metadata of `key` whose value is a list. */
  lookupSlice(key: string): PatchMeta;
}

const NO_META: PatchMeta = { strategies: [], mergeKey: '', schema: undefined };

const definitions = new Map<string, PatchSchema | undefined>();
const fieldSchemas = new WeakMap<FieldSchema, PatchSchema | undefined>();

/** The patch schema of a built-in definition (io.k8s.api.apps.v1.Deployment), cached. */
export function patchSchemaOf(definition: string): PatchSchema | undefined {
  if (definitions.has(definition)) return definitions.get(definition);
  const t = typeSchema(definition);
  const s = t?.properties ? new StructSchema(definition, t) : undefined;
  definitions.set(definition, s);
  return s;
}

function schemaOfField(f: FieldSchema | undefined): PatchSchema | undefined {
  if (!f) return undefined;
  if (fieldSchemas.has(f)) return fieldSchemas.get(f);
  let s: PatchSchema | undefined;
  if (f.ref) s = patchSchemaOf(f.ref);
  else if (f.type === 'object' && f.values) s = new MapSchema(f.values);
  fieldSchemas.set(f, s);
  return s;
}

function metaOf(f: FieldSchema | undefined, value: FieldSchema | undefined): PatchMeta {
  if (!f) return NO_META;
  return {
    strategies: f.patchStrategy ? f.patchStrategy.split(',') : [],
    mergeKey: f.patchMergeKey ?? '',
    schema: schemaOfField(value),
  };
}

class StructSchema implements PatchSchema {
  constructor(
    readonly name: string,
    private readonly t: TypeSchema,
  ) {}
  lookupStruct(key: string): PatchMeta {
    const f = this.t.properties?.[key];
    return metaOf(f, f);
  }
  lookupSlice(key: string): PatchMeta {
    const f = this.t.properties?.[key];
    return metaOf(f, f?.items);
  }
}

/** A map[string]T: every key has T's metadata-free schema. */
class MapSchema implements PatchSchema {
  readonly name = 'map';
  constructor(private readonly values: FieldSchema) {}
  lookupStruct(): PatchMeta {
    return { strategies: [], mergeKey: '', schema: schemaOfField(this.values) };
  }
  lookupSlice(): PatchMeta {
    return { strategies: [], mergeKey: '', schema: schemaOfField(this.values.items) };
  }
}

/** Splits off retainKeys: ['merge','retainKeys'] → 'merge'. */
export function mainStrategy(strategies: readonly string[]): string {
  const rest = strategies.filter((s) => s !== 'retainKeys');
  return rest[0] ?? '';
}
