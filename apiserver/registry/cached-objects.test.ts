// StoreReader.cachedObjects, what admission reads on every write: one frozen array
// per namespace while the resource is unchanged, a fresh one once it changed.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import type { StoreReader } from './reads';

describe('StoreReader.cachedObjects', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let reader: StoreReader;
  const ns = 'snap';
  const ranges = `/api/v1/namespaces/${ns}/limitranges`;
  const range = (name: string, cpu: string) => ({
    apiVersion: 'v1',
    kind: 'LimitRange',
    metadata: { name },
    spec: { limits: [{ type: 'Container', default: { cpu } }] },
  });

  /** The snapshot once it satisfies `ok` (the cache follows the store within moments). */
  const until = async (ok: (objs: readonly any[]) => boolean): Promise<readonly any[]> => {
    for (let i = 0; i < 200; i++) {
      const objs = await reader.cachedObjects(ns);
      if (ok(objs)) return objs;
      await new Promise((r) => setTimeout(r, 10));
    }
    assert.fail('the snapshot never showed the change');
  };

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    reader = srv.running.registry.preferred('', 'limitranges')!.store.reader;
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  it('answers the same frozen array while nothing changes', async () => {
    const a = await reader.cachedObjects(ns);
    const b = await reader.cachedObjects(ns);
    assert.equal(a, b);
    assert.ok(Object.isFrozen(a));
    assert.equal(a.length, 0);
  });

  it('reads again after a create, an update and a delete, per namespace', async () => {
    const before = await reader.cachedObjects(ns);
    assert.equal((await api('POST', ranges, { body: range('a', '100m') })).status, 201);
    const created = await until((o) => o.length === 1);
    assert.notEqual(created, before);
    assert.equal(created[0].spec.limits[0].default.cpu, '100m');
    assert.equal(await reader.cachedObjects(ns), created, 'kept again once read');

    const cur = (await api('GET', `${ranges}/a`)).json;
    cur.spec.limits[0].default.cpu = '200m';
    assert.equal((await api('PUT', `${ranges}/a`, { body: cur })).status, 200);
    await until((o) => o[0]?.spec.limits[0].default.cpu === '200m');

    // Another namespace has its own snapshot; the whole resource's holds both.
    assert.equal((await reader.cachedObjects('elsewhere')).length, 0);
    assert.equal((await reader.cachedObjects('')).length, 1);

    assert.equal((await api('DELETE', `${ranges}/a`)).status, 200);
    await until((o) => o.length === 0);
  });

  it('serves limit range defaults to pods created right after the range', async () => {
    assert.equal((await api('POST', ranges, { body: range('b', '300m') })).status, 201);
    await until((o) => o.length === 1);
    const r = await api('POST', `/api/v1/namespaces/${ns}/pods`, {
      body: {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'p' },
        spec: { containers: [{ name: 'c', image: 'busybox' }] },
      },
    });
    assert.equal(r.status, 201, r.body.toString());
    assert.equal(r.json.spec.containers[0].resources.limits.cpu, '300m');
  });
});
