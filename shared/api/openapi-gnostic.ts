// /openapi/v2 as gnostic's openapi.v2.Document protobuf
// (Accept: application/com.github.proto-openapi.spec.v2@v1.0+protobuf), which
// kubectl and client-go's discovery prefer. Field numbers are facts of
// google/gnostic openapiv2/OpenAPIv2.proto; the code is ours. Vendor
// extensions and default/example/enum values travel as Any{yaml}: JSON text,
// which is valid YAML for the YAML parser clients use.
import { Writer } from '../codec/protobuf-wire';
import type { Schema } from './openapi-schema';

export const OPENAPI_V2_PROTOBUF = 'application/com.github.proto-openapi.spec.v2@v1.0+protobuf';

type Value =
  'string' | 'bool' | 'double' | 'int64' | 'strings' | 'any' | 'anys' | ((w: Writer, v: any) => void);
/** JSON key → [field number, how to write it]; the "x-" entry is the vendor_extension field. */
type Table = Record<string, [number, Value]>;

const str = (w: Writer, n: number, s: string) => {
  w.u32(n * 8 + 2);
  w.str(s);
};

/** A length-delimited nested message written by fn. */
function sub(w: Writer, n: number, fn: () => void): void {
  w.u32(n * 8 + 2);
  const s = w.begin();
  fn();
  w.end(s);
}

function writeAny(w: Writer, n: number, v: unknown): void {
  // Any: value = 1 (google.protobuf.Any, unused), yaml = 2
  sub(w, n, () => str(w, 2, JSON.stringify(v)));
}

const sortedTables = new WeakMap<Table, [string, [number, Value]][]>();

function writeTable(w: Writer, table: Table, obj: Schema): void {
  let entries = sortedTables.get(table);
  if (!entries) {
    entries = Object.entries(table).sort((a, b) => a[1][0] - b[1][0]);
    sortedTables.set(table, entries);
  }
  for (const [key, [n, kind]] of entries) {
    if (key === 'x-') {
      for (const [k, v] of Object.entries(obj)) {
        // NamedAny: name = 1, value = 2
        if (k.startsWith('x-')) sub(w, n, () => (str(w, 1, k), writeAny(w, 2, v)));
      }
      continue;
    }
    const v = obj[key];
    if (v === undefined || v === null) continue;
    switch (kind) {
      case 'string':
        if (v !== '') str(w, n, String(v));
        break;
      case 'bool':
        if (v === true) {
          w.u32(n * 8);
          w.u32(1);
        }
        break;
      case 'double':
        w.u32(n * 8 + 1);
        w.f64(Number(v));
        break;
      case 'int64':
        w.u32(n * 8);
        w.i64(Number(v));
        break;
      case 'strings':
        for (const s of v as unknown[]) str(w, n, String(s));
        break;
      case 'any':
        writeAny(w, n, v);
        break;
      case 'anys':
        for (const x of v as unknown[]) writeAny(w, n, x);
        break;
      default:
        kind(w, v);
    }
  }
}

const msg = (n: number, table: () => Table) => (w: Writer, v: Schema) =>
  sub(w, n, () => writeTable(w, table(), v));

/** A JSON map as repeated Named* messages {name = 1, value = 2} inside a wrapper at field n. */
const named =
  (n: number, inner: number, value: (w: Writer, v: any) => void) => (w: Writer, m: Record<string, any>) =>
    sub(w, n, () => {
      for (const [k, v] of Object.entries(m)) sub(w, inner, () => (str(w, 1, k), value(w, v)));
    });

