import assert from 'node:assert/strict';
import { parseRequestInfo } from './request-info';

const info = (method: string, url: string) => {
  const [path, q] = url.split('?');
  return parseRequestInfo(method, path, new URLSearchParams(q ?? ''));
};

describe('request info', () => {
  it('parses resource paths into verb, group, version, namespace, resource, name, subresource', () => {
    const i = info('GET', '/apis/apps/v1/namespaces/ns1/deployments/web/scale');
    assert.deepEqual(
      [i.isResourceRequest, i.verb, i.apiGroup, i.apiVersion, i.namespace, i.resource, i.name, i.subresource],
      [true, 'get', 'apps', 'v1', 'ns1', 'deployments', 'web', 'scale'],
    );
    assert.equal(info('GET', '/api/v1/pods').verb, 'list');
    assert.equal(info('GET', '/api/v1/pods?watch=true').verb, 'watch');
    assert.equal(info('GET', '/api/v1/pods?watch=1').verb, 'watch');
    assert.equal(info('GET', '/api/v1/pods?watch=false').verb, 'list');
    assert.equal(info('GET', '/api/v1/watch/namespaces/a/pods').verb, 'watch');
    assert.equal(info('POST', '/api/v1/namespaces/a/pods').verb, 'create');
    assert.equal(info('PUT', '/api/v1/namespaces/a/pods/p').verb, 'update');
    assert.equal(info('PATCH', '/api/v1/namespaces/a/pods/p').verb, 'patch');
    assert.equal(info('DELETE', '/api/v1/namespaces/a/pods/p').verb, 'delete');
    assert.equal(info('DELETE', '/api/v1/namespaces/a/pods').verb, 'deletecollection');
  });

  it('treats namespaces themselves and their status/finalize subresources right', () => {
    const ns = info('GET', '/api/v1/namespaces/foo');
    assert.deepEqual([ns.resource, ns.name, ns.namespace], ['namespaces', 'foo', 'foo']);
    const fin = info('PUT', '/api/v1/namespaces/foo/finalize');
    assert.deepEqual([fin.resource, fin.name, fin.subresource], ['namespaces', 'foo', 'finalize']);
    assert.equal(info('GET', '/api/v1/namespaces').verb, 'list');
  });

  it('takes a single-object fieldSelector as the name', () => {
    assert.equal(info('GET', '/api/v1/namespaces/a/pods?fieldSelector=metadata.name%3Dp1').name, 'p1');
  });

  it('leaves non-resource paths alone', () => {
    for (const p of ['/healthz', '/api', '/apis', '/apis/apps', '/version', '/openapi/v2']) {
      assert.equal(info('GET', p).isResourceRequest, false, p);
    }
  });
});
