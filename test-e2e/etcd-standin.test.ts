// tkube's apiserver (the executable) on tkube's etcd (the executable) as its
// --etcd-servers: CRUD and a watch through the API, then both restarted on their data
// with the objects and resourceVersions kept.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client, loadKubeconfig } from '../shared/client';
import { waitUntil } from '../shared/cluster/process';
import { type EtcdServer, startStandIn } from '../etcd/testing';
import { startAPIServerProcess, tempDir, type APIServerProc } from './support/processes';

describe('apiserver on tkube etcd', function () {
  this.timeout(120_000);
  let etcd: EtcdServer | undefined;
  let api: APIServerProc | undefined;
  let client: Client | undefined;
  const dir = tempDir('etcd-standin');

  const startApi = async () => {
    api = await startAPIServerProcess({
      dir: join(dir, 'apiserver'),
      args: ['--etcd-servers', etcd!.endpoint],
    });
    client = Client.create(loadKubeconfig(api.kubeconfig));
  };

  before(async () => {
    etcd = await startStandIn();
    await startApi();
  });
  after(async () => {
    await client?.close();
    await api?.stop();
    await etcd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('creates, reads, updates, lists, watches and deletes objects stored in it', async () => {
    const cms = client!.resource('configmaps').namespace('default');
    const seen: string[] = [];
    const watch = await cms.watch({ resourceVersion: '0' });
    void (async () => {
      for await (const ev of watch)
        seen.push(`${ev.type} ${ev.object.metadata?.name} ${ev.object.data?.k ?? ''}`);
    })().catch(() => {});
    const made = await cms.create({ metadata: { name: 'one' }, data: { k: 'v1' } });
    const got = await cms.get('one');
    assert.equal(got.metadata.resourceVersion, made.metadata.resourceVersion);
    const updated = await cms.update({ ...got, data: { k: 'v2' } });
    assert.ok(Number(updated.metadata.resourceVersion) > Number(made.metadata.resourceVersion));
    await assert.rejects(cms.update({ ...got, data: { k: 'stale' } }), /Conflict|conflict|modified/);
    await cms.create({ metadata: { name: 'two' }, data: { k: 'x' } });
    const list = await cms.list();
    assert.deepEqual(
      list.items.map((i: any) => i.metadata.name).filter((n: string) => n === 'one' || n === 'two'),
      ['one', 'two'],
    );
    await cms.delete('two');
    await waitUntil(
      async () =>
        ['ADDED one v1', 'MODIFIED one v2', 'ADDED two x', 'DELETED two x'].every((e) => seen.includes(e)),
      10_000,
      `the watch saw every change (saw ${JSON.stringify(seen)})`,
    );
    watch.stop();
  });

  it('keeps the objects and their resourceVersions when both restart', async () => {
    const cms = client!.resource('configmaps').namespace('default');
    const before = await cms.get('one');
    await client!.close();
    await api!.stop();
    const { dataDir, clientPort } = etcd!;
    await etcd!.stop({ keepDataDir: true });
    etcd = await startStandIn({ dataDir, clientPort });
    await startApi();
    const after = await client!.resource('configmaps').namespace('default').get('one');
    assert.equal(after.metadata.resourceVersion, before.metadata.resourceVersion);
    assert.equal(after.data.k, 'v2');
  });
});
