// Decodes /openapi/v2's protobuf with protobufjs and a .proto of our own
// (field numbers from gnostic's OpenAPIv2.proto), then compares with the JSON document.
import assert from 'node:assert/strict';
import protobuf from 'protobufjs';
import { builtinResources } from './catalog';
import { buildOpenAPIV2, encodeOpenAPIV2Protobuf } from './openapi';

const PROTO = `
syntax = "proto3";
package openapi.v2;
message Any { bytes value = 1; string yaml = 2; }
message NamedAny { string name = 1; Any value = 2; }
message Info { string title = 1; string version = 2; string description = 3; repeated NamedAny vendor_extension = 7; }
message StringArray { repeated string value = 1; }
message NamedStringArray { string name = 1; StringArray value = 2; }
message SecurityRequirement { repeated NamedStringArray additional_properties = 1; }
message ApiKeySecurity { string type = 1; string name = 2; string in = 3; string description = 4; }
message SecurityDefinitionsItem { oneof oneof { ApiKeySecurity api_key_security = 2; } }
message NamedSecurityDefinitionsItem { string name = 1; SecurityDefinitionsItem value = 2; }
message SecurityDefinitions { repeated NamedSecurityDefinitionsItem additional_properties = 1; }
message TypeItem { repeated string value = 1; }
message ItemsItem { repeated Schema schema = 1; }
message AdditionalPropertiesItem { oneof oneof { Schema schema = 1; bool boolean = 2; } }
message NamedSchema { string name = 1; Schema value = 2; }
message Properties { repeated NamedSchema additional_properties = 1; }
message Definitions { repeated NamedSchema additional_properties = 1; }
message Schema {
  string _ref = 1; string format = 2; string description = 4; Any default = 5;
  repeated string required = 19; repeated Any enum = 20; AdditionalPropertiesItem additional_properties = 21;
  TypeItem type = 22; ItemsItem items = 23; repeated Schema all_of = 24; Properties properties = 25;
  repeated NamedAny vendor_extension = 31;
}
message JsonReference { string _ref = 1; string description = 2; }
message BodyParameter { string description = 1; string name = 2; string in = 3; bool required = 4; Schema schema = 5; }
message QueryParameterSubSchema { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 6; bool unique_items = 20; }
message PathParameterSubSchema { bool required = 1; string in = 2; string description = 3; string name = 4; string type = 5; bool unique_items = 19; }
message NonBodyParameter { oneof oneof { QueryParameterSubSchema query_parameter_sub_schema = 3; PathParameterSubSchema path_parameter_sub_schema = 4; } }
message Parameter { oneof oneof { BodyParameter body_parameter = 1; NonBodyParameter non_body_parameter = 2; } }
message ParametersItem { oneof oneof { Parameter parameter = 1; JsonReference json_reference = 2; } }
message SchemaItem { oneof oneof { Schema schema = 1; } }
message Response { string description = 1; SchemaItem schema = 2; }
message ResponseValue { oneof oneof { Response response = 1; JsonReference json_reference = 2; } }
message NamedResponseValue { string name = 1; ResponseValue value = 2; }
message Responses { repeated NamedResponseValue response_code = 1; }
message Operation {
  repeated string tags = 1; string description = 3; string operation_id = 5; repeated string produces = 6;
  repeated string consumes = 7; repeated ParametersItem parameters = 8; Responses responses = 9;
  repeated string schemes = 10; repeated NamedAny vendor_extension = 13;
}
message PathItem {
  Operation get = 2; Operation put = 3; Operation post = 4; Operation delete = 5; Operation patch = 8;
  repeated ParametersItem parameters = 9;
}
message NamedPathItem { string name = 1; PathItem value = 2; }
message Paths { repeated NamedPathItem path = 2; }
message Document {
  string swagger = 1; Info info = 2; Paths paths = 8; Definitions definitions = 9;
  repeated SecurityRequirement security = 12; SecurityDefinitions security_definitions = 13;
}
`;

const root = protobuf.parse(PROTO, { keepCase: true }).root;
const Document = root.lookupType('openapi.v2.Document');

