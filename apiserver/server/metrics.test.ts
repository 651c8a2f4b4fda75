import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from './testing';

describe('apiserver /metrics and deprecated APIs', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  before(async () => {
    srv = await startTestAPIServer({ etcdCountMetricPollPeriod: 200, etcdDbMetricPollInterval: 200 });
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const metric = async (re: RegExp): Promise<number> => {
    const text = (await api('GET', '/metrics')).body.toString();
    const m = re.exec(text);
    return m ? Number(m[1]) : 0;
  };

  it('counts requests and their latencies by verb, resource, scope and code', async () => {
    const listRe =
      /^apiserver_request_total\{verb="LIST",dry_run="",group="",version="v1",resource="configmaps",subresource="",scope="namespace",component="apiserver",code="200"\} (\d+)$/m;
    const before = await metric(listRe);
    for (let i = 0; i < 3; i++) await api('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(await metric(listRe), before + 3);
    await api('POST', '/api/v1/namespaces/default/configmaps', {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'm' } },
    });
    assert.equal(
      await metric(
        /^apiserver_request_total\{verb="POST",[^}]*resource="configmaps"[^}]*code="201"\} (\d+)$/m,
      ),
      1,
    );
    await api('GET', '/api/v1/namespaces/default/configmaps/nope');
    assert.equal(
      await metric(
        /^apiserver_request_total\{verb="GET",[^}]*resource="configmaps",subresource="",scope="resource"[^}]*code="404"\} (\d+)$/m,
      ),
      1,
    );
    assert.ok(
      (await metric(
        /^apiserver_request_duration_seconds_count\{verb="LIST",[^}]*resource="configmaps"[^}]*\} (\d+)$/m,
      )) >= 3,
    );
    assert.ok((await metric(/^process_resident_memory_bytes (\d+)$/m)) > 0);
  });

  it('polls stored object counts and the database size', async () => {
    await new Promise((r) => setTimeout(r, 500));
    assert.ok((await metric(/^apiserver_storage_objects\{resource="namespaces"\} (\d+)$/m)) >= 4);
    assert.ok((await metric(/^apiserver_storage_db_total_size_in_bytes\{[^}]*\} (\d+)$/m)) > 0);
  });

  it('serves Events without a watch cache unless --watch-cache-sizes names them, as kube-apiserver', async () => {
    const capacity = (group: string, resource: string) =>
      new RegExp(`^apiserver_watch_cache_capacity\\{group="${group}",resource="${resource}"\\} (\\d+)$`, 'm');
    assert.ok((await metric(capacity('', 'pods'))) >= 100);
    const text = (await api('GET', '/metrics')).body.toString();
    assert.doesNotMatch(text, /^apiserver_watch_cache_capacity\{[^}]*resource="events"\}/m);
    // Served from the store: a watch from a list's revision sees the next Event.
    const list = JSON.parse((await api('GET', '/api/v1/namespaces/default/events')).body.toString());
    await api('POST', '/api/v1/namespaces/default/events', {
      body: {
        apiVersion: 'v1',
        kind: 'Event',
        metadata: { name: 'e1' },
        involvedObject: { kind: 'Pod', namespace: 'default', name: 'p' },
        reason: 'Tested',
      },
    });
    const watch = await api(
      'GET',
      `/api/v1/namespaces/default/events?watch=1&resourceVersion=${list.metadata.resourceVersion}&timeoutSeconds=1`,
    );
    assert.match(watch.body.toString(), /"type":"ADDED".*"name":"e1"/);

    const named = await startTestAPIServer({ watchCacheSizes: ['events#50'] });
    const api2 = testRequester(named.config);
    try {
      const text2 = (await api2('GET', '/metrics')).body.toString();
      assert.match(text2, /^apiserver_watch_cache_capacity\{group="",resource="events"\} 100$/m);
    } finally {
      await api2.close();
      await named.stop();
    }
  });

  it('warns on deprecated APIs, and sets apiserver_requested_deprecated_apis', async () => {
    const r = await api('GET', '/api/v1/namespaces/default/endpoints');
    assert.equal(r.status, 200);
    assert.match(
      String(r.headers.warning),
      /299 - "v1 Endpoints is deprecated in v1.33\+; use discovery.k8s.io\/v1 EndpointSlice"/,
    );
    assert.equal(
      await metric(
        /^apiserver_requested_deprecated_apis\{group="",version="v1",resource="endpoints",subresource="",removed_release=""\} (\d+)$/m,
      ),
      1,
    );
    const fresh = await api('GET', '/api/v1/namespaces/default/configmaps');
    assert.equal(fresh.headers.warning, undefined);
  });
});
