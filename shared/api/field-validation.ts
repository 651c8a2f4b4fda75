// Server-side field validation (?fieldValidation=Ignore|Warn|Strict), as
// kube-apiserver does it while decoding a create/update body:
// - absent → Warn (handlers/rest.go fieldValidation());
// - other values → 422 "CreateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value";
// - Strict → 400 BadRequest "Pod in version "v1" cannot be handled as a Pod:
//   strict decoding error: unknown field "spec.foo", duplicate field "metadata.name""
//   (a decoding error, not a validation one: Kubernetes answers 400, not 422);
// - Warn → one `Warning: 299 - "..."` per problem, YAML duplicates split per line.
import { parseJSON, decodeFailure } from '../codec/json';
import { parseYAML, yamlDuplicateError } from '../codec/yaml';
import { notSupported } from './field-errors';
import { definitionOf, parseAPIVersion } from './schema';
import type { GroupVersionKind } from './schema-types';
import { StatusError, invalid } from './status';
import { checkFields } from './unknown-fields';
import { checkCustomResourceFields } from './unknown-fields-custom';

export type FieldValidation = 'Ignore' | 'Warn' | 'Strict';

const ALLOWED = ['', 'Ignore', 'Strict', 'Warn'];

/** Reads the query parameter; throws Kubernetes' 422 for values it does not know. */
export function parseFieldValidation(
  raw: string | null | undefined,
  optionsKind: 'CreateOptions' | 'UpdateOptions' | 'PatchOptions' = 'CreateOptions',
): FieldValidation {
  if (raw === undefined || raw === null || raw === '') return 'Warn';
  if (raw === 'Ignore' || raw === 'Warn' || raw === 'Strict') return raw;
  throw invalid({ group: 'meta.k8s.io', kind: optionsKind }, '', [
    notSupported('fieldValidation', raw, ALLOWED),
  ]);
}

export interface DecodeBodyOptions {
  /** The decoded media type of the body. */
  format: 'json' | 'yaml';
  fieldValidation: FieldValidation;
  /** The kind the endpoint serves (its schema is used; its kind fills a missing one). */
  gvk: GroupVersionKind;
  /** For a custom resource: its version's openAPIV3Schema (unknown fields are pruned). */
  customSchema?: Record<string, unknown>;
}

export interface DecodedBody {
  object: Record<string, unknown>;
  /** Texts for `Warning: 299 - "…"` headers (Warn only). */
  warnings: string[];
}

const FIND_KIND_TYPE =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

/**
 * Parses and decodes a create/update body the way kube-apiserver does, before
 * defaulting and validation. Throws StatusError 400 on anything that does not decode.
 */
export function decodeBody(body: Buffer | string, opts: DecodeBodyOptions): DecodedBody {
  const detect = opts.fieldValidation !== 'Ignore';
  const text = typeof body === 'string' ? body : body.toString('utf8');
  let value: unknown;
  let jsonDuplicates: string[] = [];
  let yamlDuplicates: string[] = [];
  if (opts.format === 'json') {
    const r = parseJSON(text, { detectDuplicates: detect, kind: opts.gvk.kind });
    value = r.value;
    jsonDuplicates = r.duplicates;
  } else {
    const r = parseYAML(text, { detectDuplicates: detect, kind: opts.gvk.kind });
    value = r.value;
    yamlDuplicates = r.duplicates;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    const what = Array.isArray(value)
      ? 'array'
      : value === null
        ? 'null'
        : typeof value === 'boolean'
          ? 'bool'
          : typeof value;
    throw decodeFailure(
      `couldn't get version/kind; json parse error: json: cannot unmarshal ${what} into Go value of type ${FIND_KIND_TYPE}`,
      text,
      opts.gvk.kind,
    );
  }
  const object = value as Record<string, unknown>;
  const found = { jsonDuplicates, yamlDuplicates };
  const warnings =
    opts.customSchema || !definitionOf(opts.gvk)
      ? decodeCustomObject(object, opts.customSchema, opts.gvk, opts.fieldValidation, found)
      : decodeObject(object, opts.gvk, opts.fieldValidation, found);
  return { object, warnings };
}

