// Watch fan-out: many watches of one object, over HTTP/1.1 connections, h2
// streams and in several representations, each get every event once and in
// order; a client that stops reading holds up no one and later gets the rest.
import assert from 'node:assert/strict';
import { connect, type TLSSocket } from 'node:tls';
import { Pool } from 'undici';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';
import { WatchFrameDecoder } from '../../shared/codec/watch-frame';

describe('watch fan-out', function () {
  this.timeout(120_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const ns = 'fanout';
  const cms = `/api/v1/namespaces/${ns}/configmaps`;

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
    await api('POST', '/api/v1/namespaces', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    });
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const pool = (connections: number, h2: boolean) =>
    new Pool(srv.url, {
      connections: h2 ? 1 : connections,
      allowH2: h2,
      pipelining: h2 ? connections : 1,
      connect: { ca: srv.config.caPem, cert: srv.config.certPem, key: srv.config.keyPem },
      bodyTimeout: 0,
    });

  /** A watch's received bytes; `events()` decodes what has arrived. */
  async function openWatch(p: Pool, path: string, accept = 'application/json') {
    const r = await p.request({ path, method: 'GET', headers: { accept } });
    assert.equal(r.statusCode, 200);
    const chunks: Buffer[] = [];
    r.body.on('data', (c: Buffer) => chunks.push(c));
    r.body.on('error', () => {});
    return {
      events(): { type: string; rv: number; n: string }[] {
        const all = Buffer.concat(chunks);
        if (accept.includes('protobuf'))
          return new WatchFrameDecoder().push(all).map((f) => ({
            type: f.type,
            rv: Number(f.object.metadata.resourceVersion),
            n: f.object.data?.n,
          }));
        return all
          .toString()
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => {
            const e = JSON.parse(l);
            const o = e.object.kind === 'Table' ? e.object.rows[0].object : e.object;
            return { type: e.type, rv: Number(o.metadata.resourceVersion), n: o.data?.n };
          });
      },
      close: () => r.body.destroy(),
    };
  }

  async function until(what: string, cond: () => boolean, ms = 30_000): Promise<void> {
    const end = Date.now() + ms;
    while (!cond()) {
      if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  const configMap = (name: string, n: number, pad = 0) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: ns },
    data: { n: String(n), pad: 'x'.repeat(pad) },
  });

  it('gives each of many watches, on h1 and h2, in JSON, Protobuf and as Table, every event once in order', async () => {
    const created = await api('POST', cms, { body: configMap('many', 0) });
    const rv = created.json.metadata.resourceVersion;
    const path = `${cms}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dmany`;
    const h1 = pool(42, false);
    const h2 = pool(41, true);
    const watches = [
      ...(await Promise.all(Array.from({ length: 40 }, () => openWatch(h1, path)))),
      ...(await Promise.all(Array.from({ length: 40 }, () => openWatch(h2, path)))),
      await openWatch(h1, path, 'application/vnd.kubernetes.protobuf;stream=watch'),
      await openWatch(h2, path, 'application/vnd.kubernetes.protobuf;stream=watch'),
      await openWatch(h1, `${path}&includeObject=Object`, 'application/json;as=Table;v=v1;g=meta.k8s.io'),
    ];
    const updates = 30;
    // Updates overlap, so events reach the watches several to a write as well as one by one.
    await Promise.all(
      Array.from({ length: updates }, (_, i) =>
        new Promise((r) => setTimeout(r, i * 3)).then(() =>
          api('PUT', `${cms}/many`, { body: configMap('many', i + 1) }),
        ),
      ),
    );
    await until('every event at every watch', () => watches.every((w) => w.events().length >= updates));
    await new Promise((r) => setTimeout(r, 100));
    let expected: string[] | undefined;
    for (const [i, w] of watches.entries()) {
      const evs = w.events();
      assert.equal(evs.length, updates, `watch ${i}: every event exactly once`);
      assert.ok(
        evs.every((e) => e.type === 'MODIFIED'),
        `watch ${i}: ${evs.map((e) => e.type)}`,
      );
      for (let k = 1; k < evs.length; k++) assert.ok(evs[k].rv > evs[k - 1].rv, `watch ${i}: in order`);
      const seq = evs.map((e) => `${e.rv}:${e.n}`);
      if (!expected) expected = seq;
      else assert.deepEqual(seq, expected, `watch ${i} saw what the first saw`);
    }
    assert.deepEqual(
      [...expected!.map((s) => Number(s.split(':')[1]))].sort((a, b) => a - b),
      Array.from({ length: updates }, (_, i) => i + 1),
    );
    for (const w of watches) w.close();
    await h1.destroy();
    await h2.destroy();
  });

  /** An HTTP/1.1 watch on a raw TLS socket that reads only when told to. */
  function rawWatch(path: string): Promise<{ socket: TLSSocket; received: () => Buffer }> {
    return new Promise((resolve, reject) => {
      const chunks: Buffer[] = [];
      const socket = connect({
        host: '127.0.0.1',
        port: srv.port,
        ca: srv.config.caPem,
        cert: srv.config.certPem,
        key: srv.config.keyPem,
        ALPNProtocols: ['http/1.1'],
        servername: 'localhost',
      });
      socket.on('error', reject);
      socket.on('secureConnect', () => {
        socket.write(`GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: application/json\r\n\r\n`);
        socket.on('data', (c: Buffer) => chunks.push(c));
        // Wait for the response head, then stop reading.
        const check = () => {
          if (Buffer.concat(chunks).includes('\r\n\r\n')) {
            socket.pause();
            resolve({ socket, received: () => Buffer.concat(chunks) });
          } else setTimeout(check, 10);
        };
        check();
      });
    });
  }

  it('keeps writing to every other watch while one client stops reading, then gives it the rest in order', async () => {
    const created = await api('POST', cms, { body: configMap('big', 0) });
    const rv = created.json.metadata.resourceVersion;
    const path = `${cms}?watch=1&resourceVersion=${rv}&fieldSelector=metadata.name%3Dbig`;
    const stalled = await rawWatch(path);
    const h1 = pool(8, false);
    const others = await Promise.all(Array.from({ length: 8 }, () => openWatch(h1, path)));
    // 60 events of 400 KB: far more than the stalled client's socket buffers hold.
    const updates = 60;
    for (let i = 1; i <= updates; i++) {
      const r = await api('PUT', `${cms}/big`, { body: configMap('big', i, 400_000) });
      assert.equal(r.status, 200);
    }
    await until('every event at every reading watch', () =>
      others.every((w) => w.events().length >= updates),
    );
    const before = stalled.received().length;
    assert.ok(before < updates * 400_000, `the stalled client has not read everything (${before} bytes)`);
    stalled.socket.resume();
    const count = () => stalled.received().toString('latin1').split('{"type":"MODIFIED"').length - 1;
    await until('the rest at the stalled watch', () => count() >= updates);
    const text = stalled.received().toString('latin1');
    const ns = [...text.matchAll(/"n":"(\d+)"/g)].map((m) => Number(m[1]));
    assert.deepEqual(
      ns,
      Array.from({ length: updates }, (_, i) => i + 1),
      'every event, in order',
    );
    stalled.socket.destroy();
    for (const w of others) w.close();
    await h1.destroy();
  });

  it('ends a watch with the last chunk, leaving its HTTP/1.1 connection usable', async () => {
    const created = await api('POST', cms, { body: configMap('reuse', 0) });
    const rv = created.json.metadata.resourceVersion;
    const p = pool(1, false);
    let connections = 0;
    p.on('connect', () => connections++);
    const r = await p.request({
      path: `${cms}?watch=1&resourceVersion=${rv}&timeoutSeconds=1&fieldSelector=metadata.name%3Dreuse`,
      method: 'GET',
    });
    await api('PUT', `${cms}/reuse`, { body: configMap('reuse', 1) });
    const body = await r.body.text();
    assert.match(body, /^\{"type":"MODIFIED".*"n":"1"/);
    const again = await p.request({ path: `${cms}/reuse`, method: 'GET' });
    assert.equal(again.statusCode, 200);
    assert.equal(((await again.body.json()) as any).data.n, '1');
    assert.equal(connections, 1, 'the next request went over the same connection');
    await p.destroy();
  });
});
