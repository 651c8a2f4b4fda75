// The CRI runtime against a real containerd of the test's own (Debian's
// containerd, runc and CNI plugins; images built offline from Debian's busybox):
// sandboxes with addresses from the pod CIDR, containers that really run and
// exit with their code, OOM kills, ExecSync, streaming URLs, adoption by a new
// runtime instance (an agent restart), the busybox applets tutorials use, and
// removal of everything.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContainerRecord } from '../pods/runtime';
import { CriClient } from '../../shared/cri/client';
import { freePort, waitUntil } from '../../shared/cluster/process';
import { CriRuntime } from './runtime';
import {
  runtimeTestsUnavailable,
  startTestContainerd,
  startTestDNS,
  testImagesDir,
  type TestContainerd,
} from './testing';
import { registryMissing, startRegistry } from '../../shared/cluster/registry';

const GiB = 1024 ** 3;

function pod(name: string, containers: any[], spec: any = {}): any {
  return {
    metadata: { name, namespace: 'default', uid: randomUUID() },
    spec: { containers, restartPolicy: 'Never', terminationGracePeriodSeconds: 2, ...spec },
  };
}

const busybox = (name: string, script: string, extra: any = {}) => ({
  name,
  image: 'busybox',
  imagePullPolicy: 'IfNotPresent',
  command: ['sh', '-c', script],
  ...extra,
});

