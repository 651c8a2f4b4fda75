// exec, attach and port-forward through a real apiserver with the real
// kubectl (WebSocket v5 and its SPDY fallback), the Python client and
// @kubernetes/client-node, to a streaming server on 127.0.0.1 that stands in
// for the node agent and its runtime (test-e2e/support/stream-server.ts):
// output, stdin, exit codes through the error channel, a terminal, port
// forwarding, authorization of the connect verbs and an unreachable node.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PassThrough, Writable } from 'node:stream';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../apiserver/server/testing';
import { Client } from '../shared/client/client';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { freePort } from './support/processes';
import { startStreamServer, type StreamServer } from './support/stream-server';
import { waitUntil } from '../shared/cluster/process';

const SPDY_ONLY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };

function pythonHasKubernetes(): boolean {
  try {
    execFileSync('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe('streaming: exec, attach and port-forward through the apiserver', function () {
  this.timeout(120_000);
  let api: TestAPIServer;
  let kube: StreamServer;
  let client: Client;
  let web: Server;
  let webPort: number;
  let auditDir: string;
  const haveKubectl = kubectlAvailable();

  async function addNode(name: string, port: number): Promise<void> {
    await client.resource('nodes').create({ apiVersion: 'v1', kind: 'Node', metadata: { name } } as any);
    const node: any = await client.resource('nodes').get(name);
    node.status = {
      addresses: [{ type: 'InternalIP', address: '127.0.0.1' }],
      daemonEndpoints: { kubeletEndpoint: { Port: port } },
    };
    await client.resource('nodes').updateStatus(node);
  }

  async function addPod(name: string, node: string, containers = ['c']): Promise<void> {
    await client
      .resource('pods')
      .namespace('default')
      .create({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name },
        spec: { nodeName: node, containers: containers.map((c) => ({ name: c, image: 'busybox' })) },
      } as any);
    // kubectl port-forward and attach want a running pod.
    const pod: any = await client.resource('pods').namespace('default').get(name);
    pod.status = { phase: 'Running' };
    await client.resource('pods').namespace('default').updateStatus(pod);
  }

  before(async function () {
    if (!haveKubectl) this.skip();
    auditDir = mkdtempSync(join(tmpdir(), 'tkube-stream-audit-'));
    writeFileSync(
      join(auditDir, 'policy.yaml'),
      'apiVersion: audit.k8s.io/v1\nkind: Policy\nrules:\n- level: Metadata\n',
    );
    api = await startTestAPIServer({
      authorizationMode: ['Node', 'RBAC'],
      auditPolicyFile: join(auditDir, 'policy.yaml'),
      auditLogPath: join(auditDir, 'audit.log'),
    });
    client = Client.create(api.config);
    kube = await startStreamServer();
    await addNode('stream-node', kube.port);
    await addPod('b', 'stream-node');
    await addPod('two', 'stream-node', ['x', 'y']);
    web = createServer((req, res) => res.end(`hello from web ${req.url}`));
    await new Promise<void>((r) => web.listen(0, '127.0.0.1', () => r()));
    webPort = (web.address() as AddressInfo).port;
  });

  after(async () => {
    web?.close();
    await kube?.close();
    await api?.stop();
    if (auditDir) rmSync(auditDir, { recursive: true, force: true });
  });

  const kc = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
    kubectl(api.kubeconfig, args, opts);

  for (const [mode, env] of [
    ['WebSocket (v5, translated to SPDY)', {}],
    ['SPDY (passed through)', SPDY_ONLY],
  ] as const) {
    describe(`kubectl exec over ${mode}`, () => {
      it('prints the output of the command', async () => {
        const r = await kc(['exec', 'b', '--', 'echo', 'hi'], { env });
        assert.equal(r.stderr, '');
        assert.equal(r.stdout, 'hi\n');
        assert.equal(r.code, 0);
      });

      it('passes stdin and keeps stderr apart', async () => {
        const r = await kc(['exec', '-i', 'b', '--', 'sh', '-c', 'cat; echo oops >&2'], {
          input: 'data\n',
          env,
        });
        assert.equal(r.stdout, 'data\n');
        assert.equal(r.stderr, 'oops\n');
        assert.equal(r.code, 0);
      });

      it("propagates the command's exit code", async () => {
        const r = await kc(['exec', 'b', '--', 'sh', '-c', 'exit 7'], { env });
        assert.equal(r.code, 7);
        assert.match(r.stderr, /command terminated with exit code 7/);
      });
    });
  }

  it('sends the kubelet the exec query Kubernetes sends, without the client credentials', async () => {
    kube.requests.length = 0;
    await kc(['exec', 'b', '-c', 'c', '--', 'echo', 'a b'], { env: SPDY_ONLY });
    const req = kube.requests.find((r) => r.url.startsWith('/exec/'));
    assert.ok(req, 'the stream server saw the exec');
    const u = new URL(req.url, 'https://x');
    assert.equal(u.pathname, '/exec/default/b/c');
    assert.deepEqual(u.searchParams.getAll('command'), ['echo', 'a b']);
    assert.equal(u.searchParams.get('output'), '1');
    assert.equal(u.searchParams.get('error'), '1');
    assert.equal(u.searchParams.get('input'), null);
    assert.equal(req.headers.authorization, undefined);
  });

  it('audits and counts a session as the connect verb it is, with its upgrade status', async () => {
    await kc(['exec', 'b', '--', 'echo', 'audited'], { env: SPDY_ONLY });
    const events = await waitUntil(
      async () => {
        const all = readFileSync(join(auditDir, 'audit.log'), 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
          .filter((e) => e.objectRef?.subresource === 'exec' && e.stage === 'ResponseComplete');
        return all.length ? all : undefined;
      },
      10_000,
      'an audit event of the exec',
    );
    const e = events.at(-1);
    assert.equal(e.verb, 'create');
    assert.equal(e.objectRef.resource, 'pods');
    assert.equal(e.objectRef.name, 'b');
    assert.equal(e.responseStatus.code, 101);
    assert.equal(e.annotations['authorization.k8s.io/decision'], 'allow');
    // The request metrics count it too, once the session's connections are closed.
    await waitUntil(
      async () =>
        /apiserver_request_total\{[^}]*resource="pods",subresource="exec"[^}]*code="101"\} \d+/.test(
          (await testRequester(api.config)('GET', '/metrics')).body.toString(),
        ),
      20_000,
      'apiserver_request_total of the exec',
    );
  });

  it('runs a terminal session with kubectl exec -it', async function () {
    try {
      execFileSync('script', ['--version'], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    const cmd = `kubectl --kubeconfig ${api.kubeconfig} exec -it b -- sh -c 'tty; echo done'`;
    const out = await new Promise<string>((resolve) =>
      execFile('script', ['-qec', cmd, '/dev/null'], { timeout: 60_000 }, (_e, stdout) =>
        resolve(String(stdout)),
      ),
    );
    assert.match(out, /\/dev\/pts\/\d+/);
    assert.match(out, /done/);
  });

  it('checks the container named in a pod with several', async () => {
    const bad = await kc(['exec', 'two', '-c', 'nope', '--', 'true'], { env: SPDY_ONLY });
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /container nope is not valid for pod two/);
  });

  for (const [mode, env] of [
    ['WebSocket tunnel', {}],
    ['SPDY', SPDY_ONLY],
  ] as const) {
    it(`kubectl port-forward reaches a port in the pod (${mode})`, async () => {
      const local = await freePort();
      const child = spawn(
        'kubectl',
        [
          '--kubeconfig',
          api.kubeconfig,
          'port-forward',
          'pod/b',
          `${local}:${webPort}`,
          '--address',
          '127.0.0.1',
        ],
        { env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'pipe'] },
      );
      let out = '';
      child.stdout.on('data', (d) => (out += d));
      child.stderr.on('data', (d) => (out += d));
      try {
        await waitUntil(async () => out.includes('Forwarding from'), 30_000, 'kubectl port-forward');
        for (const path of ['/one', '/two']) {
          const body = await (await fetch(`http://127.0.0.1:${local}${path}`)).text();
          assert.equal(body, `hello from web ${path}`);
        }
      } finally {
        child.kill('SIGTERM');
      }
    });
  }

  describe('WebSocket remote-command protocols', () => {
    /** Runs an exec over a WebSocket with one subprotocol; returns the messages received. */
    async function wsExec(
      protocol: string,
      command: string[],
      /** A client slower than the server: after each message it reads nothing for this long. */
      lagMs = 0,
    ): Promise<{ protocol: string; messages: (Buffer | string)[] }> {
      const { default: WebSocket } = await import('ws');
      const q = new URLSearchParams({ stdout: '1', stderr: '1' });
      for (const c of command) q.append('command', c);
      const ws = new WebSocket(
        `wss://127.0.0.1:${api.port}/api/v1/namespaces/default/pods/b/exec?${q}`,
        [protocol],
        {
          ca: api.config.caPem,
          cert: api.config.certPem,
          key: api.config.keyPem,
        },
      );
      const messages: (Buffer | string)[] = [];
      ws.on('message', (d: Buffer, isBinary: boolean) => {
        messages.push(isBinary ? Buffer.from(d) : String(d));
        if (lagMs) {
          ws.pause();
          setTimeout(() => ws.resume(), lagMs);
        }
      });
      await new Promise<void>((resolve, reject) => {
        ws.on('close', () => resolve());
        ws.on('error', reject);
      });
      return { protocol: ws.protocol, messages };
    }

    it('v4.base64.channel.k8s.io: channel digits and base64 text, a Status at the end', async () => {
      const r = await wsExec('v4.base64.channel.k8s.io', ['sh', '-c', 'echo hi; exit 4']);
      assert.equal(r.protocol, 'v4.base64.channel.k8s.io');
      const texts = r.messages.map(String);
      assert.equal(texts[0], '1', 'an empty stdout message opens the session');
      assert.ok(texts.includes(`1${Buffer.from('hi\n').toString('base64')}`), JSON.stringify(texts));
      const status = JSON.parse(Buffer.from(texts.at(-1)!.slice(1), 'base64').toString());
      assert.equal(texts.at(-1)![0], '3');
      assert.equal(status.reason, 'NonZeroExitCode');
      assert.deepEqual(status.details.causes, [{ reason: 'ExitCode', message: '4' }]);
    });

    it('v5.channel.k8s.io: a client that lags gets all of a large output before the Status', async () => {
      // The server ends the session with resets right after its output; output the apiserver
      // holds for the lagging client must still reach it.
      const size = 8 * 1024 * 1024;
      const r = await wsExec('v5.channel.k8s.io', ['head', '-c', String(size), '/dev/zero'], 5);
      const chans = r.messages.map((m) => (m as Buffer)[0]);
      const stdout = r.messages.filter((m) => (m as Buffer)[0] === 1);
      assert.equal(
        stdout.reduce((n, m) => n + m.length - 1, 0),
        size,
      );
      assert.equal(chans.at(-1), 3);
      assert.equal(JSON.parse((r.messages.at(-1) as Buffer).subarray(1).toString()).status, 'Success');
    });

    it('channel.k8s.io: binary channels; a failure is plain text on the error channel, success says nothing', async () => {
      const ok = await wsExec('channel.k8s.io', ['echo', 'hi']);
      const chans = ok.messages.map((m) => (m as Buffer)[0]);
      assert.ok(!chans.includes(3), `no error message on success: ${chans}`);
      assert.ok(ok.messages.some((m) => (m as Buffer).subarray(1).toString() === 'hi\n'));
      const bad = await wsExec('channel.k8s.io', ['sh', '-c', 'exit 2']);
      const err = bad.messages.find((m) => (m as Buffer)[0] === 3) as Buffer;
      assert.equal(err.subarray(1).toString(), 'command terminated with non-zero exit code: exit status 2');
    });
  });

  it('nodes/<name>:<port>/proxy carries a WebSocket to the upstream, byte for byte', async () => {
    const { default: WebSocket, WebSocketServer } = await import('ws');
    const echo = new WebSocketServer({ host: '127.0.0.1', port: 0 });
    await new Promise((r) => echo.once('listening', r));
    echo.on('connection', (c, req) => c.on('message', (d, bin) => c.send(bin ? d : `${req.url} ${d}`)));
    try {
      const p = (echo.address() as AddressInfo).port;
      const ws = new WebSocket(`wss://127.0.0.1:${api.port}/api/v1/nodes/http:stream-node:${p}/proxy/echo`, {
        ca: api.config.caPem,
        cert: api.config.certPem,
        key: api.config.keyPem,
      });
      await new Promise((r, j) => (ws.once('open', r), ws.once('error', j)));
      const got = new Promise<string>((r) => ws.once('message', (d) => r(String(d))));
      ws.send('ping');
      assert.equal(await got, '/echo ping');
      ws.close();
    } finally {
      echo.close();
    }
  });

  describe('the Python client', function () {
    before(function () {
      if (!pythonHasKubernetes()) this.skip();
    });

    const py = (script: string) =>
      new Promise<{ code: number; out: string; err: string }>((resolve) =>
        execFile(
          '/usr/bin/python3',
          ['-c', script],
          { timeout: 60_000, env: { ...process.env, KUBECONFIG: api.kubeconfig } },
          (e, stdout, stderr) =>
            resolve({ code: e ? ((e as any).code ?? 1) : 0, out: String(stdout), err: String(stderr) }),
        ),
      );

    it('stream(connect_get_namespaced_pod_exec) returns the output and the exit code', async () => {
      const r = await py(`
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config()
v1 = client.CoreV1Api()
print(repr(stream(v1.connect_get_namespaced_pod_exec, 'b', 'default', command=['echo', 'hi'], stderr=True, stdin=False, stdout=True, tty=False)))
resp = stream(v1.connect_get_namespaced_pod_exec, 'b', 'default', command=['sh', '-c', 'echo out; exit 3'], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
resp.run_forever(timeout=30)
print('code', resp.returncode)
`);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /'hi\\n'/);
      assert.match(r.out, /code 3/);
    });

    it('portforward reaches a port in the pod', async () => {
      const r = await py(`
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config()
v1 = client.CoreV1Api()
pf = portforward(v1.connect_get_namespaced_pod_portforward, 'b', 'default', ports='${webPort}')
s = pf.socket(${webPort})
s.setblocking(True)
s.sendall(b'GET /py HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')
data = b''
while True:
    chunk = s.recv(1024)
    if not chunk:
        break
    data += chunk
s.close()
print(data.decode())
`);
      assert.equal(r.code, 0, r.err);
      assert.match(r.out, /hello from web \/py/);
    });
  });

  describe('@kubernetes/client-node', () => {
    it('Exec returns the output and a Success status', async () => {
      const k8s = await import('@kubernetes/client-node');
      const kc2 = new k8s.KubeConfig();
      kc2.loadFromFile(api.kubeconfig);
      const exec = new k8s.Exec(kc2);
      let out = '';
      const stdout = new Writable({
        write(c, _e, cb) {
          out += c;
          cb();
        },
      });
      const status = await new Promise<any>((resolve, reject) => {
        exec
          .exec('default', 'b', 'c', ['sh', '-c', 'echo js'], stdout, null, null, false, (st) => resolve(st))
          .catch(reject);
      });
      assert.equal(status.status, 'Success');
      assert.equal(out, 'js\n');
    });

    it('PortForward reaches a port in the pod', async () => {
      const k8s = await import('@kubernetes/client-node');
      const kc2 = new k8s.KubeConfig();
      kc2.loadFromFile(api.kubeconfig);
      const pf = new k8s.PortForward(kc2);
      let out = '';
      const output = new Writable({
        write(c, _e, cb) {
          out += c;
          cb();
        },
      });
      const input = new PassThrough();
      const ws: any = await pf.portForward('default', 'b', [webPort], output, null, input);
      input.write('GET /js HTTP/1.0\r\nHost: x\r\n\r\n');
      await waitUntil(async () => out.includes('hello from web /js'), 30_000, 'port-forward output');
      ws.close();
    });
  });

  describe('authorization and failures', () => {
    before(async () => {
      const rbac = client.resource({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'roles' });
      await rbac.namespace('default').create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name: 'get-only' },
        rules: [{ apiGroups: [''], resources: ['pods', 'pods/exec', 'pods/portforward'], verbs: ['get'] }],
      } as any);
      await client
        .resource({ group: 'rbac.authorization.k8s.io', version: 'v1', resource: 'rolebindings' })
        .namespace('default')
        .create({
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: { name: 'alice-get-only' },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'get-only' },
          subjects: [{ kind: 'User', name: 'alice', apiGroup: 'rbac.authorization.k8s.io' }],
        } as any);
    });

    for (const [mode, env] of [
      ['WebSocket', {}],
      ['SPDY', SPDY_ONLY],
    ] as const)
      it(`a user without create on pods/exec gets 403 (${mode})`, async () => {
        const r = await kc(['--as', 'alice', 'exec', 'b', '--', 'echo', 'hi'], { env });
        assert.notEqual(r.code, 0);
        assert.match(r.stderr, /forbidden/i);
        assert.match(r.stderr, /cannot create resource "pods\/exec"/);
        assert.equal(r.stdout, '');
      });

    it('a pod on an unreachable node gives the error dialing backend', async () => {
      const dead = await freePort();
      await addNode('dead-node', dead);
      await addPod('lost', 'dead-node');
      const r = await kc(['exec', 'lost', '--', 'echo', 'hi'], { env: SPDY_ONLY });
      assert.notEqual(r.code, 0);
      assert.match(
        r.stderr,
        new RegExp(`error dialing backend: dial tcp 127\\.0\\.0\\.1:${dead}: connect: connection refused`),
      );
    });

    it('a pod bound to no node is a bad request', async () => {
      await client
        .resource('pods')
        .namespace('default')
        .create({
          apiVersion: 'v1',
          kind: 'Pod',
          metadata: { name: 'unbound' },
          spec: { containers: [{ name: 'c', image: 'busybox' }] },
        } as any);
      const r = await kc(['exec', 'unbound', '--', 'true'], { env: SPDY_ONLY });
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /pod unbound does not have a host assigned/);
    });

    it('a request that does not upgrade gets 400 Upgrade request required', async () => {
      const r = await testRequester(api.config)(
        'POST',
        '/api/v1/namespaces/default/pods/b/exec?command=true&stdout=1',
      );
      assert.equal(r.status, 400);
      assert.equal(r.json.message, 'Upgrade request required');
    });
  });
});
