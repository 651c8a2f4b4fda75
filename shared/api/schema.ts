// Loads the committed API facts (shared/api/facts/) once, on first use, and
// answers lookups by definition name and by group/version/kind.
import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type {
  FieldSchema,
  GoFields,
  GroupVersionKind,
  ProtoMessage,
  ResourceFacts,
  TypeSchema,
} from './schema-types';

// Code runs from dist/shared/api; the facts stay in the source tree.
export const FACTS_DIR = resolve(__dirname, '../../../shared/api/facts');

let types: Record<string, TypeSchema> | undefined;
let proto: Record<string, ProtoMessage> | undefined;
let resources: ResourceFacts[] | undefined;
let byGVK: Map<string, string> | undefined;

const load = <T>(file: string): T => JSON.parse(readFileSync(join(FACTS_DIR, file), 'utf8')) as T;

export function allTypes(): Record<string, TypeSchema> {
  return (types ??= load<Record<string, TypeSchema>>('types.json'));
}

export function allProtoMessages(): Record<string, ProtoMessage> {
  return (proto ??= load<Record<string, ProtoMessage>>('proto.json'));
}

let goFields: GoFields | undefined;
/** Go struct field facts (order, omitempty, zero values) for encoding JSON as Go does. */
export function goStructFacts(): GoFields {
  return (goFields ??= load<GoFields>('go-fields.json'));
}

export function resourceFacts(): ResourceFacts[] {
  return (resources ??= load<ResourceFacts[]>('resources.json'));
}

export function typeSchema(definition: string): TypeSchema | undefined {
  return allTypes()[definition];
}

export const gvkKey = (g: GroupVersionKind) => `${g.group}/${g.version}/${g.kind}`;

/** The definition name of a kind, e.g. {"", v1, Pod} → io.k8s.api.core.v1.Pod. */
export function definitionOf(gvk: GroupVersionKind): string | undefined {
  if (!byGVK) {
    byGVK = new Map();
    for (const [name, t] of Object.entries(allTypes())) {
      for (const g of t.gvk ?? []) byGVK.set(gvkKey(g), name);
    }
  }
  return byGVK.get(gvkKey(gvk));
}

/** The schema of a field of a definition, or undefined. */
export function fieldOf(definition: string, field: string): FieldSchema | undefined {
  return typeSchema(definition)?.properties?.[field];
}

/** Parses "group/version" or "v1" (core). */
export function parseAPIVersion(apiVersion: string): { group: string; version: string } {
  const i = apiVersion.indexOf('/');
  return i < 0
    ? { group: '', version: apiVersion }
    : { group: apiVersion.slice(0, i), version: apiVersion.slice(i + 1) };
}

export const formatAPIVersion = (group: string, version: string) => (group ? `${group}/${version}` : version);
