// nodes/<scheme:name:port>/proxy: request bodies stream to the upstream and its
// answer comes back; an upstream that answers before reading the body leaves the
// client's keep-alive connection usable.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('resource API: proxying to a node', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let upstream: Server;
  let base = '';

  before(async () => {
    // /echo answers with the bytes it read; /early answers at once, never reads, and
    // closes the connection (so the rest of the body is never taken from the apiserver).
    upstream = createServer((req, res) => {
      if (req.url?.startsWith('/early')) {
        res.setHeader('connection', 'close');
        res.end('early', () => req.socket.destroy());
        return;
      }
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => res.end(Buffer.concat(chunks)));
    });
    await new Promise<void>((r) => upstream.listen(0, '127.0.0.1', r));
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    const created = await api('POST', '/api/v1/nodes', {
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: 'proxied' } },
    });
    assert.equal(created.status, 201, created.json?.message);
    const status = await api('PATCH', '/api/v1/nodes/proxied/status', {
      body: { status: { addresses: [{ type: 'InternalIP', address: '127.0.0.1' }] } },
      contentType: 'application/merge-patch+json',
    });
    assert.equal(status.status, 200, status.json?.message);
    base = `/api/v1/nodes/http:proxied:${(upstream.address() as AddressInfo).port}/proxy`;
  });
  after(async () => {
    await api.close();
    await srv.stop();
    upstream.close();
  });

  it('streams a large body upstream and its answer back', async () => {
    const body = Buffer.alloc(5 * 1024 * 1024, 'x'); // above the 3 MiB limit of API bodies
    const r = await api('POST', `${base}/echo`, { body, contentType: 'application/octet-stream' });
    assert.equal(r.status, 200);
    assert.equal(r.body.length, body.length);
    assert.ok(r.body.equals(body));
  });

  it('keeps the connection usable when the upstream answers before reading the body', async () => {
    for (let i = 0; i < 3; i++) {
      const r = await api('POST', `${base}/early`, {
        body: Buffer.alloc(2 * 1024 * 1024, 'y'),
        contentType: 'application/octet-stream',
      });
      // 200 "early", or 500 when the proxy's write of the body broke first (EPIPE): a race.
      if (r.status === 200) assert.equal(r.body.toString(), 'early');
      else assert.match(r.json?.message ?? '', /EPIPE|ECONNRESET|closed/, r.body.toString());
      // The next request on the same keep-alive connection is answered.
      const next = await api('GET', '/api/v1/nodes/proxied');
      assert.equal(next.status, 200);
    }
  });
});