const SCHEMA: Table = {
  $ref: [1, 'string'],
  format: [2, 'string'],
  title: [3, 'string'],
  description: [4, 'string'],
  default: [5, 'any'],
  multipleOf: [6, 'double'],
  maximum: [7, 'double'],
  exclusiveMaximum: [8, 'bool'],
  minimum: [9, 'double'],
  exclusiveMinimum: [10, 'bool'],
  maxLength: [11, 'int64'],
  minLength: [12, 'int64'],
  pattern: [13, 'string'],
  maxItems: [14, 'int64'],
  minItems: [15, 'int64'],
  uniqueItems: [16, 'bool'],
  maxProperties: [17, 'int64'],
  minProperties: [18, 'int64'],
  required: [19, 'strings'],
  enum: [20, 'anys'],
  // AdditionalPropertiesItem: schema = 1 | boolean = 2
  additionalProperties: [
    21,
    (w, v) =>
      sub(w, 21, () => {
        if (typeof v === 'boolean') {
          w.u32(2 * 8);
          w.u32(v ? 1 : 0);
        } else schemaAt(w, 1, v);
      }),
  ],
  // TypeItem: value = 1 (repeated)
  type: [22, (w, v) => sub(w, 22, () => (Array.isArray(v) ? v : [v]).forEach((t: string) => str(w, 1, t)))],
  // ItemsItem: schema = 1 (repeated)
  items: [
    23,
    (w, v) => sub(w, 23, () => (Array.isArray(v) ? v : [v]).forEach((s: Schema) => schemaAt(w, 1, s))),
  ],
  allOf: [24, (w, v) => (v as Schema[]).forEach((s) => schemaAt(w, 24, s))],
  // Properties: additional_properties = 1 (NamedSchema)
  properties: [25, named(25, 1, (w, s) => schemaAt(w, 2, s))],
  discriminator: [26, 'string'],
  readOnly: [27, 'bool'],
  example: [30, 'any'],
  'x-': [31, 'string'],
};

function schemaAt(w: Writer, n: number, s: Schema): void {
  sub(w, n, () => writeTable(w, SCHEMA, s));
}

const QUERY: Table = {
  required: [1, 'bool'],
  in: [2, 'string'],
  description: [3, 'string'],
  name: [4, 'string'],
  allowEmptyValue: [5, 'bool'],
  type: [6, 'string'],
  format: [7, 'string'],
  collectionFormat: [9, 'string'],
  default: [10, 'any'],
  uniqueItems: [20, 'bool'],
  enum: [21, 'anys'],
  'x-': [23, 'string'],
};
const PATH_OR_HEADER: Table = {
  required: [1, 'bool'],
  in: [2, 'string'],
  description: [3, 'string'],
  name: [4, 'string'],
  type: [5, 'string'],
  format: [6, 'string'],
  collectionFormat: [8, 'string'],
  default: [9, 'any'],
  uniqueItems: [19, 'bool'],
  enum: [20, 'anys'],
  'x-': [22, 'string'],
};
const BODY: Table = {
  description: [1, 'string'],
  name: [2, 'string'],
  in: [3, 'string'],
  required: [4, 'bool'],
  schema: [5, (w, s) => schemaAt(w, 5, s)],
  'x-': [6, 'string'],
};
// NonBodyParameter: header = 1, formData = 2, query = 3, path = 4
const NON_BODY: Record<string, [number, Table]> = {
  header: [1, PATH_OR_HEADER],
  formData: [2, QUERY],
  query: [3, QUERY],
  path: [4, PATH_OR_HEADER],
};

/** ParametersItem: parameter = 1 (Parameter: body = 1 | non_body = 2) | json_reference = 2. */
function parameterAt(w: Writer, n: number, p: Schema): void {
  sub(w, n, () => {
    if (p.$ref) return sub(w, 2, () => str(w, 1, p.$ref));
    sub(w, 1, () => {
      if (p.in === 'body') return sub(w, 1, () => writeTable(w, BODY, p));
      const [which, table] = NON_BODY[p.in] ?? NON_BODY.query;
      sub(w, 2, () => sub(w, which, () => writeTable(w, table, p)));
    });
  });
}

const RESPONSE: Table = {
  description: [1, 'string'],
  // SchemaItem: schema = 1
  schema: [2, (w, s) => sub(w, 2, () => schemaAt(w, 1, s))],
  'x-': [5, 'string'],
};

