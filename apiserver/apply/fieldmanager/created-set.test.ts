// createdSet (the create fast path of ownership) against compare({}, obj), the
// general walk it stands in for: the same set for every object, or a refusal
// where compare takes its slow branches.
import assert from 'node:assert/strict';
import { schemaHooks } from '../../../shared/api/validation/hooks';
import { jsonClone } from '../../../shared/api/json-value';
import type { JSONObject } from '../json-util';
import { configMap, nginxDeployment, pod } from './fixtures';
import { builtinModel, UNSTRUCTURED_WITH_METADATA } from './schema-model';
import { compare, createdSet } from './typed';
import type { TypeNode } from './types';

const rootOf = (obj: JSONObject): TypeNode => {
  const [group, version] = String(obj.apiVersion).includes('/')
    ? String(obj.apiVersion).split('/')
    : ['', String(obj.apiVersion)];
  return (builtinModel({ group, version, kind: String(obj.kind) }) ?? UNSTRUCTURED_WITH_METADATA).root();
};

/** The object as the registry hands it to ownership: defaulted like the apiserver does. */
function defaulted(obj: JSONObject, definition: string): JSONObject {
  const o = jsonClone(obj);
  schemaHooks(definition).applyDefaults(o);
  return o;
}

function expectSame(obj: JSONObject, t = rootOf(obj)): void {
  const c = compare({}, obj, t);
  assert.ok(c.removed.isEmpty(), 'a create removes nothing');
  const want = c.modified.union(c.added);
  const got = createdSet(obj, t);
  assert.ok(got, 'the fast path takes a plain object');
  assert.deepEqual(got.toFieldsV1(), want.toFieldsV1());
  assert.ok(got.equals(want));
}

const richPod = (): JSONObject =>
  pod(
    {
      containers: [
        {
          name: 'app',
          image: 'busybox',
          command: ['sh', '-c', 'sleep 1'],
          env: [
            { name: 'A', value: '1' },
            { name: 'B', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
          ],
          ports: [{ containerPort: 80 }, { containerPort: 53, protocol: 'UDP' }],
          resources: { limits: { cpu: '100m' }, requests: {} },
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
          securityContext: {},
        },
        { name: 'side', image: 'busybox', env: [] },
      ],
      initContainers: [],
      volumes: [
        { name: 'data', emptyDir: {} },
        { name: 'cfg', configMap: { name: 'c', items: [{ key: 'k', path: 'p' }] } },
      ],
      tolerations: [{ key: 'k', operator: 'Exists' }],
      nodeSelector: { disk: 'ssd' },
      affinity: null,
    },
    {
      labels: { app: 'a', tier: 'web' },
      annotations: {},
      finalizers: ['example.com/a', 'example.com/b'],
      ownerReferences: [
        { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'rs', uid: 'u-1', controller: true },
      ],
      generateName: 'a-',
    },
  );

describe('createdSet (ownership of a create)', () => {
  it('gives compare’s set for built-in objects, as sent and as defaulted', () => {
    const cases: [JSONObject, string][] = [
      [richPod(), 'io.k8s.api.core.v1.Pod'],
      [pod({ containers: [{ name: 'c', image: 'i' }] }), 'io.k8s.api.core.v1.Pod'],
      [nginxDeployment(), 'io.k8s.api.apps.v1.Deployment'],
      [configMap({ a: '1', b: '' }, { labels: null }), 'io.k8s.api.core.v1.ConfigMap'],
      [
        {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 's', namespace: 'd' },
          spec: {
            selector: { app: 'a' },
            ports: [
              { port: 80, targetPort: 8080 },
              { port: 443, name: 'tls' },
            ],
          },
        },
        'io.k8s.api.core.v1.Service',
      ],
    ];
    for (const [obj, def] of cases) {
      expectSame(obj);
      expectSame(defaulted(obj, def));
    }
  });

  it('gives compare’s set for objects without a schema (deduced maps, atomic lists)', () => {
    expectSame({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w', labels: { a: 'b' } },
      spec: {
        size: 3,
        tags: ['x', 'y'],
        nested: { empty: {}, nil: null, deep: { v: true } },
        list: [{ a: 1 }],
      },
      status: {},
    });
  });

  it('owns items that share a key as one, as compare does', () => {
    expectSame(
      pod({
        containers: [
          { name: 'c', image: 'one' },
          { name: 'c', image: 'two' },
        ],
      }),
    );
  });

  it('leaves a value of the wrong shape or an unkeyed item to compare', () => {
    const t = rootOf(pod({}));
    assert.equal(createdSet(pod({ containers: 'nope' }), t), undefined);
    assert.equal(createdSet(pod({ containers: [{ image: 'no name' }] }), t), undefined);
    assert.equal(createdSet({ apiVersion: 'v1', kind: 'Pod', spec: 7 }, t), undefined);
    // Empty, but still of the wrong shape.
    assert.equal(createdSet(pod({ containers: {} }), t), undefined);
    assert.equal(createdSet({ apiVersion: 'v1', kind: 'Pod', metadata: [] }, t), undefined);
  });
});
