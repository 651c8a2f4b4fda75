// Reads served from the watch cache's compact entries (stored bytes, decoded on
// demand): every representation of an object is the same whether it comes from a
// get or a list, selectors still filter, and updates and deletes replace entries.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { decodeObject } from '../../shared/codec/protobuf';

const PB = 'application/vnd.kubernetes.protobuf';

describe('reads from compact watch cache entries', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const ns = 'compact';
  const pods = `/api/v1/namespaces/${ns}/pods`;
  // More pods than the cache keeps decoded, so most reads decode again.
  const count = 300;

  const pod = (i: number) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: `p${i}`, labels: { app: 'web', parity: i % 2 ? 'odd' : 'even' } },
    spec: { nodeName: `node-${i % 3}`, containers: [{ name: 'c', image: 'registry.example/img:1' }] },
  });

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
    for (let i = 0; i < count; i++) {
      const r = await api('POST', pods, { body: pod(i) });
      assert.equal(r.status, 201, r.body.toString());
    }
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const list = async (query: string, accept?: string) => {
    const r = await api('GET', `${pods}?resourceVersion=0${query}`, accept ? { headers: { accept } } : {});
    assert.equal(r.status, 200, r.body.toString());
    return r;
  };

  it('a list holds the same bytes as gets of its items, in JSON and Protobuf', async () => {
    const j = (await list('')).json;
    assert.equal(j.items.length, count);
    const p = decodeObject((await list('', PB)).body);
    assert.equal(p.items.length, count);
    for (const i of [0, 1, 150, count - 1]) {
      const name = `p${i}`;
      const item = j.items.find((x: any) => x.metadata.name === name);
      const got = await api('GET', `${pods}/${name}?resourceVersion=0`);
      assert.equal(JSON.stringify(item), got.body.toString().trim());
      const gotPb = await api('GET', `${pods}/${name}?resourceVersion=0`, { headers: { accept: PB } });
      // Protobuf: a get's envelope adds apiVersion and kind, a list's items have none.
      const { apiVersion: _a, kind: _k, ...message } = decodeObject(gotPb.body);
      assert.deepEqual(
        p.items.find((x: any) => x.metadata.name === name),
        message,
      );
      assert.equal(message.metadata.resourceVersion, item.metadata.resourceVersion);
      assert.deepEqual(message.metadata.labels, item.metadata.labels);
    }
  });

  it('label and field selectors filter the cached entries', async () => {
    const odd = (await list('&labelSelector=parity%3Dodd')).json.items;
    assert.equal(odd.length, count / 2);
    assert.ok(odd.every((x: any) => x.metadata.labels.parity === 'odd'));
    const onNode = (await list('&fieldSelector=spec.nodeName%3Dnode-1', PB)).body;
    const items = decodeObject(onNode).items;
    assert.equal(items.length, count / 3);
    assert.ok(items.every((x: any) => x.spec.nodeName === 'node-1'));
  });

  it('an update replaces the entry (labels and encodings), a delete removes it', async () => {
    const cur = (await api('GET', `${pods}/p2`)).json;
    cur.metadata.labels.parity = 'odd';
    cur.metadata.labels.moved = 'yes';
    const put = await api('PUT', `${pods}/p2`, { body: cur });
    assert.equal(put.status, 200, put.body.toString());
    const rv = put.json.metadata.resourceVersion;
    // Protobuf first: the entry then keeps its message in place of the stored bytes.
    const viaPb = decodeObject(
      (await api('GET', `${pods}/p2?resourceVersion=${rv}`, { headers: { accept: PB } })).body,
    );
    assert.equal(viaPb.metadata.labels.moved, 'yes');
    // JSON from that message is what the store's own copy gives (an Exact list reads the store).
    const cached = (await api('GET', `${pods}/p2?resourceVersion=0`)).body.toString().trim();
    const exact = await api(
      'GET',
      `${pods}?resourceVersion=${rv}&resourceVersionMatch=Exact&fieldSelector=metadata.name%3Dp2`,
    );
    assert.equal(exact.status, 200, exact.body.toString());
    assert.equal(cached, JSON.stringify(exact.json.items[0]));
    const moved = (await list(`&labelSelector=moved%3Dyes`)).json.items;
    assert.deepEqual(
      moved.map((x: any) => [x.metadata.name, x.metadata.resourceVersion]),
      [['p2', rv]],
    );
    assert.equal((await list('&labelSelector=parity%3Dodd')).json.items.length, count / 2 + 1);

    const del = await api('DELETE', `${pods}/p3?gracePeriodSeconds=0`);
    assert.equal(del.status, 200, del.body.toString());
    const after = await list('&fieldSelector=metadata.name%3Dp3');
    assert.equal(after.json.items.length, 0);
    // The watch from before the delete sees it with the delete's revision.
    const w = await api('GET', `${pods}?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
    const events = w.body
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const deleted = events.find((e) => e.type === 'DELETED');
    assert.equal(deleted?.object.metadata.name, 'p3');
    assert.ok(Number(deleted.object.metadata.resourceVersion) > Number(rv));
    assert.equal((await api('GET', `${pods}/p3?resourceVersion=0`)).status, 404);
  });
});
