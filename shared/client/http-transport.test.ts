// The client's transport (node:http2 / node:https) against real servers on 127.0.0.1: TLS with
// h2, TLS offering HTTP/1.1 only (ALPN fallback), plain http; bodies on every method (DELETE
// too), streamed bodies read as they come and aborted, header timeouts, abort signals, close's
// grace, and rest.ts's retry of a GET whose connection was reset.
import assert from 'node:assert/strict';
import { HttpTransport } from './http-transport';
import { RestClient, Transport } from './rest';
import { isAbortError, isProbableEOF } from './errors';
import { echo, startServer, testPKI, type Handler, type TestServer } from './http-transport.test-support';

async function tlsTransport(
  opts: ConstructorParameters<typeof HttpTransport>[0] = {},
): Promise<HttpTransport> {
  const { ca } = await testPKI();
  return new HttpTransport({ ...opts, tls: { ca: ca.certPem, ...opts.tls } });
}

async function json(
  t: HttpTransport,
  origin: string,
  method: string,
  path: string,
  body?: string,
): Promise<any> {
  const res = await t.request({ origin, path, method, body, headers: { authorization: 'Bearer x' } });
  assert.equal(res.statusCode, 200);
  return { ...(JSON.parse(await res.body.text()) as object), headers: res.headers };
}

