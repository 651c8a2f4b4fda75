import assert from 'node:assert/strict';
import { compileJSONPath, goFormat, JSONPathError } from './jsonpath';

const doc = {
  metadata: {
    name: 'web',
    labels: { app: 'web', 'app.kubernetes.io/name': 'shop' },
    annotations: { 'kubernetes.io/change-cause': 'rollout' },
  },
  spec: {
    replicas: 3,
    containers: [
      { name: 'app', image: 'nginx', ports: [{ containerPort: 80 }, { containerPort: 443 }] },
      { name: 'log', image: 'fluent-bit' },
    ],
  },
  status: {
    conditions: [
      { type: 'Available', status: 'True', priority: 2 },
      { type: 'Ready', status: 'False', priority: 1 },
    ],
    empty: null,
  },
};

const ev = (path: string) => compileJSONPath(path).evaluate(doc);

describe('JSONPath subset', () => {
  it('fields, escaped dots, quoted keys, braces, root', () => {
    assert.deepEqual(ev('.spec.replicas'), [3]);
    assert.deepEqual(ev('{.metadata.name}'), ['web']);
    assert.deepEqual(ev('$.metadata.name'), ['web']);
    assert.deepEqual(ev('.metadata.labels.app'), ['web']);
    assert.deepEqual(ev('.metadata.labels.app\\.kubernetes\\.io/name'), ['shop']);
    assert.deepEqual(ev(".metadata.annotations['kubernetes.io/change-cause']"), ['rollout']);
    assert.deepEqual(ev('.metadata["labels"].app'), ['web']);
    assert.deepEqual(ev('.'), [doc]);
    assert.deepEqual(ev('.status.empty'), [null]);
  });

  it('missing keys select nothing', () => {
    assert.deepEqual(ev('.spec.nope'), []);
    assert.deepEqual(ev('.spec.replicas.deeper'), []);
    assert.deepEqual(ev('.spec.containers.name'), []);
  });

  it('indexes, negative indexes, slices, wildcards, unions', () => {
    assert.deepEqual(ev('.spec.containers[0].name'), ['app']);
    assert.deepEqual(ev('.spec.containers[-1].name'), ['log']);
    assert.deepEqual(ev('.spec.containers[5].name'), []);
    assert.deepEqual(ev('.spec.containers[*].image'), ['nginx', 'fluent-bit']);
    assert.deepEqual(ev('.spec.containers[0:1].name'), ['app']);
    assert.deepEqual(ev('.spec.containers[0,1].name'), ['app', 'log']);
    assert.deepEqual(ev('.spec.containers[0].ports[*].containerPort'), [80, 443]);
    assert.deepEqual(ev('.metadata.labels.*'), ['web', 'shop']);
    assert.deepEqual(ev(".metadata.labels['app','missing']"), ['web']);
  });

  it('recursive descent', () => {
    assert.deepEqual(ev('..containerPort'), [80, 443]);
    assert.deepEqual(ev('.spec..name'), ['app', 'log']);
  });

  it('filters: ==, !=, numeric comparison, existence', () => {
    assert.deepEqual(ev('.status.conditions[?(@.type=="Ready")].status'), ['False']);
    assert.deepEqual(ev(".status.conditions[?(@.type=='Available')].status"), ['True']);
    assert.deepEqual(ev('.status.conditions[?(@.type != "Ready")].type'), ['Available']);
    assert.deepEqual(ev('.status.conditions[?(@.priority > 1)].type'), ['Available']);
    assert.deepEqual(ev('.status.conditions[?(@.priority<=1)].type'), ['Ready']);
    assert.deepEqual(ev('.spec.containers[?(@.ports)].name'), ['app']);
    assert.deepEqual(ev('.status.conditions[?(@.type=="Gone")].status'), []);
  });

  it('type errors throw JSONPathError; bad syntax fails to compile', () => {
    assert.throws(() => ev('.status.conditions[?(@.priority=="1")].type'), JSONPathError);
    assert.throws(() => ev('.metadata[?(@.name=="web")]'), JSONPathError);
    assert.throws(() => compileJSONPath('.spec[?(@.x'), JSONPathError);
    assert.throws(() => compileJSONPath('.spec.containers[abc]'), JSONPathError);
    assert.throws(() => compileJSONPath('.spec.'), JSONPathError);
  });

  it('formats values the way Go prints them', () => {
    assert.equal(goFormat('x'), 'x');
    assert.equal(goFormat(3), '3');
    assert.equal(goFormat(1.5), '1.5');
    assert.equal(goFormat(0.00001), '1e-05');
    assert.equal(goFormat(1234567.5), '1.2345675e+06');
    assert.equal(goFormat(true), 'true');
    assert.equal(goFormat(null), '<nil>');
    assert.equal(goFormat(['a', 1]), '[a 1]');
    assert.equal(goFormat({ b: 1, a: { c: 'd' } }), 'map[a:map[c:d] b:1]');
  });
});
