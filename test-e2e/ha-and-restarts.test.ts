// Several apiservers on one etcd, and clients that live through an apiserver restart.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { rmSync } from 'node:fs';
import { etcdAvailable, startEtcd, type EtcdServer } from '../apiserver/storage/etcd3/etcd-server';
import { Client, loadKubeconfig } from '../shared/client';
import { SharedInformerFactory, metaNamespaceKey } from '../shared/informers';
import { freePort, startAPIServerProcess, tempDir, type APIServerProc } from './support/processes';
import { waitUntil } from '../shared/cluster/process';

describe('high availability and restarts', function () {
  this.timeout(120_000);
  const cleanups: (() => Promise<void>)[] = [];
  after(async () => {
    for (const c of cleanups.reverse()) await c().catch(() => {});
  });

  it("serves one store from two apiservers on one etcd: watches see the other's writes, both are kubernetes endpoints", async function () {
    if (!etcdAvailable()) this.skip();
    const etcd: EtcdServer = await startEtcd();
    cleanups.push(() => etcd.stop());
    const dir = tempDir('ha');
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const certs = join(dir, 'certs');
    const start = async (name: string): Promise<APIServerProc> => {
      const p = await startAPIServerProcess({
        dir: join(dir, name),
        args: ['--etcd-servers', etcd.endpoint, '--cert-dir', certs, '--etcd-compaction-interval', '0'],
      });
      cleanups.push(() => p.stop().then(() => {}));
      return p;
    };
    const a = await start('a');
    const b = await start('b');
    const ca = Client.create(loadKubeconfig(a.kubeconfig));
    const cb = Client.create(loadKubeconfig(b.kubeconfig));
    cleanups.push(() => ca.close());
    cleanups.push(() => cb.close());

    const seen: string[] = [];
    const watch = await cb.resource('configmaps').namespace('default').watch({ resourceVersion: '0' });
    void (async () => {
      for await (const ev of watch) seen.push(`${ev.type} ${ev.object.metadata?.name}`);
    })().catch(() => {});
    await ca
      .resource('configmaps')
      .namespace('default')
      .create({ metadata: { name: 'from-a' } });
    await waitUntil(
      async () => seen.includes('ADDED from-a'),
      10_000,
      'the write on A seen by the watch on B',
    );
    watch.stop();

    const ports = await waitUntil(
      async () => {
        const ep = await cb.resource('endpoints').namespace('default').get('kubernetes');
        const p = (ep.subsets ?? []).flatMap((s: any) => s.ports.map((x: any) => x.port)).sort();
        return p.length === 2 ? p : undefined;
      },
      30_000,
      'both apiservers in the kubernetes endpoints',
    );
    assert.deepEqual(ports, [a.port, b.port].sort());
  });

  it('keeps informers whole across an apiserver restart: no event is missed', async () => {
    const dir = tempDir('informer-restart');
    cleanups.push(async () => rmSync(dir, { recursive: true, force: true }));
    const port = await freePort();
    let srv = await startAPIServerProcess({ dir, port });
    const client = Client.create(loadKubeconfig(srv.kubeconfig), { maxRetries: 0 });
    cleanups.push(() => client.close());
    const factory = new SharedInformerFactory(client);
    const informer = factory.forResource('configmaps', { namespace: 'default' });
    const events: string[] = [];
    informer.addEventHandler({
      onAdd: (o) => events.push(`add ${metaNamespaceKey(o)}`),
      onUpdate: (_old, o) => events.push(`update ${metaNamespaceKey(o)} ${o.data?.v ?? ''}`),
      onDelete: (o) => events.push(`delete ${metaNamespaceKey(o)}`),
    });
    const ac = new AbortController();
    cleanups.push(async () => ac.abort());
    factory.start(ac.signal);
    await factory.waitForCacheSync(ac.signal);
    const cms = client.resource('configmaps').namespace('default');
    await cms.create({ metadata: { name: 'before' } });
    await waitUntil(async () => events.includes('add default/before'), 10_000, 'first event');

    assert.equal(await srv.stop('SIGTERM'), 0);
    srv = await startAPIServerProcess({ dir, port });
    cleanups.push(() => srv.stop().then(() => {}));
    await cms.create({ metadata: { name: 'after' } });
    await cms.patch('after', { data: { v: '1' } }, 'merge');
    await cms.delete('before');
    await waitUntil(
      async () =>
        events.includes('add default/after') &&
        events.includes('update default/after 1') &&
        events.includes('delete default/before'),
      60_000,
      'every change after the restart',
    );
    const mine = events.filter((e) => /before|after/.test(e));
    assert.deepEqual(mine, [
      'add default/before',
      'add default/after',
      'update default/after 1',
      'delete default/before',
    ]);
  });
});
