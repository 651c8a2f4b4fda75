import assert from 'node:assert/strict';
import { fieldErrorMessage } from '../../../shared/api/field-errors';
import { applySchemaDefaults, normalize, pruneNulls, selectableValue, validateAgainstSchema } from './schema';
import { publishVersion } from './openapi';
import { defaultDeprecationWarning, setCondition, type CRD } from './types';

const schema = {
  type: 'object',
  properties: {
    spec: {
      type: 'object',
      properties: {
        replicas: { type: 'integer', default: 1 },
        mode: { type: 'string', nullable: true, default: 'fast' },
        note: { type: 'string' },
        opts: {
          type: 'object',
          default: {},
          properties: { level: { type: 'integer', default: 3 } },
        },
        tags: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
        ports: {
          type: 'array',
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'protocol'],
          items: {
            type: 'object',
            properties: {
              name: { type: 'string' },
              protocol: { type: 'string', default: 'TCP' },
              port: { type: 'integer', default: 80 },
            },
          },
        },
        template: {
          type: 'object',
          'x-kubernetes-embedded-resource': true,
          'x-kubernetes-preserve-unknown-fields': true,
        },
        labels: { type: 'object', additionalProperties: { type: 'string', default: 'x' } },
      },
    },
  },
};

describe('custom resources: structural schema at work', () => {
  it('defaults absent fields and non-nullable nulls, recursing into defaulted objects', () => {
    const obj: any = { spec: { mode: null, ports: [{ name: 'a' }], labels: { k: null } } };
    applySchemaDefaults(obj, schema);
    assert.deepEqual(obj.spec, {
      replicas: 1,
      mode: null, // nullable: the null stays
      opts: { level: 3 },
      ports: [{ name: 'a', protocol: 'TCP', port: 80 }],
      labels: { k: 'x' },
    });
  });

  it('prunes non-nullable nulls without defaults, keeps nullable and defaulted ones', () => {
    const obj: any = { spec: { note: null, mode: null, replicas: null } };
    pruneNulls(obj, schema);
    assert.deepEqual(obj.spec, { mode: null, replicas: null });
    normalize(obj, schema);
    assert.equal(obj.spec.replicas, 1);
  });

  it('normalize prunes unknown fields but keeps x-kubernetes-preserve-unknown-fields subtrees', () => {
    const obj: any = {
      apiVersion: 'x.io/v1',
      kind: 'K',
      metadata: { name: 'a', bogus: true },
      spec: { junk: 1, template: { apiVersion: 'v1', kind: 'Pod', anything: { goes: 1 } } },
      extra: 1,
    };
    normalize(obj, schema);
    assert.equal(obj.extra, undefined);
    assert.equal(obj.spec.junk, undefined);
    assert.equal(obj.metadata.bogus, undefined);
    assert.deepEqual(obj.spec.template.anything, { goes: 1 });
  });

  it('validates set and map list uniqueness (map keys defaulted) and embedded resources', () => {
    const errs = validateAgainstSchema(
      {
        metadata: { name: 'a' },
        spec: {
          tags: ['a', 'b', 'a'],
          ports: [{ name: 'a' }, { name: 'a', protocol: 'TCP' }, { name: 'a', protocol: 'UDP' }],
          template: { metadata: { name: 'Not_Valid' } },
        },
      },
      schema,
    ).map(fieldErrorMessage);
    assert.deepEqual(errs, [
      'spec.tags[2]: Duplicate value: "a"',
      'spec.ports[1]: Duplicate value: {"name":"a","protocol":"TCP"}',
      'spec.template.apiVersion: Required value: must not be empty',
      'spec.template.kind: Required value: must not be empty',
      "spec.template.metadata.name: Invalid value: \"Not_Valid\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
    ]);
  });

  it('selectable field values are strings of scalars, "" when absent', () => {
    const o = { spec: { a: 'x', n: 3, b: false, o: {} } };
    assert.equal(selectableValue(o, ['spec', 'a']), 'x');
    assert.equal(selectableValue(o, ['spec', 'n']), '3');
    assert.equal(selectableValue(o, ['spec', 'b']), 'false');
    assert.equal(selectableValue(o, ['spec', 'o']), '');
    assert.equal(selectableValue(o, ['spec', 'missing']), '');
  });
});

