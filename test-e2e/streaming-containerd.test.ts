// exec, attach, cp, port-forward and logs -f on real containers: a local
// cluster (tkube's launcher) whose node runs busybox pods through containerd,
// driven with the real kubectl; the path is kubectl ⇄ apiserver ⇄ node agent
// :10250 ⇄ containerd's streaming server.
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { PassThrough, Writable } from 'node:stream';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { waitUntil } from '../shared/cluster/process';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { freePort } from './support/processes';

const SPDY_ONLY = { KUBECTL_REMOTE_COMMAND_WEBSOCKETS: 'false', KUBECTL_PORT_FORWARD_WEBSOCKETS: 'false' };

describe('streaming on containerd: kubectl exec, attach, cp, port-forward and logs -f', function () {
  this.timeout(180_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let dir: string;
  const podCIDR = testPodCIDR();

  const kc = (args: string[], opts: { input?: string; env?: Record<string, string> } = {}) =>
    kubectl(cluster.kubeconfig, args, opts);
  const ok = async (args: string[], input?: string) => {
    const r = await kc(args, { input });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const running = (name: string) =>
    waitUntil(
      async () => {
        const p = JSON.parse(await ok(['get', 'pod', name, '-o', 'json']));
        return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      },
      90_000,
      `pod ${name} Running`,
    );

  before(async function () {
    const why = runtimeTestsUnavailable() ?? (kubectlAvailable() ? undefined : 'kubectl is not installed');
    if (why) {
      console.warn(`skipping the containerd streaming tests: ${why}`);
      this.skip();
    }
    testImagesDir();
    dir = mkdtempSync(join(tmpdir(), 'tkube-stream-'));
    cluster = await startCluster({ runtime: 'containerd', podCIDR: () => podCIDR, timeoutMs: 90_000 });
    const run = (name: string, script: string, extra: string[] = []) =>
      ok([
        'run',
        name,
        '--image=busybox',
        '--image-pull-policy=IfNotPresent',
        '--restart=Never',
        ...extra,
        '--',
        'sh',
        '-c',
        script,
      ]);
    await run('b', "trap 'exit 0' TERM; i=0; while true; do echo line $i; i=$((i+1)); sleep 1; done");
    await run(
      'web',
      'mkdir -p /www && echo hello-from-httpd > /www/index.html && exec httpd -f -p 8080 -h /www',
    );
    // A container with stdin open, for attach (kubectl run -i would attach at once).
    const cat = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'cat' },
      spec: {
        containers: [
          { name: 'cat', image: 'busybox', imagePullPolicy: 'IfNotPresent', stdin: true, command: ['cat'] },
        ],
      },
    };
    await ok(['apply', '-f', '-'], JSON.stringify(cat));
    await Promise.all([running('b'), running('web'), running('cat')]);
  });

  after(async () => {
    await cluster?.cleanup();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  for (const [mode, env] of [
    ['WebSocket', {}],
    ['SPDY', SPDY_ONLY],
  ] as const) {
    it(`kubectl exec runs in the container, with stdin and exit codes (${mode})`, async () => {
      const hi = await kc(['exec', 'b', '--', 'echo', 'hi'], { env });
      assert.equal(hi.stdout, 'hi\n', hi.stderr);
      const cat = await kc(['exec', '-i', 'b', '--', 'cat'], { input: 'data\n', env });
      assert.equal(cat.stdout, 'data\n', cat.stderr);
      const host = await kc(['exec', 'b', '--', 'hostname'], { env });
      assert.equal(host.stdout.trim(), 'b');
      const seven = await kc(['exec', 'b', '--', 'sh', '-c', 'exit 7'], { env });
      assert.equal(seven.code, 7, seven.stderr);
    });

    it(`kubectl port-forward reaches busybox httpd (${mode})`, async () => {
      const local = await freePort();
      const child = spawn(
        'kubectl',
        [
          '--kubeconfig',
          cluster.kubeconfig,
          'port-forward',
          'pod/web',
          `${local}:8080`,
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
        const body = await (await fetch(`http://127.0.0.1:${local}/`)).text();
        assert.equal(body, 'hello-from-httpd\n');
      } finally {
        child.kill('SIGTERM');
      }
    });
  }

  it('kubectl exec -it gives the command a terminal (driven through script)', async function () {
    try {
      execFileSync('script', ['--version'], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    for (const env of [{}, SPDY_ONLY]) {
      const cmd = `kubectl --kubeconfig ${cluster.kubeconfig} exec -it b -- sh -c 'tty; echo done'`;
      const out = await new Promise<string>((resolve) =>
        execFile(
          'script',
          ['-qec', cmd, '/dev/null'],
          { timeout: 60_000, env: { ...process.env, ...env } },
          (_e, stdout) => resolve(String(stdout)),
        ),
      );
      assert.match(out, /\/dev\/pts\/\d+/);
      assert.match(out, /done/);
    }
  });

  it("the node agent's /run (ExecSync) answers a command's output, through nodes/proxy", async () => {
    const node = (await ok(['get', 'nodes', '-o', 'jsonpath={.items[0].metadata.name}'])).trim();
    const out = await ok(
      ['create', '--raw', `/api/v1/nodes/${node}/proxy/run/default/b/b?cmd=echo%20ran`, '-f', '-'],
      '',
    );
    assert.equal(out, 'ran\n');
  });

  it('kubectl cp copies both ways, a few megabytes too', async () => {
    const src = join(dir, 'in.txt');
    writeFileSync(src, 'copied in\n');
    await ok(['cp', src, 'b:/tmp/in.txt']);
    assert.equal(await ok(['exec', 'b', '--', 'cat', '/tmp/in.txt']), 'copied in\n');
    const dst = join(dir, 'out.txt');
    await ok(['cp', 'b:/tmp/in.txt', dst]);
    assert.equal(readFileSync(dst, 'utf8'), 'copied in\n');
    // Big enough to cross any SPDY or WebSocket window and frame size, both ways.
    const big = randomBytes(3 * 1024 * 1024);
    writeFileSync(join(dir, 'big.bin'), big);
    for (const env of [{}, SPDY_ONLY]) {
      rmSync(join(dir, 'back.bin'), { force: true });
      const up = await kc(['cp', join(dir, 'big.bin'), 'b:/tmp/big.bin'], { env });
      assert.equal(up.code, 0, up.stderr);
      const down = await kc(['cp', 'b:/tmp/big.bin', join(dir, 'back.bin')], { env });
      assert.equal(down.code, 0, down.stderr);
      assert.ok(readFileSync(join(dir, 'back.bin')).equals(big), 'the bytes came back unchanged');
    }
  });

  it('kubectl attach sees the output of the container and feeds its stdin', async () => {
    const r = await kc(['attach', '-i', 'cat'], { input: 'through attach\n' });
    assert.match(r.stdout, /through attach/, r.stderr);
  });

  it('100 exec sessions (@kubernetes/client-node) leave no sockets open on the node agent and no processes in the container', async () => {
    const k8s = await import('@kubernetes/client-node');
    const kc2 = new k8s.KubeConfig();
    kc2.loadFromFile(cluster.kubeconfig);
    const exec = new k8s.Exec(kc2);
    const agent = cluster.procs.find((p) => p.name !== 'apiserver' && p.name !== 'controller-manager');
    assert.ok(agent, `a node agent among ${cluster.procs.map((p) => p.name).join(', ')}`);
    const fds = () => readdirSync(`/proc/${agent.pid}/fd`).length;
    const once = () =>
      new Promise<string>((resolve, reject) => {
        let out = '';
        const stdout = new Writable({
          write(c, _e, cb) {
            out += c;
            cb();
          },
        });
        exec
          .exec('default', 'b', 'b', ['sh', '-c', 'echo $$'], stdout, null, null, false, (st) =>
            st.status === 'Success' ? resolve(out) : reject(new Error(JSON.stringify(st))),
          )
          .catch(reject);
      });
    await once();
    const before = fds();
    for (let round = 0; round < 10; round++) {
      const outs = await Promise.all(Array.from({ length: 10 }, once));
      for (const o of outs) assert.match(o, /^\d+\n$/);
    }
    // Sockets close as sessions end; allow the agent's own connections (API, containerd) some slack.
    await waitUntil(
      async () => fds() <= before + 5,
      30_000,
      `node agent fds back near ${before} (now ${fds()})`,
    );
    const ps = await ok(['exec', 'b', '--', 'ps', '-o', 'pid,args']);
    const shells = ps.split('\n').filter((l) => l.includes('echo $$'));
    assert.deepEqual(shells, [], ps);
  });

  it('the Python client runs a command and reads its exit code', async function () {
    try {
      execFileSync('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' });
    } catch {
      this.skip();
    }
    const out = execFileSync(
      '/usr/bin/python3',
      [
        '-c',
        `
from kubernetes import client, config
from kubernetes.stream import stream
config.load_kube_config()
v1 = client.CoreV1Api()
print(repr(stream(v1.connect_get_namespaced_pod_exec, 'b', 'default', command=['hostname'], stderr=True, stdin=False, stdout=True, tty=False)))
resp = stream(v1.connect_get_namespaced_pod_exec, 'b', 'default', command=['sh', '-c', 'exit 5'], stderr=True, stdin=False, stdout=True, tty=False, _preload_content=False)
resp.run_forever(timeout=30)
print('code', resp.returncode)
`,
      ],
      { env: { ...process.env, KUBECONFIG: cluster.kubeconfig }, timeout: 60_000 },
    ).toString();
    assert.match(out, /'b\\n'/);
    assert.match(out, /code 5/);
  });

  it('kubectl logs: --tail, --limit-bytes, --timestamps, --since, --since-time, --all-containers, --previous', async () => {
    const lines = (t: string) => t.split('\n').filter(Boolean);
    assert.equal(lines(await ok(['logs', 'b', '--tail=2'])).length, 2);
    assert.equal((await ok(['logs', 'b', '--limit-bytes=4'])).length, 4);
    const stamped = lines(await ok(['logs', 'b', '--tail=1', '--timestamps']));
    assert.match(stamped[0], /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z line \d+$/);
    // b writes a line a second: with eight or more, the last three seconds are fewer.
    const all = await waitUntil(
      async () => {
        const l = lines(await ok(['logs', 'b']));
        return l.length >= 8 ? l : undefined;
      },
      30_000,
      'eight lines of b',
    );
    const recent = lines(await ok(['logs', 'b', '--since=3s']));
    assert.ok(recent.length >= 1 && recent.length < all.length, `${recent.length} of ${all.length} lines`);
    const future = new Date(Date.now() + 3_600_000).toISOString().replace(/\.\d+Z$/, 'Z');
    assert.equal(await ok(['logs', 'b', `--since-time=${future}`]), '');
    assert.match(await ok(['logs', 'b', '--all-containers', '--tail=1']), /^line \d+\n$/);
    // A container that restarts: --previous shows the attempt before.
    await ok([
      'run',
      'again',
      '--image=busybox',
      '--image-pull-policy=IfNotPresent',
      '--restart=Always',
      '--',
      'sh',
      '-c',
      'echo attempt-$(cat /proc/uptime); sleep 1; exit 3',
    ]);
    await waitUntil(
      async () =>
        JSON.parse(await ok(['get', 'pod', 'again', '-o', 'json'])).status?.containerStatuses?.[0]
          ?.restartCount >= 1,
      90_000,
      'pod again restarted',
    );
    const prev = await ok(['logs', 'again', '--previous']);
    assert.match(prev, /^attempt-/);
    const none = await kc(['logs', 'b', '--previous']);
    assert.notEqual(none.code, 0);
    assert.match(none.stderr, /previous terminated container "b" in pod "b" not found/);
  });

  it('the Python client and @kubernetes/client-node forward to busybox httpd', async function () {
    const k8s = await import('@kubernetes/client-node');
    const kc2 = new k8s.KubeConfig();
    kc2.loadFromFile(cluster.kubeconfig);
    let out = '';
    const output = new Writable({
      write(c, _e, cb) {
        out += c;
        cb();
      },
    });
    const input = new PassThrough();
    const ws: any = await new k8s.PortForward(kc2).portForward('default', 'web', [8080], output, null, input);
    input.write('GET / HTTP/1.0\r\nHost: x\r\n\r\n');
    await waitUntil(async () => out.includes('hello-from-httpd'), 30_000, 'client-node port-forward');
    ws.close();
    try {
      execFileSync('/usr/bin/python3', ['-c', 'import kubernetes'], { stdio: 'ignore' });
    } catch {
      return;
    }
    const py = execFileSync(
      '/usr/bin/python3',
      [
        '-c',
        `
from kubernetes import client, config
from kubernetes.stream import portforward
config.load_kube_config()
pf = portforward(client.CoreV1Api().connect_get_namespaced_pod_portforward, 'web', 'default', ports='8080')
s = pf.socket(8080)
s.setblocking(True)
s.sendall(b'GET / HTTP/1.0\\r\\nHost: x\\r\\n\\r\\n')
data = b''
while True:
    chunk = s.recv(1024)
    if not chunk:
        break
    data += chunk
s.close()
print(data.decode())
`,
      ],
      { env: { ...process.env, KUBECONFIG: cluster.kubeconfig }, timeout: 60_000 },
    ).toString();
    assert.match(py, /hello-from-httpd/);
  });

  it('kubectl logs -f sees new lines of a live container', async () => {
    const child = spawn('kubectl', ['--kubeconfig', cluster.kubeconfig, 'logs', '-f', 'b', '--tail=1'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    try {
      // --tail=1 starts from one line; following, more appear as the container writes them.
      await waitUntil(async () => out.split('\n').filter(Boolean).length >= 3, 30_000, 'new log lines');
      const numbers = out
        .split('\n')
        .filter(Boolean)
        .map((l) => Number(l.replace('line ', '')));
      for (let i = 1; i < numbers.length; i++) assert.equal(numbers[i], numbers[i - 1] + 1);
    } finally {
      child.kill('SIGTERM');
    }
  });
});
