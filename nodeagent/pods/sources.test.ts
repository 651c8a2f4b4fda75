import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { KubeObject } from '../../shared/client/types';
import { HttpSource } from './sources';

describe('nodeagent/pods: the --manifest-url source', () => {
  it('fetches a PodList with the configured headers, keeps the last good set on errors', async () => {
    let body = JSON.stringify({
      kind: 'PodList',
      apiVersion: 'v1',
      items: [
        {
          kind: 'Pod',
          apiVersion: 'v1',
          metadata: { name: 'a' },
          spec: { containers: [{ name: 'c', image: 'x:1' }] },
        },
        {
          kind: 'Pod',
          apiVersion: 'v1',
          metadata: { name: 'b', namespace: 'ns' },
          spec: { containers: [{ name: 'c', image: 'x:1' }] },
        },
      ],
    });
    let status = 200;
    let seen: IncomingHttpHeaders = {};
    const server = createServer((req, res) => {
      seen = req.headers;
      res.statusCode = status;
      res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/pods`;
    const got: KubeObject[][] = [];
    const src = new HttpSource(url, { 'X-Token': ['t1'], Accept: ['application/json'] }, 60_000, {
      nodeName: 'n1',
      onPods: (source, pods) => {
        assert.equal(source, 'http');
        got.push(pods);
      },
    });
    try {
      assert.equal(await src.read(), true);
      assert.equal(seen['x-token'], 't1');
      assert.deepEqual(
        got[0].map((p) => `${p.metadata.namespace}/${p.metadata.name}`),
        ['default/a-n1', 'ns/b-n1'],
      );
      assert.equal(got[0][0].metadata.annotations!['kubernetes.io/config.source'], 'http');
      assert.equal(got[0][0].spec.tolerations, undefined, 'only file pods get the NoExecute toleration');
      assert.equal(await src.read(), false, 'unchanged content is not delivered again');
      status = 500;
      body = 'boom';
      assert.equal(await src.read(), false);
      status = 200;
      body = '';
      assert.equal(await src.read(), true);
      assert.deepEqual(got[1], [], 'an empty answer means no pods');
    } finally {
      src.stop();
      server.close();
    }
  });
});
