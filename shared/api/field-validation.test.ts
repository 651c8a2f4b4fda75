import assert from 'node:assert/strict';
import {
  decodeBody,
  decodeObject,
  parseFieldValidation,
  warningHeader,
  type FieldValidation,
} from './field-validation';
import type { GroupVersionKind } from './schema-types';
import { StatusError } from './status';

const POD: GroupVersionKind = { group: '', version: 'v1', kind: 'Pod' };
const DEPLOY: GroupVersionKind = { group: 'apps', version: 'v1', kind: 'Deployment' };

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

// The body of kube-apiserver's field validation integration test.
const INVALID_JSON = `{
  "apiVersion": "apps/v1", "kind": "Deployment",
  "metadata": {"name": "d", "name": "d", "unknownMeta": "metaVal", "labels": {"app": "nginx"}},
  "spec": {
    "unknown1": "val1", "unknownDupe": "valDupe", "unknownDupe": "valDupe2", "paused": true, "paused": false,
    "selector": {"matchLabels": {"app": "nginx"}},
    "template": {"metadata": {"labels": {"app": "nginx"}}, "spec": {"containers": [{"name": "nginx", "image": "nginx:latest",
      "unknownNested": "val1", "imagePullPolicy": "Always", "imagePullPolicy": "Never"}]}}}}`;
const JSON_PROBLEMS = [
  'duplicate field "metadata.name"',
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
  'duplicate field "spec.paused"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'duplicate field "spec.template.spec.containers[0].imagePullPolicy"',
];

const INVALID_YAML = `apiVersion: apps/v1
kind: Deployment
metadata:
  name: d
  name: d
  unknownMeta: metaVal
  labels:
    app: nginx
spec:
  unknown1: val1
  unknownDupe: valDupe
  unknownDupe: valDupe2
  paused: true
  paused: false
  selector:
    matchLabels:
      app: nginx
  template:
    metadata:
      labels:
        app: nginx
    spec:
      containers:
      - name: nginx
        image: nginx:latest
        unknownNested: val1
        imagePullPolicy: Always
        imagePullPolicy: Never`;
const YAML_DUPES = [
  'line 5: key "name" already set in map',
  'line 12: key "unknownDupe" already set in map',
  'line 14: key "paused" already set in map',
  'line 28: key "imagePullPolicy" already set in map',
];
// Go sorts the keys when converting YAML to JSON, so unknown fields come alphabetically.
const YAML_UNKNOWN = [
  'unknown field "metadata.unknownMeta"',
  'unknown field "spec.template.spec.containers[0].unknownNested"',
  'unknown field "spec.unknown1"',
  'unknown field "spec.unknownDupe"',
];

describe('fieldValidation query parameter', () => {
  it('defaults to Warn, like kube-apiserver', () => {
    assert.equal(parseFieldValidation(undefined), 'Warn');
    assert.equal(parseFieldValidation(''), 'Warn');
    for (const v of ['Ignore', 'Warn', 'Strict'] as const) assert.equal(parseFieldValidation(v), v);
  });

  it('rejects other values with a 422 on the options kind', () => {
    assert.throws(
      () => parseFieldValidation('strict', 'UpdateOptions'),
      (e: StatusError) =>
        e.code === 422 &&
        e.reason === 'Invalid' &&
        e.message ===
          'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": supported values: "", "Ignore", "Strict", "Warn"',
    );
  });
});