describe('CRD helpers', () => {
  it('conditions move lastTransitionTime only when the status changes', () => {
    const crd = { metadata: { name: 'x' }, spec: {} } as unknown as CRD;
    setCondition(crd, { type: 'A', status: 'False', reason: 'R1', message: 'm1' }, 't1');
    setCondition(crd, { type: 'A', status: 'False', reason: 'R2', message: 'm2' }, 't2');
    assert.deepEqual(crd.status!.conditions, [
      { type: 'A', status: 'False', lastTransitionTime: 't1', reason: 'R2', message: 'm2' },
    ]);
    setCondition(crd, { type: 'A', status: 'True', reason: 'R3', message: 'm3' }, 't3');
    assert.equal(crd.status!.conditions![0].lastTransitionTime, 't3');
  });

  it('default deprecation warning names the newest served, non-deprecated version', () => {
    const crd = {
      metadata: { name: 'ws.x.io' },
      spec: {
        group: 'x.io',
        names: { plural: 'ws', kind: 'W' },
        scope: 'Namespaced',
        versions: [
          { name: 'v1alpha1', served: true, storage: false, deprecated: true },
          { name: 'v1beta1', served: true, storage: false },
          { name: 'v1', served: true, storage: true },
          { name: 'v2', served: false, storage: false },
        ],
      },
    } as CRD;
    assert.equal(defaultDeprecationWarning(crd, 'v1alpha1'), 'x.io/v1alpha1 W is deprecated; use x.io/v1 W');
    assert.equal(defaultDeprecationWarning(crd, 'v1'), 'x.io/v1 W is deprecated');
  });

  const FACTS = {
    group: 't.example.com',
    version: 'v1',
    resource: 'ts',
    kind: 'T',
    singular: 't',
    namespaced: true,
    verbs: ['get'],
  };
  const GVK = [{ group: 't.example.com', kind: 'T', version: 'v1' }];

  it('publishes a bare open object without a schema, and in v2 for preserve-unknown-fields at the root', () => {
    const none = publishVersion(FACTS, 'TList', undefined);
    for (const doc of [none.v2, none.v3])
      assert.deepEqual(doc['com.example.t.v1.T'], { type: 'object', 'x-kubernetes-group-version-kind': GVK });
    const loose = publishVersion(FACTS, 'TList', {
      type: 'object',
      'x-kubernetes-preserve-unknown-fields': true,
    });
    assert.deepEqual(loose.v2['com.example.t.v1.T'], {
      type: 'object',
      'x-kubernetes-group-version-kind': GVK,
    });
    const v3 = loose.v3['com.example.t.v1.T'];
    assert.equal(v3['x-kubernetes-preserve-unknown-fields'], true);
    assert.deepEqual(Object.keys(v3.properties), ['apiVersion', 'kind', 'metadata']);
    const legacy = publishVersion(
      FACTS,
      'TList',
      { type: 'object', properties: { a: { type: 'string' } } },
      true,
    );
    assert.deepEqual(legacy.v2['com.example.t.v1.T'], {
      type: 'object',
      'x-kubernetes-group-version-kind': GVK,
    });
  });

  it('follows ToStructuralOpenAPIV2 below the root: open subtrees, untyped nullables, no defaults', () => {
    const p = publishVersion(FACTS, 'TList', {
      type: 'object',
      properties: {
        spec: {
          type: 'object',
          required: ['n', 'k'],
          properties: {
            free: {
              type: 'object',
              'x-kubernetes-preserve-unknown-fields': true,
              properties: { known: { type: 'string' } },
            },
            list: { type: 'array', 'x-kubernetes-preserve-unknown-fields': true, items: { type: 'string' } },
            n: { type: 'object', nullable: true, properties: { x: { type: 'string' } } },
            k: { type: 'integer', default: 3 },
            port: { 'x-kubernetes-int-or-string': true },
            tpl: {
              type: 'object',
              'x-kubernetes-embedded-resource': true,
              'x-kubernetes-preserve-unknown-fields': true,
            },
            closed: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: {} },
          },
        },
      },
    });
    const v2 = p.v2['com.example.t.v1.T'].properties.spec;
    assert.deepEqual(v2.properties.free, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(v2.properties.list, { 'x-kubernetes-preserve-unknown-fields': true });
    assert.deepEqual(v2.properties.n, {});
    assert.deepEqual(v2.required, ['k']);
    assert.deepEqual(v2.properties.k, { type: 'integer' });
    assert.deepEqual(v2.properties.port, { 'x-kubernetes-int-or-string': true });
    assert.deepEqual(v2.properties.tpl, {
      'x-kubernetes-embedded-resource': true,
      'x-kubernetes-preserve-unknown-fields': true,
    });
    assert.deepEqual(Object.keys(v2.properties.closed.properties), ['apiVersion', 'kind', 'metadata']);
    assert.deepEqual(v2.properties.closed.required, ['kind', 'apiVersion']);
    const v3 = p.v3['com.example.t.v1.T'].properties.spec;
    assert.equal(v3.properties.free.properties.known.type, 'string');
    assert.equal(v3.properties.k.default, 3);
    assert.deepEqual(v3.properties.port.anyOf, [{ type: 'integer' }, { type: 'string' }]);
    assert.deepEqual(Object.keys(v3.properties.tpl.properties), ['apiVersion', 'kind', 'metadata']);
    assert.deepEqual(v3.properties.tpl.required, ['kind', 'apiVersion']);
    assert.deepEqual(v3.required, ['n', 'k']);
  });

  it('publishes the schema with apiVersion/kind/metadata and the GVK; v2 drops nullable and junctors', () => {
    const p = publishVersion(
      {
        group: 'stable.example.com',
        version: 'v1',
        resource: 'crontabs',
        kind: 'CronTab',
        singular: 'crontab',
        namespaced: true,
        verbs: ['get'],
      },
      'CronTabList',
      {
        type: 'object',
        properties: { spec: { type: 'object', properties: { a: { type: 'string', nullable: true } } } },
        anyOf: [{ required: ['spec'] }],
      },
    );
    assert.equal(p.facts.definition, 'com.example.stable.v1.CronTab');
    const v3 = p.v3['com.example.stable.v1.CronTab'];
    assert.deepEqual(v3['x-kubernetes-group-version-kind'], [
      { group: 'stable.example.com', kind: 'CronTab', version: 'v1' },
    ]);
    assert.deepEqual(Object.keys(v3.properties), ['apiVersion', 'kind', 'metadata', 'spec']);
    assert.deepEqual(v3.properties.metadata.allOf, [
      { $ref: '#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta' },
    ]);
    assert.equal(v3.properties.spec.properties.a.nullable, true);
    const v2 = p.v2['com.example.stable.v1.CronTab'];
    assert.equal(
      v2.properties.metadata.$ref,
      '#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta',
    );
    assert.deepEqual(v2.properties.spec.properties.a, {});
    assert.equal(v2.anyOf, undefined);
    assert.deepEqual(p.v2['com.example.stable.v1.CronTabList'].properties.items.items, {
      $ref: '#/definitions/com.example.stable.v1.CronTab',
    });
  });
});
