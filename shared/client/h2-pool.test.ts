// The transport's HTTP/2 sessions against real node:http2 servers on 127.0.0.1: a fresh session
// after the server's GOAWAY or close (streams under way on a GOAWAY'd session finish), more
// sessions beyond SETTINGS_MAX_CONCURRENT_STREAMS, the ping that finds a dead connection, and an
// idle client that lets its process exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { HttpTransport } from './http-transport';
import { isProbableEOF } from './errors';
import { echo, startRelay, startServer, testPKI, type TestServer } from './http-transport.test-support';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until(what: string, cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(10);
  }
}

describe('shared/client: HTTP/2 sessions', function () {
  this.timeout(30_000);
  let s: TestServer | undefined;
  let t: HttpTransport | undefined;
  const transport = async (opts: ConstructorParameters<typeof HttpTransport>[0] = {}) => {
    const { ca } = await testPKI();
    return (t = new HttpTransport({ ...opts, tls: { ca: ca.certPem } }));
  };
  const get = async (path: string) => {
    const res = await t!.request({ origin: s!.origin, path, method: 'GET' });
    return { status: res.statusCode, body: await res.body.text() };
  };
  afterEach(async () => {
    await t?.close(0);
    await s?.close();
    t = s = undefined;
  });

  it("takes a fresh session after the server's GOAWAY, and the GOAWAY'd session's stream finishes", async () => {
    s = await startServer('h2', (req, res) => {
      if (req.url === '/slow') return void setTimeout(() => res.end('slow done'), 300);
      echo(req, res);
    });
    await transport();
    assert.equal((await get('/one')).status, 200);
    const slow = get('/slow');
    await until('the slow stream', () => s!.sessions.length === 1);
    await sleep(50);
    s.sessions[0].close(); // GOAWAY(NO_ERROR), then closes once its streams are done
    await sleep(50);
    assert.equal((await get('/two')).status, 200);
    assert.equal(s.sessions.length, 2);
    assert.deepEqual(await slow, { status: 200, body: 'slow done' });
  });

  it('reconnects after the server closes an idle connection', async () => {
    s = await startServer('h2', echo);
    await transport();
    assert.equal((await get('/one')).status, 200);
    s.connections[0].destroy();
    await sleep(100);
    assert.equal((await get('/two')).status, 200);
    assert.equal(s.sessions.length, 2);
  });

  it("opens another session once the server's max concurrent streams are open", async () => {
    const held: (() => void)[] = [];
    s = await startServer('h2', (_req, res) => held.push(() => res.end('ok')), { maxConcurrentStreams: 2 });
    await transport();
    // A first stream: the session is up (the server's SETTINGS read) before the burst.
    const warm = get('/warm');
    await until('the first stream', () => held.length === 1);
    held.shift()!();
    await warm;
    const all = Promise.all(Array.from({ length: 5 }, (_, i) => get(`/r${i}`)));
    await until('five streams at the server', () => held.length === 5);
    assert.equal(s.sessions.length, 3, 'sessions of 2 + 2 + 1 streams');
    for (const h of held.splice(0)) h();
    assert.deepEqual(
      (await all).map((r) => r.body),
      ['ok', 'ok', 'ok', 'ok', 'ok'],
    );
  });

  it('finds a dead connection with a ping and fails its stream; the next request uses a new one', async () => {
    s = await startServer('h2', (req, res) => {
      res.writeHead(200);
      if (req.url === '/watch') res.write('open');
      else res.end('ok');
    });
    const relay = await startRelay(s.port);
    try {
      const { ca } = await testPKI();
      t = new HttpTransport({ tls: { ca: ca.certPem }, readIdleTimeoutMs: 300, pingTimeoutMs: 300 });
      const watch = await t.request({ origin: relay.origin, path: '/watch', method: 'GET' });
      const text = watch.body.text();
      relay.blackhole();
      const started = Date.now();
      await assert.rejects(text, (e: any) => isProbableEOF(e) && e.code === 'ERR_HTTP2_PING_TIMEOUT');
      const took = Date.now() - started;
      assert.ok(took >= 250 && took < 3000, `found dead after ${took} ms`);
      const res = await t.request({ origin: relay.origin, path: '/next', method: 'GET' });
      assert.equal(await res.body.text(), 'ok');
      assert.equal(relay.accepted, 2);
    } finally {
      await relay.close();
    }
  });

  it('lets an idle process exit without close(), and keeps it alive while a stream is open', async () => {
    s = await startServer('h2', (req, res) => {
      if (req.url === '/hold') return void setTimeout(() => res.end('held'), 700);
      echo(req, res);
    });
    const { ca } = await testPKI();
    const run = (path: string) =>
      new Promise<{ code: number | null; out: string; ms: number }>((resolve, reject) => {
        const started = Date.now();
        const mod = JSON.stringify(join(__dirname, 'http-transport.js'));
        const script = `
          const { HttpTransport } = require(${mod});
          const t = new HttpTransport({ tls: { ca: ${JSON.stringify(ca.certPem)} } });
          t.request({ origin: ${JSON.stringify(s!.origin)}, path: ${JSON.stringify(path)}, method: 'GET' })
            .then((r) => r.body.text()).then((b) => process.stdout.write(b.slice(0, 20)));`;
        const p = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
        let out = '';
        p.stdout.on('data', (d) => (out += d));
        const kill = setTimeout(() => p.kill(), 10_000);
        p.on('error', reject);
        p.on('exit', (code) => {
          clearTimeout(kill);
          resolve({ code, out, ms: Date.now() - started });
        });
      });
    const idle = await run('/x');
    assert.equal(idle.code, 0);
    assert.match(idle.out, /"method":"GET"/);
    // The session (keep-alive) is still open at the server, yet the process ended.
    assert.ok(idle.ms < 5000, `exited after ${idle.ms} ms`);
    const held = await run('/hold');
    assert.deepEqual([held.code, held.out], [0, 'held']);
  });
});
