// Two apiservers on one etcd (several apiservers behind a load balancer): a
// client that saw a write acknowledged by one sees it in a consistent read of
// the other, and an update on the other starting from its watch cache's copy
// never answers a false Conflict nor loses the write, however far that cache lags.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { type EtcdServer, etcdAvailable, startEtcd } from './etcd-server';

describe('two apiservers on one etcd', function () {
  this.timeout(120_000);
  let etcd: EtcdServer | undefined;
  let a: TestAPIServer | undefined;
  let b: TestAPIServer | undefined;
  let apiA: ReturnType<typeof testRequester>;
  let apiB: ReturnType<typeof testRequester>;
  const cms = '/api/v1/namespaces/default/configmaps';

  before(async function () {
    if (!etcdAvailable()) {
      console.warn('    etcd is not installed (apt-get install etcd-server): skipping');
      this.skip();
    }
    etcd = await startEtcd();
    a = await startTestAPIServer({ etcdServers: [etcd.endpoint] });
    b = await startTestAPIServer({ etcdServers: [etcd.endpoint] });
    apiA = testRequester(a.config);
    apiB = testRequester(b.config);
  });
  after(async () => {
    await apiA?.close();
    await apiB?.close();
    await a?.stop();
    await b?.stop();
    await etcd?.stop();
  });

  const cm = (name: string, n: string, resourceVersion?: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, ...(resourceVersion ? { resourceVersion } : {}) },
    data: { n },
  });

  it("reads the other apiserver's acknowledged writes and updates on top of them", async () => {
    assert.equal((await apiA('POST', cms, { body: cm('shared', 'start') })).status, 201);
    // Both caches are loaded and following etcd, so reads and updates may start from them.
    assert.equal((await apiA('GET', `${cms}?resourceVersion=0`)).status, 200);
    assert.equal((await apiB('GET', `${cms}?resourceVersion=0`)).status, 200);
    let lastRv = 0;
    for (let i = 0; i < 40; i++) {
      const byB = await apiB('PUT', `${cms}/shared`, { body: cm('shared', `b${i}`) });
      assert.equal(byB.status, 200);
      const rvB = byB.json.metadata.resourceVersion;
      // Right after B's write, A's cache may not have it yet: an update naming B's
      // resourceVersion must still land, and one naming an older version must not.
      const byA = await apiA('PUT', `${cms}/shared`, { body: cm('shared', `a${i}`, rvB) });
      assert.equal(byA.status, 200, JSON.stringify(byA.json));
      assert.equal(byA.json.data.n, `a${i}`);
      const rvA = byA.json.metadata.resourceVersion;
      const stale = await apiB('PUT', `${cms}/shared`, { body: cm('shared', 'lost', rvB) });
      assert.equal(stale.status, 409);
      const [get, list] = await Promise.all([apiA('GET', `${cms}/shared`), apiA('GET', cms)]);
      assert.equal(get.json.metadata.resourceVersion, rvA, 'a consistent GET on A shows the newest write');
      assert.equal(get.json.data.n, `a${i}`);
      const item = list.json.items.find((o: any) => o.metadata.name === 'shared');
      assert.equal(item.metadata.resourceVersion, rvA, 'so does a consistent list');
      assert.ok(Number(list.json.metadata.resourceVersion) >= lastRv, 'list revisions never go back');
      lastRv = Number(list.json.metadata.resourceVersion);

      // An update without a resourceVersion on B, right after A's, builds on A's write.
      const patch = await apiB('PATCH', `${cms}/shared`, {
        body: { data: { m: String(i) } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(patch.status, 200);
      assert.deepEqual(patch.json.data, { n: `a${i}`, m: String(i) });
      // And a consistent read on A right after shows B's write.
      const seen = await apiA('GET', `${cms}/shared`);
      assert.equal(seen.json.metadata.resourceVersion, patch.json.metadata.resourceVersion);
      assert.deepEqual(seen.json.data, { n: `a${i}`, m: String(i) });
    }
  });

  it('writes an update that only looks like a no-op against a lagging cache', async () => {
    assert.equal((await apiA('POST', cms, { body: cm('flip', 'y') })).status, 201);
    for (let i = 0; i < 30; i++) {
      const byB = await apiB('PUT', `${cms}/flip`, { body: cm('flip', 'x') });
      assert.equal(byB.status, 200);
      // A's cache may still hold "y" (A's own last write): the update must be written anyway.
      const byA = await apiA('PUT', `${cms}/flip`, { body: cm('flip', 'y') });
      assert.equal(byA.status, 200);
      assert.ok(
        Number(byA.json.metadata.resourceVersion) > Number(byB.json.metadata.resourceVersion),
        `A answered without writing: ${byA.json.metadata.resourceVersion} after B's ${byB.json.metadata.resourceVersion}`,
      );
      assert.equal((await apiB('GET', `${cms}/flip`)).json.data.n, 'y');
    }
  });

  it('lists the latest state when writes elsewhere keep the cache from proving itself current', async () => {
    const secrets = '/api/v1/namespaces/default/secrets';
    const names = Array.from({ length: 80 }, (_, i) => `l${i}`);
    const rvs = new Map<string, string>();
    await Promise.all(
      names.map(async (n) => {
        const r = await apiB('POST', cms, { body: cm(n, '0') });
        assert.equal(r.status, 201);
        rvs.set(n, r.json.metadata.resourceVersion);
      }),
    );
    assert.equal((await apiA('GET', `${cms}?resourceVersion=0`)).status, 200);
    for (let round = 0; round < 12; round++) {
      // B changes a few (or, every fourth round, all) of them, then writes a secret:
      // A's configmap watch never sees that last revision, so A lists from etcd.
      const changed = round % 4 === 3 ? names : names.filter((_, i) => i % 12 === round);
      await Promise.all(
        changed.map(async (n) => {
          const r = await apiB('PUT', `${cms}/${n}`, { body: cm(n, String(round)) });
          assert.equal(r.status, 200);
          rvs.set(n, r.json.metadata.resourceVersion);
        }),
      );
      const secret = await apiB('POST', secrets, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${round}` } },
      });
      assert.equal(secret.status, 201);
      const list = await apiA('GET', `${cms}?labelSelector=!nothing`);
      const plain = await apiA('GET', cms);
      for (const l of [list, plain]) {
        assert.equal(l.status, 200);
        assert.ok(
          Number(l.json.metadata.resourceVersion) >= Number(secret.json.metadata.resourceVersion),
          'the list is at least as new as every write acknowledged before it',
        );
        const got = new Map(l.json.items.map((o: any) => [o.metadata.name, o]));
        for (const [n, rv] of rvs) {
          const o: any = got.get(n);
          assert.ok(o, `${n} missing`);
          assert.equal(o.metadata.resourceVersion, rv, `${n} is stale`);
        }
      }
    }
  });
});