/** Back from gnostic's shape to Swagger JSON (the parts we write). */
function schemaJSON(s: any): any {
  const out: any = {};
  if (s._ref) out.$ref = s._ref;
  if (s.type?.value?.length) out.type = s.type.value.length === 1 ? s.type.value[0] : s.type.value;
  if (s.format) out.format = s.format;
  if (s.description) out.description = s.description;
  if (s.items) out.items = schemaJSON(s.items.schema[0]);
  if (s.additional_properties) {
    out.additionalProperties = s.additional_properties.schema
      ? schemaJSON(s.additional_properties.schema)
      : s.additional_properties.boolean;
  }
  if (s.all_of?.length) out.allOf = s.all_of.map(schemaJSON);
  if (s.properties) {
    out.properties = {};
    for (const p of s.properties.additional_properties) out.properties[p.name] = schemaJSON(p.value);
  }
  if (s.required?.length) out.required = s.required;
  if (s.enum?.length) out.enum = s.enum.map((a: any) => JSON.parse(a.yaml));
  for (const e of s.vendor_extension ?? []) out[e.name] = JSON.parse(e.value.yaml);
  return out;
}

const sortKeys = (v: any): any =>
  Array.isArray(v)
    ? v.map(sortKeys)
    : v && typeof v === 'object'
      ? Object.fromEntries(
          Object.keys(v)
            .sort()
            .map((k) => [k, sortKeys(v[k])]),
        )
      : v;

describe('openapi v2 protobuf (gnostic)', () => {
  const doc = buildOpenAPIV2(builtinResources(), {}, { version: 'v1.36.0' });
  const pb = encodeOpenAPIV2Protobuf(doc);
  const back = Document.toObject(Document.decode(pb), { defaults: false, arrays: true }) as any;

  it('document header, security', () => {
    assert.equal(back.swagger, '2.0');
    assert.deepStrictEqual(
      { title: back.info.title, version: back.info.version },
      { title: 'Kubernetes', version: 'v1.36.0' },
    );
    assert.equal(back.security[0].additional_properties[0].name, 'BearerToken');
    const sd = back.security_definitions.additional_properties[0];
    assert.equal(sd.name, 'BearerToken');
    assert.deepStrictEqual(
      {
        type: sd.value.api_key_security.type,
        in: sd.value.api_key_security.in,
        name: sd.value.api_key_security.name,
      },
      { type: 'apiKey', in: 'header', name: 'authorization' },
    );
  });

  it('every definition decodes back to the JSON schema', () => {
    const defs = back.definitions.additional_properties;
    assert.equal(defs.length, Object.keys(doc.definitions).length);
    for (const d of defs)
      assert.deepStrictEqual(sortKeys(schemaJSON(d.value)), sortKeys(doc.definitions[d.name]), d.name);
  });

  it('paths, operations, parameters and responses', () => {
    const paths = back.paths.path;
    assert.equal(paths.length, Object.keys(doc.paths).length);
    const item = paths.find((p: any) => p.name === '/api/v1/namespaces/{namespace}/pods/{name}').value;
    const patch = item.patch;
    const json = doc.paths['/api/v1/namespaces/{namespace}/pods/{name}'].patch;
    assert.equal(patch.operation_id, json.operationId);
    assert.deepStrictEqual(patch.consumes, json.consumes);
    const ext = Object.fromEntries(
      patch.vendor_extension.map((e: any) => [e.name, JSON.parse(e.value.yaml)]),
    );
    assert.deepStrictEqual(ext, {
      'x-kubernetes-action': 'patch',
      'x-kubernetes-group-version-kind': { group: '', kind: 'Pod', version: 'v1' },
    });
    const names = patch.parameters.map(
      (p: any) =>
        p.parameter.body_parameter?.name ?? p.parameter.non_body_parameter.query_parameter_sub_schema.name,
    );
    assert.deepStrictEqual(
      names,
      json.parameters.map((p: any) => p.name),
    );
    const body = patch.parameters.find((p: any) => p.parameter.body_parameter).parameter.body_parameter;
    assert.equal(body.schema._ref, '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.Patch');
    assert.equal(body.required, true);
    const ok = patch.responses.response_code.find((r: any) => r.name === '200').value.response;
    assert.equal(ok.schema.schema._ref, '#/definitions/io.k8s.api.core.v1.Pod');
    const pathParams = item.parameters.map((p: any) => p.parameter.non_body_parameter);
    assert.equal(pathParams[0].path_parameter_sub_schema.name, 'name');
    assert.equal(pathParams[0].path_parameter_sub_schema.required, true);
  });
});
