// Lifecycle hook handlers against a real HTTP server on 127.0.0.1 and real
// commands (ExecSync standing in as a command run on this machine).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runLifecycleHandler } from './hooks';
import type { ExecSyncResult } from './runtime';

const runtime = {
  execSync: (_id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> =>
    new Promise((resolve, reject) =>
      execFile(cmd[0], cmd.slice(1), { timeout: timeoutSeconds * 1000 }, (err: any, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(err);
        resolve({ exitCode: err ? err.code : 0, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) });
      }),
    ),
};

describe('nodeagent/pods: lifecycle hooks', () => {
  let server: Server;
  let port: number;
  const seen: { url?: string; headers: IncomingHttpHeaders }[] = [];
  const pod = { metadata: { name: 'p', namespace: 'ns', uid: 'u1' }, spec: {} };
  const container = { name: 'c', ports: [{ name: 'http', containerPort: 0 }] };
  const run = (handler: any, sleeps: number[] = []) =>
    runLifecycleHandler(handler, pod, container, 'x://1', '127.0.0.1', runtime, 5, async (ms) => {
      sleeps.push(ms);
    });

  before(async () => {
    server = createServer((req, res) => {
      seen.push({ url: req.url, headers: req.headers });
      res.writeHead(req.url === '/fail' ? 500 : 200);
      res.end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    port = (server.address() as AddressInfo).port;
    container.ports[0].containerPort = port;
  });
  after(() => server.close());

  it('httpGet: sent with the kube-lifecycle agent; only a failed request fails, not the status', async () => {
    assert.equal(await run({ httpGet: { path: '/start', port: 'http' } }), undefined);
    assert.equal(seen.at(-1)!.url, '/start');
    assert.equal(seen.at(-1)!.headers['user-agent'], 'kube-lifecycle/1.36');
    assert.equal(await run({ httpGet: { path: '/fail', port } }), undefined);
    server.close();
    await new Promise((r) => setTimeout(r, 50));
    assert.equal(
      await run({ httpGet: { path: '/stop', port } }),
      `HTTP lifecycle hook (/stop) for Container "c" in Pod "p_ns(u1)" failed - error: Get "http://127.0.0.1:${port}/stop": dial tcp 127.0.0.1:${port}: connect: connection refused`,
    );
  });

  it('exec and sleep', async () => {
    assert.equal(await run({ exec: { command: ['true'] } }), undefined);
    assert.equal(
      await run({ exec: { command: ['sh', '-c', 'echo no >&2; exit 2'] } }),
      `Exec lifecycle hook ([sh -c echo no >&2; exit 2]) for Container "c" in Pod "p_ns(u1)" failed - error: command 'sh -c echo no >&2; exit 2' exited with 2: no\n, message: "no\\n"`,
    );
    const sleeps: number[] = [];
    assert.equal(await run({ sleep: { seconds: 3 } }, sleeps), undefined);
    assert.equal(await run({ sleep: { seconds: 60 } }, sleeps), undefined);
    assert.deepEqual(sleeps, [3000, 5000], 'cut to the time allowed');
  });
});
