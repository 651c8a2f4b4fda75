import assert from 'node:assert/strict';
import { StatusError } from '../../shared/api/status';
import type { JSONObject } from './json-util';
import { applyStrategicMergePatch, assertStrategicMergeSupported } from './strategic-merge';

const POD = 'io.k8s.api.core.v1.Pod';
const DEPLOYMENT = 'io.k8s.api.apps.v1.Deployment';
const PDB = 'io.k8s.api.policy.v1.PodDisruptionBudget';

const pod = (spec: JSONObject, metadata: JSONObject = { name: 'p' }): JSONObject => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata,
  spec,
});

const patchPod = (original: JSONObject, patch: unknown) => applyStrategicMergePatch(original, patch, POD);

function statusOf(fn: () => unknown) {
  try {
    fn();
  } catch (e) {
    assert.ok(e instanceof StatusError, String(e));
    return e.status;
  }
  assert.fail('expected a StatusError');
}

describe('strategic merge patch', () => {
  const base = pod({
    containers: [
      { name: 'app', image: 'app:1', args: ['--a'], ports: [{ containerPort: 80, protocol: 'TCP' }] },
      { name: 'sidecar', image: 'side:1' },
    ],
  });

  it('merges list items by patchMergeKey and keeps the others in place', () => {
    const out = patchPod(base, { spec: { containers: [{ name: 'app', image: 'app:2' }] } });
    assert.deepEqual((out.spec as JSONObject).containers, [
      { name: 'app', image: 'app:2', args: ['--a'], ports: [{ containerPort: 80, protocol: 'TCP' }] },
      { name: 'sidecar', image: 'side:1' },
    ]);
    assert.equal(
      ((base.spec as JSONObject).containers as JSONObject[])[0].image,
      'app:1',
      'original untouched',
    );
  });

  it('adds new items (before later server-only ones, as strategicpatch orders) and merges nested lists by key', () => {
    const out = patchPod(base, {
      spec: {
        containers: [
          { name: 'app', ports: [{ containerPort: 443, protocol: 'TCP' }] },
          { name: 'new', image: 'n:1' },
        ],
      },
    });
    const cs = (out.spec as JSONObject).containers as JSONObject[];
    assert.deepEqual(
      cs.map((c) => c.name),
      ['app', 'new', 'sidecar'],
    );
    // A new item goes before the server-only ones the live order cannot place it after.
    assert.deepEqual(cs[0].ports, [
      { containerPort: 443, protocol: 'TCP' },
      { containerPort: 80, protocol: 'TCP' },
    ]);
  });

  it('replaces lists without a merge strategy (args)', () => {
    const out = patchPod(base, { spec: { containers: [{ name: 'app', args: ['--b'] }] } });
    assert.deepEqual(((out.spec as JSONObject).containers as JSONObject[])[0].args, ['--b']);
  });

  it('null deletes a field', () => {
    const out = patchPod(base, { spec: { containers: [{ name: 'sidecar', image: null }] } });
    assert.deepEqual(((out.spec as JSONObject).containers as JSONObject[])[1], { name: 'sidecar' });
  });

  it('$patch: delete removes a list item by key', () => {
    const out = patchPod(base, { spec: { containers: [{ name: 'sidecar', $patch: 'delete' }] } });
    assert.deepEqual(
      ((out.spec as JSONObject).containers as JSONObject[]).map((c) => c.name),
      ['app'],
    );
  });

  it('$patch: replace in a list replaces the list', () => {
    const out = patchPod(base, {
      spec: { containers: [{ name: 'only', image: 'o:1' }, { $patch: 'replace' }] },
    });
    assert.deepEqual((out.spec as JSONObject).containers, [{ name: 'only', image: 'o:1' }]);
  });

  it('$patch: replace in a map replaces the map; $patch: delete empties it', () => {
    const withLabels = pod({ containers: [] }, { name: 'p', labels: { a: '1', b: '2' } });
    const replaced = patchPod(withLabels, { metadata: { labels: { c: '3', $patch: 'replace' } } });
    assert.deepEqual((replaced.metadata as JSONObject).labels, { c: '3' });
    const deleted = patchPod(withLabels, { metadata: { labels: { $patch: 'delete' } } });
    assert.deepEqual((deleted.metadata as JSONObject).labels, {});
  });

  it('merges primitive lists with strategy merge as sets (finalizers)', () => {
    const p = pod({ containers: [] }, { name: 'p', finalizers: ['a', 'b'] });
    const out = patchPod(p, { metadata: { finalizers: ['b', 'c'] } });
    assert.deepEqual((out.metadata as JSONObject).finalizers, ['a', 'b', 'c']);
  });

  it('$deleteFromPrimitiveList/<field> removes values from a primitive list', () => {
    const p = pod({ containers: [] }, { name: 'p', finalizers: ['a', 'b', 'c'] });
    const out = patchPod(p, { metadata: { '$deleteFromPrimitiveList/finalizers': ['b'] } });
    assert.deepEqual((out.metadata as JSONObject).finalizers, ['a', 'c']);
  });

  it('$setElementOrder/<field> orders the merged list', () => {
    const p = pod({ containers: [{ name: 'a' }, { name: 'b' }, { name: 'c' }] });
    const out = patchPod(p, {
      spec: {
        '$setElementOrder/containers': [{ name: 'c' }, { name: 'a' }, { name: 'b' }],
        containers: [{ name: 'a', image: 'z' }],
      },
    });
    assert.deepEqual((out.spec as JSONObject).containers, [
      { name: 'c' },
      { name: 'a', image: 'z' },
      { name: 'b' },
    ]);
    const f = patchPod(pod({ containers: [] }, { name: 'p', finalizers: ['x', 'y'] }), {
      metadata: { '$setElementOrder/finalizers': ['y', 'z', 'x'], finalizers: ['z'] },
    });
    assert.deepEqual((f.metadata as JSONObject).finalizers, ['y', 'z', 'x']);
  });

  it('$retainKeys clears the keys it does not list (Deployment strategy)', () => {
    const d: JSONObject = {
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: 'd' },
      spec: {
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxSurge: '25%', maxUnavailable: '25%' } },
      },
    };
    const out = applyStrategicMergePatch(
      d,
      { spec: { strategy: { $retainKeys: ['type'], type: 'Recreate' } } },
      DEPLOYMENT,
    );
    assert.deepEqual((out.spec as JSONObject).strategy, { type: 'Recreate' });
    assert.equal(
      statusOf(() => applyStrategicMergePatch(d, { spec: { strategy: { $retainKeys: 'type' } } }, DEPLOYMENT))
        .code,
      400,
    );
    assert.equal(
      statusOf(() =>
        applyStrategicMergePatch(
          d,
          { spec: { strategy: { $retainKeys: ['type'], rollingUpdate: {} } } },
          DEPLOYMENT,
        ),
      ).message,
      'invalid patch format of retainKeys',
    );
  });

  it('patchStrategy replace replaces a struct instead of merging it (PDB selector)', () => {
    const pdb: JSONObject = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'b' },
      spec: { selector: { matchLabels: { a: '1' } } },
    };
    const out = applyStrategicMergePatch(pdb, { spec: { selector: { matchLabels: { b: '2' } } } }, PDB);
    assert.deepEqual((out.spec as JSONObject).selector, { matchLabels: { b: '2' } });
  });

  it('applies what kubectl client-side apply sends', () => {
    const live = pod(
      { containers: [{ name: 'nginx', image: 'nginx:1.14', imagePullPolicy: 'IfNotPresent' }] },
      {
        name: 'p',
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{}' },
        labels: { app: 'x' },
      },
    );
    const patch = {
      metadata: {
        annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":1}\n' },
        labels: null,
      },
      spec: {
        '$setElementOrder/containers': [{ name: 'nginx' }],
        containers: [{ image: 'nginx:1.16', name: 'nginx' }],
      },
    };
    const out = patchPod(live, JSON.stringify(patch));
    assert.deepEqual(out.metadata, {
      name: 'p',
      annotations: { 'kubectl.kubernetes.io/last-applied-configuration': '{"new":1}\n' },
    });
    assert.deepEqual((out.spec as JSONObject).containers, [
      { name: 'nginx', image: 'nginx:1.16', imagePullPolicy: 'IfNotPresent' },
    ]);
  });

  it('drops directives and nulls from values it takes whole', () => {
    const out = patchPod(pod({}), {
      spec: {
        containers: [
          { name: 'a', image: null },
          { name: 'b', $patch: 'delete' },
        ],
      },
    });
    assert.deepEqual((out.spec as JSONObject).containers, [{ name: 'a' }]);
  });

  describe('errors', () => {
    it('an item without the merge key is 500 with Kubernetes wording', () => {
      const s = statusOf(() => patchPod(base, { spec: { containers: [{ image: 'x' }] } }));
      assert.equal(s.code, 500);
      assert.equal(s.message, 'map: map[image:x] does not contain declared merge key: name');
    });
    it('$patch: merge is not a directive kube-apiserver takes', () => {
      const p = pod({ containers: [] }, { name: 'p', labels: { a: '1' } });
      const s = statusOf(() => patchPod(p, { metadata: { labels: { $patch: 'merge', b: '2' } } }));
      assert.equal(s.code, 500);
      assert.equal(s.message, 'unknown patch type: merge in map: map[$patch:merge b:2]');
      const l = statusOf(() => patchPod(base, { spec: { containers: [{ $patch: 'merge' }] } }));
      assert.equal(l.message, 'merging lists cannot yet be specified in the patch');
    });
    it('a body that is not an object is 400', () => {
      assert.equal(statusOf(() => patchPod(base, '[1]')).code, 400);
      assert.equal(statusOf(() => patchPod(base, '{')).code, 400);
    });
    it('a bad $deleteFromPrimitiveList key is 400', () => {
      assert.equal(
        statusOf(() => patchPod(base, { metadata: { $deleteFromPrimitiveList: ['a'] } })).code,
        400,
      );
    });
    it('lists of lists are 422', () => {
      const p = pod({ containers: [] }, { name: 'p', finalizers: ['a'] });
      assert.equal(statusOf(() => patchPod(p, { metadata: { finalizers: [['b']] } })).code, 500);
      const q = pod({ containers: [] }, { name: 'p', finalizers: [['a']] });
      assert.equal(statusOf(() => patchPod(q, { metadata: { finalizers: [['b']] } })).code, 422);
    });
    it('custom resources answer 415 UnsupportedMediaType', () => {
      const s = statusOf(() => assertStrategicMergeSupported(undefined));
      assert.equal(s.code, 415);
      assert.equal(s.reason, 'UnsupportedMediaType');
      assert.equal(
        s.message,
        'the body of the request was in an unknown format - accepted media types include: application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml',
      );
    });
  });
});
