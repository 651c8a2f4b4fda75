// nodes/, pods/ and services/<id>/proxy: request bodies stream to the upstream and
// its answer comes back; an upstream that answers before reading the body leaves
// the client's keep-alive connection usable; pods and services are reached at a
// pod's IP, never at a loopback one.
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { networkInterfaces } from 'node:os';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('resource API: proxying to nodes, pods and services', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  let upstream: Server;
  let base = '';
  let port = 0;

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
      req.on('end', () =>
        res.end(req.url?.startsWith('/echo') ? Buffer.concat(chunks) : `${req.method} ${req.url}`),
      );
    });
    await new Promise<void>((r) => upstream.listen(0, '0.0.0.0', r));
    port = (upstream.address() as AddressInfo).port;
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
    base = `/api/v1/nodes/http:proxied:${port}/proxy`;
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

  it('reuses its connections to an upstream from one request to the next', async () => {
    const sockets = new Set<unknown>();
    const onConnection = (sock: unknown) => sockets.add(sock);
    upstream.on('connection', onConnection);
    try {
      for (let i = 0; i < 5; i++) {
        const r = await api('GET', `${base}/plain?i=${i}`);
        assert.equal(r.status, 200);
        assert.equal(r.body.toString(), `GET /plain?i=${i}`);
      }
    } finally {
      upstream.off('connection', onConnection);
    }
    // A connection (and a TLS handshake, for a node agent) per request was the cost before.
    assert.equal(sockets.size, 1, `${sockets.size} connections for 5 sequential requests`);
  });

  describe('pods and services', () => {
    const ns = '/api/v1/namespaces/default';
    // Pods are reached at their IP, which must not be a loopback one: use this host's address.
    const hostIP = Object.values(networkInterfaces())
      .flat()
      .find((a) => a && a.family === 'IPv4' && !a.internal)?.address;

    const pod = async (name: string, ip: string) => {
      const spec = { containers: [{ name: 'c', image: 'x', ports: [{ containerPort: port }] }] };
      const c = await api('POST', `${ns}/pods`, {
        body: { apiVersion: 'v1', kind: 'Pod', metadata: { name }, spec },
      });
      assert.equal(c.status, 201, c.json?.message);
      const st = await api('PATCH', `${ns}/pods/${name}/status`, {
        body: { status: { podIP: ip, podIPs: [{ ip }] } },
        contentType: 'application/merge-patch+json',
      });
      assert.equal(st.status, 200, st.json?.message);
    };

    before(async function () {
      assert.ok(hostIP, 'this host has no non-loopback IPv4 address');
      await pod('web', hostIP);
      await pod('local', '127.0.0.1');
      const svc = await api('POST', `${ns}/services`, {
        body: {
          apiVersion: 'v1',
          kind: 'Service',
          metadata: { name: 'web' },
          spec: { ports: [{ name: 'http', port: 80, targetPort: port }] },
        },
      });
      assert.equal(svc.status, 201, svc.json?.message);
      const eps = await api('POST', `${ns}/endpoints`, {
        body: {
          apiVersion: 'v1',
          kind: 'Endpoints',
          metadata: { name: 'web' },
          subsets: [
            {
              addresses: [{ ip: hostIP, targetRef: { kind: 'Pod', namespace: 'default', name: 'web' } }],
              ports: [{ name: 'http', port }],
            },
          ],
        },
      });
      assert.equal(eps.status, 201, eps.json?.message);
    });

    it('pods/<name>/proxy goes to the pod IP and the first declared port, with path and query', async () => {
      const r = await api('GET', `${ns}/pods/web/proxy/some/path?a=1`);
      assert.equal(r.status, 200, r.body.toString());
      assert.equal(r.body.toString(), 'GET /some/path?a=1');
      const body = Buffer.from('payload');
      const echoed = await api('POST', `${ns}/pods/http:web:${port}/proxy/echo`, { body });
      assert.equal(echoed.body.toString(), 'payload');
    });

    it('answers 503 when the upstream cannot be reached, in the words of Go', async () => {
      const closed = createServer();
      await new Promise<void>((r) => closed.listen(0, '0.0.0.0', r));
      const deadPort = (closed.address() as AddressInfo).port;
      await new Promise((r) => closed.close(r));
      for (const path of [
        `${ns}/pods/web:${deadPort}/proxy/`,
        `/api/v1/nodes/http:proxied:${deadPort}/proxy/`,
      ]) {
        const r = await api('GET', path);
        assert.equal(r.status, 503, path);
        assert.equal(r.json.reason, 'ServiceUnavailable');
        assert.match(
          r.json.message,
          /^error trying to reach service: dial tcp [\d.]+:\d+: connect: connection refused$/,
        );
      }
    });

    it('refuses a loopback pod IP and a malformed id', async () => {
      const r = await api('GET', `${ns}/pods/local/proxy/`);
      assert.equal(r.status, 400);
      assert.equal(r.json.message, 'address not allowed');
      const bad = await api('GET', `${ns}/pods/ftp:web:80/proxy/`);
      assert.equal(bad.status, 400);
      assert.equal(bad.json.message, 'invalid pod request "ftp:web:80"');
    });

    it('services/<name:port>/proxy picks an endpoint of a pod, by port name or number', async () => {
      for (const id of ['web:http', 'web:80', 'http:web:80']) {
        const r = await api('GET', `${ns}/services/${id}/proxy/x`);
        assert.equal(r.status, 200, `${id}: ${r.body.toString()}`);
        assert.equal(r.body.toString(), 'GET /x');
      }
      const noPort = await api('GET', `${ns}/services/web:81/proxy/x`);
      assert.equal(noPort.status, 503);
      assert.equal(noPort.json.reason, 'ServiceUnavailable');
      assert.equal(noPort.json.message, 'no service port 81 found for service "web"');
      const unnamed = await api('GET', `${ns}/services/web/proxy/x`);
      assert.equal(unnamed.status, 503);
      assert.equal(unnamed.json.message, 'no endpoints available for service "web"');
      const missing = await api('GET', `${ns}/services/nothing/proxy/x`);
      assert.equal(missing.status, 404);
    });

    it('exec, attach and portforward go to the node of the pod (test-e2e/streaming.test.ts has the rest)', async () => {
      for (const sub of ['exec?command=ls', 'attach', 'portforward']) {
        // As Kubernetes: the location (pod, container, node) is resolved before the upgrade is looked at.
        const r = await api('POST', `${ns}/pods/web/${sub}`);
        assert.equal(r.status, 400, sub);
        assert.equal(r.json.message, 'pod web does not have a host assigned');
        const missing = await api('POST', `${ns}/pods/nothing/${sub}`);
        assert.equal(missing.status, 404, sub);
      }
    });
  });
});
