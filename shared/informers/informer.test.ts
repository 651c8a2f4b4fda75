// Reflector, shared informer and factory against a real in-process apiserver:
// every change seen exactly once, resumption after the server ends a watch,
// a relist after 410 with tombstones for deletes missed meanwhile, resync.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../client/client';
import { FakeClock } from '../client/clock';
import type { KubeObject, ListOptions, WatchOptions } from '../client/types';
import type { WatchEvent } from '../client/watch';
import { listWatchFor, SharedInformerFactory } from './factory';
import type { ListerWatcher, WatchInterface } from './reflector';
import { SharedIndexInformer } from './shared-informer';
import { DeletedFinalStateUnknown, metaNamespaceKey } from './store';
import type { ResourceEventHandler } from './processor';

/** Records what a handler sees and mirrors the cache from the notifications alone. */
class Recorder implements ResourceEventHandler<KubeObject> {
  events: string[] = [];
  resyncs = 0;
  tombstones: DeletedFinalStateUnknown<KubeObject>[] = [];
  state = new Map<string, KubeObject>();

  onAdd(o: KubeObject, initial: boolean) {
    const k = metaNamespaceKey(o);
    this.events.push(`add ${k}${initial ? ' initial' : ''}`);
    assert.ok(!this.state.has(k), `add of a known object ${k}`);
    this.state.set(k, o);
  }
  onUpdate(old: KubeObject, o: KubeObject) {
    const k = metaNamespaceKey(o);
    if (old.metadata.resourceVersion === o.metadata.resourceVersion) {
      this.resyncs++;
      return;
    }
    this.events.push(`update ${k}`);
    assert.equal(
      this.state.get(k)?.metadata.resourceVersion,
      old.metadata.resourceVersion,
      `old object of ${k}`,
    );
    this.state.set(k, o);
  }
  onDelete(o: KubeObject | DeletedFinalStateUnknown<KubeObject>) {
    const k = metaNamespaceKey(o);
    if (o instanceof DeletedFinalStateUnknown) this.tombstones.push(o);
    this.events.push(`delete ${k}`);
    assert.ok(this.state.has(k), `delete of an unknown object ${k}`);
    this.state.delete(k);
  }
  of(key: string): string[] {
    return this.events
      .filter((e) => e.split(' ')[1] === key)
      .map((e) =>
        e
          .split(' ')
          .filter((_, i) => i !== 1)
          .join(' '),
      );
  }
}

/** Counts requests, can hold new watches back, and notes ERROR events. */
class ProbeLW implements ListerWatcher<KubeObject> {
  lists = 0;
  watches = 0;
  watchLists = 0;
  errors: number[] = [];
  current?: WatchInterface<KubeObject>;
  private gate?: Promise<void>;
  private open?: () => void;

  constructor(private readonly inner: ListerWatcher<KubeObject>) {}

  hold(): void {
    this.gate = new Promise((r) => (this.open = r));
  }
  release(): void {
    this.open?.();
    this.gate = undefined;
  }

  list(o: ListOptions) {
    this.lists++;
    return this.inner.list(o);
  }

  async watch(o: WatchOptions): Promise<WatchInterface<KubeObject>> {
    if (o.sendInitialEvents) this.watchLists++;
    else this.watches++;
    if (this.gate) await this.gate;
    const w = await this.inner.watch(o);
    this.current = w;
    const errors = this.errors;
    return {
      stop: () => w.stop(),
      async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<KubeObject>> {
        for await (const ev of w) {
          if (ev.type === 'ERROR') errors.push((ev.object as any).code);
          yield ev;
        }
      },
    };
  }
}

async function until(what: string, cond: () => boolean | Promise<boolean>, ms = 8_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await cond())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function serverState(c: Client, ns: string): Promise<Map<string, string>> {
  const l = await c.resource('configmaps').namespace(ns).list();
  return new Map(l.items.map((i) => [metaNamespaceKey(i), i.metadata.resourceVersion!]));
}

function cacheState(r: Recorder): Map<string, string> {
  return new Map([...r.state].map(([k, v]) => [k, v.metadata.resourceVersion!]));
}

