import assert from 'node:assert/strict';
import { isStreamingPath, parseStreamPath } from './streaming';

describe('nodeagent/server: streaming paths', () => {
  it("splits the kubelet's streaming paths, with and without the pod's uid", () => {
    assert.deepEqual(parseStreamPath('/exec/default/b/c'), {
      kind: 'exec',
      namespace: 'default',
      pod: 'b',
      container: 'c',
    });
    assert.deepEqual(parseStreamPath('/attach/ns/p/uid-1/c'), {
      kind: 'attach',
      namespace: 'ns',
      pod: 'p',
      uid: 'uid-1',
      container: 'c',
    });
    assert.deepEqual(parseStreamPath('/portForward/ns/p'), {
      kind: 'portForward',
      namespace: 'ns',
      pod: 'p',
    });
    assert.deepEqual(parseStreamPath('/portForward/ns/p/u'), {
      kind: 'portForward',
      namespace: 'ns',
      pod: 'p',
      uid: 'u',
    });
    assert.deepEqual(parseStreamPath('/run/ns/p/c%20x'), {
      kind: 'run',
      namespace: 'ns',
      pod: 'p',
      container: 'c x',
    });
  });

  it('refuses other shapes', () => {
    for (const p of ['/exec/ns/p', '/exec/a/b/c/d/e', '/portForward/ns', '/portforward/ns/p', '/logs/a/b/c'])
      assert.equal(parseStreamPath(p), undefined, p);
    assert.ok(isStreamingPath('/exec/a/b/c'));
    assert.ok(isStreamingPath('/portForward/a/b'));
    assert.ok(!isStreamingPath('/executive'));
    assert.ok(!isStreamingPath('/containerLogs/a/b/c'));
  });
});
