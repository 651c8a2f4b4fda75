import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '../../shared/client/client';
import { FakeClock } from '../../shared/client/clock';
import { forbiddenMessage, NodeAuth, requestAttributes } from './auth';

/** A stand-in apiserver answering TokenReviews and SubjectAccessReviews. */
function fakeAPIServer(): Promise<{ server: Server; url: string; calls: any[] }> {
  const calls: any[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d) => (body += d));
    req.on('end', () => {
      const obj = JSON.parse(body);
      calls.push({ path: req.url, obj });
      res.setHeader('content-type', 'application/json');
      if (req.url?.startsWith('/apis/authentication.k8s.io/v1/tokenreviews')) {
        const ok = obj.spec.token === 'good';
        return res.end(
          JSON.stringify({
            ...obj,
            status: ok
              ? { authenticated: true, user: { username: 'alice', uid: '1', groups: ['devs'] } }
              : { authenticated: false },
          }),
        );
      }
      if (req.url?.startsWith('/apis/authorization.k8s.io/v1/subjectaccessreviews')) {
        const ra = obj.spec.resourceAttributes;
        const allowed = obj.spec.user === 'alice' && ra.subresource === 'stats';
        return res.end(JSON.stringify({ ...obj, status: { allowed } }));
      }
      res.statusCode = 404;
      res.end('{}');
    });
  });
  return new Promise((r) =>
    server.listen(0, '127.0.0.1', () =>
      r({ server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, calls }),
    ),
  );
}

const req = (headers: Record<string, string> = {}, method = 'GET'): IncomingMessage =>
  ({ headers, method, socket: {} }) as any;

describe('nodeagent/server: authentication and authorization', () => {
  it('maps paths to nodes subresources like the kubelet', () => {
    const u = { name: 'u', groups: [] };
    const sub = (p: string) => requestAttributes(u, 'GET', p, 'n1').subresource;
    assert.equal(sub('/stats/summary'), 'stats');
    assert.equal(sub('/stats'), 'stats');
    assert.equal(sub('/statsx'), 'proxy');
    assert.equal(sub('/metrics/cadvisor'), 'metrics');
    assert.equal(sub('/logs/pods'), 'log');
    assert.equal(sub('/pods'), 'proxy');
    assert.equal(sub('/containerLogs/default/p/c'), 'proxy');
    const a = requestAttributes(u, 'POST', '/exec/a/b/c', 'n1');
    assert.deepEqual([a.verb, a.resource, a.name, a.apiVersion], ['create', 'nodes', 'n1', 'v1']);
    assert.equal(forbiddenMessage(a), 'Forbidden (user=u, verb=create, resource=nodes, subresource=proxy)');
  });

  it('anonymous requests: allowed or 401 depending on --anonymous-auth', async () => {
    const base = {
      nodeName: 'n1',
      x509: false,
      webhookAuthentication: false,
      webhookAuthenticationCacheTTLMs: 0,
      authorizationMode: 'AlwaysAllow' as const,
      authorizedCacheTTLMs: 0,
      unauthorizedCacheTTLMs: 0,
    };
    const on = await new NodeAuth({ ...base, anonymous: true }).check(req(), '/pods');
    assert.ok(on.ok && on.user.name === 'system:anonymous' && on.user.groups[0] === 'system:unauthenticated');
    const off = await new NodeAuth({ ...base, anonymous: false }).check(req(), '/pods');
    assert.deepEqual(off, { ok: false, code: 401, message: 'Unauthorized' });
  });

  it('webhook: TokenReview for bearer tokens, SubjectAccessReview per request, answers cached', async () => {
    const api = await fakeAPIServer();
    const client = Client.create({ server: api.url }, { qps: -1, contentType: 'application/json' });
    const clock = new FakeClock();
    try {
      const auth = new NodeAuth({
        nodeName: 'n1',
        anonymous: true,
        x509: false,
        webhookAuthentication: true,
        webhookAuthenticationCacheTTLMs: 120_000,
        authorizationMode: 'Webhook',
        authorizedCacheTTLMs: 300_000,
        unauthorizedCacheTTLMs: 30_000,
        client,
        clock,
      });
      const ok = await auth.check(req({ authorization: 'Bearer good' }), '/stats/summary');
      assert.ok(ok.ok && ok.user.name === 'alice');
      const sar = api.calls.find((c) => c.path.includes('subjectaccessreviews')).obj;
      assert.deepEqual(sar.spec.resourceAttributes, {
        verb: 'get',
        group: '',
        version: 'v1',
        resource: 'nodes',
        subresource: 'stats',
        name: 'n1',
      });
      assert.deepEqual(sar.spec.groups, ['devs']);
      const denied = await auth.check(req({ authorization: 'Bearer good' }), '/pods');
      assert.deepEqual(denied, {
        ok: false,
        code: 403,
        message: 'Forbidden (user=alice, verb=get, resource=nodes, subresource=proxy)',
      });
      // A token the review rejects is 401, even with anonymous requests allowed.
      assert.deepEqual(await auth.check(req({ authorization: 'Bearer bad' }), '/pods'), {
        ok: false,
        code: 401,
        message: 'Unauthorized',
      });
      const n = api.calls.length;
      await auth.check(req({ authorization: 'Bearer good' }), '/stats/summary');
      assert.equal(api.calls.length, n, 'cached');
      clock.step(300_001);
      await auth.check(req({ authorization: 'Bearer good' }), '/stats/summary');
      assert.equal(api.calls.length, n + 2, 'both caches expired');
    } finally {
      await client.close();
      api.server.close();
    }
  });
});