describe('shared/informers: informers against the apiserver', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1 });
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  for (const useWatchList of [true, false]) {
    const mode = useWatchList ? 'watch-list' : 'list+watch';
    it(`sees every create, update and delete exactly once (${mode})`, async () => {
      const ns = `every-${useWatchList ? 'wl' : 'lw'}`;
      await client.resource('namespaces').create({ metadata: { name: ns } });
      const cms = client.resource('configmaps').namespace(ns);
      for (let i = 0; i < 5; i++) await cms.create({ metadata: { name: `pre-${i}` } });
      const lw = new ProbeLW(listWatchFor(client.resource('configmaps'), { namespace: ns }));
      const inf = new SharedIndexInformer(lw, { reflector: { useWatchList } });
      const rec = new Recorder();
      const reg = inf.addEventHandler(rec);
      const running = inf.run();
      try {
        assert.equal(await inf.whenSynced(), true);
        await until('handler synced', () => reg.hasSynced());
        assert.equal(rec.events.length, 5);
        assert.ok(rec.events.every((e) => e.endsWith(' initial')));

        const N = 30;
        const names = Array.from({ length: N }, (_, i) => `obj-${i}`);
        await Promise.all(names.map((n) => cms.create({ metadata: { name: n }, data: { v: '0' } })));
        await Promise.all(names.map((n) => cms.patch(n, { data: { v: '1' } }, 'merge')));
        await Promise.all(names.slice(0, 10).map((n) => cms.delete(n)));
        await cms.delete('pre-0');

        const want = await serverState(client, ns);
        await until(
          'the cache to match the server',
          () => JSON.stringify([...cacheState(rec)].sort()) === JSON.stringify([...want].sort()),
        );
        for (const [i, n] of names.entries()) {
          assert.deepEqual(rec.of(`${ns}/${n}`), i < 10 ? ['add', 'update', 'delete'] : ['add', 'update'], n);
        }
        assert.deepEqual(rec.of(`${ns}/pre-0`), ['add initial', 'delete']);
        assert.equal(rec.tombstones.length, 0);
        assert.equal(inf.lister().namespace(ns).list().length, want.size);
        assert.equal(inf.lister().namespace(ns).get('obj-15')?.data.v, '1');
        assert.equal(inf.lister().namespace(ns).get('obj-1'), undefined);
        assert.equal(lw.lists + lw.watchLists, useWatchList ? 1 : 1, 'one initial sync, no relist');
        assert.equal(useWatchList ? lw.watchLists : lw.lists, 1, `initial state by ${mode}`);
      } finally {
        await inf.stop();
        await running;
      }
      assert.equal(inf.isStopped(), true);
    });
  }

  it('resumes from the last resourceVersion when the server ends the watch, without relisting', async () => {
    const ns = 'resume';
    await client.resource('namespaces').create({ metadata: { name: ns } });
    const cms = client.resource('configmaps').namespace(ns);
    const lw = new ProbeLW(listWatchFor(client.resource('configmaps'), { namespace: ns }));
    // Watches ask for timeoutSeconds=1, so the server closes each after a second.
    const inf = new SharedIndexInformer(lw, { reflector: { minWatchTimeoutMs: 1000 } });
    const rec = new Recorder();
    inf.addEventHandler(rec);
    const running = inf.run();
    try {
      await inf.whenSynced();
      let last = '';
      for (let i = 0; i < 12; i++) {
        last = (await cms.create({ metadata: { name: `r-${i}` } })).metadata.resourceVersion!;
        await sleep(250);
      }
      await until('all 12 adds', () => rec.events.length === 12);
      assert.deepEqual(
        rec.events,
        Array.from({ length: 12 }, (_, i) => `add ${ns}/r-${i}`),
      );
      assert.ok(lw.watches >= 2, `the watch was reopened (${lw.watches} watches)`);
      assert.equal(lw.lists + lw.watchLists, 1, 'no relist');
      assert.ok(Number(inf.lastSyncResourceVersion()) >= Number(last));
    } finally {
      await inf.stop();
      await running;
    }
  });

  it('resyncs on its period, only to handlers that asked for it (fake clock)', async () => {
    const ns = 'resync';
    await client.resource('namespaces').create({ metadata: { name: ns } });
    const cms = client.resource('configmaps').namespace(ns);
    for (let i = 0; i < 3; i++) await cms.create({ metadata: { name: `s-${i}` } });
    const clock = new FakeClock();
    const inf = new SharedIndexInformer(listWatchFor(client.resource('configmaps'), { namespace: ns }), {
      clock,
      resyncPeriodMs: 30_000,
    });
    const every = new Recorder();
    const never = new Recorder();
    inf.addEventHandler(every);
    inf.addEventHandler(never, 0);
    const running = inf.run();
    try {
      await inf.whenSynced();
      await until('initial adds', () => every.events.length === 3 && never.events.length === 3);
      await clock.advance(29_000);
      await sleep(20);
      assert.equal(every.resyncs, 0);
      await clock.advance(1_000);
      await until('a resync of the 3 objects', () => every.resyncs === 3);
      await clock.advance(30_000);
      await until('a second resync', () => every.resyncs === 6);
      assert.equal(never.resyncs, 0);
      assert.equal(every.events.length, 3, 'resyncs are not changes');
    } finally {
      await inf.stop();
      await running;
    }
  });

  it('shares one informer per resource and selector through the factory', async () => {
    const ns = 'factory';
    await client.resource('namespaces').create({ metadata: { name: ns } });
    const cms = client.resource('configmaps').namespace(ns);
    await cms.create({ metadata: { name: 'f1', labels: { app: 'x' } } });
    await cms.create({ metadata: { name: 'f2', labels: { app: 'y' } } });
    const f = new SharedInformerFactory(client, {
      namespace: ns,
      transform: (o) => {
        delete o.metadata.managedFields;
        return o;
      },
    });
    const a = f.forResource('configmaps');
    assert.equal(f.forResource('configmaps'), a);
    const onlyX = f.forResource('configmaps', { labelSelector: { app: 'x' } });
    assert.notEqual(onlyX, a);
    const nodes = f.forResource('nodes');
    const ac = new AbortController();
    f.start(ac.signal);
    const synced = await f.waitForCacheSync();
    assert.deepEqual([...synced.values()], [true, true, true]);
    assert.deepEqual(
      a
        .lister()
        .namespace(ns)
        .list()
        .map((o) => o.metadata.name)
        .sort(),
      ['f1', 'f2'],
    );
    assert.deepEqual(
      onlyX
        .lister()
        .list()
        .map((o) => o.metadata.name),
      ['f1'],
    );
    assert.deepEqual(
      a
        .lister()
        .namespace(ns)
        .list('app=y')
        .map((o) => o.metadata.name),
      ['f2'],
    );
    assert.equal(a.lister().namespace(ns).get('f1')?.metadata.managedFields, undefined, 'transformed');
    assert.equal(nodes.lister().list().length, (await client.resource('nodes').list()).items.length);

    // A handler added late is replayed the cache and reports synced once it has seen it.
    const late = new Recorder();
    const reg = a.addEventHandler(late);
    await until('late handler synced', () => reg.hasSynced());
    assert.deepEqual(late.events.sort(), [`add ${ns}/f1 initial`, `add ${ns}/f2 initial`]);
    await cms.create({ metadata: { name: 'f3', labels: { app: 'x' } } });
    await until(
      'f3 in both informers',
      () => !!a.lister().get(`${ns}/f3`) && !!onlyX.lister().get(`${ns}/f3`),
    );
    await until('late handler saw f3', () => late.events.includes(`add ${ns}/f3`));
    a.removeEventHandler(reg);
    await cms.delete('f3');
    await until('f3 gone', () => !a.lister().get(`${ns}/f3`));
    await sleep(50);
    assert.ok(!late.events.includes(`delete ${ns}/f3`), 'a removed handler hears nothing');
    ac.abort();
    await f.shutdown();
    assert.ok(a.isStopped() && onlyX.isStopped() && nodes.isStopped());
  });
});