describe('decodeBody: unknown and duplicate fields', () => {
  it('Strict: 400 BadRequest with the strict decoding error, document order', () => {
    const e = decodeError(INVALID_JSON, DEPLOY);
    assert.equal(e.code, 400);
    assert.equal(e.reason, 'BadRequest');
    assert.equal(
      e.message,
      `Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: ${JSON_PROBLEMS.join(', ')}`,
    );
  });

  it('Warn: one warning per problem, object kept', () => {
    const r = decodeBody(INVALID_JSON, { format: 'json', fieldValidation: 'Warn', gvk: DEPLOY });
    assert.deepEqual(r.warnings, JSON_PROBLEMS);
    assert.equal((r.object.spec as { paused: boolean }).paused, false);
  });

  it('Ignore: nothing reported', () => {
    assert.deepEqual(
      decodeBody(INVALID_JSON, { format: 'json', fieldValidation: 'Ignore', gvk: DEPLOY }).warnings,
      [],
    );
  });

  it('YAML Strict: yaml.v2 duplicate report first, then unknown fields', () => {
    const e = decodeError(INVALID_YAML, DEPLOY, 'Strict', 'yaml');
    assert.equal(
      e.message,
      'Deployment in version "v1" cannot be handled as a Deployment: strict decoding error: yaml: unmarshal errors:\n  ' +
        YAML_DUPES.join('\n  ') +
        ', ' +
        YAML_UNKNOWN.join(', '),
    );
  });

  it('YAML Warn: duplicates split one per line', () => {
    const r = decodeBody(INVALID_YAML, { format: 'yaml', fieldValidation: 'Warn', gvk: DEPLOY });
    assert.deepEqual(r.warnings, [...YAML_DUPES, ...YAML_UNKNOWN]);
  });

  it('unknown fields inside maps of structs use dotted keys; free-form fields are not checked', () => {
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'a.b.c' },
      spec: {
        versions: [
          { name: 'v1', schema: { openAPIV3Schema: { properties: { spec: { type: 'object', typo: 1 } } } } },
        ],
      },
    };
    const r = decodeBody(JSON.stringify(crd), {
      format: 'json',
      fieldValidation: 'Warn',
      gvk: { group: 'apiextensions.k8s.io', version: 'v1', kind: 'CustomResourceDefinition' },
    });
    assert.deepEqual(r.warnings, [
      'unknown field "spec.versions[0].schema.openAPIV3Schema.properties.spec.typo"',
    ]);
    const rev = {
      apiVersion: 'apps/v1',
      kind: 'ControllerRevision',
      metadata: { name: 'r' },
      revision: 1,
      data: { anything: { goes: 1 } },
    };
    const r2 = decodeBody(JSON.stringify(rev), {
      format: 'json',
      fieldValidation: 'Strict',
      gvk: { group: 'apps', version: 'v1', kind: 'ControllerRevision' },
    });
    assert.deepEqual(r2.warnings, []);
  });

  it('duplicate map keys are reported; top-level unknown fields have no prefix', () => {
    const r = decodeBody(
      '{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"a"},"data":{"k":"1","k":"2"},"dta":{}}',
      {
        format: 'json',
        fieldValidation: 'Warn',
        gvk: { group: '', version: 'v1', kind: 'ConfigMap' },
      },
    );
    assert.deepEqual(r.warnings, ['duplicate field "data.k"', 'unknown field "dta"']);
  });

  it('a valid manifest passes Strict (kubectl --validate=strict)', () => {
    const body =
      '{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","creationTimestamp":null},"spec":{"containers":[{"name":"c","image":"nginx","resources":{}}]},"status":{}}';
    const r = decodeBody(body, { format: 'json', fieldValidation: 'Strict', gvk: POD });
    assert.deepEqual(r.warnings, []);
    assert.deepEqual(r.object.metadata, { name: 'p' });
  });

  it('formats the Warning header value', () => {
    assert.equal(warningHeader('unknown field "spec.foo"'), '299 - "unknown field \\"spec.foo\\""');
  });
});

describe('decodeBody: type mismatches are 400 decoding errors with Go wording', () => {
  const prefix = 'Pod in version "v1" cannot be handled as a Pod: ';
  const pod = (spec: unknown) =>
    JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p' }, spec });
  const cases: [unknown, string][] = [
    [
      { containers: [{ name: 'c', ports: [{ containerPort: '80' }] }] },
      'json: cannot unmarshal string into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ],
    [
      { containers: [{ name: 'c', env: [{ name: 'A', value: 1 }] }] },
      'json: cannot unmarshal number into Go struct field EnvVar.spec.containers.env.value of type string',
    ],
    [
      { containers: [], imagePullSecrets: ['x'] },
      'json: cannot unmarshal string into Go struct field PodSpec.spec.imagePullSecrets of type v1.LocalObjectReference',
    ],
    [
      { containers: { name: 'c' } },
      'json: cannot unmarshal object into Go struct field PodSpec.spec.containers of type []v1.Container',
    ],
    [
      { containers: [], activeDeadlineSeconds: 1.5 },
      'json: cannot unmarshal number 1.5 into Go struct field PodSpec.spec.activeDeadlineSeconds of type int64',
    ],
    [
      { containers: [{ name: 'c', ports: [{ containerPort: 3000000000 }] }] },
      'json: cannot unmarshal number 3000000000 into Go struct field ContainerPort.spec.containers.ports.containerPort of type int32',
    ],
    [
      { containers: [], hostNetwork: 'yes' },
      'json: cannot unmarshal string into Go struct field PodSpec.spec.hostNetwork of type bool',
    ],
    [
      { containers: [], nodeSelector: { a: true } },
      'json: cannot unmarshal bool into Go struct field PodSpec.spec.nodeSelector of type string',
    ],
    [
      { containers: [], volumes: [{ name: 'v', hostPath: { path: 1 } }] },
      'json: cannot unmarshal number into Go struct field HostPathVolumeSource.spec.volumes.VolumeSource.hostPath.path of type string',
    ],
    [
      { containers: [{ name: 'c', resources: { limits: { cpu: '1x' } } }] },
      "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
    ],
    [
      { containers: [{ name: 'c', resources: { limits: { cpu: '1e' } } }] },
      "unable to parse quantity's suffix",
    ],
    [
      { containers: [{ name: 'c', livenessProbe: { httpGet: { port: true } } }] },
      'json: cannot unmarshal bool into Go value of type int32',
    ],
    [
      { containers: [{ name: 'c', livenessProbe: { httpGet: { port: 1.5 } } }] },
      'json: cannot unmarshal number 1.5 into Go value of type int32',
    ],
    ['x', 'json: cannot unmarshal string into Go struct field Pod.spec of type v1.PodSpec'],
  ];
  for (const [spec, msg] of cases)
    it(msg.slice(0, 70), () => {
      const e = decodeError(pod(spec));
      assert.equal(e.code, 400);
      assert.equal(e.message, prefix + msg);
    });

  it('times: Go time.Parse messages; MicroTime needs six fractional digits', () => {
    const meta = (ts: unknown) =>
      JSON.stringify({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', creationTimestamp: ts } });
    assert.equal(
      decodeError(meta('yesterday')).message,
      prefix + 'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
    );
    assert.equal(
      decodeError(meta('2024-13-01T00:00:00Z')).message,
      prefix + 'parsing time "2024-13-01T00:00:00Z": month out of range',
    );
    assert.equal(
      decodeError(meta(5)).message,
      prefix + 'json: cannot unmarshal number into Go value of type string',
    );
    const ev = (t: string) =>
      JSON.stringify({
        apiVersion: 'events.k8s.io/v1',
        kind: 'Event',
        metadata: { name: 'e' },
        eventTime: t,
      });
    const EV: GroupVersionKind = { group: 'events.k8s.io', version: 'v1', kind: 'Event' };
    assert.equal(
      decodeError(ev('2024-05-01T10:00:00Z'), EV).message,
      'Event in version "v1" cannot be handled as a Event: parsing time "2024-05-01T10:00:00Z" as "2006-01-02T15:04:05.000000Z07:00": cannot parse "Z" as ".000000"',
    );
  });

  it('base64 byte fields: Go decoder message', () => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 's' },
      data: { a: 'abc' },
    });
    assert.equal(
      decodeError(body, { group: '', version: 'v1', kind: 'Secret' }).message,
      'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 0',
    );
  });

  it('a body that is not an object', () => {
    assert.equal(
      decodeError('[]').message,
      `the object provided is unrecognized (must be of type Pod): couldn't get version/kind; json parse error: json: cannot unmarshal array into Go value of type struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" } (5b5d)`,
    );
  });
});

