// The garbage collector against a real apiserver: background, foreground
// (blocking dependents first) and orphan deletion, dangling owners, owners in
// another namespace, cluster-scoped owners and dependents.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { isNotFound, type Client, type KubeObject } from '../../../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';

const NS = 'gc-test';
const HOLD = 'test.tkube.io/hold';

describe('controller-manager: garbage collector', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;
  const cms = (ns = NS) => client.resource('configmaps').namespace(ns);

  const gone = (get: () => Promise<unknown>, what: string) =>
    waitUntil(
      async () => {
        try {
          await get();
          return false;
        } catch (err) {
          if (isNotFound(err)) return true;
          throw err;
        }
      },
      15_000,
      what,
    );

  const ref = (o: KubeObject, extra: Record<string, unknown> = {}) => ({
    apiVersion: o.apiVersion ?? 'v1',
    kind: o.kind ?? 'ConfigMap',
    name: o.metadata.name!,
    uid: o.metadata.uid!,
    ...extra,
  });

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, ['garbagecollector']);
    client = kcm.client;
    await client.resource('namespaces').create({ metadata: { name: NS } });
    await client.resource('namespaces').create({ metadata: { name: `${NS}-other` } });
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('deletes dependents in the background once the owner is gone', async () => {
    const owner = await cms().create({ metadata: { name: 'bg-owner' } });
    await cms().create({ metadata: { name: 'bg-dep1', ownerReferences: [ref(owner)] } });
    await cms().create({ metadata: { name: 'bg-dep2', ownerReferences: [ref(owner)] } });
    await cms().delete('bg-owner');
    await gone(() => cms().get('bg-dep1'), 'bg-dep1 to be collected');
    await gone(() => cms().get('bg-dep2'), 'bg-dep2 to be collected');
  });

  it('keeps a dependent with another live owner, dropping the reference to the gone one', async () => {
    const a = await cms().create({ metadata: { name: 'two-a' } });
    const b = await cms().create({ metadata: { name: 'two-b' } });
    await cms().create({ metadata: { name: 'two-dep', ownerReferences: [ref(a), ref(b)] } });
    await cms().delete('two-a');
    const dep = await waitUntil(async () => {
      const d = await cms().get('two-dep');
      return d.metadata.ownerReferences?.length === 1 ? d : undefined;
    });
    assert.equal(dep.metadata.ownerReferences![0].uid, b.metadata.uid);
  });

  it('foreground: deletes blocking dependents first and the owner only after them', async () => {
    const rs = await client
      .resource('replicasets.apps')
      .namespace(NS)
      .create({
        apiVersion: 'apps/v1',
        kind: 'ReplicaSet',
        metadata: { name: 'web' },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: 'web' } },
          template: {
            metadata: { labels: { app: 'web' } },
            spec: { containers: [{ name: 'c', image: 'busybox' }] },
          },
        },
      });
    const pods = client.resource('pods').namespace(NS);
    const pod = (name: string, finalizers?: string[]) => ({
      metadata: {
        name,
        labels: { app: 'web' },
        finalizers,
        ownerReferences: [ref(rs, { controller: true, blockOwnerDeletion: true })],
      },
      spec: { containers: [{ name: 'c', image: 'busybox' }] },
    });
    await pods.create(pod('web-1'));
    await pods.create(pod('web-held', [HOLD]));
    await client
      .resource('replicasets.apps')
      .namespace(NS)
      .delete('web', { propagationPolicy: 'Foreground' });

    // The owner waits, terminating with the foregroundDeletion finalizer, while the held pod blocks it.
    await gone(() => pods.get('web-1'), 'web-1 to be deleted');
    const held = await waitUntil(
      async () => {
        const p = await pods.get('web-held');
        return p.metadata.deletionTimestamp ? p : undefined;
      },
      15_000,
      'web-held to be terminating',
    );
    const owner = await client.resource('replicasets.apps').namespace(NS).get('web');
    assert.ok(owner.metadata.deletionTimestamp);
    assert.deepEqual(owner.metadata.finalizers, ['foregroundDeletion']);

    await pods.patch(held.metadata.name!, { metadata: { finalizers: null } }, 'merge');
    await gone(
      () => client.resource('replicasets.apps').namespace(NS).get('web'),
      'the ReplicaSet to be deleted',
    );
  });

  it('orphan: removes the owner references from dependents, then the owner', async () => {
    const owner = await cms().create({ metadata: { name: 'or-owner' } });
    await cms().create({ metadata: { name: 'or-dep1', ownerReferences: [ref(owner)] } });
    const other = await cms().create({ metadata: { name: 'or-other' } });
    await cms().create({ metadata: { name: 'or-dep2', ownerReferences: [ref(owner), ref(other)] } });
    await cms().delete('or-owner', { propagationPolicy: 'Orphan' });
    await gone(() => cms().get('or-owner'), 'the owner to be deleted');
    const d1 = await cms().get('or-dep1');
    assert.equal(d1.metadata.deletionTimestamp, undefined);
    assert.deepEqual(d1.metadata.ownerReferences ?? [], []);
    const d2 = await cms().get('or-dep2');
    assert.deepEqual(
      d2.metadata.ownerReferences?.map((r) => r.name),
      ['or-other'],
    );
    // Nothing collects them later.
    await new Promise((r) => setTimeout(r, 500));
    await cms().get('or-dep1');
  });

  it('deletes a dependent whose owner never existed (dangling uid)', async () => {
    await cms().create({
      metadata: {
        name: 'dangling',
        ownerReferences: [
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'ghost', uid: '00000000-0000-0000-0000-000000000001' },
        ],
      },
    });
    await gone(() => cms().get('dangling'), 'the dependent of a missing owner to be collected');
  });

  it('deletes a dependent whose owner lives in another namespace, with an OwnerRefInvalidNamespace event', async () => {
    const foreign = await cms(`${NS}-other`).create({ metadata: { name: 'foreign-owner' } });
    const dep = await cms().create({ metadata: { name: 'cross-ns', ownerReferences: [ref(foreign)] } });
    await gone(
      () => cms().get('cross-ns'),
      'the dependent naming an owner of another namespace to be collected',
    );
    await cms(`${NS}-other`).get('foreign-owner');
    const events = client.resource('events.events.k8s.io').namespace(NS);
    const ev = await waitUntil(async () =>
      (await events.list()).items.find(
        (e) => e.reason === 'OwnerRefInvalidNamespace' && e.regarding?.uid === dep.metadata.uid,
      ),
    );
    assert.equal(ev.type, 'Warning');
    assert.equal(ev.reportingController, 'garbage-collector-controller');
    assert.match(
      ev.note,
      /^ownerRef \[v1\/ConfigMap, namespace: gc-test, name: foreign-owner, uid: [-0-9a-f]+\] does not exist in namespace "gc-test"$/,
    );
  });

  it('collects namespaced dependents of a cluster-scoped owner', async () => {
    const roles = client.resource('clusterroles.rbac.authorization.k8s.io');
    const owner = await roles.create({ metadata: { name: 'gc-test-owner' }, rules: [] });
    await cms().create({
      metadata: {
        name: 'of-clusterrole',
        ownerReferences: [ref(owner, { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole' })],
      },
    });
    await new Promise((r) => setTimeout(r, 300));
    assert.ok(await cms().get('of-clusterrole'), 'kept while the owner lives');
    await roles.delete('gc-test-owner');
    await gone(
      () => cms().get('of-clusterrole'),
      'the dependent of the cluster-scoped owner to be collected',
    );
  });

  it('leaves a cluster-scoped dependent of a namespaced owner alone and reports it', async () => {
    const owner = await cms().create({ metadata: { name: 'ns-owner' } });
    const roles = client.resource('clusterroles.rbac.authorization.k8s.io');
    const dep = await roles.create({
      metadata: { name: 'gc-test-invalid-dep', ownerReferences: [ref(owner)] },
      rules: [],
    });
    const events = client.resource('events.events.k8s.io').namespace('default');
    await waitUntil(async () =>
      (await events.list()).items.find(
        (e) => e.reason === 'OwnerRefInvalidNamespace' && e.regarding?.uid === dep.metadata.uid,
      ),
    );
    assert.ok(await roles.get('gc-test-invalid-dep'));
    await roles.delete('gc-test-invalid-dep');
  });
});