describe('shared/informers: relist after 410', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;

  before(async () => {
    // No watch cache and a quick compactor: a watch from an old resourceVersion gets 410.
    srv = await startTestAPIServer({ watchCache: false, etcdCompactionInterval: 200 });
    client = Client.create(srv.config, { qps: -1 });
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  for (const useWatchList of [true, false]) {
    const mode = useWatchList ? 'watch-list' : 'list+watch';
    it(`relists when its resourceVersion was compacted, with tombstones for missed deletes (${mode})`, async () => {
      const ns = `gone-${useWatchList ? 'wl' : 'lw'}`;
      await client.resource('namespaces').create({ metadata: { name: ns } });
      const cms = client.resource('configmaps').namespace(ns);
      for (const n of ['a', 'b', 'c']) await cms.create({ metadata: { name: n }, data: { v: '0' } });
      const lw = new ProbeLW(listWatchFor(client.resource('configmaps'), { namespace: ns }));
      const inf = new SharedIndexInformer(lw, { reflector: { useWatchList } });
      const rec = new Recorder();
      inf.addEventHandler(rec);
      const running = inf.run();
      try {
        await inf.whenSynced();
        await cms.patch('a', { data: { v: '1' } }, 'merge');
        await until('update of a', () => rec.events.includes(`update ${ns}/a`));
        const bBefore = rec.state.get(`${ns}/b`)!;

        // Cut the watch and keep the next one back while the world moves on.
        lw.hold();
        lw.current!.stop();
        await cms.delete('b');
        await cms.patch('c', { data: { v: '2' } }, 'merge');
        await cms.create({ metadata: { name: 'd' } });
        for (let i = 0; i < 5; i++)
          await client
            .resource('configmaps')
            .namespace('default')
            .create({ metadata: { generateName: 'churn-' } });
        await sleep(700); // a few compactions past our resourceVersion
        lw.release();

        const want = await serverState(client, ns);
        await until(
          'the cache to match the server',
          () => JSON.stringify([...cacheState(rec)].sort()) === JSON.stringify([...want].sort()),
        );
        assert.ok(lw.errors.includes(410), `the watch ended with 410 (${lw.errors})`);
        assert.equal(useWatchList ? lw.watchLists : lw.lists, 2, 'one relist');
        assert.deepEqual(rec.of(`${ns}/b`), ['add initial', 'delete']);
        assert.equal(rec.tombstones.length, 1);
        assert.equal(rec.tombstones[0].key, `${ns}/b`);
        assert.equal(rec.tombstones[0].obj, bBefore, 'the tombstone carries the last known state');
        assert.deepEqual(rec.of(`${ns}/c`), ['add initial', 'update']);
        assert.deepEqual(rec.of(`${ns}/d`), ['add']);
        assert.deepEqual(rec.of(`${ns}/a`), ['add initial', 'update'], 'no event for an unchanged object');
      } finally {
        lw.release();
        await inf.stop();
        await running;
      }
    });
  }
});
