// Probes against real servers on 127.0.0.1 (HTTP, TCP, gRPC health) and real
// commands (exec through a runtime that runs them on this machine), and the
// prober's thresholds turning results into started / ready / restart.
import * as grpc from '@grpc/grpc-js';
import { execFile } from 'node:child_process';
import assert from 'node:assert/strict';
import { createServer as createHTTPServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createTCPServer, type AddressInfo } from 'node:net';
import { realClock } from '../../shared/client/clock';
import { FakeRecorder } from '../../shared/events';
import { PodEvents } from './pod-events';
import {
  execProbe,
  grpcProbe,
  httpProbe,
  runProbeHandler,
  tcpProbe,
  type ProbeTarget,
} from './probe-handlers';
import { Prober } from './prober';
import { containerState, newPodRecord, type PodRecord } from './records';
import type { ContainerRecord, ExecSyncResult } from './runtime';

/** Runs the command on this machine (what ExecSync does inside a container). */
async function hostExec(_id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
  return new Promise((resolve, reject) => {
    execFile(cmd[0], cmd.slice(1), { timeout: timeoutSeconds * 1000 }, (err: any, stdout, stderr) => {
      if (err?.killed) return reject(new Error('command timed out'));
      if (err && typeof err.code !== 'number') return reject(err);
      resolve({ exitCode: err ? err.code : 0, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) });
    });
  });
}

