import assert from 'node:assert/strict';
import { parseRuntimeConfig } from './runtime-config';

describe('--runtime-config', () => {
  it('serves GA versions only by default', () => {
    const rc = parseRuntimeConfig({});
    assert.equal(rc.versionEnabled('', 'v1'), true);
    assert.equal(rc.versionEnabled('apps', 'v1'), true);
    assert.equal(rc.versionEnabled('resource.k8s.io', 'v1beta1'), false);
    assert.equal(rc.versionEnabled('coordination.k8s.io', 'v1alpha2'), false);
  });
  it('applies keys from general to specific', () => {
    const rc = parseRuntimeConfig({
      'api/all': 'true',
      'resource.k8s.io/v1beta2': 'false',
      'api/alpha': 'false',
    });
    assert.equal(rc.versionEnabled('resource.k8s.io', 'v1beta1'), true);
    assert.equal(rc.versionEnabled('resource.k8s.io', 'v1beta2'), false);
    assert.equal(rc.versionEnabled('coordination.k8s.io', 'v1alpha2'), false);
    const r2 = parseRuntimeConfig({ 'apps/v1/deployments': 'false', v1: 'true', 'batch/v1': '' });
    assert.equal(r2.resourceEnabled('apps', 'v1', 'deployments'), false);
    assert.equal(r2.resourceEnabled('apps', 'v1', 'replicasets'), true);
    assert.equal(r2.versionEnabled('batch', 'v1'), true);
  });
  it('warns on api/legacy and rejects bad values', () => {
    assert.deepEqual(parseRuntimeConfig({ 'api/legacy': 'true' }).warnings.length, 1);
    assert.throws(() => parseRuntimeConfig({ 'apps/v1': 'maybe' }), /must be true or false/);
    assert.throws(
      () => parseRuntimeConfig({ 'nope/v9': 'true' }, new Set(['apps/v1'])),
      /unknown api groupVersion/,
    );
  });
});
