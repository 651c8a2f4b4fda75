// The whole stack as a controller uses it: a factory informer feeding a
// rate-limited work queue, workers reading the lister and writing through the
// client, events through the recorder. The controller mirrors every ConfigMap
// labelled mirror=yes into "<name>-mirror" and removes the mirror with it.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../client/client';
import { isNotFound } from '../client/errors';
import type { KubeObject } from '../client/types';
import { EventBroadcaster } from '../events/recorder';
import { SharedInformerFactory } from './factory';
import { metaNamespaceKey, unwrapTombstone } from './store';
import { filteringHandler } from './handlers';
import { RateLimitingQueue, runWorkers } from './workqueue';

function mirrorController(client: Client, factory: SharedInformerFactory, events: EventBroadcaster) {
  const informer = factory.forResource('configmaps');
  const lister = informer.lister();
  const cms = client.resource('configmaps');
  const recorder = events.newRecorder('mirror-controller');
  const queue = new RateLimitingQueue<string>({ name: 'mirror' });
  const isSource = (o: KubeObject) => o.metadata.labels?.mirror === 'yes';
  const enqueue = (o: KubeObject) => queue.add(metaNamespaceKey(o));
  informer.addEventHandler(
    filteringHandler((o) => isSource(unwrapTombstone(o)), {
      onAdd: enqueue,
      onUpdate: (_old, o) => enqueue(o),
      onDelete: (o) => enqueue(unwrapTombstone(o)),
    }),
  );

  async function sync(key: string): Promise<void> {
    const [ns, name] = key.split('/');
    const src = lister.namespace(ns).get(name);
    const mirrors = cms.namespace(ns);
    if (!src) {
      await mirrors.delete(`${name}-mirror`).catch((e) => {
        if (!isNotFound(e)) throw e;
      });
      return;
    }
    await mirrors.apply(
      { metadata: { name: `${name}-mirror`, labels: { 'mirror-of': name } }, data: src.data ?? {} },
      { fieldManager: 'mirror-controller', force: true },
    );
    recorder.eventf(src, null, 'Normal', 'Mirrored', 'Mirror', 'mirrored into %s', `${name}-mirror`);
  }

  return {
    async run(signal: AbortSignal, workers = 2): Promise<void> {
      if (!(await informer.whenSynced(signal))) return;
      await runWorkers(queue, sync, { workers, signal });
    },
  };
}

describe('shared/informers: a controller on informer + work queue + client', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: 50, burst: 100 });
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  it('reconciles creates, updates and deletes', async () => {
    await client.resource('namespaces').create({ metadata: { name: 'mirror' } });
    const cms = client.resource('configmaps').namespace('mirror');
    await cms.create({ metadata: { name: 'early', labels: { mirror: 'yes' } }, data: { a: '1' } });
    await cms.create({ metadata: { name: 'ignored' }, data: { a: '1' } });

    const factory = new SharedInformerFactory(client);
    const events = new EventBroadcaster(client, { qps: -1 });
    const ctrl = mirrorController(client, factory, events);
    const ac = new AbortController();
    factory.start(ac.signal);
    const running = ctrl.run(ac.signal);
    const data = async (n: string) => (await cms.get(n).catch(() => undefined))?.data;
    const eventually = async (what: string, f: () => Promise<boolean>) => {
      for (let i = 0; i < 200; i++) {
        if (await f()) return;
        await new Promise((r) => setTimeout(r, 25));
      }
      assert.fail(`timed out: ${what}`);
    };
    try {
      await eventually('early mirrored', async () => (await data('early-mirror'))?.a === '1');
      await cms.create({ metadata: { name: 'late', labels: { mirror: 'yes' } }, data: { b: '2' } });
      await eventually('late mirrored', async () => (await data('late-mirror'))?.b === '2');
      await cms.patch('early', { data: { a: '3' } }, 'merge');
      await eventually('update mirrored', async () => (await data('early-mirror'))?.a === '3');
      await cms.delete('late');
      await eventually('mirror removed', async () => (await data('late-mirror')) === undefined);
      assert.equal(await data('ignored-mirror'), undefined);
      await events.flush();
      const evs = await client.resource('events.events.k8s.io').namespace('mirror').list();
      assert.ok(evs.items.some((e) => e.reason === 'Mirrored' && e.regarding.name === 'early'));
    } finally {
      ac.abort();
      await running;
      await factory.shutdown();
      await events.shutdown();
    }
  });
});