describe('shared/client: HTTP transport on node:http2 and node:https', function () {
  this.timeout(30_000);
  const servers: TestServer[] = [];
  const transports: HttpTransport[] = [];
  const serve = async (kind: Parameters<typeof startServer>[0], h: Handler = echo) => {
    const s = await startServer(kind, h);
    servers.push(s);
    return s;
  };
  const transport = async (opts?: ConstructorParameters<typeof HttpTransport>[0]) => {
    const t = await tlsTransport(opts);
    transports.push(t);
    return t;
  };
  afterEach(async () => {
    await Promise.all(transports.splice(0).map((t) => t.close(0)));
    await Promise.all(servers.splice(0).map((s) => s.close()));
  });

  for (const kind of ['h2', 'h1-tls', 'http'] as const) {
    it(`GET, POST and DELETE with a body on ${kind}, on one connection`, async () => {
      const s = await serve(kind);
      const t = await transport();
      const got = await json(t, s.origin, 'GET', '/a?b=c');
      assert.deepEqual([got.method, got.path, got.body, got.auth], ['GET', '/a?b=c', '', 'Bearer x']);
      assert.equal(got.version, kind === 'h2' ? '2.0' : '1.1');
      // Repeated headers come as a list, as undici gives them.
      assert.deepEqual(got.headers['x-multi'], ['a', 'b']);
      const posted = await json(t, s.origin, 'POST', '/p', '{"x":"é"}');
      assert.deepEqual([posted.method, posted.body, posted.contentLength], ['POST', '{"x":"é"}', '10']);
      const deleted = await json(t, s.origin, 'DELETE', '/d', '{"propagationPolicy":"Background"}');
      assert.deepEqual([deleted.method, deleted.body], ['DELETE', '{"propagationPolicy":"Background"}']);
      assert.equal(s.connections.length, 1, 'one keep-alive connection or session');
    });
  }

  it('speaks HTTP/1.1 with http2: false to a server offering h2', async () => {
    const s = await serve('h2');
    const t = await transport({ http2: false });
    assert.equal((await json(t, s.origin, 'GET', '/')).version, '1.1');
  });

  it('reads a streamed body as it comes, and an abort ends it on the server', async () => {
    for (const kind of ['h2', 'h1-tls'] as const) {
      let serverClosed!: () => void;
      const closed = new Promise<void>((r) => (serverClosed = r));
      const s = await serve(kind, (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        let n = 0;
        const tick = setInterval(() => res.write(`{"n":${n++}}\n`), 20);
        req.once('close', () => (clearInterval(tick), serverClosed()));
        res.once('close', () => (clearInterval(tick), serverClosed()));
      });
      const t = await transport();
      const ac = new AbortController();
      const res = await t.request({ origin: s.origin, path: '/watch', method: 'GET', signal: ac.signal });
      const lines: string[] = [];
      let err: unknown;
      try {
        for await (const chunk of res.body) {
          lines.push(...String(chunk).split('\n').filter(Boolean));
          if (lines.length >= 3) ac.abort();
        }
      } catch (e) {
        err = e;
      }
      assert.ok(isAbortError(err), `${kind}: ${String(err)}`);
      assert.deepEqual(lines.slice(0, 3), ['{"n":0}', '{"n":1}', '{"n":2}']);
      await closed;
    }
  });

  it('fails with ERR_HEADERS_TIMEOUT when no response comes, and the next request goes through', async () => {
    let first = true;
    const s = await serve('h2', (req, res) => {
      if (first) return void (first = false); // never answered
      echo(req, res);
    });
    const t = await transport();
    await assert.rejects(
      t.request({ origin: s.origin, path: '/slow', method: 'GET', headersTimeout: 200 }),
      (e: any) => e.code === 'ERR_HEADERS_TIMEOUT',
    );
    assert.equal((await json(t, s.origin, 'GET', '/next')).path, '/next');
  });

  it("rejects with the signal's abort before the response, and at once when aborted already", async () => {
    const s = await serve('h2', () => {});
    const t = await transport();
    const ac = new AbortController();
    const p = t.request({ origin: s.origin, path: '/', method: 'GET', signal: ac.signal });
    setTimeout(() => ac.abort(), 50);
    await assert.rejects(p, (e) => isAbortError(e));
    await assert.rejects(t.request({ origin: s.origin, path: '/', method: 'GET', signal: ac.signal }), (e) =>
      isAbortError(e),
    );
  });

  it('an unread body that is aborted or cut does not raise an unhandled error', async () => {
    const s = await serve('h2', (_req, res) => {
      res.writeHead(200);
      res.write('x');
    });
    const t = await transport();
    const ac = new AbortController();
    const aborted = await t.request({ origin: s.origin, path: '/', method: 'GET', signal: ac.signal });
    const cut = await t.request({ origin: s.origin, path: '/', method: 'GET' });
    ac.abort();
    s.sessions[0].destroy();
    await new Promise((r) => setTimeout(r, 200));
    assert.ok(aborted.body.destroyed && cut.body.destroyed);
  });

  it('fails a body that stops for longer than bodyTimeout', async () => {
    const s = await serve('h2', (_req, res) => {
      res.writeHead(200);
      res.write('x');
    });
    const t = await transport();
    const res = await t.request({ origin: s.origin, path: '/', method: 'GET', bodyTimeout: 200 });
    await assert.rejects(res.body.text(), (e: any) => e.code === 'ERR_BODY_TIMEOUT');
  });

  it('close(grace) lets a short request finish, cuts a stream after the grace, and refuses new requests', async () => {
    const s = await serve('h2', (req, res) => {
      res.writeHead(200);
      if (req.url === '/short') setTimeout(() => res.end('done'), 100);
      else res.write('open');
    });
    const t = await transport();
    const stream = await t.request({ origin: s.origin, path: '/stream', method: 'GET' });
    const short = t.request({ origin: s.origin, path: '/short', method: 'GET' }).then((r) => r.body.text());
    await new Promise((r) => setTimeout(r, 20));
    const started = Date.now();
    const closing = t.close(500);
    assert.equal(await short, 'done');
    await assert.rejects(stream.body.text());
    await closing;
    const took = Date.now() - started;
    assert.ok(took >= 400 && took < 3000, `closed after ${took} ms`);
    await assert.rejects(t.request({ origin: s.origin, path: '/', method: 'GET' }), (e) => isProbableEOF(e));
  });

  for (const kind of ['h2', 'h1-tls'] as const) {
    it(`rest.ts retries a GET whose connection was reset (${kind})`, async () => {
      let calls = 0;
      const s = await serve(kind, (req, res) => {
        if (++calls === 1) {
          // Cut the connection under the first GET.
          if ('stream' in req) (req as any).stream.session.destroy();
          else req.socket.destroy();
          return;
        }
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{"kind":"Thing","n":2}');
      });
      const { ca } = await testPKI();
      const tr = new Transport({ server: s.origin, caPem: ca.certPem });
      try {
        const rest = new RestClient(tr, { qps: -1 });
        assert.deepEqual(await rest.request({ method: 'GET', path: '/thing' }), { kind: 'Thing', n: 2 });
        assert.equal(calls, 2);
        // A POST is not retried: the server may have acted on it.
        calls = 0;
        await assert.rejects(rest.request({ method: 'POST', path: '/thing', body: {} }), (e) =>
          isProbableEOF(e),
        );
        assert.equal(calls, 1);
      } finally {
        await tr.close(0);
      }
    });
  }
});
