// The apiserver over HTTP/2 (its own server session) as node:http2's client sees
// it: the stream limit it announces, request bodies beyond a stream's window,
// client certificates, HEAD, and --goaway-chance.
import assert from 'node:assert/strict';
import * as http2 from 'node:http2';
import { startTestAPIServer, type TestAPIServer } from './testing';

interface Reply {
  status: number;
  headers: http2.IncomingHttpHeaders;
  body: Buffer;
}

function connect(srv: TestAPIServer): Promise<http2.ClientHttp2Session> {
  const c = http2.connect(srv.url, {
    ca: srv.config.caPem,
    cert: srv.config.certPem,
    key: srv.config.keyPem,
    servername: 'localhost',
  });
  return new Promise((resolve, reject) => {
    c.once('remoteSettings', () => resolve(c));
    c.once('error', reject);
  });
}

function call(c: http2.ClientHttp2Session, method: string, path: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = c.request(
      { ':method': method, ':path': path, accept: 'application/json', 'content-type': 'application/json' },
      { endStream: body === undefined },
    );
    let status = 0;
    let headers: http2.IncomingHttpHeaders = {};
    const parts: Buffer[] = [];
    req.on('response', (h) => {
      headers = h;
      status = Number(h[':status']);
    });
    req.on('data', (d: Buffer) => parts.push(d));
    req.on('end', () => resolve({ status, headers, body: Buffer.concat(parts) }));
    req.on('error', reject);
    if (body !== undefined) req.end(JSON.stringify(body));
  });
}

describe('apiserver over HTTP/2', function () {
  this.timeout(60_000);
  let srv: TestAPIServer | undefined;
  let c: http2.ClientHttp2Session | undefined;
  afterEach(async () => {
    c?.destroy();
    c = undefined;
    await srv?.stop();
    srv = undefined;
  });

  it('announces 100 streams per connection by default, as kube-apiserver, and the flag when set', async () => {
    srv = await startTestAPIServer();
    c = await connect(srv);
    assert.equal(c.remoteSettings.maxConcurrentStreams, 100);
    c.destroy();
    await srv.stop();
    srv = await startTestAPIServer({ http2MaxStreamsPerConnection: 7 });
    c = await connect(srv);
    assert.equal(c.remoteSettings.maxConcurrentStreams, 7);
  });

  it('takes a body beyond a stream window, from the client certificate user, and answers HEAD without a body', async () => {
    srv = await startTestAPIServer();
    c = await connect(srv);
    const big = 'x'.repeat(700 << 10);
    const created = await call(c, 'POST', '/api/v1/namespaces/default/configmaps', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'big' },
      data: { big },
    });
    assert.equal(created.status, 201, created.body.toString().slice(0, 300));
    const got = await call(c, 'GET', '/api/v1/namespaces/default/configmaps/big');
    assert.equal(got.status, 200);
    assert.equal(JSON.parse(got.body.toString()).data.big.length, big.length);
    assert.equal(got.headers['content-length'], String(got.body.length));
    assert.ok(got.headers.date, 'a Date field, as Go servers send');
    const head = await call(c, 'HEAD', '/api/v1/namespaces/default/configmaps/big');
    assert.equal(head.status, 200);
    assert.equal(head.body.length, 0);
    // The admin of the test kubeconfig (a client certificate) may do what anonymous may not.
    const who = await call(c, 'POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'SelfSubjectReview',
    });
    assert.equal(who.status, 201, who.body.toString().slice(0, 300));
    assert.ok(JSON.parse(who.body.toString()).status.userInfo.groups.includes('system:masters'));
  });

  it('--goaway-chance=1: the request is answered and the connection is told to go away', async () => {
    srv = await startTestAPIServer({ goawayChance: 0.02 });
    // The flag allows at most 0.02; the server's option is raised here to make the GOAWAY certain.
    (srv.running.server as unknown as { o: { goawayChance: number } }).o.goawayChance = 1;
    c = await connect(srv);
    const away = new Promise<number>((r) => c!.once('goaway', (code) => r(code)));
    const r = await call(c, 'GET', '/api/v1/namespaces/default');
    assert.equal(r.status, 200);
    assert.equal(await away, http2.constants.NGHTTP2_NO_ERROR);
  });
});
