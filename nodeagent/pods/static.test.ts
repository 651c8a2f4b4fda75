import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readManifestPath } from './sources';
import {
  CONFIG_HASH,
  CONFIG_MIRROR,
  CONFIG_SOURCE,
  isMirrorPod,
  mirrorMatches,
  mirrorPodFor,
  parseManifest,
  staticPod,
} from './static';

const MANIFEST = `apiVersion: v1
kind: Pod
metadata:
  name: etcd
  namespace: kube-system
spec:
  containers:
  - name: etcd
    image: registry.k8s.io/etcd:3.5.21-0
`;

describe('nodeagent/pods: static pods', () => {
  const opts = {
    nodeName: 'Node-1',
    source: 'file' as const,
    location: '/etc/kubernetes/manifests/etcd.yaml',
    now: Date.UTC(2025, 0, 1),
  };

  it('names, marks and defaults a static pod like the kubelet', () => {
    const [raw] = parseManifest(MANIFEST, 'etcd.yaml', false);
    const pod: any = staticPod(raw, opts);
    assert.equal(pod.metadata.name, 'etcd-node-1');
    assert.equal(pod.metadata.namespace, 'kube-system');
    assert.equal(pod.spec.nodeName, 'Node-1');
    assert.match(pod.metadata.uid, /^[0-9a-f]{32}$/);
    assert.equal(pod.metadata.annotations[CONFIG_HASH], pod.metadata.uid);
    assert.equal(pod.metadata.annotations[CONFIG_SOURCE], 'file');
    assert.deepEqual(pod.spec.tolerations, [{ operator: 'Exists', effect: 'NoExecute' }]);
    // API defaults applied.
    assert.equal(pod.spec.restartPolicy, 'Always');
    assert.equal(pod.spec.containers[0].imagePullPolicy, 'IfNotPresent');
    assert.equal(pod.status.phase, 'Pending');
    // The uid is stable for the same content and source, and changes with either.
    assert.equal((staticPod(raw, opts) as any).metadata.uid, pod.metadata.uid);
    assert.notEqual(
      (staticPod(raw, { ...opts, location: '/other.yaml' }) as any).metadata.uid,
      pod.metadata.uid,
    );
    const changed = structuredClone(raw);
    changed.spec.containers[0].image = 'registry.k8s.io/etcd:3.6.0-0';
    assert.notEqual((staticPod(changed, opts) as any).metadata.uid, pod.metadata.uid);
  });

  it('builds the mirror pod: the config.mirror annotation and the Node as owner', () => {
    const pod: any = staticPod(parseManifest(MANIFEST, 'x', false)[0], opts);
    const mirror: any = mirrorPodFor(pod, { name: 'Node-1', uid: 'node-uid' });
    assert.equal(mirror.metadata.uid, undefined);
    assert.equal(mirror.metadata.name, 'etcd-node-1');
    assert.equal(mirror.metadata.annotations[CONFIG_MIRROR], pod.metadata.uid);
    assert.deepEqual(mirror.metadata.ownerReferences, [
      { apiVersion: 'v1', kind: 'Node', name: 'Node-1', uid: 'node-uid', controller: true },
    ]);
    assert.ok(isMirrorPod(mirror));
    assert.ok(mirrorMatches(mirror, pod));
    assert.ok(!isMirrorPod(pod));
  });

  it('rejects what is not a pod', () => {
    assert.throws(
      () => parseManifest('kind: Service\napiVersion: v1\n', 'svc.yaml', false),
      /invalid pod: kind "Service"/,
    );
    assert.throws(
      () => parseManifest('kind: PodList\napiVersion: v1\nitems: []\n', 'l.yaml', false),
      /a file holds one Pod/,
    );
    assert.equal(
      parseManifest('kind: PodList\napiVersion: v1\nitems: [{kind: Pod, metadata: {name: a}}]\n', 'url', true)
        .length,
      1,
    );
    assert.throws(
      () => staticPod({ metadata: { name: 'x' }, spec: {} }, opts),
      /spec.containers: Required value/,
    );
  });

  it('reads a manifest directory, skipping dot files and files that do not parse', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tkube-static-'));
    try {
      writeFileSync(join(dir, 'etcd.yaml'), MANIFEST);
      writeFileSync(join(dir, '.hidden.yaml'), MANIFEST.replace('etcd', 'hidden'));
      writeFileSync(join(dir, 'broken.yaml'), 'kind: [');
      mkdirSync(join(dir, 'subdir'));
      const pods = readManifestPath(dir, 'n1', Date.now());
      assert.deepEqual(
        pods.map((p) => p.metadata.name),
        ['etcd-n1'],
      );
      assert.equal(readManifestPath(join(dir, 'etcd.yaml'), 'n1', Date.now()).length, 1);
      assert.equal(readManifestPath(join(dir, 'absent'), 'n1', Date.now()).length, 0);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
