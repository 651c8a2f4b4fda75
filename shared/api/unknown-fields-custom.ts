// Unknown fields of custom resources, against the CRD version's structural
// schema, as kube-apiserver reports and prunes them: root (and embedded
// resources') metadata checked against ObjectMeta, everything else pruned when
// the schema does not know it (unless x-kubernetes-preserve-unknown-fields).
// Order as Kubernetes reports: root metadata, pruned paths sorted, then
// embedded resources' metadata.
import { checkFields } from './unknown-fields';

type Schema = Record<string, unknown>;
type Obj = Record<string, unknown>;

const OBJECT_META = 'io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta';
const asObj = (v: unknown): Obj | undefined =>
  v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : undefined;

export interface CustomFieldsResult {
  /** `unknown field "…"` messages, Kubernetes' order. */
  unknown: string[];
  /** A decoding error in metadata (Go wording), if any. */
  error?: string;
}

function metaUnknown(meta: unknown, prefix: string, out: string[]): string | undefined {
  const m = asObj(meta);
  if (!m) return undefined;
  const r = checkFields(m, OBJECT_META, { collectUnknown: true });
  for (const msg of r.strict) out.push(msg.replace(/^unknown field "/, `unknown field "${prefix}.`));
  // ObjectMeta of a custom resource is stored without the unknown fields.
  for (const msg of r.strict) {
    const name = /^unknown field "([^".[]+)"$/.exec(msg)?.[1];
    if (name) delete m[name];
  }
  return r.error;
}

/**
 * Walks a custom resource against its openAPIV3Schema, pruning (deleting)
 * unknown fields in place and reporting them.
 */
export function checkCustomResourceFields(obj: Obj, schema: Schema | undefined): CustomFieldsResult {
  const rootMeta: string[] = [];
  const pruned: string[] = [];
  const embeddedMeta: string[] = [];
  const error = metaUnknown(obj.metadata, 'metadata', rootMeta);
  if (!schema) return { unknown: rootMeta, error };

  const walk = (v: unknown, s: Schema, path: string, root: boolean): void => {
    if (Array.isArray(v)) {
      const items = asObj(s.items);
      if (items) v.forEach((x, i) => walk(x, items, `${path}[${i}]`, false));
      return;
    }
    const o = asObj(v);
    if (!o) return;
    const props = asObj(s.properties) ?? {};
    const additional = s.additionalProperties;
    const preserve = s['x-kubernetes-preserve-unknown-fields'] === true;
    const embedded = s['x-kubernetes-embedded-resource'] === true;
    if (embedded) embeddedMeta.push(...collect(o.metadata, `${path}.metadata`));
    for (const k of Object.keys(o)) {
      const p = path ? `${path}.${k}` : k;
      if ((root || embedded) && (k === 'apiVersion' || k === 'kind' || k === 'metadata')) continue;
      const sub = asObj(props[k]);
      if (sub) walk(o[k], sub, p, false);
      else if (asObj(additional)) walk(o[k], asObj(additional)!, p, false);
      else if (!preserve && additional !== true) {
        pruned.push(`unknown field "${p}"`);
        delete o[k];
      }
    }
  };
  const collect = (meta: unknown, prefix: string) => {
    const out: string[] = [];
    metaUnknown(meta, prefix, out);
    return out;
  };
  walk(obj, schema, '', true);
  return { unknown: [...rootMeta, ...pruned.sort(), ...embeddedMeta], error };
}
