import assert from 'node:assert/strict';
import { isStatusError } from '../api/status';
import { asPartialObjectMetadata, asPartialObjectMetadataList, partialWatchEncoder } from './partial';

const deployment = (name: string) => ({
  apiVersion: 'apps/v1',
  kind: 'Deployment',
  metadata: {
    name,
    namespace: 'default',
    uid: `uid-${name}`,
    resourceVersion: '7',
    generation: 2,
    creationTimestamp: '2024-05-01T11:00:00Z',
    labels: { app: name },
    annotations: { 'deployment.kubernetes.io/revision': '2' },
    ownerReferences: [],
    finalizers: ['example.com/keep'],
    managedFields: [{ manager: 'kubectl-client-side-apply', operation: 'Update', apiVersion: 'apps/v1' }],
  },
  spec: { replicas: 2 },
  status: {},
});

describe('PartialObjectMetadata', () => {
  it('one object: kind, apiVersion and the whole metadata', () => {
    const d = deployment('web');
    const p = asPartialObjectMetadata(d);
    assert.deepEqual(p, {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: d.metadata,
    });
    assert.deepEqual(Object.keys(p), ['kind', 'apiVersion', 'metadata']);
    assert.equal(asPartialObjectMetadata(d, 'v1beta1').apiVersion, 'meta.k8s.io/v1beta1');
  });

  it('a list: items and list metadata, v1 and v1beta1', () => {
    const list = {
      apiVersion: 'apps/v1',
      kind: 'DeploymentList',
      metadata: { resourceVersion: '99', continue: 'next', remainingItemCount: 3 },
      items: [deployment('a'), deployment('b')],
    };
    const p = asPartialObjectMetadataList(list);
    assert.equal(p.kind, 'PartialObjectMetadataList');
    assert.equal(p.apiVersion, 'meta.k8s.io/v1');
    assert.deepEqual(p.metadata, { resourceVersion: '99', continue: 'next', remainingItemCount: 3 });
    assert.deepEqual(
      p.items.map((i) => [i.kind, i.apiVersion, i.metadata.name]),
      [
        ['PartialObjectMetadata', 'meta.k8s.io/v1', 'a'],
        ['PartialObjectMetadata', 'meta.k8s.io/v1', 'b'],
      ],
    );
    const beta = asPartialObjectMetadataList(
      { ...list, metadata: { resourceVersion: '99' }, items: [] },
      'v1beta1',
    );
    assert.deepEqual(beta, {
      kind: 'PartialObjectMetadataList',
      apiVersion: 'meta.k8s.io/v1beta1',
      metadata: { resourceVersion: '99' },
      items: [],
    });
  });

  it('the wrong shape is a 406 with the Kubernetes message', () => {
    assert.throws(
      () => asPartialObjectMetadata({ apiVersion: 'v1', kind: 'PodList', metadata: {}, items: [] }),
      (e: unknown) =>
        isStatusError(e, 'NotAcceptable') &&
        e.code === 406 &&
        e.message ===
          'you requested PartialObjectMetadata, but the requested object is a list (*core.PodList)',
    );
    assert.throws(
      () => asPartialObjectMetadataList(deployment('web')),
      (e: unknown) =>
        isStatusError(e, 'NotAcceptable') &&
        e.message ===
          'you requested PartialObjectMetadataList, but the requested object is not a list (*apps.Deployment)',
    );
    assert.throws(
      () =>
        asPartialObjectMetadataList({ apiVersion: 'example.com/v1', kind: 'Widget', metadata: {} }, 'v1', {
          custom: true,
        }),
      /\(\*unstructured\.Unstructured\)$/,
    );
  });

  it('watch events: one PartialObjectMetadata per event; List or Status objects pass as they are', () => {
    const d = deployment('web');
    assert.deepEqual(partialWatchEncoder('PartialObjectMetadata')(d), {
      kind: 'PartialObjectMetadata',
      apiVersion: 'meta.k8s.io/v1',
      metadata: d.metadata,
    });
    assert.equal(partialWatchEncoder('PartialObjectMetadataList')(d), d);
    const status = { kind: 'Status', apiVersion: 'v1', code: 410 };
    assert.equal(partialWatchEncoder('PartialObjectMetadata')(status), status);
  });
});
