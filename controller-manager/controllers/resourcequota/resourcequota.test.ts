import assert from 'node:assert/strict';
import { TestEnv, waitFor } from '../testing';
import { resourceQuotaController } from './resourcequota';
import { deleteWith } from '../util/status';

describe('controllers/resourcequota', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start();
    await env.run(resourceQuotaController);
    await env.createNamespace('quota');
  });
  after(async () => env?.stop());

  const quotas = () => env.client.resource('resourcequotas').namespace('quota');
  const pods = () => env.client.resource('pods').namespace('quota');
  const pod = (name: string, cpu: string, memory: string) => ({
    metadata: { name },
    spec: {
      containers: [
        { name: 'c', image: 'img', resources: { requests: { cpu, memory }, limits: { cpu, memory } } },
      ],
    },
  });
  const used = async () => (await quotas().get('q')).status?.used ?? {};

  it('mirrors spec.hard and counts what the namespace holds', async () => {
    await env.client
      .resource('configmaps')
      .namespace('quota')
      .create({ metadata: { name: 'cm1' } });
    await env.client
      .resource('deployments.apps')
      .namespace('quota')
      .create({
        metadata: { name: 'd1' },
        spec: {
          selector: { matchLabels: { a: 'b' } },
          template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
        },
      });
    await quotas().create({
      metadata: { name: 'q' },
      spec: {
        hard: {
          pods: '3',
          'requests.cpu': '1',
          'requests.memory': '1Gi',
          'limits.cpu': '2',
          'count/configmaps': '10',
          services: '2',
          'count/deployments.apps': '2',
        },
      },
    });
    const st = await waitFor('status', async () => {
      const q = await quotas().get('q');
      return q.status?.used ? q.status : undefined;
    });
    assert.deepEqual(st.hard, {
      'count/configmaps': '10',
      'count/deployments.apps': '2',
      'limits.cpu': '2',
      pods: '3',
      'requests.cpu': '1',
      'requests.memory': '1Gi',
      services: '2',
    });
    assert.deepEqual(st.used, {
      'count/configmaps': '1',
      'count/deployments.apps': '1',
      'limits.cpu': '0',
      pods: '0',
      'requests.cpu': '0',
      'requests.memory': '0',
      services: '0',
    });
  });

  it('keeps admission consistent: charges on create, frees on delete and when pods finish', async () => {
    await pods().create(pod('p1', '400m', '256Mi'));
    await pods().create(pod('p2', '400m', '256Mi'));
    await waitFor('charged', async () => (await used())['requests.cpu'] === '800m');
    await assert.rejects(
      pods().create(pod('p3', '400m', '256Mi')),
      /exceeded quota: q, requested: requests.cpu=400m, used: requests.cpu=800m, limited: requests.cpu=1/,
    );
    await deleteWith(pods(), 'p1', { gracePeriodSeconds: 0 });
    const u = await waitFor('freed', async () => {
      const x = await used();
      return x['requests.cpu'] === '400m' ? x : undefined;
    });
    assert.equal(u.pods, '1');
    assert.equal(u['requests.memory'], '256Mi');
    await pods().create(pod('p3', '400m', '256Mi'));
    // p2 finishes: its compute resources are free again.
    await pods().patch('p2', { status: { phase: 'Succeeded' } }, 'merge', { subresource: 'status' });
    const after = await waitFor('finished pod freed', async () => {
      const x = await used();
      return x.pods === '1' && x['requests.cpu'] === '400m' ? x : undefined;
    });
    assert.equal(after['limits.cpu'], '400m');
  });

  it('scopes: a BestEffort quota counts only best-effort pods', async () => {
    await env.createNamespace('scoped');
    const q = env.client.resource('resourcequotas').namespace('scoped');
    const p = env.client.resource('pods').namespace('scoped');
    await q.create({ metadata: { name: 'be' }, spec: { hard: { pods: '5' }, scopes: ['BestEffort'] } });
    await p.create({ metadata: { name: 'plain' }, spec: { containers: [{ name: 'c', image: 'i' }] } });
    await p.create(pod('sized', '100m', '64Mi'));
    await deleteWith(p, 'plain', { gracePeriodSeconds: 0 });
    await waitFor('be used recomputed', async () => (await q.get('be')).status?.used?.pods === '0');
  });
});
