// The namespace controller against a real apiserver: a deleted namespace is
// emptied (built-in and custom resources), reports what remains in its
// conditions while an object's finalizer holds it, and is removed once that
// finalizer goes.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { Discovery, isNotFound, type Client, type KubeObject } from '../../../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';
import type { Condition } from '../../app/controller-util';
import { preferredNamespacedResources } from './deleter';

const NS = 'doomed';
const HOLD = 'test.tkube.io/hold';

const gizmoCRD = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'gizmos.test.tkube.io' },
  spec: {
    group: 'test.tkube.io',
    scope: 'Namespaced',
    names: { plural: 'gizmos', singular: 'gizmo', kind: 'Gizmo' },
    versions: [
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
      },
    ],
  },
};

describe('controller-manager: namespace controller', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, ['namespace']);
    client = kcm.client;
    await client.resource('customresourcedefinitions.apiextensions.k8s.io').create(gizmoCRD);
    await waitUntil(async () => {
      const crd = await client
        .resource('customresourcedefinitions.apiextensions.k8s.io')
        .get(gizmoCRD.metadata.name);
      return crd.status?.conditions?.some((c: Condition) => c.type === 'Established' && c.status === 'True');
    });
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('finds namespaced resources of every group through discovery, custom ones included', async () => {
    const resources = await waitUntil(async () => {
      const rs = await preferredNamespacedResources(new Discovery(client.rest));
      return rs.some((r) => r.resource === 'gizmos') ? rs : undefined;
    });
    const names = resources.map((r) => `${r.resource}.${r.group}`);
    for (const want of [
      'pods.',
      'configmaps.',
      'secrets.',
      'deployments.apps',
      'leases.coordination.k8s.io',
      'gizmos.test.tkube.io',
    ])
      assert.ok(names.includes(want), `${want} in ${names.join(' ')}`);
    assert.ok(!names.includes('nodes.'), 'cluster-scoped resources are left out');
  });

  it('empties a deleted namespace, reports what remains, and removes it once the last finalizer goes', async () => {
    await client.resource('namespaces').create({ metadata: { name: NS } });
    const cms = client.resource('configmaps').namespace(NS);
    await cms.create({ metadata: { name: 'plain' } });
    await cms.create({ metadata: { name: 'held', finalizers: [HOLD] } });
    await client
      .resource('secrets')
      .namespace(NS)
      .create({ metadata: { name: 's' }, stringData: { a: 'b' } });
    await client
      .resource('pods')
      .namespace(NS)
      .create({ metadata: { name: 'p' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } });
    const gizmos = client.resource({
      group: 'test.tkube.io',
      version: 'v1',
      resource: 'gizmos',
      namespaced: true,
      kind: 'Gizmo',
    });
    await gizmos
      .namespace(NS)
      .create({ apiVersion: 'test.tkube.io/v1', kind: 'Gizmo', metadata: { name: 'g' }, spec: { x: 1 } });

    await client.resource('namespaces').delete(NS);
    const ns = await waitUntil(
      async () => {
        const n = await client.resource('namespaces').get(NS);
        return n.status?.conditions?.some(
          (c: Condition) => c.type === 'NamespaceContentRemaining' && c.status === 'True',
        )
          ? n
          : undefined;
      },
      20_000,
      'the NamespaceContentRemaining condition',
    );
    assert.equal(ns.status.phase, 'Terminating');
    assert.deepEqual(ns.spec.finalizers, ['kubernetes']);
    const byType = new Map<string, Condition>(ns.status.conditions.map((c: Condition) => [c.type, c]));
    const summary = (t: string) => {
      const c = byType.get(t)!;
      return [c.status, c.reason, c.message];
    };
    assert.deepEqual(summary('NamespaceDeletionDiscoveryFailure'), [
      'False',
      'ResourcesDiscovered',
      'All resources successfully discovered',
    ]);
    assert.deepEqual(summary('NamespaceDeletionGroupVersionParsingFailure'), [
      'False',
      'ParsedGroupVersions',
      'All legacy kube types successfully parsed',
    ]);
    assert.deepEqual(summary('NamespaceDeletionContentFailure'), [
      'False',
      'ContentDeleted',
      'All content successfully deleted, may be waiting on finalization',
    ]);
    assert.deepEqual(summary('NamespaceContentRemaining'), [
      'True',
      'SomeResourcesRemain',
      'Some resources are remaining: configmaps. has 1 resource instances',
    ]);
    assert.deepEqual(summary('NamespaceFinalizersRemaining'), [
      'True',
      'SomeFinalizerRemain',
      `Some finalizers are remaining: ${HOLD} in 1 resource instances`,
    ]);
    for (const c of ns.status.conditions as Condition[])
      assert.match(c.lastTransitionTime!, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // Everything else is gone; the held ConfigMap is terminating.
    const left = await cms.list();
    assert.deepEqual(
      left.items.map((c: KubeObject) => [c.metadata.name, !!c.metadata.deletionTimestamp]),
      [['held', true]],
    );
    assert.equal((await client.resource('secrets').namespace(NS).list()).items.length, 0);
    assert.equal((await client.resource('pods').namespace(NS).list()).items.length, 0);
    assert.equal((await gizmos.namespace(NS).list()).items.length, 0);

    // The finalizer's owner lets go: the namespace finishes (content rechecked after estimate/2+1 = 8 s).
    await cms.patch('held', { metadata: { finalizers: null } }, 'merge');
    await waitUntil(
      async () => {
        try {
          await client.resource('namespaces').get(NS);
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      20_000,
      'the namespace to be removed',
    );
  });
});
