import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { jobControllerWith, JOB_TRACKING_FINALIZER } from './job';
import { formatIndexes, parseIndexes } from './indexes';

describe('controllers/job', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    await env.run(jobControllerWith({ backoffMs: 100 }));
  });
  after(async () => env?.stop());

  const jobs = () => env.client.resource('jobs.batch').namespace('default');
  const pods = () => env.client.resource('pods').namespace('default');
  const podsOf = async (job: string) => (await pods().list({ labelSelector: `job-name=${job}` })).items;
  const activeOf = async (job: string) =>
    (await podsOf(job)).filter(
      (p) => !p.metadata.deletionTimestamp && !['Succeeded', 'Failed'].includes(p.status?.phase),
    );
  const job = (name: string, spec: Record<string, unknown>): KubeObject => ({
    metadata: { name },
    spec: {
      template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } },
      ...spec,
    },
  });
  const condition = (j: KubeObject, type: string) =>
    (j.status?.conditions ?? []).find((c: any) => c.type === type);

  it('runs completions with parallelism, tracks pods with the finalizer, and completes', async () => {
    await jobs().create(job('work', { completions: 3, parallelism: 2 }));
    const first = await waitFor('2 active pods', async () => {
      const a = await activeOf('work');
      return a.length === 2 ? a : undefined;
    });
    for (const p of first) {
      assert.ok(p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER));
      assert.match(p.metadata.name!, /^work-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
      assert.equal(p.metadata.ownerReferences![0].kind, 'Job');
    }
    await waitFor('active=2 in status', async () => (await jobs().get('work')).status?.active === 2);
    assert.ok((await jobs().get('work')).status.startTime);
    await env.setPodFinished(first[0], 'Succeeded');
    await env.setPodFinished(first[1], 'Succeeded');
    const third = await waitFor('the third pod', async () => {
      const a = await activeOf('work');
      return a.length === 1 ? a[0] : undefined;
    });
    await env.setPodFinished(third, 'Succeeded');
    const done = await waitFor('Complete', async () => {
      const j = await jobs().get('work');
      return condition(j, 'Complete')?.status === 'True' ? j : undefined;
    });
    assert.equal(done.status.succeeded, 3);
    assert.equal(done.status.failed ?? 0, 0); // omitempty: Go leaves out a zero
    assert.equal(done.status.active ?? 0, 0); // omitempty: Go leaves out a zero
    assert.ok(done.status.completionTime);
    assert.deepEqual(done.status.uncountedTerminatedPods, {});
    for (const p of await podsOf('work'))
      assert.ok(!p.metadata.finalizers?.includes(JOB_TRACKING_FINALIZER), 'finalizer removed');
    await env.expectEvent('work', 'Completed', (n) => n === 'Job completed');
    await waitFor('3 create events', () => env.eventsFor('work', 'SuccessfulCreate').length === 3);
  });

  it('counts failures, waits the backoff, and fails past backoffLimit', async () => {
    await jobs().create(job('flaky', { backoffLimit: 1 }));
    const p1 = await waitFor('first pod', async () => (await activeOf('flaky'))[0]);
    await env.setPodFinished(p1, 'Failed');
    const p2 = await waitFor('replacement after backoff', async () => {
      const a = await activeOf('flaky');
      return a.length === 1 && a[0].metadata.name !== p1.metadata.name ? a[0] : undefined;
    });
    await waitFor('failed=1', async () => (await jobs().get('flaky')).status?.failed === 1);
    await env.setPodFinished(p2, 'Failed');
    const j = await waitFor('Failed', async () => {
      const cur = await jobs().get('flaky');
      return condition(cur, 'Failed')?.status === 'True' ? cur : undefined;
    });
    const c = condition(j, 'Failed');
    assert.equal(c.reason, 'BackoffLimitExceeded');
    assert.equal(c.message, 'Job has reached the specified backoff limit');
    assert.equal(j.status.failed, 2);
    assert.equal(j.status.active ?? 0, 0); // omitempty: Go leaves out a zero
    assert.equal(j.status.completionTime, undefined);
    await env.expectEvent(
      'flaky',
      'BackoffLimitExceeded',
      (n) => n === 'Job has reached the specified backoff limit',
    );
  });

  it('Indexed: one pod per completion index, completedIndexes, hostname and env', async () => {
    await jobs().create(job('idx', { completions: 3, parallelism: 3, completionMode: 'Indexed' }));
    const ps = await waitFor('3 pods', async () => {
      const a = await activeOf('idx');
      return a.length === 3 ? a : undefined;
    });
    const byIndex = new Map(
      ps.map((p) => [p.metadata.annotations!['batch.kubernetes.io/job-completion-index'], p]),
    );
    assert.deepEqual([...byIndex.keys()].sort(), ['0', '1', '2']);
    const p1 = byIndex.get('1')!;
    assert.equal(p1.metadata.labels!['batch.kubernetes.io/job-completion-index'], '1');
    assert.equal(p1.spec.hostname, 'idx-1');
    assert.match(p1.metadata.name!, /^idx-1-/);
    assert.deepEqual(p1.spec.containers[0].env, [
      {
        name: 'JOB_COMPLETION_INDEX',
        valueFrom: {
          fieldRef: {
            apiVersion: 'v1',
            fieldPath: "metadata.annotations['batch.kubernetes.io/job-completion-index']",
          },
        },
      },
    ]);
    await env.setPodFinished(p1, 'Succeeded');
    await waitFor(
      'completedIndexes 1',
      async () => (await jobs().get('idx')).status?.completedIndexes === '1',
    );
    // A failed index is retried with the same index.
    await env.setPodFinished(byIndex.get('0')!, 'Failed');
    const retry = await waitFor('index 0 again', async () => {
      const a = await activeOf('idx');
      return a.find((p) => p.metadata.annotations!['batch.kubernetes.io/job-completion-index'] === '0');
    });
    await env.setPodFinished(retry, 'Succeeded');
    await env.setPodFinished(byIndex.get('2')!, 'Succeeded');
    const j = await waitFor('complete', async () => {
      const cur = await jobs().get('idx');
      return condition(cur, 'Complete') ? cur : undefined;
    });
    assert.equal(j.status.completedIndexes, '0-2');
    assert.equal(j.status.succeeded, 3);
    assert.equal(j.status.failed, 1);
  });

  it('fails a Job past activeDeadlineSeconds and deletes its pods', async () => {
    await jobs().create(job('slow', { activeDeadlineSeconds: 30, parallelism: 2, completions: 2 }));
    await waitFor('2 pods', async () => (await activeOf('slow')).length === 2);
    env.clock.advance(31_000);
    await jobs().patch('slow', { metadata: { annotations: { poke: '1' } } }, 'merge');
    const j = await waitFor('DeadlineExceeded', async () => {
      const cur = await jobs().get('slow');
      return condition(cur, 'Failed')?.reason === 'DeadlineExceeded' ? cur : undefined;
    });
    assert.equal(condition(j, 'Failed').message, 'Job was active longer than specified deadline');
    assert.equal(j.status.active ?? 0, 0); // omitempty: Go leaves out a zero
    await waitFor('pods gone', async () => (await podsOf('slow')).length === 0);
    assert.equal(j.status.failed ?? 0, 0, 'pods the controller deleted are not failures');
  });

  it('suspend and resume', async () => {
    await jobs().create(job('sus', { suspend: true, parallelism: 2, completions: 4 }));
    const j = await waitFor('Suspended', async () => {
      const cur = await jobs().get('sus');
      return condition(cur, 'Suspended')?.status === 'True' ? cur : undefined;
    });
    assert.equal(condition(j, 'Suspended').reason, 'JobSuspended');
    assert.equal(j.status.startTime, undefined);
    assert.equal((await podsOf('sus')).length, 0);
    await jobs().patch('sus', { spec: { suspend: false } }, 'merge');
    await waitFor('2 pods after resume', async () => (await activeOf('sus')).length === 2);
    const r = await waitFor('Resumed', async () => {
      const cur = await jobs().get('sus');
      return condition(cur, 'Suspended')?.status === 'False' ? cur : undefined;
    });
    assert.equal(condition(r, 'Suspended').reason, 'JobResumed');
    assert.ok(r.status.startTime);
    await jobs().patch('sus', { spec: { suspend: true } }, 'merge');
    await waitFor('pods deleted on suspend', async () => (await podsOf('sus')).length === 0);
    const s = await jobs().get('sus');
    assert.equal(s.status.failed ?? 0, 0);
  });

  it('formats completed indexes', () => {
    assert.equal(formatIndexes(new Set([0, 1, 2, 4, 6, 7])), '0-2,4,6-7');
    assert.deepEqual([...parseIndexes('0-2,4,9', 5)].sort(), [0, 1, 2, 4]);
  });
});
