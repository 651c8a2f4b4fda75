// Custom resources: duplicates, unknown fields and pruning against a structural schema.
import assert from 'node:assert/strict';
import { decodeBody, type FieldValidation } from './field-validation';
import type { GroupVersionKind } from './schema-types';
import { StatusError } from './status';

const POD: GroupVersionKind = { group: '', version: 'v1', kind: 'Pod' };

function decodeError(
  body: string,
  gvk = POD,
  fieldValidation: FieldValidation = 'Strict',
  format: 'json' | 'yaml' = 'json',
): StatusError {
  try {
    decodeBody(body, { format, fieldValidation, gvk });
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return e;
  }
  assert.fail('expected a decoding error');
}

describe('decodeBody: custom resources (structural schema)', () => {
  const GVK: GroupVersionKind = { group: 'stable.example.com', version: 'v1', kind: 'Widget' };
  const body = `{"apiVersion":"stable.example.com/v1","kind":"Widget",
    "metadata":{"name":"w","name":"w","unknownMeta":"x"},
    "spec":{"unknown1":"v","unknownDupe":"a","unknownDupe":"b","knownField1":"a","knownField1":"b",
      "ports":[{"name":"p","containerPort":8080,"protocol":"TCP","hostPort":8081,"hostPort":8082,"unknownNested":"v"}],
      "embeddedObj":{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"c","unknownEmbeddedMeta":"x"}}}}`;
  const schema = (preserve: boolean) => ({
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        ...(preserve ? { 'x-kubernetes-preserve-unknown-fields': true } : {}),
        properties: {
          cronSpec: { type: 'string' },
          knownField1: { type: 'string' },
          embeddedObj: {
            type: 'object',
            'x-kubernetes-embedded-resource': true,
            properties: {
              apiversion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object' },
            },
          },
          ports: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                containerPort: { type: 'integer' },
                hostIP: { type: 'string' },
                hostPort: { type: 'integer' },
                name: { type: 'string' },
                protocol: { type: 'string' },
              },
            },
          },
        },
      },
    },
  });
  const DUPES = [
    'duplicate field "metadata.name"',
    'duplicate field "spec.unknownDupe"',
    'duplicate field "spec.knownField1"',
    'duplicate field "spec.ports[0].hostPort"',
  ];

  it('reports duplicates first, then root metadata, pruned fields sorted, embedded metadata (as Kubernetes)', () => {
    const r = decodeBody(body, {
      format: 'json',
      fieldValidation: 'Warn',
      gvk: GVK,
      customSchema: schema(false),
    });
    assert.deepEqual(r.warnings, [
      ...DUPES,
      'unknown field "metadata.unknownMeta"',
      'unknown field "spec.ports[0].unknownNested"',
      'unknown field "spec.unknown1"',
      'unknown field "spec.unknownDupe"',
      'unknown field "spec.embeddedObj.metadata.unknownEmbeddedMeta"',
    ]);
    // Unknown fields are pruned from what gets stored.
    assert.deepEqual(r.object.spec, {
      knownField1: 'b',
      ports: [{ name: 'p', containerPort: 8080, protocol: 'TCP', hostPort: 8082 }],
      embeddedObj: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
    });
    assert.deepEqual(r.object.metadata, { name: 'w' });
  });

  it('x-kubernetes-preserve-unknown-fields keeps unknown fields at that level', () => {
    const r = decodeBody(body, {
      format: 'json',
      fieldValidation: 'Warn',
      gvk: GVK,
      customSchema: schema(true),
    });
    assert.deepEqual(r.warnings, [
      ...DUPES,
      'unknown field "metadata.unknownMeta"',
      'unknown field "spec.ports[0].unknownNested"',
      'unknown field "spec.embeddedObj.metadata.unknownEmbeddedMeta"',
    ]);
  });

  it('Strict: the same list in one 400', () => {
    const e = decodeError(body, GVK, 'Strict');
    assert.ok(
      e.message.startsWith(
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: duplicate field "metadata.name", ',
      ),
    );
    const ok = decodeBody(
      '{"apiVersion":"stable.example.com/v1","kind":"Widget","metadata":{"name":"w"},"spec":{"knownField1":"x"}}',
      {
        format: 'json',
        fieldValidation: 'Strict',
        gvk: GVK,
        customSchema: schema(false),
      },
    );
    assert.deepEqual(ok.warnings, []);
  });
});