describe('decodeBody: what Kubernetes stores', () => {
  it('writes one spelling back as Time or MicroTime by field, every time, and drops the zero time', () => {
    const t = '2024-05-01T12:00:00.123456+02:00';
    for (let round = 0; round < 2; round++) {
      const body = JSON.stringify({
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'e', namespace: 'd', creationTimestamp: '0001-01-01T00:00:00Z' },
        involvedObject: { kind: 'Pod', name: 'p' },
        firstTimestamp: t,
        eventTime: t,
      });
      const gvk = { group: '', version: 'v1', kind: 'Event' };
      const { object } = decodeBody(body, { format: 'json', fieldValidation: 'Strict', gvk });
      assert.equal(object.firstTimestamp, '2024-05-01T10:00:00Z');
      assert.equal(object.eventTime, '2024-05-01T10:00:00.123456Z');
      assert.equal('creationTimestamp' in (object.metadata as object), false);
      assert.throws(
        () =>
          decodeBody(body.replace(`"eventTime":"${t}"`, '"eventTime":"2024-05-01T10:00:00Z"'), {
            format: 'json',
            fieldValidation: 'Strict',
            gvk,
          }),
        /cannot parse "Z" as ".000000"/,
      );
    }
  });

  it('drops nulls, canonicalizes quantities and times, zeroes null map values', () => {
    const body = JSON.stringify({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2024-05-01T12:00:00.5+02:00', labels: { a: null } },
      spec: {
        nodeName: null,
        containers: [
          {
            name: 'c',
            resources: {
              limits: { cpu: 0.5, memory: '1024Mi' },
              requests: { cpu: '1000m', memory: '1.5Gi' },
            },
          },
        ],
      },
    });
    const { object } = decodeBody(body, { format: 'json', fieldValidation: 'Strict', gvk: POD });
    assert.deepEqual(object, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', creationTimestamp: '2024-05-01T10:00:00Z', labels: { a: '' } },
      spec: {
        containers: [
          {
            name: 'c',
            resources: { limits: { cpu: '500m', memory: '1Gi' }, requests: { cpu: '1', memory: '1536Mi' } },
          },
        ],
      },
    });
  });

  it('decodeObject works on an already parsed object (after a patch)', () => {
    const obj = () => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', foo: 1 } as Record<string, unknown>,
    });
    const warned = obj();
    assert.deepEqual(decodeObject(warned, POD, 'Warn'), ['unknown field "metadata.foo"']);
    assert.equal(
      warned.metadata.foo,
      undefined,
      'unknown fields are dropped, as decoding into the kind does',
    );
    assert.throws(
      () => decodeObject(obj(), POD, 'Strict'),
      /strict decoding error: unknown field "metadata.foo"/,
    );
  });
});
