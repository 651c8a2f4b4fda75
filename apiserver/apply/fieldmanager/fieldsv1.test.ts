// FieldsV1 encoding: golden examples of what Kubernetes stores, and the field set algebra.
import assert from 'node:assert/strict';
import type { JSONObject } from '../json-util';
import { encodeObject } from '../../../shared/codec/protobuf';
import { FieldSet, fromFieldsV1 } from './fieldset';
import { applied, at, nginxDeployment, pod, updated } from './fixtures';
import { fieldPE, keyPE, parsePathElement, pathString, valuePE } from './path';

const fieldsOf = (obj: JSONObject, i = 0) =>
  JSON.stringify(at(obj, 'metadata', 'managedFields', i, 'fieldsV1'));

describe('FieldsV1', () => {
  it('golden: a Deployment applied by kubectl (ports keyed by containerPort and the defaulted protocol)', () => {
    const out = applied(null, nginxDeployment(), 'kubectl');
    const entries = at(out, 'metadata', 'managedFields') as JSONObject[];
    assert.deepEqual(Object.keys(entries[0]), [
      'manager',
      'operation',
      'apiVersion',
      'time',
      'fieldsType',
      'fieldsV1',
    ]);
    assert.equal(entries[0].time, '2024-05-01T10:00:00Z');
    assert.equal(
      fieldsOf(out),
      '{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:replicas":{},"f:selector":{},"f:template":{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:name":{},"f:ports":{"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{}}}}}}}}}',
    );
  });

  it('golden: an applied empty struct (emptyDir: {}) is owned', () => {
    const cfg = pod({
      containers: [{ name: 'app', image: 'app:1' }],
      volumes: [{ name: 'cache', emptyDir: {} }],
    });
    const out = applied(null, cfg, 'kubectl', { apiVersion: 'v1' });
    assert.equal(
      JSON.stringify(at(out, 'metadata', 'managedFields', 0, 'fieldsV1', 'f:spec', 'f:volumes')),
      '{"k:{\\"name\\":\\"cache\\"}":{".":{},"f:emptyDir":{},"f:name":{}}}',
    );
  });

  it('golden: the same Deployment created by kubectl create (Update, after defaulting)', () => {
    const d = nginxDeployment();
    const spec = d.spec as JSONObject;
    spec.strategy = { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } };
    spec.revisionHistoryLimit = 10;
    const c = at(spec, 'template', 'spec', 'containers', 0) as JSONObject;
    c.imagePullPolicy = 'IfNotPresent';
    (c.ports as JSONObject[])[0].protocol = 'TCP';
    const out = updated(null, d, 'kubectl-create');
    assert.equal(
      fieldsOf(out),
      '{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:replicas":{},"f:revisionHistoryLimit":{},"f:selector":{},"f:strategy":{"f:rollingUpdate":{".":{},"f:maxSurge":{},"f:maxUnavailable":{}},"f:type":{}},"f:template":{"f:metadata":{"f:labels":{".":{},"f:app":{}}},"f:spec":{"f:containers":{"k:{\\"name\\":\\"nginx\\"}":{".":{},"f:image":{},"f:imagePullPolicy":{},"f:name":{},"f:ports":{".":{},"k:{\\"containerPort\\":80,\\"protocol\\":\\"TCP\\"}":{".":{},"f:containerPort":{},"f:protocol":{}}},"f:resources":{}}}}}}}',
    );
    assert.equal(at(out, 'metadata', 'managedFields', 0, 'operation'), 'Update');
  });

  it('golden: pod status written by the kubelet through /status', () => {
    const live = updated(null, pod({ containers: [{ name: 'app', image: 'app:1' }] }), 'kubectl-create');
    const next = structuredClone(live);
    next.status = {
      phase: 'Running',
      conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: '2024-05-01T10:00:00Z' }],
    };
    const out = updated(live, next, 'kubelet', { subresource: 'status' });
    const e = at(out, 'metadata', 'managedFields', 1) as JSONObject;
    assert.equal(e.manager, 'kubelet');
    assert.equal(e.subresource, 'status');
    assert.equal(
      JSON.stringify(e.fieldsV1),
      '{"f:status":{"f:conditions":{".":{},"k:{\\"type\\":\\"Ready\\"}":{".":{},"f:lastProbeTime":{},"f:lastTransitionTime":{},"f:status":{},"f:type":{}}},"f:phase":{}}}',
    );
  });

  it('golden: finalizers as a set, keys of two fields, fields in byte order', () => {
    const out = updated(
      null,
      pod(
        {
          containers: [
            {
              name: 'app',
              ports: [
                { containerPort: 8443, protocol: 'TCP' },
                { containerPort: 80, protocol: 'UDP' },
                { containerPort: 80, protocol: 'TCP' },
              ],
            },
          ],
        },
        { finalizers: ['example.com/b', 'example.com/a'], labels: { Zone: 'z', app: 'a' } },
      ),
      'creator',
    );
    const f = at(out, 'metadata', 'managedFields', 0, 'fieldsV1') as JSONObject;
    assert.equal(
      JSON.stringify(at(f, 'f:metadata')),
      '{"f:finalizers":{".":{},"v:\\"example.com/a\\"":{},"v:\\"example.com/b\\"":{}},"f:labels":{".":{},"f:Zone":{},"f:app":{}}}',
    );
    assert.deepEqual(
      Object.keys(at(f, 'f:spec', 'f:containers', 'k:{"name":"app"}', 'f:ports') as JSONObject),
      [
        '.',
        'k:{"containerPort":80,"protocol":"TCP"}',
        'k:{"containerPort":80,"protocol":"UDP"}',
        'k:{"containerPort":8443,"protocol":"TCP"}',
      ],
    );
  });

  it('reads what Kubernetes stores and writes it back byte for byte', () => {
    const k8s =
      '{"f:metadata":{"f:annotations":{".":{},"f:deployment.kubernetes.io/revision":{}}},"f:status":{"f:availableReplicas":{},"f:conditions":{".":{},"k:{\\"type\\":\\"Available\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}},"k:{\\"type\\":\\"Progressing\\"}":{".":{},"f:lastTransitionTime":{},"f:lastUpdateTime":{},"f:message":{},"f:reason":{},"f:status":{},"f:type":{}}},"f:observedGeneration":{},"f:readyReplicas":{},"f:replicas":{},"f:updatedReplicas":{}}}';
    assert.equal(JSON.stringify(fromFieldsV1(JSON.parse(k8s)).toFieldsV1()), k8s);
  });

  it('writes its FieldsV1 text exactly as JSON.stringify writes its FieldsV1 object', () => {
    // Random trees of every element type, members with and without children, escaped keys.
    const keys = [
      'f:a',
      'f:b',
      'f:a<b&c>',
      'k:{"name":"x"}',
      'k:{"port":80,"protocol":"TCP"}',
      'v:"s"',
      'v:3',
      'i:0',
      'i:12',
    ];
    let seed = 7;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) % 2147483648) % n;
    const tree = (depth: number): JSONObject => {
      const o: JSONObject = {};
      if (rand(3) === 0) o['.'] = {};
      for (let i = rand(5); i > 0; i--)
        o[keys[rand(keys.length)]] = depth > 0 && rand(2) ? tree(depth - 1) : {};
      return o;
    };
    for (let i = 0; i < 300; i++) {
      const set = fromFieldsV1(tree(4));
      assert.equal(set.jsonText(), JSON.stringify(set.toFieldsV1()));
    }
    const deployment = at(
      applied(null, nginxDeployment(), 'kubectl'),
      'metadata',
      'managedFields',
      0,
      'fieldsV1',
    );
    assert.equal(fromFieldsV1(deployment).jsonText(), JSON.stringify(deployment));
  });

  it("gives the storage encoder the same bytes from a set's text as from its object", () => {
    const out = applied(null, nginxDeployment(), 'kubectl');
    const copy = JSON.parse(JSON.stringify(out)) as JSONObject;
    // The applied object's fieldsV1 came from fieldsV1Of (it has a text source); the copy's did not.
    assert.ok(encodeObject(out).equals(encodeObject(copy)));
  });

  it('canonicalises keys: key fields sorted by name, Go JSON escaping, unknown element types dropped', () => {
    const s = fromFieldsV1({
      'f:spec': { 'f:ports': { 'k:{"protocol":"TCP","port":80}': {} }, 'x:future': {} },
      'f:data': { 'k:{"name":"a<b"}': {} },
    });
    assert.deepEqual(s.toFieldsV1(), {
      'f:data': { 'k:{"name":"a\\u003cb"}': {} },
      'f:spec': { 'f:ports': { 'k:{"port":80,"protocol":"TCP"}': {} } },
    });
  });

  it('orders elements fields < keys < values < indices, and values by type then value', () => {
    const s = FieldSet.of(
      [parsePathElement('i:0')!],
      [valuePE(true)],
      [valuePE('b')],
      [valuePE(10)],
      [valuePE(9)],
      [keyPE([['name', 'x']])],
      [fieldPE('b')],
      [fieldPE('B')],
    );
    assert.deepEqual(Object.keys(s.toFieldsV1()), [
      'f:B',
      'f:b',
      'k:{"name":"x"}',
      'v:9',
      'v:10',
      'v:"b"',
      'v:true',
      'i:0',
    ]);
  });

  it('prints paths as structured-merge-diff does', () => {
    const p = [
      fieldPE('spec'),
      fieldPE('containers'),
      keyPE([['name', 'nginx']]),
      fieldPE('ports'),
      keyPE([
        ['protocol', 'TCP'],
        ['containerPort', 80],
      ]),
    ];
    assert.equal(pathString(p), '.spec.containers[name="nginx"].ports[containerPort=80,protocol="TCP"]');
    assert.equal(
      pathString([fieldPE('metadata'), fieldPE('finalizers'), valuePE('a')]),
      '.metadata.finalizers[="a"]',
    );
  });

  it('set algebra: union, difference, intersection, recursive difference', () => {
    const P = (...names: string[]) => names.map(fieldPE);
    const a = FieldSet.of(P('spec', 'replicas'), P('spec', 'template', 'x'), P('metadata'));
    const b = FieldSet.of(P('spec', 'replicas'), P('spec', 'template'));
    assert.deepEqual(a.union(b).paths().map(pathString), [
      '.metadata',
      '.spec.replicas',
      '.spec.template',
      '.spec.template.x',
    ]);
    assert.deepEqual(a.difference(b).paths().map(pathString), ['.metadata', '.spec.template.x']);
    assert.deepEqual(a.intersection(b).paths().map(pathString), ['.spec.replicas']);
    assert.deepEqual(a.recursiveDifference(b).paths().map(pathString), ['.metadata']);
    assert.ok(a.has(P('spec', 'template', 'x')));
    assert.ok(!a.has(P('spec', 'template')));
    assert.equal(a.difference(FieldSet.of(P('nope'))), a, 'no change keeps the same set');
  });
});
