import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { statefulSetController } from './statefulset';

describe('controllers/statefulset', function () {
  this.timeout(60_000);
  let env: TestEnv;
  /** Pods the fake node agent makes Ready on its own. */
  const autoReady = new Set<string>();

  before(async () => {
    env = await TestEnv.start();
    env.startKubelet({ unbound: true, ready: (p) => autoReady.has(p.metadata.labels?.app ?? '') });
    await env.run(statefulSetController);
  });
  after(async () => env?.stop());

  const sets = () => env.client.resource('statefulsets.apps').namespace('default');
  const pods = () => env.client.resource('pods').namespace('default');
  const podNames = async (app: string) =>
    (await pods().list({ labelSelector: `app=${app}` })).items
      .filter((p) => !p.metadata.deletionTimestamp)
      .map((p) => p.metadata.name!)
      .sort();
  const makeReady = async (name: string) => env.setPodRunning(await pods().get(name), true);
  const sts = (name: string, replicas: number, spec: Record<string, unknown> = {}): KubeObject => ({
    metadata: { name },
    spec: {
      replicas,
      serviceName: name,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: 'c', image: 'v1' }] } },
      ...spec,
    },
  });

  it('creates pods in ordinal order, each after the previous one is Ready, with stable identities', async () => {
    await sets().create(
      sts('web', 3, {
        // The mount names the claim template, not a template volume (the apiserver accepts that).
        template: {
          metadata: { labels: { app: 'web' } },
          spec: {
            containers: [{ name: 'c', image: 'v1', volumeMounts: [{ name: 'data', mountPath: '/data' }] }],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data' },
            spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
          },
        ],
      }),
    );
    await waitFor('web-0', async () => (await podNames('web')).includes('web-0'));
    await new Promise((r) => setTimeout(r, 300));
    assert.deepEqual(await podNames('web'), ['web-0'], 'web-1 waits for web-0');
    await makeReady('web-0');
    await waitFor('web-1', async () => (await podNames('web')).includes('web-1'));
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(await podNames('web'), ['web-0', 'web-1']);
    await makeReady('web-1');
    await waitFor('web-2', async () => (await podNames('web')).includes('web-2'));
    await makeReady('web-2');
    const st = await waitFor('status', async () => {
      const s = (await sets().get('web')).status;
      return s?.readyReplicas === 3 && s.currentReplicas === 3 ? s : undefined;
    });
    assert.equal(st.replicas, 3);
    assert.equal(st.updatedReplicas, 3);
    assert.equal(st.availableReplicas, 3);
    assert.equal(st.currentRevision, st.updateRevision);
    assert.match(st.currentRevision, /^web-[bcdfghjklmnpqrstvwxz2456789]+$/);
    const creates = env
      .eventsFor('web', 'SuccessfulCreate')
      .map((e) => e.note)
      .filter((n) => n.startsWith('create Pod'));
    assert.deepEqual(creates, [
      'create Pod web-0 in StatefulSet web successful',
      'create Pod web-1 in StatefulSet web successful',
      'create Pod web-2 in StatefulSet web successful',
    ]);
    const p1 = await pods().get('web-1');
    assert.equal(p1.metadata.labels!['statefulset.kubernetes.io/pod-name'], 'web-1');
    assert.equal(p1.metadata.labels!['apps.kubernetes.io/pod-index'], '1');
    assert.equal(p1.metadata.labels!['controller-revision-hash'], st.currentRevision);
    assert.equal(p1.spec.hostname, 'web-1');
    assert.equal(p1.spec.subdomain, 'web');
    assert.deepEqual(p1.spec.containers[0].volumeMounts[0], { name: 'data', mountPath: '/data' });
    assert.deepEqual(
      p1.spec.volumes.find((v: any) => v.name === 'data'),
      { name: 'data', persistentVolumeClaim: { claimName: 'data-web-1' } },
    );
    const claims = (
      await env.client.resource('persistentvolumeclaims').namespace('default').list()
    ).items.map((c) => c.metadata.name);
    assert.deepEqual(claims.sort(), ['data-web-0', 'data-web-1', 'data-web-2']);
    const revs = (await env.client.resource('controllerrevisions.apps').namespace('default').list()).items;
    const rev = revs.find((r) => r.metadata.name === st.currentRevision)!;
    assert.equal(rev.revision, 1);
    assert.equal(rev.metadata.ownerReferences![0].kind, 'StatefulSet');
  });

  it('rolls out a new revision from the highest ordinal down to the partition', async () => {
    autoReady.add('web');
    await sets().patch(
      'web',
      {
        spec: {
          updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } },
          template: { spec: { containers: [{ name: 'c', image: 'v2' }] } },
        },
      },
      'strategic',
    );
    const st = await waitFor('partitioned rollout', async () => {
      const s = (await sets().get('web')).status;
      return s?.updatedReplicas === 2 && s.readyReplicas === 3 && s.currentRevision !== s.updateRevision
        ? s
        : undefined;
    });
    const images = async () =>
      Object.fromEntries(
        (await pods().list({ labelSelector: 'app=web' })).items.map((p) => [
          p.metadata.name,
          p.spec.containers[0].image,
        ]),
      );
    assert.deepEqual(await images(), { 'web-0': 'v1', 'web-1': 'v2', 'web-2': 'v2' });
    const deletes = await waitFor('2 delete events', () => {
      const d = env.eventsFor('web', 'SuccessfulDelete').map((e) => e.note);
      return d.length >= 2 ? d : undefined;
    });
    assert.deepEqual(deletes, [
      'delete Pod web-2 in StatefulSet web successful',
      'delete Pod web-1 in StatefulSet web successful',
    ]);
    assert.equal((await pods().get('web-2')).metadata.labels!['controller-revision-hash'], st.updateRevision);

    await sets().patch('web', { spec: { updateStrategy: { rollingUpdate: { partition: 0 } } } }, 'strategic');
    const done = await waitFor('complete rollout', async () => {
      const s = (await sets().get('web')).status;
      return s?.updatedReplicas === 3 && s.readyReplicas === 3 && s.currentRevision === s.updateRevision
        ? s
        : undefined;
    });
    assert.equal(done.currentReplicas, 3);
    assert.deepEqual(await images(), { 'web-0': 'v2', 'web-1': 'v2', 'web-2': 'v2' });
  });

  it('scales down from the highest ordinal, one at a time', async () => {
    const before = env.eventsFor('web', 'SuccessfulDelete').length;
    await sets().patch('web', { spec: { replicas: 1 } }, 'merge');
    await waitFor('1 pod', async () => (await podNames('web')).length === 1);
    assert.deepEqual(await podNames('web'), ['web-0']);
    const deletes = await waitFor('2 delete events', () => {
      const d = env
        .eventsFor('web', 'SuccessfulDelete')
        .slice(before)
        .map((e) => e.note);
      return d.length === 2 ? d : undefined;
    });
    assert.deepEqual(deletes, [
      'delete Pod web-2 in StatefulSet web successful',
      'delete Pod web-1 in StatefulSet web successful',
    ]);
    await waitFor('status replicas 1', async () => (await sets().get('web')).status?.replicas === 1);
  });

  it('Parallel creates all pods at once; OnDelete replaces only deleted pods', async () => {
    await sets().create(
      sts('par', 3, { podManagementPolicy: 'Parallel', updateStrategy: { type: 'OnDelete' } }),
    );
    await waitFor('3 pods without readiness', async () => (await podNames('par')).length === 3);
    autoReady.add('par');
    for (const n of ['par-0', 'par-1', 'par-2']) await makeReady(n);
    await waitFor('ready', async () => (await sets().get('par')).status?.readyReplicas === 3);
    await sets().patch(
      'par',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2' }] } } } },
      'strategic',
    );
    await waitFor('new update revision', async () => {
      const s = (await sets().get('par')).status;
      return s?.updateRevision && s.updateRevision !== s.currentRevision && s.observedGeneration === 2;
    });
    await new Promise((r) => setTimeout(r, 200));
    const imgs = (await pods().list({ labelSelector: 'app=par' })).items.map(
      (p) => p.spec.containers[0].image,
    );
    assert.deepEqual(imgs, ['v1', 'v1', 'v1'], 'OnDelete does not replace pods');
    await pods().delete('par-1');
    await waitFor('par-1 recreated with v2', async () => {
      try {
        const p = await pods().get('par-1');
        return !p.metadata.deletionTimestamp && p.spec.containers[0].image === 'v2';
      } catch {
        return false;
      }
    });
    const s = await waitFor('updatedReplicas 1', async () => {
      const st = (await sets().get('par')).status;
      return st?.updatedReplicas === 1 ? st : undefined;
    });
    assert.equal(s.currentReplicas, 2);
  });
  it('numbers ControllerRevisions as int64: the next after 3546343826724306001 is ...002', async () => {
    autoReady.add('int64');
    await sets().create(sts('int64', 1, { podManagementPolicy: 'Parallel' }));
    const revisions = env.client.resource('controllerrevisions.apps').namespace('default');
    const first = await waitFor('first revision', async () => {
      const s = (await sets().get('int64')).status;
      return s?.updateRevision ? s.updateRevision : undefined;
    });
    // Past 2^53 a float cannot tell this revision from its successor.
    await revisions.patch(first, { revision: 3546343826724306001n }, 'merge');
    await sets().patch(
      'int64',
      { spec: { template: { spec: { containers: [{ name: 'c', image: 'v2' }] } } } },
      'strategic',
    );
    const next = await waitFor('second revision', async () => {
      const s = (await sets().get('int64')).status;
      return s?.updateRevision && s.updateRevision !== first ? s.updateRevision : undefined;
    });
    assert.equal((await revisions.get(next)).revision, 3546343826724306002n);
    assert.equal((await revisions.get(first)).revision, 3546343826724306001n);
  });
});
