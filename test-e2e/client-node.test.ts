// The official JavaScript client (@kubernetes/client-node) against tkube: its
// informer lists then watches and must see every change.
import assert from 'node:assert/strict';
import { startAPIServerProcess, type APIServerProc } from './support/processes';
import { waitUntil } from '../shared/cluster/process';

describe('@kubernetes/client-node informer', function () {
  this.timeout(60_000);
  let srv: APIServerProc;

  before(async () => {
    srv = await startAPIServerProcess();
  });
  after(async () => {
    await srv?.cleanup();
  });

  it('lists then watches and sees every add, update and delete', async () => {
    const k8s = await import('@kubernetes/client-node');
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(srv.kubeconfig);
    const core = kc.makeApiClient(k8s.CoreV1Api);
    for (let i = 0; i < 3; i++)
      await core.createNamespacedConfigMap({
        namespace: 'default',
        body: { metadata: { name: `pre-${i}` }, data: { i: String(i) } },
      });

    const seen: string[] = [];
    const informer = k8s.makeInformer(kc, '/api/v1/namespaces/default/configmaps', () =>
      core.listNamespacedConfigMap({ namespace: 'default' }),
    );
    informer.on('add', (o: any) => seen.push(`add ${o.metadata.name}`));
    informer.on('update', (o: any) => seen.push(`update ${o.metadata.name} ${o.data?.v ?? ''}`));
    informer.on('delete', (o: any) => seen.push(`delete ${o.metadata.name}`));
    await informer.start();
    try {
      await waitUntil(
        async () => seen.filter((s) => s.startsWith('add pre-')).length === 3,
        10_000,
        'initial list',
      );
      await core.createNamespacedConfigMap({ namespace: 'default', body: { metadata: { name: 'live' } } });
      for (let v = 1; v <= 3; v++) {
        await core.patchNamespacedConfigMap(
          { namespace: 'default', name: 'live', body: { data: { v: String(v) } } },
          k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
        );
      }
      await core.deleteNamespacedConfigMap({ namespace: 'default', name: 'live' });
      await waitUntil(async () => seen.includes('delete live'), 10_000, 'delete event');
      assert.deepEqual(
        seen.filter((s) => s.includes('live')),
        ['add live', 'update live 1', 'update live 2', 'update live 3', 'delete live'],
      );
      const list = informer.list('default');
      assert.deepEqual(list.map((o: any) => o.metadata.name).sort(), ['pre-0', 'pre-1', 'pre-2']);
    } finally {
      await informer.stop();
    }
  });
});
