// Unconditional writes of one object racing each other, on both backends and
// through two apiservers sharing etcd: every write lands, each at its own
// revision, and a merge patch is never applied to a state older than the one it
// lost to (the retry starts from the state the losing transaction reported).
import assert from 'node:assert/strict';
import { etcdAvailable, startEtcd } from '../storage/etcd3/etcd-server';
import { startTestAPIServer, testRequester } from '../server/testing';

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

describe('racing updates of one object', function () {
  this.timeout(120_000);

  it('keeps every merge patch on the embedded store', async () => {
    const srv = await startTestAPIServer();
    const api = testRequester(srv.config);
    try {
      await race([api]);
    } finally {
      await api.close();
      await srv.stop();
    }
  });

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
