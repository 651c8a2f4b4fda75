// The schema of one kind out of an OpenAPI v3 group-version document (what
// /openapi/v3/apis/<group>/<version> serves), with every $ref replaced by the
// schema it names, as Kubernetes' schema resolver does before it maps a
// schema to CEL types: a ref may sit in allOf (v3 wraps property refs so
// their siblings stay valid), a ref already being expanded further up (a
// cycle, as in JSONSchemaProps) becomes an empty object.
import type { Schema } from './schema';

const COMPONENTS = '#/components/schemas/';

export interface GroupVersionKind {
  group: string;
  version: string;
  kind: string;
}

const isObj = (v: unknown): v is Record<string, any> =>
  v !== null && typeof v === 'object' && !Array.isArray(v);

/** The ref a schema stands for: its own $ref or the first one wrapped in allOf. */
function refOf(s: Schema): string | undefined {
  if (typeof s.$ref === 'string') return s.$ref;
  if (Array.isArray(s.allOf)) {
    for (const sub of s.allOf) {
      const r = isObj(sub) ? refOf(sub) : undefined;
      if (r) return r;
    }
  }
  return undefined;
}

export class SchemaNotFoundError extends Error {}

const isStringOrNumber = (oneOf: unknown): boolean =>
  Array.isArray(oneOf) &&
  oneOf.length === 2 &&
  oneOf.some((x) => x?.type === 'string') &&
  oneOf.some((x) => x?.type === 'number');

/** The components of a document and their expansion (each occurrence its own copy). */
class Expander {
  private readonly expanding = new Set<string>();

  constructor(private readonly components: Record<string, Schema>) {}

  private named(ref: string): Schema {
    const s = ref.startsWith(COMPONENTS) ? this.components[ref.slice(COMPONENTS.length)] : undefined;
    if (!isObj(s)) throw new SchemaNotFoundError(`cannot resolve Ref ${JSON.stringify(ref)}`);
    return s;
  }

  expand(s: Schema): Schema {
    const ref = refOf(s);
    if (ref) {
      if (this.expanding.has(ref)) return { type: 'object' };
      this.expanding.add(ref);
      try {
        return this.expandBody(this.named(ref));
      } finally {
        this.expanding.delete(ref);
      }
    }
    return this.expandBody(s);
  }

  private expandBody(s: Schema): Schema {
    const out: Schema = { ...s };
    // v3 gives Quantity-like strings as oneOf string|number; Kubernetes checks built-in kinds
    // against its compiled definitions, where they are plain strings.
    if (out.type === undefined && out.format !== 'int-or-string' && isStringOrNumber(out.oneOf))
      out.type = 'string';
    if (isObj(s.properties)) {
      out.properties = {};
      for (const [k, p] of Object.entries(s.properties)) if (isObj(p)) out.properties[k] = this.expand(p);
    }
    if (isObj(s.additionalProperties)) out.additionalProperties = this.expand(s.additionalProperties);
    if (isObj(s.items)) out.items = this.expand(s.items);
    return out;
  }
}

const gvksOf = (s: Schema): GroupVersionKind[] =>
  Array.isArray(s['x-kubernetes-group-version-kind']) ? s['x-kubernetes-group-version-kind'] : [];

/**
 * The expanded schema of gvk in a v3 document; SchemaNotFoundError when the
 * document has no schema for it.
 */
export function kindSchema(doc: unknown, gvk: GroupVersionKind): Schema {
  const components: Record<string, Schema> =
    isObj(doc) && isObj(doc.components?.schemas) ? doc.components.schemas : {};
  for (const [name, s] of Object.entries(components)) {
    if (!isObj(s)) continue;
    const hit = gvksOf(s).some(
      (g) => (g.group ?? '') === gvk.group && g.version === gvk.version && g.kind === gvk.kind,
    );
    if (hit) return new Expander(components).expand({ $ref: COMPONENTS + name });
  }
  throw new SchemaNotFoundError(`no schema for ${gvk.group}/${gvk.version}, Kind=${gvk.kind}`);
}
