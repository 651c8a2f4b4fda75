// Unconditional writes of one object racing each other, on both backends and
// through two apiservers sharing etcd: every write lands, each at its own
// revision, and a merge patch is never applied to a state older than the one it
// lost to (the retry starts from the state the losing transaction reported).
import assert from 'node:assert/strict';
import { etcdAvailable, startEtcd } from '../storage/etcd3/etcd-server';
import { startTestAPIServer, testRequester, withTestAPIServer, type TestAPIServer } from '../server/testing';
import { systemContext } from './context';

type API = ReturnType<typeof testRequester>;

const cms = '/api/v1/namespaces/default/configmaps';

/** 60 merge patches, each adding its own key, race on one object. */
async function race(apis: API[]): Promise<void> {
  const name = 'raced';
  const created = await apis[0]('POST', cms, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { base: 'x' } },
  });
  assert.equal(created.status, 201);
  const patches = 60;
  const results = await Promise.all(
    Array.from({ length: patches }, (_, i) =>
      apis[i % apis.length]('PATCH', `${cms}/${name}`, {
        body: { data: { [`k${i}`]: String(i) } },
        contentType: 'application/merge-patch+json',
      }),
    ),
  );
  assert.deepEqual(
    results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.json?.message}`),
    [],
  );
  assert.equal(new Set(results.map((r) => r.json.metadata.resourceVersion)).size, patches);
  const final = (await apis[0]('GET', `${cms}/${name}`)).json;
  for (let i = 0; i < patches; i++) assert.equal(final.data[`k${i}`], String(i), `patch ${i} kept`);
  assert.equal(final.data.base, 'x');
}

/**
 * 20 unconditional updates of one object at once, straight on its store: with the cache
 * current, each computes once (they take turns, each from what the one before stored).
 */
async function computesOnce(srv: TestAPIServer, api: API): Promise<void> {
  const name = 'hot';
  const created = await api('POST', cms, {
    body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: { n: '0' } },
  });
  assert.equal(created.status, 201);
  // The first update's guess is the watch cache's object: wait until it holds the create.
  for (let i = 0; i < 200; i++) {
    if ((await api('GET', `${cms}/${name}?resourceVersion=0`)).status === 200) break;
    await new Promise((r) => setTimeout(r, 10));
  }
  const store = srv.running.registry.preferred('', 'configmaps')!.store;
  let computes = 0;
  const updates = 20;
  await Promise.all(
    Array.from({ length: updates }, (_, i) =>
      store.update(systemContext('default'), name, (cur: any) => {
        computes++;
        cur.data[`k${i}`] = String(i);
        delete cur.metadata.resourceVersion;
        return cur;
      }),
    ),
  );
  assert.equal(computes, updates, 'no update lost a race and computed again');
  const final = (await api('GET', `${cms}/${name}`)).json;
  for (let i = 0; i < updates; i++) assert.equal(final.data[`k${i}`], String(i));
}

describe('racing updates of one object', function () {
  this.timeout(120_000);

  it('computes each of many concurrent updates once, on either backend', async function () {
    const backends: Record<string, unknown>[] = [{}];
    const etcd = etcdAvailable() ? await startEtcd() : undefined;
    if (etcd) backends.push({ etcdServers: [etcd.endpoint] });
    try {
      for (const flags of backends) await withTestAPIServer(flags, (api, srv) => computesOnce(srv, api));
    } finally {
      await etcd?.stop();
    }
  });

  it('keeps every merge patch on the embedded store', () => withTestAPIServer({}, (api) => race([api])));

  it('keeps every merge patch on etcd, through two apiservers', async function () {
    if (!etcdAvailable()) this.skip();
    const etcd = await startEtcd();
    const a = await startTestAPIServer({ etcdServers: [etcd.endpoint] });
    const b = await startTestAPIServer({ etcdServers: [etcd.endpoint] });
    const apiA = testRequester(a.config);
    const apiB = testRequester(b.config);
    try {
      await race([apiA, apiB]);
    } finally {
      await apiA.close();
      await apiB.close();
      await a.stop();
      await b.stop();
      await etcd.stop();
    }
  });
});
