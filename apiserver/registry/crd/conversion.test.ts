// CRD conversion webhooks over real HTTPS: a two-version CRD whose webhook
// (a test HTTPS server on 127.0.0.1 with its own CA) turns v1's host/port
// into v2's endpoint and back; get, list, watch and writes in either version,
// and Kubernetes' errors when the webhook fails.
import assert from 'node:assert/strict';
import { createCA } from '../../../shared/pki/certs';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../../server/testing';
import { localHTTPS, type LocalHTTPS } from '../../auth/admission/test-support';
import { type API, crd, establish, sleep } from './test-support';

const V1 = '/apis/conv.example.com/v1/namespaces/default/widgets';
const V2 = '/apis/conv.example.com/v2/namespaces/default/widgets';

const preserve = { type: 'object', 'x-kubernetes-preserve-unknown-fields': true };
const schema = (spec: Record<string, unknown>) => ({
  openAPIV3Schema: {
    type: 'object',
    properties: { spec: { type: 'object', properties: spec }, status: preserve },
  },
});

/** The webhook's conversion: v1 {host, port} <-> v2 {endpoint: "host:port"}. */
function convert(obj: any, to: string): any {
  const out = structuredClone(obj);
  out.apiVersion = to;
  if (to.endsWith('/v2') && obj.spec && 'host' in obj.spec) {
    out.spec = { endpoint: `${obj.spec.host}:${obj.spec.port}` };
  } else if (to.endsWith('/v1') && obj.spec?.endpoint) {
    const [host, port] = String(obj.spec.endpoint).split(':');
    out.spec = { host, port: Number(port) };
  }
  return out;
}

describe('CRD conversion webhooks', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let api: API;
  let hook: LocalHTTPS;
  const reviews: any[] = [];
  let failing = false;

  before(async () => {
    const ca = await createCA('conversion-ca');
    hook = await localHTTPS(ca, async (body) => {
      reviews.push(body);
      const req = body.request;
      if (failing)
        return {
          body: {
            apiVersion: 'apiextensions.k8s.io/v1',
            kind: 'ConversionReview',
            response: { uid: req.uid, result: { status: 'Failure', message: 'cannot convert today' } },
          },
        };
      return {
        body: {
          apiVersion: 'apiextensions.k8s.io/v1',
          kind: 'ConversionReview',
          response: {
            uid: req.uid,
            result: { status: 'Success' },
            convertedObjects: req.objects.map((o: any) => convert(o, req.desiredAPIVersion)),
          },
        },
      };
    });
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    const obj = crd({
      group: 'conv.example.com',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: schema({ host: { type: 'string' }, port: { type: 'integer' } }),
        },
        { name: 'v2', served: true, storage: false, schema: schema({ endpoint: { type: 'string' } }) },
      ],
    });
    obj.spec.conversion = {
      strategy: 'Webhook',
      webhook: {
        conversionReviewVersions: ['v1'],
        clientConfig: { url: `${hook.url}/convert`, caBundle: hook.caBundle },
      },
    };
    await establish(api, obj);
  });
  after(async () => {
    await api?.close();
    await srv?.stop();
    await hook?.close();
  });

  const widget = (apiVersion: string, name: string, spec: any) => ({
    apiVersion,
    kind: 'Widget',
    metadata: { name, labels: { app: 'conv' } },
    spec,
  });

  it('returns an object written as v1 converted on get and list as v2', async () => {
    const c = await api('POST', V1, { body: widget('conv.example.com/v1', 'one', { host: 'a', port: 80 }) });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    assert.deepEqual(c.json.spec, { host: 'a', port: 80 });
    const got = await api('GET', `${V2}/one`);
    assert.equal(got.status, 200, JSON.stringify(got.json));
    assert.equal(got.json.apiVersion, 'conv.example.com/v2');
    assert.deepEqual(got.json.spec, { endpoint: 'a:80' });
    assert.equal(got.json.metadata.name, 'one');
    const list = await api('GET', V2);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.json.items.map((i: any) => [i.apiVersion, i.spec]),
      [['conv.example.com/v2', { endpoint: 'a:80' }]],
    );
    const review = reviews.find((r) => r.request.desiredAPIVersion === 'conv.example.com/v2');
    assert.equal(review.apiVersion, 'apiextensions.k8s.io/v1');
    assert.equal(review.kind, 'ConversionReview');
  });

  it('stores an object written as v2 in v1 form', async () => {
    const c = await api('POST', V2, { body: widget('conv.example.com/v2', 'two', { endpoint: 'b:90' }) });
    assert.equal(c.status, 201, JSON.stringify(c.json));
    assert.deepEqual(c.json.spec, { endpoint: 'b:90' });
    assert.deepEqual((await api('GET', `${V1}/two`)).json.spec, { host: 'b', port: 90 });
    const cur = (await api('GET', `${V2}/two`)).json;
    cur.spec.endpoint = 'c:91';
    const u = await api('PUT', `${V2}/two`, { body: cur });
    assert.equal(u.status, 200, JSON.stringify(u.json));
    assert.deepEqual((await api('GET', `${V1}/two`)).json.spec, { host: 'c', port: 91 });
    const p = await api('PATCH', `${V2}/two`, {
      body: { spec: { endpoint: 'd:92' } },
      headers: { 'content-type': 'application/merge-patch+json' },
    });
    assert.equal(p.status, 200, JSON.stringify(p.json));
    assert.deepEqual((await api('GET', `${V1}/two`)).json.spec, { host: 'd', port: 92 });
  });

  it('converts watch events', async () => {
    const list = (await api('GET', V2)).json;
    const watch = api(
      'GET',
      `${V2}?watch=true&timeoutSeconds=1&resourceVersion=${list.metadata.resourceVersion}`,
    );
    await sleep(100);
    await api('POST', V1, { body: widget('conv.example.com/v1', 'watched', { host: 'w', port: 1 }) });
    const events = (await watch).body
      .toString()
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    assert.deepEqual(
      events.map((e) => [e.type, e.object.apiVersion, e.object.metadata.name, e.object.spec]),
      [['ADDED', 'conv.example.com/v2', 'watched', { endpoint: 'w:1' }]],
    );
  });

  it("answers 500 with Kubernetes' message when the webhook fails", async () => {
    failing = true;
    try {
      const r = await api('GET', `${V2}/one`);
      assert.equal(r.status, 500);
      assert.equal(r.json.reason, 'InternalError');
      assert.equal(
        r.json.message,
        'Internal error occurred: conversion webhook for conv.example.com/v1, Kind=Widget failed: cannot convert today',
      );
      // The storage version needs no conversion.
      assert.equal((await api('GET', `${V1}/one`)).status, 200);
    } finally {
      failing = false;
    }
  });
});
