// Bad input gets a Kubernetes Status with the right code, never a crash or a
// half-written object (SPEC.md "Errors"); discovery and health endpoints.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('resource API: errors, discovery and health', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const cms = '/api/v1/namespaces/default/configmaps';

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const isStatus = (r: any, code: number, reason: string) => {
    assert.equal(r.status, code, `${r.status} ${r.body.toString().slice(0, 200)}`);
    assert.equal(r.json.kind, 'Status');
    assert.equal(r.json.apiVersion, 'v1');
    assert.equal(r.json.status, 'Failure');
    assert.equal(r.json.code, code);
    assert.equal(r.json.reason, reason);
  };

  it('answers malformed and mistyped bodies with 400 and writes nothing', async () => {
    isStatus(
      await api('POST', cms, { body: '{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"' }),
      400,
      'BadRequest',
    );
    isStatus(await api('POST', cms, { body: '[1,2,3]' }), 400, 'BadRequest');
    isStatus(await api('POST', cms, { body: '' }), 400, 'BadRequest');
    const wrongGroup = await api('POST', cms, {
      body: { apiVersion: 'apps/v1', kind: 'ConfigMap', metadata: { name: 'x' } },
    });
    isStatus(wrongGroup, 400, 'BadRequest');
    assert.match(wrongGroup.json.message, /does not match the expected API version/);
    isStatus(
      await api('POST', cms, { body: { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'x' } } }),
      400,
      'BadRequest',
    );
    isStatus(
      await api('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: 'nope' } }),
      400,
      'BadRequest',
    );
    assert.equal((await api('GET', `${cms}/x`)).status, 404);
  });

  it('checks names and namespaces between URL and body', async () => {
    await api('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'named' } } });
    const cur = (await api('GET', `${cms}/named`)).json;
    const mismatch = await api('PUT', `${cms}/named`, {
      body: { ...cur, metadata: { ...cur.metadata, name: 'other' } },
    });
    isStatus(mismatch, 400, 'BadRequest');
    assert.match(mismatch.json.message, /does not match the name on the URL/);
    const nsMismatch = await api('POST', cms, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'y', namespace: 'kube-system' } },
    });
    isStatus(nsMismatch, 400, 'BadRequest');
    assert.equal(
      nsMismatch.json.message,
      'the namespace of the provided object does not match the namespace sent on the request',
    );
    const noName = await api('POST', cms, { body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: {} } });
    isStatus(noName, 422, 'Invalid');
    assert.equal(noName.json.details.causes[0].field, 'metadata.name');
    const rv = await api('POST', cms, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'z', resourceVersion: '5' } },
    });
    isStatus(rv, 400, 'BadRequest');
  });

  it('refuses bodies over 3 MiB with 413', async () => {
    const big = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big' },
      data: { x: 'a'.repeat(3 * 1024 * 1024 + 10) },
    };
    isStatus(await api('POST', cms, { body: big }), 413, 'RequestEntityTooLarge');
    assert.equal((await api('GET', `${cms}/big`)).status, 404);
  });

  it('answers 415 for an unknown body type and 406 for an unacceptable response type', async () => {
    isStatus(await api('POST', cms, { body: 'x=1', contentType: 'text/plain' }), 415, 'UnsupportedMediaType');
    isStatus(
      await api('PATCH', `${cms}/named`, { body: '{}', contentType: 'application/json' }),
      415,
      'UnsupportedMediaType',
    );
    const na = await api('GET', `${cms}/named`, { headers: { accept: 'text/html' } });
    isStatus(na, 406, 'NotAcceptable');
    assert.match(na.json.message, /only the following media types are accepted: application\/json/);
  });

  it('serves YAML and pretty JSON when asked', async () => {
    const y = await api('GET', `${cms}/named`, { headers: { accept: 'application/yaml' } });
    assert.equal(y.status, 200);
    assert.equal(y.headers['content-type'], 'application/yaml');
    assert.match(y.body.toString(), /^apiVersion: v1\nkind: ConfigMap\n/m);
    const p = await api('GET', `${cms}/named?pretty=true`);
    assert.match(p.body.toString(), /^\{\n {2}"/);
    // Strings a YAML 1.1 reader would take for another type are quoted, as kube's yaml.v2 output does.
    await api('POST', cms, {
      body: {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'yamlish' },
        data: { flag: 'yes', mode: '0755', s: 'plain' },
      },
    });
    const q = (
      await api('GET', `${cms}/yamlish`, { headers: { accept: 'application/yaml' } })
    ).body.toString();
    assert.match(q, /^ {2}flag: "yes"$/m);
    assert.match(q, /^ {2}mode: "0755"$/m);
    assert.match(q, /^ {2}s: plain$/m);
  });

  it('answers 404 for unknown resources and 405 for verbs a resource lacks', async () => {
    isStatus(await api('GET', '/api/v1/namespaces/default/nothings'), 404, 'NotFound');
    isStatus(await api('GET', '/apis/nogroup.example.com/v1/things'), 404, 'NotFound');
    // Removed versions are not served.
    isStatus(await api('GET', '/apis/events.k8s.io/v1beta1/events'), 404, 'NotFound');
    isStatus(await api('GET', '/apis/batch/v1beta1/cronjobs'), 404, 'NotFound');
    isStatus(await api('GET', '/api/v1/namespaces/default/bindings'), 405, 'MethodNotAllowed');
    isStatus(await api('DELETE', '/api/v1/namespaces'), 405, 'MethodNotAllowed');
    const np = await api('GET', '/no/such/path');
    assert.equal(np.status, 404);
  });

  it('serves discovery documents', async () => {
    const apis = await api('GET', '/api');
    assert.deepEqual(apis.json.versions, ['v1']);
    const core = await api('GET', '/api/v1');
    const pods = core.json.resources.find((r: any) => r.name === 'pods');
    assert.equal(pods.kind, 'Pod');
    assert.equal(pods.namespaced, true);
    assert.deepEqual(pods.shortNames, ['po']);
    assert.deepEqual(pods.categories, ['all']);
    assert.ok(core.json.resources.some((r: any) => r.name === 'pods/status'));
    const groups = await api('GET', '/apis');
    const apps = groups.json.groups.find((g: any) => g.name === 'apps');
    assert.deepEqual(apps.preferredVersion, { groupVersion: 'apps/v1', version: 'v1' });
    assert.ok(
      !groups.json.groups.some((g: any) => g.versions.some((v: any) => /alpha|beta/.test(v.version))),
      'beta and alpha off by default',
    );
    const autoscaling = await api('GET', '/apis/autoscaling');
    assert.equal(autoscaling.json.preferredVersion.version, 'v2');
    const agg = await api('GET', '/apis', {
      headers: {
        accept: 'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json',
      },
    });
    assert.equal(
      agg.headers['content-type'],
      'application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList',
    );
    assert.equal(agg.json.kind, 'APIGroupDiscoveryList');
    const dep = agg.json.items
      .find((i: any) => i.metadata.name === 'apps')
      .versions[0].resources.find((r: any) => r.resource === 'deployments');
    assert.equal(dep.scope, 'Namespaced');
    assert.deepEqual(dep.responseKind, { group: 'apps', version: 'v1', kind: 'Deployment' });
    assert.ok(
      dep.subresources.some((s: any) => s.subresource === 'scale' && s.responseKind.kind === 'Scale'),
    );
    const version = await api('GET', '/version');
    assert.equal(version.json.major, '1');
  });

  it('serves health endpoints with verbose, exclude and single checks', async () => {
    for (const p of ['/healthz', '/livez', '/readyz']) {
      const r = await api('GET', p);
      assert.equal(r.status, 200);
      assert.equal(r.body.toString(), 'ok');
    }
    const v = await api('GET', '/readyz?verbose');
    assert.match(v.body.toString(), /^\[\+\]ping ok$/m);
    assert.match(v.body.toString(), /^\[\+\]etcd ok$/m);
    assert.match(v.body.toString(), /^\[\+\]poststarthook\/bootstrap-controller ok$/m);
    assert.match(v.body.toString(), /^\[\+\]shutdown ok$/m);
    assert.match(v.body.toString(), /readyz check passed\n$/);
    const ex = await api('GET', '/livez?verbose&exclude=etcd');
    assert.match(ex.body.toString(), /^\[\+\]etcd excluded: ok$/m);
    assert.equal((await api('GET', '/livez/ping')).body.toString(), 'ok');
    assert.equal((await api('GET', '/livez/nonexistent')).status, 404);
  });
});