const OPERATION: Table = {
  tags: [1, 'strings'],
  summary: [2, 'string'],
  description: [3, 'string'],
  operationId: [5, 'string'],
  produces: [6, 'strings'],
  consumes: [7, 'strings'],
  parameters: [8, (w, ps) => (ps as Schema[]).forEach((p) => parameterAt(w, 8, p))],
  // Responses: response_code = 1 (NamedResponseValue → ResponseValue: response = 1 | json_reference = 2)
  responses: [
    9,
    (w, rs) =>
      sub(w, 9, () => {
        for (const [code, r] of Object.entries(rs as Record<string, Schema>)) {
          if (code.startsWith('x-')) continue;
          sub(w, 1, () => {
            str(w, 1, code);
            sub(w, 2, () =>
              r.$ref ? sub(w, 2, () => str(w, 1, r.$ref)) : sub(w, 1, () => writeTable(w, RESPONSE, r)),
            );
          });
        }
      }),
  ],
  schemes: [10, 'strings'],
  deprecated: [11, 'bool'],
  'x-': [13, 'string'],
};

const PATH_ITEM: Table = {
  $ref: [1, 'string'],
  get: [2, msg(2, () => OPERATION)],
  put: [3, msg(3, () => OPERATION)],
  post: [4, msg(4, () => OPERATION)],
  delete: [5, msg(5, () => OPERATION)],
  options: [6, msg(6, () => OPERATION)],
  head: [7, msg(7, () => OPERATION)],
  patch: [8, msg(8, () => OPERATION)],
  parameters: [9, (w, ps) => (ps as Schema[]).forEach((p) => parameterAt(w, 9, p))],
  'x-': [10, 'string'],
};

const INFO: Table = {
  title: [1, 'string'],
  version: [2, 'string'],
  description: [3, 'string'],
  termsOfService: [4, 'string'],
  'x-': [7, 'string'],
};

/** SecurityDefinitionsItem: basic = 1 | api_key = 2. */
function securityScheme(w: Writer, v: Schema): void {
  sub(w, 2, () => {
    if (v.type === 'basic')
      sub(w, 1, () =>
        writeTable(w, { type: [1, 'string'], description: [2, 'string'], 'x-': [3, 'string'] }, v),
      );
    else
      sub(w, 2, () =>
        writeTable(
          w,
          {
            type: [1, 'string'],
            name: [2, 'string'],
            in: [3, 'string'],
            description: [4, 'string'],
            'x-': [5, 'string'],
          },
          v,
        ),
      );
  });
}

const DOCUMENT: Table = {
  swagger: [1, 'string'],
  info: [2, msg(2, () => INFO)],
  host: [3, 'string'],
  basePath: [4, 'string'],
  schemes: [5, 'strings'],
  consumes: [6, 'strings'],
  produces: [7, 'strings'],
  // Paths: vendor_extension = 1, path = 2 (NamedPathItem)
  paths: [
    8,
    (w, paths) =>
      sub(w, 8, () => {
        for (const [p, item] of Object.entries(paths as Record<string, Schema>)) {
          if (!p.startsWith('x-'))
            sub(w, 2, () => (str(w, 1, p), sub(w, 2, () => writeTable(w, PATH_ITEM, item))));
        }
      }),
  ],
  // Definitions: additional_properties = 1 (NamedSchema)
  definitions: [9, named(9, 1, (w, s) => schemaAt(w, 2, s))],
  // SecurityRequirement: additional_properties = 1 (NamedStringArray → StringArray: value = 1)
  security: [
    12,
    (w, reqs) =>
      (reqs as Record<string, string[]>[]).forEach((req) =>
        sub(w, 12, () => {
          for (const [k, scopes] of Object.entries(req))
            sub(w, 1, () => (str(w, 1, k), sub(w, 2, () => scopes.forEach((s) => str(w, 1, s)))));
        }),
      ),
  ],
  // SecurityDefinitions: additional_properties = 1 (NamedSecurityDefinitionsItem)
  securityDefinitions: [13, named(13, 1, securityScheme)],
  'x-': [16, 'string'],
};

/** The gnostic protobuf of a Swagger 2.0 document (as built by buildOpenAPIV2). */
export function encodeOpenAPIV2Protobuf(doc: Schema): Buffer {
  const w = new Writer(1 << 20);
  writeTable(w, DOCUMENT, doc);
  return w.finish();
}