const waitUntil = async (cond: () => boolean, ms = 20_000) => {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out waiting');
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('nodeagent/pods: probes', () => {
  let http: Server;
  let port: number;
  let status = 200;
  let lastHeaders: IncomingHttpHeaders = {};
  const target = (container: any = {}): ProbeTarget => ({
    container: { name: 'c', ports: [{ name: 'web', containerPort: port }], ...container },
    containerID: 'x://1',
    podIP: '127.0.0.1',
    runtime: { execSync: hostExec },
  });

  before(async () => {
    http = createHTTPServer((req, res) => {
      lastHeaders = req.headers;
      if (req.url === '/redirect') {
        res.writeHead(302, { location: '/ok' });
        return res.end();
      }
      if (req.url === '/away') {
        res.writeHead(302, { location: `http://localhost:${port}/ok` });
        return res.end('moved');
      }
      if (req.url === '/ok') return res.end('fine');
      res.writeHead(status);
      res.end(`status ${status}`);
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    port = (http.address() as AddressInfo).port;
  });
  after(() => http.close());

  it('httpGet: 2xx/3xx pass, others fail; same-host redirects followed, other hosts a warning; headers', async () => {
    status = 200;
    let r = await httpProbe(
      {
        path: '/health',
        port: 'web',
        httpHeaders: [
          { name: 'X-Probe', value: 'yes' },
          { name: 'accept', value: 'text/plain' },
        ],
      },
      target(),
      1,
    );
    assert.deepEqual(r, { result: 'success', output: 'status 200' });
    assert.equal(lastHeaders['user-agent'], 'kube-probe/1.36');
    assert.equal(lastHeaders['x-probe'], 'yes');
    assert.equal(lastHeaders.accept, 'text/plain');
    status = 503;
    r = await httpProbe({ path: '/health', port }, target(), 1);
    assert.deepEqual(r, { result: 'failure', output: 'HTTP probe failed with statuscode: 503' });
    assert.equal((await httpProbe({ path: '/redirect', port }, target(), 1)).result, 'success');
    assert.deepEqual(await httpProbe({ path: '/away', port }, target(), 1), {
      result: 'warning',
      output: 'Probe terminated redirects, Response body: moved',
    });
    // A port nobody listens on.
    const closed = await freePort();
    r = await httpProbe({ path: '/', port: closed }, target(), 1);
    assert.equal(r.result, 'failure');
    assert.equal(
      r.output,
      `Get "http://127.0.0.1:${closed}/": dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    );
  });

  it('tcpSocket and exec', async () => {
    assert.equal((await tcpProbe({ port }, target(), 1)).result, 'success');
    const closed = await freePort();
    assert.deepEqual(await tcpProbe({ port: closed }, target(), 1), {
      result: 'failure',
      output: `dial tcp 127.0.0.1:${closed}: connect: connection refused`,
    });
    assert.deepEqual(await execProbe({ command: ['sh', '-c', 'echo ok'] }, target(), 5), {
      result: 'success',
      output: 'ok\n',
    });
    assert.deepEqual(await execProbe({ command: ['sh', '-c', 'echo bad >&2; exit 3'] }, target(), 5), {
      result: 'failure',
      output: 'bad\n',
    });
    assert.deepEqual(await execProbe({ command: ['sleep', '5'] }, target(), 1), {
      result: 'failure',
      output: 'command timed out after 1s',
    });
  });

  it('grpc: grpc.health.v1 Health/Check answering SERVING passes', async () => {
    const statuses: Record<string, number> = { '': 1, sick: 2 };
    const server = new grpc.Server();
    server.addService(
      {
        Check: {
          path: '/grpc.health.v1.Health/Check',
          requestStream: false,
          responseStream: false,
          requestSerialize: (x: Buffer) => x,
          requestDeserialize: (x: Buffer) => x,
          responseSerialize: (x: Buffer) => x,
          responseDeserialize: (x: Buffer) => x,
        },
      },
      {
        Check: (call: any, cb: any) => {
          const req: Buffer = call.request;
          const service = req.length ? req.subarray(2, 2 + req[1]).toString() : '';
          if (!(service in statuses)) return cb({ code: grpc.status.NOT_FOUND, details: 'unknown service' });
          cb(null, Buffer.from([0x08, statuses[service]]));
        },
      },
    );
    const gport = await new Promise<number>((res, rej) =>
      server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
        e ? rej(e) : res(p),
      ),
    );
    try {
      assert.deepEqual(await grpcProbe({ port: gport }, target(), 2), { result: 'success', output: '' });
      assert.deepEqual(await grpcProbe({ port: gport, service: 'sick' }, target(), 2), {
        result: 'failure',
        output: 'service unhealthy (responded with "NOT_SERVING")',
      });
      assert.equal((await grpcProbe({ port: gport, service: 'other' }, target(), 2)).result, 'failure');
      assert.equal((await runProbeHandler({ grpc: { port: gport } }, target())).result, 'success');
    } finally {
      server.forceShutdown();
    }
  });

  describe('the prober', () => {
    let recorder: FakeRecorder;
    let prober: Prober;
    let rec: PodRecord;
    let syncs: number;
    let killed: string[];

    const running = (id: string): ContainerRecord => ({
      id,
      podUID: 'uid-1',
      name: 'c',
      kind: 'regular',
      image: 'busybox',
      imageID: '',
      attempt: 0,
      state: 'running',
      createdAt: Date.now(),
      startedAt: Date.now(),
      logPath: '/dev/null',
    });

    const make = (container: any) => {
      recorder = new FakeRecorder();
      syncs = 0;
      killed = [];
      rec = newPodRecord(
        {
          metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
          spec: { hostNetwork: true, containers: [{ name: 'c', image: 'busybox', ...container }] },
        },
        'api',
      );
      rec.podIPs = ['127.0.0.1'];
      containerState(rec, 'c').current = running('x://1');
      prober = new Prober({
        runtime: { execSync: hostExec } as any,
        clock: realClock,
        events: new PodEvents(recorder, undefined as any),
        requestSync: () => syncs++,
        kill: (_r, c, grace, note) => killed.push(`${c.id} ${grace} ${note}`),
        graceSeconds: () => 30,
      });
      prober.sync(rec);
    };
    afterEach(() => prober?.close());

    it('readiness: not ready until it passes, unready after failureThreshold failures', async function () {
      this.timeout(30_000);
      status = 200;
      make({ readinessProbe: { httpGet: { path: '/health', port }, periodSeconds: 1, failureThreshold: 2 } });
      const spec = rec.pod.spec!.containers[0];
      assert.equal(prober.ready(rec, spec), false, 'not ready before the first probe');
      assert.equal(prober.started(rec, spec), true);
      await waitUntil(() => prober.ready(rec, spec));
      assert.ok(syncs > 0);
      status = 500;
      await waitUntil(() => !prober.ready(rec, spec));
      assert.ok(
        recorder.events.includes(
          'Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500',
        ),
      );
      assert.deepEqual(killed, []);
      // A new instance of the container starts over (not ready).
      status = 200;
      containerState(rec, 'c').current = running('x://2');
      prober.sync(rec);
      assert.equal(prober.ready(rec, spec), false);
      await waitUntil(() => prober.ready(rec, spec));
    });

    it('liveness: failureThreshold failures kill the container once, with the kubelet note', async function () {
      this.timeout(30_000);
      make({
        livenessProbe: {
          exec: { command: ['sh', '-c', 'exit 1'] },
          periodSeconds: 1,
          failureThreshold: 2,
          terminationGracePeriodSeconds: 5,
        },
      });
      await waitUntil(() => killed.length > 0);
      assert.deepEqual(killed, ['x://1 5 Container c failed liveness probe, will be restarted']);
      assert.ok(recorder.events.filter((e) => e === 'Warning Unhealthy Liveness probe failed: ').length >= 2);
      await new Promise((r) => setTimeout(r, 1500));
      assert.equal(killed.length, 1, 'on hold until the container is replaced');
    });

    it('startup: liveness and readiness wait for it; started once it passed', async function () {
      this.timeout(30_000);
      status = 503;
      make({
        startupProbe: { httpGet: { path: '/health', port }, periodSeconds: 1, failureThreshold: 30 },
        readinessProbe: { tcpSocket: { port }, periodSeconds: 1 },
      });
      const spec = rec.pod.spec!.containers[0];
      await waitUntil(() =>
        recorder.events.some((e) => e.startsWith('Warning Unhealthy Startup probe failed')),
      );
      assert.equal(prober.started(rec, spec), false);
      assert.equal(prober.ready(rec, spec), false);
      status = 200;
      await waitUntil(() => prober.started(rec, spec));
      await waitUntil(() => prober.ready(rec, spec));
    });
  });
});

async function freePort(): Promise<number> {
  const s = createTCPServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const p = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return p;
}
