// Status errors byte for byte as kube-apiserver writes them (Go field order:
// kind, apiVersion, metadata, status, message, reason, details, code; empty
// details fields left out). Clients such as the Python client's e2e suite
// compare these strings.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { goStatus, requestEntityTooLarge, timeout, tooManyRequests } from '../../shared/api/status';

describe('Status errors on the wire', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const cms = '/api/v1/namespaces/default/configmaps';
  const deploys = '/apis/apps/v1/namespaces/default/deployments';
  const deployment = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'x' },
    spec: {
      selector: { matchLabels: { a: 'b' } },
      template: { metadata: { labels: { a: 'b' } }, spec: { containers: [{ name: 'c', image: 'i' }] } },
    },
  };

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const text = (r: { body: Buffer }) => r.body.toString().trimEnd();

  it('writes AlreadyExists with details before code and the group only when set', async () => {
    assert.equal((await api('POST', deploys, { body: deployment })).status, 201);
    const again = await api('POST', deploys, { body: deployment });
    assert.equal(
      text(again),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"deployments.apps \\"x\\" already exists","reason":"AlreadyExists","details":{"name":"x","group":"apps","kind":"deployments"},"code":409}',
    );
    const cm = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } };
    assert.equal((await api('POST', cms, { body: cm })).status, 201);
    assert.equal(
      text(await api('POST', cms, { body: cm })),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"c\\" already exists","reason":"AlreadyExists","details":{"name":"c","kind":"configmaps"},"code":409}',
    );
  });

  it('writes NotFound, Conflict and the unknown-path 404 like Go', async () => {
    assert.equal(
      text(await api('GET', `${cms}/nope`)),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"configmaps \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"configmaps"},"code":404}',
    );
    assert.equal(
      text(await api('GET', '/api/v1/namespaces/default/nothings')),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"the server could not find the requested resource","reason":"NotFound","details":{},"code":404}',
    );
    const cur = (await api('GET', `${cms}/c`)).json;
    assert.equal((await api('PUT', `${cms}/c`, { body: { ...cur, data: { a: '1' } } })).status, 200);
    assert.equal(
      text(await api('PUT', `${cms}/c`, { body: { ...cur, data: { a: '2' } } })),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Operation cannot be fulfilled on configmaps \\"c\\": the object has been modified; please apply your changes to the latest version and try again","reason":"Conflict","details":{"name":"c","kind":"configmaps"},"code":409}',
    );
  });

  it('writes Invalid with causes in reason, message, field order', async () => {
    const r = await api('POST', cms, {
      body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c2' }, data: { 'bad key': 'v' } },
    });
    assert.equal(r.status, 422);
    const body = text(r);
    assert.ok(
      body.startsWith(
        '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"ConfigMap \\"c2\\" is invalid: data[bad key]: Invalid value: \\"bad key\\": ',
      ),
      body,
    );
    assert.ok(
      body.includes(
        '"reason":"Invalid","details":{"name":"c2","kind":"ConfigMap","causes":[{"reason":"FieldValueInvalid","message":"Invalid value: \\"bad key\\": ',
      ),
      body,
    );
    assert.ok(body.endsWith('","field":"data[bad key]"}]},"code":422}'), body);
  });

  it('writes admission rejections (a missing namespace) and too-large bodies like Go', async () => {
    assert.equal(
      text(
        await api('POST', '/api/v1/namespaces/nope/configmaps', {
          body: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'c' } },
        }),
      ),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"namespaces \\"nope\\" not found","reason":"NotFound","details":{"name":"nope","kind":"namespaces"},"code":404}',
    );
    const big = await api('POST', cms, {
      body: JSON.stringify({
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'b' },
        data: { a: 'x'.repeat(4 << 20) },
      }),
    });
    assert.equal(
      text(big),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}',
    );
  });

  it('writes a Timeout for a resourceVersion not reached yet with causes and retryAfterSeconds', async () => {
    const r = await api(
      'GET',
      `${cms}?resourceVersion=99999999&resourceVersionMatch=NotOlderThan&timeoutSeconds=1`,
    );
    assert.equal(r.status, 504);
    assert.match(
      text(r),
      /^\{"kind":"Status","apiVersion":"v1","metadata":\{\},"status":"Failure","message":"Timeout: Too large resource version: 99999999, current: \d+","reason":"Timeout","details":\{"causes":\[\{"reason":"ResourceVersionTooLarge","message":"Too large resource version"\}\],"retryAfterSeconds":1\},"code":504\}$/,
    );
  });

  it('orders and trims any Status a webhook or peer hands over', () => {
    const s = goStatus({
      code: 403,
      details: {
        retryAfterSeconds: 0,
        causes: [{ field: 'f', message: 'm', reason: '' }],
        kind: 'pods',
        group: '',
      },
      reason: 'Forbidden',
      message: 'no',
      status: 'Failure',
      metadata: {},
      apiVersion: 'v1',
      kind: 'Status',
    });
    assert.equal(
      JSON.stringify(s),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"no","reason":"Forbidden","details":{"kind":"pods","causes":[{"message":"m","field":"f"}]},"code":403}',
    );
  });

  it('builds timeouts, throttling and too-large errors as apierrors does', () => {
    assert.equal(
      JSON.stringify(timeout('request did not complete within the allotted timeout').status),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: request did not complete within the allotted timeout","reason":"Timeout","details":{},"code":504}',
    );
    assert.equal(
      JSON.stringify(tooManyRequests('too many requests, please try again later', 1).status),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"too many requests, please try again later","reason":"TooManyRequests","details":{"retryAfterSeconds":1},"code":429}',
    );
    assert.equal(
      JSON.stringify(requestEntityTooLarge(3145728).status),
      '{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Request entity too large: limit is 3145728","reason":"RequestEntityTooLarge","code":413}',
    );
  });
});
