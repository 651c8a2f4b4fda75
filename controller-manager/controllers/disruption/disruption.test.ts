import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { replicaSetController } from '../replicaset/replicaset';
import { disruptionController } from './disruption';

describe('controllers/disruption', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let autoReady = true;

  before(async () => {
    env = await TestEnv.start();
    // Pods become Ready (no scheduler: the fake node agent runs unbound pods too).
    env.startKubelet({ unbound: true, ready: () => autoReady });
    await env.run(replicaSetController, disruptionController);
  });
  after(async () => env?.stop());

  const pdbs = () => env.client.resource('poddisruptionbudgets.policy').namespace('default');
  const pods = () => env.client.resource('pods').namespace('default');
  // The apiserver answers a refused eviction 429 with Retry-After: 10, which the client would retry
  // for 100 s; evictions here take the answer as it is.
  const evictions = () =>
    env.client.withOptions({ maxRetries: 0, qps: -1 }).resource('pods').namespace('default');
  const live = async (app: string) =>
    (await pods().list({ labelSelector: `app=${app}` })).items.filter((p) => !p.metadata.deletionTimestamp);
  const replicaSet = (name: string, replicas: number) =>
    env.client
      .resource('replicasets.apps')
      .namespace('default')
      .create({
        metadata: { name },
        spec: {
          replicas,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'c', image: 'i' }] },
          },
        },
      });
  const statusOf = async (name: string, want: (s: any) => boolean) =>
    waitFor(`pdb ${name} status`, async () => {
      const p = await pdbs().get(name);
      return p.status && want(p.status) ? (p as KubeObject) : undefined;
    });

  it('computes PDB status and lets exactly the allowed evictions through', async () => {
    await replicaSet('db', 3);
    await waitFor(
      '3 ready pods',
      async () => (await live('db')).filter((p) => p.status?.phase === 'Running').length === 3,
    );
    await pdbs().create({
      metadata: { name: 'db' },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'db' } } },
    });
    const pdb = await statusOf('db', (s) => s.currentHealthy === 3);
    assert.deepEqual(
      {
        currentHealthy: pdb.status.currentHealthy,
        desiredHealthy: pdb.status.desiredHealthy,
        expectedPods: pdb.status.expectedPods,
        disruptionsAllowed: pdb.status.disruptionsAllowed,
        observedGeneration: pdb.status.observedGeneration,
      },
      { currentHealthy: 3, desiredHealthy: 2, expectedPods: 3, disruptionsAllowed: 1, observedGeneration: 1 },
    );
    const cond = pdb.status.conditions.find((c: any) => c.type === 'DisruptionAllowed');
    assert.equal(cond.status, 'True');
    assert.equal(cond.reason, 'SufficientPods');

    // New pods stay unready for now: the replacement of an evicted pod does not count yet.
    autoReady = false;
    const [a, b] = await live('db');
    await evictions().evict(a.metadata.name!);
    const blocked = await statusOf('db', (s) => s.disruptionsAllowed === 0 && s.currentHealthy === 2);
    assert.equal(
      blocked.status.conditions.find((c: any) => c.type === 'DisruptionAllowed').reason,
      'InsufficientPods',
    );
    await assert.rejects(
      evictions().evict(b.metadata.name!),
      /Cannot evict pod as it would violate the pod's disruption budget/,
    );
    // The ReplicaSet's replacement becomes Ready: one eviction is allowed again.
    const replacement = await waitFor('replacement', async () =>
      (await live('db')).find((p) => p.status?.phase !== 'Running'),
    );
    await env.setPodRunning(replacement, true);
    await statusOf('db', (s) => s.currentHealthy === 3 && s.disruptionsAllowed === 1);
    await evictions().evict(b.metadata.name!);
    autoReady = true;
  });

  it('maxUnavailable as a percentage of the controller scale; no controller means SyncFailed', async () => {
    await replicaSet('web', 4);
    await waitFor(
      '4 ready pods',
      async () => (await live('web')).filter((p) => p.status?.phase === 'Running').length === 4,
    );
    await pdbs().create({
      metadata: { name: 'web' },
      spec: { maxUnavailable: '25%', selector: { matchLabels: { app: 'web' } } },
    });
    const pdb = await statusOf('web', (s) => s.expectedPods === 4 && s.currentHealthy === 4);
    assert.equal(pdb.status.desiredHealthy, 3);
    assert.equal(pdb.status.disruptionsAllowed, 1);

    // Pods without a controller are unmanaged: they are not expected.
    await pods().create({
      metadata: { name: 'lonely', labels: { app: 'lonely' } },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    await pdbs().create({
      metadata: { name: 'lonely' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'lonely' } } },
    });
    const lonely = await statusOf('lonely', (s) => s.observedGeneration === 1);
    assert.equal(lonely.status.expectedPods, 0);
    assert.equal(lonely.status.disruptionsAllowed, 0);
    await waitFor('UnmanagedPods event', () => env.eventsFor('lonely', 'UnmanagedPods').length > 0);
    // A controller the disruption controller cannot scale: SyncFailed.
    await pods().create({
      metadata: {
        name: 'odd',
        labels: { app: 'odd' },
        ownerReferences: [
          { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w', uid: 'u-1', controller: true },
        ],
      },
      spec: { containers: [{ name: 'c', image: 'i' }] },
    });
    await pdbs().create({
      metadata: { name: 'odd' },
      spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'odd' } } },
    });
    const failed = await waitFor('SyncFailed', async () => {
      const p = await pdbs().get('odd');
      const c = (p.status?.conditions ?? []).find((x: any) => x.type === 'DisruptionAllowed');
      return c?.reason === 'SyncFailed' ? c : undefined;
    });
    assert.equal(failed.status, 'False');
    assert.equal(failed.message, 'found no controllers for pod "odd"');
    await assert.rejects(evictions().evict('odd'), /disruption budget/);
  });
});