/**
 * The decode pass on an already parsed object (also usable after a patch):
 * type checks, normalization, unknown/duplicate fields per the directive.
 * Returns warnings; throws 400 StatusError.
 */
function prefixFor(object: Record<string, unknown>, gvk: GroupVersionKind): string {
  const bodyGV =
    typeof object.apiVersion === 'string' && object.apiVersion ? parseAPIVersion(object.apiVersion) : gvk;
  const bodyKind = typeof object.kind === 'string' && object.kind ? object.kind : gvk.kind;
  return `${bodyKind} in version "${bodyGV.version}" cannot be handled as a ${gvk.kind}: `;
}

function finish(strict: string[], fieldValidation: FieldValidation, prefix: string): string[] {
  if (fieldValidation === 'Ignore' || strict.length === 0) return [];
  if (fieldValidation === 'Strict')
    throw new StatusError(400, 'BadRequest', `${prefix}strict decoding error: ${strict.join(', ')}`);
  return strict.flatMap(splitYAMLWarnings);
}

/**
 * The decode pass of a custom resource: every duplicate key (unstructured
 * decoding sees them all), then the unknown fields its structural schema does
 * not know, which are pruned whatever the directive. Returns warnings; throws 400.
 */
export function decodeCustomObject(
  object: Record<string, unknown>,
  schema: Record<string, unknown> | undefined,
  gvk: GroupVersionKind,
  fieldValidation: FieldValidation,
  found: { jsonDuplicates?: string[]; yamlDuplicates?: string[] } = {},
): string[] {
  const prefix = prefixFor(object, gvk);
  const strict: string[] = [];
  if (found.yamlDuplicates?.length) strict.push(yamlDuplicateError(found.yamlDuplicates));
  for (const p of found.jsonDuplicates ?? []) strict.push(`duplicate field "${p}"`);
  const r = checkCustomResourceFields(object, schema);
  if (r.error) throw new StatusError(400, 'BadRequest', prefix + r.error);
  strict.push(...r.unknown);
  return finish(strict, fieldValidation, prefix);
}

export function decodeObject(
  object: Record<string, unknown>,
  gvk: GroupVersionKind,
  fieldValidation: FieldValidation,
  found: { jsonDuplicates?: string[]; yamlDuplicates?: string[] } = {},
): string[] {
  const bodyGV =
    typeof object.apiVersion === 'string' && object.apiVersion ? parseAPIVersion(object.apiVersion) : gvk;
  const bodyKind = typeof object.kind === 'string' && object.kind ? object.kind : gvk.kind;
  const prefix = `${bodyKind} in version "${bodyGV.version}" cannot be handled as a ${gvk.kind}: `;
  const definition = definitionOf(gvk);
  const strict: string[] = [];
  if (found.yamlDuplicates?.length) strict.push(yamlDuplicateError(found.yamlDuplicates));
  if (definition) {
    const r = checkFields(object, definition, {
      collectUnknown: fieldValidation !== 'Ignore',
      duplicates: found.jsonDuplicates?.length ? new Set(found.jsonDuplicates) : undefined,
    });
    if (r.error) throw new StatusError(400, 'BadRequest', prefix + r.error);
    strict.push(...r.strict);
  }
  return finish(strict, fieldValidation, prefix);
}

const SHORT = 'yaml: unmarshal errors:\n';
const LONG = 'error converting YAML to JSON: yaml: unmarshal errors:\n';

/** parseYAMLWarnings: one warning per line of a yaml.v2 strict error. */
function splitYAMLWarnings(s: string): string[] {
  const rest = s.startsWith(SHORT)
    ? s.slice(SHORT.length)
    : s.startsWith(LONG)
      ? s.slice(LONG.length)
      : undefined;
  return rest === undefined ? [s] : rest.split('\n').map((l) => l.trim());
}

/** The value of one `Warning` response header for a text. */
export function warningHeader(text: string): string {
  return `299 - "${text.replace(/[\\"]/g, (c) => '\\' + c)}"`;
}
