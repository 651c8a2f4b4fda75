// Reads without a resourceVersion are consistent: they show every write
// acknowledged before them, also when the watch cache serves them.
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('resource API: consistent reads', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const ns = 'consistent';
  const cms = `/api/v1/namespaces/${ns}/configmaps`;
  const secrets = `/api/v1/namespaces/${ns}/secrets`;

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    await api('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counter' } } });
    // A list at RV=0 loads the ConfigMap cache, so the reads below may be served from it.
    assert.equal((await api('GET', `${cms}?resourceVersion=0`)).status, 200);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  it('a GET, a list and a watch right after each acknowledged update see it', async () => {
    // Writers on another resource keep the store's revision moving meanwhile.
    let stop = false;
    const noise = (async () => {
      for (let i = 0; !stop; i++)
        await api('POST', secrets, {
          body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `s${i}` } },
        });
    })();
    try {
      for (let i = 0; i < 60; i++) {
        const put = await api('PUT', `${cms}/counter`, {
          body: {
            apiVersion: 'v1',
            kind: 'ConfigMap',
            metadata: { name: 'counter' },
            data: { n: String(i) },
          },
        });
        assert.equal(put.status, 200);
        const rv = put.json.metadata.resourceVersion;
        const [get, list] = await Promise.all([api('GET', `${cms}/counter`), api('GET', cms)]);
        assert.equal(get.json.metadata.resourceVersion, rv);
        assert.equal(get.json.data.n, String(i));
        const item = list.json.items.find((o: any) => o.metadata.name === 'counter');
        assert.equal(item.metadata.resourceVersion, rv);
        assert.ok(Number(list.json.metadata.resourceVersion) >= Number(rv));
      }
    } finally {
      stop = true;
      await noise;
    }
  });

  it("a list's resourceVersion covers writes to other resources acknowledged before it", async () => {
    for (let i = 0; i < 20; i++) {
      const secret = await api('POST', secrets, {
        body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: `after-${i}` } },
      });
      const list = await api('GET', cms);
      assert.ok(
        Number(list.json.metadata.resourceVersion) >= Number(secret.json.metadata.resourceVersion),
        `list RV ${list.json.metadata.resourceVersion} < ${secret.json.metadata.resourceVersion}`,
      );
    }
  });

  it('a watch without resourceVersion starts with the current state', async () => {
    const put = await api('PUT', `${cms}/counter`, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'counter' }, data: { n: 'watch' } },
    });
    const dispatcher = new Agent({
      connect: { ca: srv.config.caPem, cert: srv.config.certPem, key: srv.config.keyPem },
    });
    const ac = new AbortController();
    const res = await request(`${srv.url}${cms}?watch=1`, { dispatcher, signal: ac.signal });
    let buf = '';
    for await (const chunk of res.body) {
      buf += chunk.toString();
      if (buf.includes('\n')) break;
    }
    ac.abort();
    await dispatcher.close();
    const first = JSON.parse(buf.slice(0, buf.indexOf('\n')));
    assert.equal(first.type, 'ADDED');
    assert.equal(first.object.metadata.resourceVersion, put.json.metadata.resourceVersion);
    assert.equal(first.object.data.n, 'watch');
  });
});