describe('CRI runtime against a real containerd', function () {
  this.timeout(60_000);
  let ctd: TestContainerd;
  let logs: string;
  const runtimes: CriRuntime[] = [];

  function newRuntime(
    logMaxBytes = 10 * 1024 * 1024,
    endpoint = ctd.endpoint,
    gcPercent = 100,
    registryMirror?: string,
  ): CriRuntime {
    const r = new CriRuntime({
      client: new CriClient({ runtimeEndpoint: endpoint, requestTimeoutMs: 30_000 }),
      pod: { cgroupRoot: `/tkube-test-${process.pid}` },
      memoryCapacityBytes: 8 * GiB,
      podLogDirectory: (p) => join(logs, `${p.metadata.namespace}_${p.metadata.name}_${p.metadata.uid}`),
      sandboxImage: 'registry.k8s.io/pause:3.10',
      registryMirror,
      imageGC: { highThresholdPercent: gcPercent, lowThresholdPercent: gcPercent, minAgeMs: 0 },
      logRotation: { maxSizeBytes: logMaxBytes, maxFiles: 3 },
      relistPeriodMs: 200,
    });
    runtimes.push(r);
    return r;
  }

  /** Runs one container of a new pod to its exit; resolves with its record. */
  async function runToExit(rt: CriRuntime, p: any): Promise<ContainerRecord> {
    await rt.ensureSandbox(p);
    const c = p.spec.containers[0];
    const logPath = join(logs, `default_${p.metadata.name}_${p.metadata.uid}`, c.name, '0.log');
    const exited = new Promise<ContainerRecord>((r) => rt.onExit((x) => x.podUID === p.metadata.uid && r(x)));
    const rec = await rt.createContainer(p, c, 'regular', 0, logPath);
    await rt.startContainer(rec.id);
    return exited;
  }

  before(async function () {
    const why = runtimeTestsUnavailable();
    if (why) {
      console.warn(`skipping the CRI runtime tests: ${why}`);
      this.skip();
    }
    ctd = await startTestContainerd();
    logs = mkdtempSync(join(tmpdir(), 'tkube-cri-logs-'));
  });

  after(async () => {
    for (const r of runtimes) await r.close();
    await ctd?.cleanup();
    if (logs) rmSync(logs, { recursive: true, force: true });
  });

  it('runs a pod sandbox with an address from the pod CIDR and a container to its exit code', async () => {
    const rt = newRuntime();
    await rt.init();
    assert.match(rt.version, /^1\./);
    assert.equal(rt.notReadyReason(), '');
    assert.ok(rt.hasImage('busybox'), 'the offline busybox image is present');
    assert.ok(rt.hasImage('docker.io/library/busybox:latest'));
    assert.ok(!rt.hasImage('nginx'));
    const p = pod('exit3', [busybox('c', 'echo hello; echo oops >&2; exit 3')]);
    const { podIPs } = await rt.ensureSandbox(p);
    const prefix = ctd.podCIDR.split('.').slice(0, 3).join('.');
    assert.equal(podIPs.length, 1);
    assert.ok(podIPs[0].startsWith(`${prefix}.`), `${podIPs[0]} in ${ctd.podCIDR}`);
    const c = await runToExit(rt, p);
    assert.equal(c.state, 'exited');
    assert.equal(c.exitCode, 3);
    assert.equal(c.reason, 'Error');
    assert.match(c.id, /^containerd:\/\/[0-9a-f]{64}$/);
    assert.match(c.imageID, /^sha256:[0-9a-f]{64}$/);
    // Both times come from containerd (a quick exit may be stamped a little before the start it records).
    assert.ok(c.startedAt! > 0 && c.finishedAt! > 0 && Math.abs(c.finishedAt! - c.startedAt!) < 10_000);
    const log = readFileSync(c.logPath, 'utf8');
    assert.match(log, /^\S+ stdout F hello$/m);
    assert.match(log, /^\S+ stderr F oops$/m);
    // The pod's cgroup in every hierarchy (cgroup v1: one per controller; v2: the one tree).
    const root = '/sys/fs/cgroup';
    const v2 = existsSync(join(root, 'cgroup.controllers'));
    const trees = v2 ? [root] : readdirSync(root).map((h) => join(root, h));
    const podCgroups = () =>
      trees
        .map((t) => join(t, `tkube-test-${process.pid}`, 'kubepods', 'besteffort', `pod${p.metadata.uid}`))
        .filter((d) => existsSync(d));
    assert.ok(podCgroups().length > 0, 'runc made the pod cgroup');
    await rt.removeSandbox(p.metadata.uid);
    assert.deepEqual(podCgroups(), [], 'the pod cgroup is removed with the sandbox');
    const left = await new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 5000 }).call(
      'ListContainers',
      { filter: { labelSelector: { 'io.kubernetes.pod.uid': p.metadata.uid } } },
    );
    assert.equal(left.containers.length, 0, 'the sandbox and its containers are gone');
  });

  it('creates no container, and no sandbox without the DNS the pod network gives it, before ensureSandbox', async () => {
    const rt = newRuntime();
    await rt.init();
    const p = pod('early', [busybox('c', 'true')]);
    await assert.rejects(rt.createContainer(p, p.spec.containers[0], 'regular', 0, join(logs, 'early.log')), {
      message: 'the pod sandbox is not ready',
    });
    const cri = new CriClient({ runtimeEndpoint: ctd.endpoint, requestTimeoutMs: 10_000 });
    try {
      const sandboxes = await cri.call('ListPodSandbox', {
        filter: { labelSelector: { 'io.kubernetes.pod.uid': p.metadata.uid } },
      });
      assert.deepEqual(sandboxes.items, []);
    } finally {
      cri.close();
    }
  });

  it('runs the busybox applets tutorials use: wget from an httpd pod, nc, ping, ip, tar, nslookup', async () => {
    const rt = newRuntime();
    await rt.init();
    const start = async (p: any) => {
      const { podIPs } = await rt.ensureSandbox(p);
      const c = p.spec.containers[0];
      const rec = await rt.createContainer(p, c, 'regular', 0, join(logs, `${p.metadata.name}.log`));
      await rt.startContainer(rec.id);
      return { id: rec.id, ip: podIPs[0] };
    };
    const webPod = pod('web', [
      busybox('c', 'mkdir -p /www && echo served-by-httpd >/www/index.html && httpd -f -p 8080 -h /www'),
    ]);
    const clientPod = pod('client', [busybox('c', 'sleep 3600')]);
    const web = await start(webPod);
    const client = await start(clientPod);
    const gateway = ctd.podCIDR.replace(/\.0\/\d+$/, '.1');
    const dns = await startTestDNS(gateway, { 'web.test': web.ip });
    try {
      const sh = async (script: string) => {
        const r = await rt.execSync(client.id, ['sh', '-c', script], 20);
        const out = r.stdout.toString() + r.stderr.toString();
        assert.equal(r.exitCode, 0, `${script}: exit ${r.exitCode}: ${out}`);
        return out;
      };
      await waitUntil(() => sh(`wget -q -T 2 -O- http://${web.ip}:8080/`), 20_000, 'httpd answering');
      assert.equal(await sh(`wget -q -T 5 -O- http://${web.ip}:8080/`), 'served-by-httpd\n');
      await sh(`wget --spider --timeout=2 http://${web.ip}:8080/`);
      // A name from /etc/hosts: getaddrinfo through nsswitch.conf and glibc's files module.
      assert.equal(
        await sh(`echo "${web.ip} web" >>/etc/hosts && wget -q -T 5 -O- http://web:8080/index.html`),
        'served-by-httpd\n',
      );
      assert.match(
        await sh(`printf 'GET / HTTP/1.0\\r\\n\\r\\n' | nc -w 5 ${web.ip} 8080`),
        /served-by-httpd/,
      );
      assert.match(await sh(`ping -c1 -W5 ${web.ip}`), /1 packets received/);
      assert.match(await sh('ip addr show eth0'), new RegExp(`inet ${client.ip.replace(/\./g, '\\.')}/`));
      assert.equal(
        await sh('mkdir -p /t/a && echo x >/t/a/f && tar -C /t -czf /tmp/t.tgz a && tar -tzf /tmp/t.tgz'),
        'a/\na/f\n',
      );
      assert.match(
        await sh(`nslookup web.test ${gateway}`),
        new RegExp(`Address: ${web.ip.replace(/\./g, '\\.')}`),
      );
    } finally {
      await dns.close();
      for (const p of [clientPod, webPod]) await rt.removeSandbox(p.metadata.uid);
    }
  });

  it('reports a container killed at its memory limit as OOMKilled', async () => {
    const rt = newRuntime();
    await rt.init();
    const p = pod('oom', [
      busybox('c', 'tail /dev/zero', {
        resources: { limits: { memory: '20Mi' }, requests: { memory: '20Mi' } },
      }),
    ]);
    const c = await runToExit(rt, p);
    assert.equal(c.reason, 'OOMKilled');
    assert.equal(c.exitCode, 137);
    await rt.removeSandbox(p.metadata.uid);
  });

  it('runs commands in a container (ExecSync) and hands out streaming URLs', async () => {
    const rt = newRuntime();
    await rt.init();
    const p = pod('exec', [busybox('c', 'sleep 3600')]);
    await rt.ensureSandbox(p);
    const logPath = join(logs, 'exec.log');
    const rec = await rt.createContainer(p, p.spec.containers[0], 'regular', 0, logPath, {
      env: [{ name: 'GREETING', value: 'hi there' }],
      mounts: [],
    });
    await rt.startContainer(rec.id);
    assert.equal(rt.container(rec.id)?.state, 'running');
    const r = await rt.execSync(rec.id, ['sh', '-c', 'echo "$GREETING"; echo err >&2; exit 4'], 10);
    assert.equal(r.exitCode, 4);
    assert.equal(r.stdout.toString(), 'hi there\n');
    assert.equal(r.stderr.toString(), 'err\n');
    const url = await rt.streamURL({
      kind: 'exec',
      containerID: rec.id,
      cmd: ['sh'],
      tty: false,
      stdin: true,
      stdout: true,
      stderr: true,
    });
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/exec\//);
    assert.match(
      await rt.streamURL({ kind: 'portforward', podUID: p.metadata.uid, ports: [80] }),
      /portforward/,
    );
    const started = Date.now();
    await rt.stopContainer(rec.id, 1);
    assert.equal(rt.container(rec.id)?.state, 'exited');
    assert.ok(Date.now() - started < 20_000);
    await rt.removeSandbox(p.metadata.uid);
  });

  it("measures a busy container's CPU and memory through the CRI stats", async () => {
    const rt = newRuntime();
    await rt.init();
    const p = pod('busy', [busybox('c', 'while :; do :; done')]);
    await rt.ensureSandbox(p);
    const rec = await rt.createContainer(p, p.spec.containers[0], 'regular', 0, join(logs, 'busy.log'));
    await rt.startContainer(rec.id);
    await new Promise((r) => setTimeout(r, 1500));
    await rt.readStats();
    await new Promise((r) => setTimeout(r, 500));
    await rt.readStats();
    const u = rt.containerUsage(rec.id);
    assert.ok(u, 'a reading for the container');
    assert.ok(u.cpuCoreNanoSeconds > 100_000_000, `it used CPU: ${u.cpuCoreNanoSeconds} ns`);
    assert.ok(u.cpuNanoCores > 0, 'a CPU rate');
    assert.ok(u.memoryWorkingSetBytes > 0, 'a working set');
    await rt.removeSandbox(p.metadata.uid);
  });

  it('rotates a container log past its size and the runtime goes on writing to a new file', async () => {
    const rt = newRuntime(2048);
    await rt.init();
    const p = pod('chatty', [busybox('c', 'i=0; while :; do i=$((i+1)); echo "line $i"; sleep 0.01; done')]);
    await rt.ensureSandbox(p);
    const path = join(logs, 'chatty', 'c', '0.log');
    const rec = await rt.createContainer(p, p.spec.containers[0], 'regular', 0, path);
    await rt.startContainer(rec.id);
    for (let round = 0; round < 4; round++) {
      await new Promise((r) => setTimeout(r, 400));
      await rt.rotateLogs();
    }
    await new Promise((r) => setTimeout(r, 400));
    const rotated = readdirSync(join(logs, 'chatty', 'c')).filter((f) => f.startsWith('0.log.'));
    assert.ok(
      rotated.length >= 1 && rotated.length <= 2,
      `kept within --container-log-max-files: ${rotated}`,
    );
    assert.ok(
      rotated.some((f) => f.endsWith('.gz')) || rotated.length === 1,
      'older rotations are compressed',
    );
    assert.match(readFileSync(path, 'utf8'), /stdout F line \d+/, 'new lines go to the reopened file');
    await rt.removeSandbox(p.metadata.uid);
  });

  it('adopts the sandboxes and containers left running when a new runtime instance starts (agent restart)', async () => {
    const first = newRuntime();
    await first.init();
    const p = pod('adopt', [busybox('c', 'sleep 3600')]);
    const { podIPs } = await first.ensureSandbox(p);
    const rec = await first.createContainer(
      p,
      p.spec.containers[0],
      'regular',
      2,
      join(logs, 'adopt', 'c', '2.log'),
    );
    await first.startContainer(rec.id);
    await first.close();

    const second = newRuntime();
    await second.init();
    const adopted = second.containers(p.metadata.uid);
    assert.equal(adopted.length, 1);
    assert.equal(adopted[0].id, rec.id);
    assert.equal(adopted[0].state, 'running');
    assert.equal(adopted[0].attempt, 2, 'the restart count comes back from the annotation');
    assert.equal(adopted[0].name, 'c');
    assert.ok(second.podUIDs().includes(p.metadata.uid));
    assert.deepEqual((await second.ensureSandbox(p)).podIPs, podIPs, 'the same sandbox, not a new one');
    await second.removeSandbox(p.metadata.uid);
    assert.equal(second.containers(p.metadata.uid).length, 0);
  });

  it('collects unused images above the high threshold, keeping the ones containers use', async () => {
    // A containerd of its own: this test removes images the others need.
    const own = await startTestContainerd();
    try {
      const rt = newRuntime(undefined, own.endpoint, 0);
      await rt.init();
      const p = pod('gc', [busybox('c', 'sleep 3600')]);
      await rt.ensureSandbox(p);
      const rec = await rt.createContainer(p, p.spec.containers[0], 'regular', 0, join(logs, 'gc.log'));
      await rt.startContainer(rec.id);
      // A second, unused image: busybox under another name would share its id, so import it renamed.
      const cri = new CriClient({ runtimeEndpoint: own.endpoint, requestTimeoutMs: 10_000 });
      assert.ok(rt.hasImage('busybox'));
      await rt.removeSandbox(p.metadata.uid);
      const freed = await (rt as any).imageStore.collectGarbage(new Set());
      assert.ok(freed > 0, 'the unused busybox image was removed');
      const left = (await cri.call('ListImages', {})).images.flatMap((i: any) => i.repoTags);
      assert.ok(!left.includes('docker.io/library/busybox:latest'), `busybox collected: ${left}`);
      assert.ok(left.includes('registry.k8s.io/pause:3.10'), 'the sandbox image is kept');
      assert.ok(!rt.hasImage('busybox'));
      cri.close();
    } finally {
      await own.cleanup();
    }
  });

  it("pulls `busybox` (policy Always) from the cluster's registry and runs it; a missing image fails at once naming the mirror", async function () {
    const why = registryMissing();
    if (why) {
      console.warn(`skipping the cluster registry test: ${why}`);
      this.skip();
    }
    const dir = mkdtempSync(join(tmpdir(), 'tkube-registry-'));
    const registry = await startRegistry({
      dataDir: dir,
      port: await freePort(),
      imagesDir: testImagesDir(),
    });
    // Its own containerd: this test removes the imported busybox, which the others use.
    const own = await startTestContainerd({ mirror: { endpoint: registry.endpoint, mirrorOnly: true } });
    try {
      const rt = newRuntime(undefined, own.endpoint, undefined, registry.endpoint);
      await rt.init();
      const cri = new CriClient({ runtimeEndpoint: own.endpoint, requestTimeoutMs: 10_000 });
      await cri.call('RemoveImage', { image: { image: 'docker.io/library/busybox:latest' } });
      cri.close();
      const pulled = await rt.pullImage('busybox');
      assert.match(pulled.imageRef, /^sha256:/);
      const c = await runToExit(
        rt,
        pod('pulled', [busybox('c', 'echo from-the-registry', { imagePullPolicy: 'Always' })]),
      );
      assert.equal(c.exitCode, 0);
      assert.match(readFileSync(c.logPath, 'utf8'), /stdout F from-the-registry$/m);
      const started = Date.now();
      await assert.rejects(rt.pullImage('nosuch/image:1'), (err: Error) => {
        assert.match(err.message, new RegExp(registry.host.replace(/\./g, '\\.')), 'names the mirror');
        assert.match(err.message, /not found/);
        return true;
      });
      assert.ok(Date.now() - started < 10_000, 'no waiting on an upstream');
      assert.doesNotMatch(readFileSync(own.logFile, 'utf8'), /registry-1\.docker\.io|index\.docker\.io/);
      await rt.removeSandbox(c.podUID);
    } finally {
      await own.cleanup();
      await registry.proc.stop();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('reports a failed pull of an image that no registry serves', async () => {
    const rt = newRuntime();
    await rt.init();
    // A registry on a closed loopback port: the pull fails without leaving this machine.
    await assert.rejects(
      rt.pullImage('127.0.0.1:1/none/such:1'),
      /failed to pull and unpack image|connection refused/,
    );
  });
});
