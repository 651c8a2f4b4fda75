// The pod workers with the pod-spec machinery switched on (a runtime that can
// exec), against a real apiserver in-process: env and mounts handed to the
// runtime, CreateContainerConfigError and FailedMount until the objects
// exist, probes restarting containers and flipping Ready, lifecycle hooks and
// termination messages. The runtime here is the fake one plus ExecSync running
// commands on this machine, so hooks and probes have something real to run.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client, loadKubeconfig, type KubeObject } from '../../shared/client';
import { writeComponentKubeconfig } from '../../shared/cluster/credentials';
import { FakeRecorder } from '../../shared/events';
import { PodManager } from './manager';
import type { ContainerConfig, ContainerKind, ContainerRecord, ExecSyncResult } from './runtime';
import { FakeRuntime } from './runtime-fake';

/** The fake runtime, plus ExecSync running the command on this machine; it keeps each container's config. */
class ExecRuntime extends FakeRuntime {
  readonly configs = new Map<string, ContainerConfig | undefined>();
  readonly specs = new Map<string, any>();
  /** The grace period each stop was given. */
  readonly stopGrace = new Map<string, number>();
  override stopContainer(id: string, gracePeriodSeconds: number): Promise<void> {
    if (!this.stopGrace.has(id)) this.stopGrace.set(id, gracePeriodSeconds);
    return super.stopContainer(id, gracePeriodSeconds);
  }
  override async createContainer(
    pod: any,
    container: any,
    kind: ContainerKind,
    attempt: number,
    logPath: string,
    config?: ContainerConfig,
  ): Promise<ContainerRecord> {
    const r = await super.createContainer(pod, container, kind, attempt, logPath);
    this.configs.set(r.id, config);
    this.specs.set(r.id, container);
    return r;
  }
  execSync(_id: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    return new Promise((resolve, reject) => {
      execFile(cmd[0], cmd.slice(1), { timeout: timeoutSeconds * 1000 }, (err: any, stdout, stderr) => {
        if (err && typeof err.code !== 'number') return reject(err);
        resolve({ exitCode: err ? err.code : 0, stdout: Buffer.from(stdout), stderr: Buffer.from(stderr) });
      });
    });
  }
}

const waitUntil = async <T>(what: string, fn: () => T | undefined | false, ms = 25_000): Promise<T> => {
  const end = Date.now() + ms;
  for (;;) {
    const v = fn();
    if (v) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
};

describe('nodeagent/pods: pod spec with a runtime that runs processes', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;
  /** The agent's own client: the node's identity (system:node:n1), as a kubelet has. */
  let nodeClient: Client;
  let dir: string;
  let recorder: FakeRecorder;
  let runtime: ExecRuntime;
  let mgr: PodManager;
  let http: Server;
  let httpPort: number;
  let healthy = true;
  const ns = 'spec-test';

  before(async () => {
    // Authorized as in a cluster: the Node authorizer and RBAC decide what the agent may read.
    srv = await startTestAPIServer({ authorizationMode: ['Node', 'RBAC'] });
    client = Client.create(srv.config, { qps: -1, http2: false });
    const kubeconfig = join(srv.dir, 'node-n1', 'kubeconfig');
    await writeComponentKubeconfig({
      certDir: join(srv.dir, 'certs'),
      server: srv.url,
      subject: { commonName: 'system:node:n1', organizations: ['system:nodes'] },
      kubeconfig,
    });
    nodeClient = Client.create(loadKubeconfig(kubeconfig), { qps: -1, http2: false });
    await client.resource('namespaces').create({ metadata: { name: ns } });
    await client
      .resource('serviceaccounts')
      .namespace(ns)
      .create({ metadata: { name: 'default' } });
    http = createServer((_req, res) => {
      res.writeHead(healthy ? 200 : 500);
      res.end(healthy ? 'ok' : 'sick');
    });
    await new Promise<void>((r) => http.listen(0, '127.0.0.1', r));
    httpPort = (http.address() as AddressInfo).port;
  });
  after(async () => {
    http?.close();
    await nodeClient?.close();
    await client?.close();
    await srv?.stop();
  });
  /** A synced pod manager of node n1 on the runtime, writing under this test's dir. */
  const managerOn = (rt: ConstructorParameters<typeof PodManager>[0]['runtime']): PodManager => {
    const m = new PodManager({
      client: nodeClient,
      nodeName: 'n1',
      maxPods: 110,
      runtime: rt,
      recorder,
      logsDir: join(dir, 'logs'),
      rootDir: dir,
      nodeIPs: () => ['127.0.0.1'],
      nodeUID: () => undefined,
      podCIDR: () => '10.244.0.0/24',
      allocatable: () => ({ cpu: '2', memory: '1Gi' }),
    });
    m.markSynced();
    return m;
  };
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-podspec-'));
    recorder = new FakeRecorder();
    runtime = new ExecRuntime({ logRotation: { maxSizeBytes: 1 << 20, maxFiles: 3 } });
    mgr = managerOn(runtime);
  });
  afterEach(async () => {
    await mgr.stop();
    // Memory-backed volumes of pods still there are mounts: unmount them before removing the directory.
    for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n').reverse()) {
      const point = line.split(' ')[4];
      if (point?.startsWith(`${dir}/`)) execFileSync('umount', [point]);
    }
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (
    name: string,
    spec: any,
    annotations: Record<string, string> = {},
  ): Promise<KubeObject> => {
    const p = await client
      .resource('pods')
      .namespace(ns)
      .create({
        metadata: { name, annotations },
        spec: {
          nodeName: 'n1',
          serviceAccountName: 'default',
          hostNetwork: true,
          terminationGracePeriodSeconds: 5,
          ...spec,
        },
      });
    mgr.apiPodUpdated(p);
    return p;
  };
  const statusOf = (name: string): any => mgr.runningPods().find((p) => p.metadata.name === name)?.status;
  const cstatus = (name: string, c = 'c'): any =>
    statusOf(name)?.containerStatuses?.find((s: any) => s.name === c);
  const ready = (name: string) => statusOf(name)?.conditions?.find((c: any) => c.type === 'Ready')?.status;

  it('waits in CreateContainerConfigError / ContainerCreating until the ConfigMap exists, then passes env and mounts', async () => {
    const p = await create('cfg', {
      volumes: [
        { name: 'conf', configMap: { name: 'later' } },
        {
          name: 'api',
          projected: { sources: [{ serviceAccountToken: { path: 'token', expirationSeconds: 3600 } }] },
        },
      ],
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          env: [
            { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'later', key: 'color' } } },
            { name: 'MSG', value: 'color=$(COLOR)' },
          ],
          volumeMounts: [{ name: 'conf', mountPath: '/etc/conf' }],
          command: ['echo'],
          args: ['$(MSG)', '$$(MSG)'],
        },
      ],
    });
    await waitUntil('FailedMount', () =>
      recorder.events.includes(
        'Warning FailedMount MountVolume.SetUp failed for volume "conf" : configmap "later" not found',
      ),
    );
    assert.equal(cstatus('cfg').state.waiting.reason, 'ContainerCreating');
    await client
      .resource('configmaps')
      .namespace(ns)
      .create({ metadata: { name: 'later' }, data: { hue: 'red' } });
    mgr.requestSync(p.metadata.uid!);
    const waiting = await waitUntil('CreateContainerConfigError', () => {
      const w = cstatus('cfg')?.state?.waiting;
      return w?.reason === 'CreateContainerConfigError' && w;
    });
    assert.equal(waiting.message, "couldn't find key color in ConfigMap spec-test/later");
    assert.ok(
      recorder.events.includes("Warning Failed Error: couldn't find key color in ConfigMap spec-test/later"),
    );
    const cm = await client.resource('configmaps').namespace(ns).get('later');
    await client
      .resource('configmaps')
      .namespace(ns)
      .update({ ...cm, data: { color: 'blue' } });
    mgr.requestSync(p.metadata.uid!);
    await waitUntil('running', () => cstatus('cfg')?.state?.running);
    const id = cstatus('cfg').containerID;
    const config = runtime.configs.get(id)!;
    const env = Object.fromEntries(config.env.map((e) => [e.name, e.value]));
    assert.equal(env.COLOR, 'blue');
    assert.equal(env.MSG, 'color=blue');
    assert.deepEqual(runtime.specs.get(id).args, ['color=blue', '$(MSG)'], 'args expanded for the runtime');
    assert.ok(env.KUBERNETES_SERVICE_HOST);
    const conf = config.mounts.find((m) => m.containerPath === '/etc/conf')!;
    assert.equal(
      conf.hostPath,
      join(dir, 'pods', p.metadata.uid!, 'volumes', 'kubernetes.io~configmap', 'conf'),
    );
    assert.equal(conf.readOnly, true);
    // Written when it mounted (rewritten from the update at a later refresh).
    assert.equal(readFileSync(join(conf.hostPath, 'hue'), 'utf8'), 'red');
    assert.ok(config.mounts.some((m) => m.containerPath === '/dev/termination-log' && !m.readOnly));
    const hosts = config.mounts.find((m) => m.containerPath === '/etc/hosts')!;
    assert.match(
      readFileSync(hosts.hostPath, 'utf8'),
      /^# Kubernetes-managed hosts file \(host network\)\.\n/,
    );
    // The token the node requested for the pod authenticates as its service account.
    const token = readFileSync(
      join(dir, 'pods', p.metadata.uid!, 'volumes', 'kubernetes.io~projected', 'api', 'token'),
      'utf8',
    );
    const review: any = await client.resource('tokenreviews').create({
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    } as any);
    assert.equal(review.status.user.username, `system:serviceaccount:${ns}:default`);
    assert.equal(review.status.user.extra['authentication.kubernetes.io/pod-name'][0], 'cfg');
    // The node wrote the status to the API.
    let inAPI: any;
    for (let i = 0; i < 100; i++) {
      inAPI = await client.resource('pods').namespace(ns).get('cfg');
      if (inAPI.status?.containerStatuses?.[0]?.containerID === id) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(inAPI.status.containerStatuses[0].containerID, id);
    // Gone from the API: torn down, volumes removed.
    mgr.apiPodRemoved(p);
    await waitUntil('teardown', () => !existsSync(join(dir, 'pods', p.metadata.uid!)));
  });

  it('mounts the volumes while the sandbox is made, and shows no pod IP while a volume fails to mount', async () => {
    // A runtime with sandboxes (as the CRI one) whose RunPodSandbox waits for the test.
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const asked = new Set<string>();
    class SandboxRuntime extends ExecRuntime {
      async ensureSandbox(pod: any): Promise<{ podIPs: string[] }> {
        asked.add(pod.metadata.uid);
        await gate;
        return { podIPs: ['10.244.0.9'] };
      }
    }
    const sbMgr = managerOn(new SandboxRuntime({ logRotation: { maxSizeBytes: 1 << 20, maxFiles: 3 } }));
    const cms = client.resource('configmaps').namespace(ns);
    await cms.create({ metadata: { name: 'now' }, data: { hue: 'green' } });
    const podWith = async (name: string, cm: string) => {
      const p = await client
        .resource('pods')
        .namespace(ns)
        .create({
          metadata: { name },
          spec: {
            nodeName: 'n1',
            terminationGracePeriodSeconds: 0,
            volumes: [{ name: 'conf', configMap: { name: cm } }],
            containers: [
              {
                name: 'c',
                image: 'busybox:1.36',
                command: ['sleep', '60'],
                volumeMounts: [{ name: 'conf', mountPath: '/c' }],
              },
            ],
          },
        });
      sbMgr.apiPodUpdated(p);
      return p;
    };
    const st = (name: string): any => sbMgr.runningPods().find((p) => p.metadata.name === name)?.status;
    try {
      const a = await podWith('parallel', 'now');
      const file = join(dir, 'pods', a.metadata.uid!, 'volumes', 'kubernetes.io~configmap', 'conf', 'hue');
      // Written while its RunPodSandbox has not returned.
      await waitUntil('the volume mounted during the sandbox', () => existsSync(file));
      assert.ok(asked.has(a.metadata.uid!), 'the sandbox was asked for');
      const b = await podWith('no-cm-yet', 'later-cm');
      await waitUntil('the second sandbox asked for', () => asked.has(b.metadata.uid!));
      release();
      await waitUntil('parallel Running', () => st('parallel')?.phase === 'Running');
      assert.equal(st('parallel').podIP, '10.244.0.9');
      await waitUntil('FailedMount', () =>
        recorder.events.includes(
          'Warning FailedMount MountVolume.SetUp failed for volume "conf" : configmap "later-cm" not found',
        ),
      );
      await waitUntil('ContainerCreating', () => st('no-cm-yet')?.containerStatuses?.[0]?.state?.waiting);
      assert.equal(st('no-cm-yet').containerStatuses[0].state.waiting.reason, 'ContainerCreating');
      assert.equal(st('no-cm-yet').podIP, undefined, 'no IP while its volume is not mounted');
      await cms.create({ metadata: { name: 'later-cm' }, data: { hue: 'red' } });
      sbMgr.requestSync(b.metadata.uid!);
      await waitUntil('no-cm-yet Running', () => st('no-cm-yet')?.phase === 'Running');
      assert.equal(st('no-cm-yet').podIP, '10.244.0.9');
    } finally {
      release();
      await sbMgr.stop();
    }
  });

  it("waits in ContainerCreating while its claim is unbound (kubelet's FailedMount), then mounts the bound PV", async () => {
    const pvcs = client.resource('persistentvolumeclaims').namespace(ns);
    const claim = await pvcs.create({
      metadata: { name: 'later-claim' },
      spec: {
        storageClassName: '',
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: '1Gi' } },
      },
    });
    const p = await create('claimer', {
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'later-claim', readOnly: true } }],
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          command: ['true'],
          volumeMounts: [{ name: 'data', mountPath: '/data' }],
        },
      ],
    });
    await waitUntil('FailedMount', () =>
      recorder.events.includes(
        `Warning FailedMount Unable to attach or mount volumes: unmounted volumes=[data], unattached volumes=[], failed to process volumes=[data]: error processing PVC ${ns}/later-claim: PVC is not bound`,
      ),
    );
    assert.equal(cstatus('claimer').state.waiting.reason, 'ContainerCreating');
    // Bound as the binder would: the PV names the claim, the claim the PV, then its phase.
    const path = join(dir, 'pv-data');
    await client.resource('persistentvolumes').create({
      metadata: { name: 'pv-claimer' },
      spec: {
        storageClassName: '',
        accessModes: ['ReadWriteOnce'],
        capacity: { storage: '1Gi' },
        hostPath: { path, type: 'DirectoryOrCreate' },
        claimRef: { namespace: ns, name: 'later-claim', uid: claim.metadata.uid },
      },
    });
    await pvcs.patch('later-claim', { spec: { volumeName: 'pv-claimer' } }, 'merge');
    await pvcs.patch('later-claim', { status: { phase: 'Bound' } }, 'merge', { subresource: 'status' });
    mgr.requestSync(p.metadata.uid!);
    const id = await waitUntil('container made', () => cstatus('claimer')?.containerID);
    // Read through the node's own identity: the Node authorizer lets it get its pods' claims and their PVs.
    assert.deepEqual(
      runtime.configs.get(id)?.mounts.find((m) => m.containerPath === '/data'),
      { containerPath: '/data', hostPath: path, readOnly: true },
    );
    assert.ok(existsSync(path), 'DirectoryOrCreate made the directory');
  });

  it('fails a container whose expanded subPathExpr is absolute or steps out with CreateContainerConfigError', async () => {
    const sub = (name: string, value: string) => ({
      name,
      image: 'busybox:1.36',
      env: [{ name: 'POD_NAME', value }],
      volumeMounts: [{ name: 'work', mountPath: '/work', subPathExpr: '$(POD_NAME)' }],
    });
    await create('subpath', {
      volumes: [{ name: 'work', emptyDir: {} }],
      containers: [sub('c', '/tmp'), sub('d', '..'), sub('e', 'a/../b'), sub('f', 'ok'), sub('g', '')],
    });
    const waiting = (c: string) =>
      waitUntil(`${c} CreateContainerConfigError`, () => {
        const w = cstatus('subpath', c)?.state?.waiting;
        return w?.reason === 'CreateContainerConfigError' && w;
      });
    assert.equal((await waiting('c')).message, 'error SubPath `/tmp` must not be an absolute path');
    assert.equal((await waiting('d')).message, "unable to provision SubPath `..`: must not contain '..'");
    assert.equal((await waiting('e')).message, "unable to provision SubPath `a/../b`: must not contain '..'");
    assert.equal((await waiting('g')).message, 'missing value for POD_NAME');
    assert.ok(
      recorder.events.includes('Warning Failed Error: error SubPath `/tmp` must not be an absolute path'),
    );
    await waitUntil('f running', () => cstatus('subpath', 'f')?.state?.running);
    for (const c of ['c', 'd', 'e', 'g']) assert.ok(!cstatus('subpath', c).state.running, `${c} never runs`);
  });

  it('readiness drives Ready', async () => {
    healthy = true;
    await create('ready', {
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          readinessProbe: { httpGet: { path: '/', port: httpPort }, periodSeconds: 1, failureThreshold: 1 },
        },
      ],
    });
    await waitUntil('Ready', () => ready('ready') === 'True');
    healthy = false;
    await waitUntil('not Ready', () => ready('ready') === 'False');
    assert.ok(
      recorder.events.includes(
        'Warning Unhealthy Readiness probe failed: HTTP probe failed with statuscode: 500',
      ),
    );
    assert.equal(cstatus('ready').ready, false);
    assert.ok(cstatus('ready').state.running, 'readiness never restarts');
    healthy = true;
    await waitUntil('Ready again', () => ready('ready') === 'True');
  });

  it('restarts a container failing its liveness probe, with CrashLoopBackOff', async () => {
    await create('live', {
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          livenessProbe: {
            exec: { command: ['sh', '-c', 'echo down; exit 1'] },
            periodSeconds: 1,
            failureThreshold: 2,
          },
        },
      ],
    });
    await waitUntil('a restart', () => cstatus('live')?.restartCount >= 1);
    assert.ok(
      recorder.events.includes('Normal Killing Container c failed liveness probe, will be restarted'),
    );
    assert.ok(recorder.events.includes('Warning Unhealthy Liveness probe failed: down\n'));
    const w = await waitUntil('CrashLoopBackOff', () => {
      const st = cstatus('live');
      return st?.state?.waiting?.reason === 'CrashLoopBackOff' && st;
    });
    assert.ok(w.lastState.terminated, 'the killed instance is the last state');
    assert.ok(w.restartCount >= 1);
  });

  it('holds the containers back until a sidecar passed its startup probe', async () => {
    healthy = false;
    await create('sidecar', {
      initContainers: [
        {
          name: 'proxy',
          image: 'busybox:1.36',
          restartPolicy: 'Always',
          startupProbe: { httpGet: { path: '/', port: httpPort }, periodSeconds: 1, failureThreshold: 60 },
        },
      ],
      containers: [{ name: 'c', image: 'busybox:1.36' }],
    });
    await waitUntil('startup failing', () =>
      recorder.events.includes(
        'Warning Unhealthy Startup probe failed: HTTP probe failed with statuscode: 500',
      ),
    );
    assert.equal(cstatus('sidecar').state.waiting?.reason, 'PodInitializing');
    assert.equal(statusOf('sidecar').initContainerStatuses[0].started, false);
    healthy = true;
    await waitUntil('c running', () => cstatus('sidecar')?.state?.running);
    assert.equal(statusOf('sidecar').initContainerStatuses[0].started, true);
  });

  it('kills a container whose postStart hook fails; runs preStop before stopping', async () => {
    await create('hooked', {
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          lifecycle: { postStart: { exec: { command: ['sh', '-c', 'echo nope; exit 7'] } } },
        },
      ],
    });
    await waitUntil('FailedPostStartHook', () =>
      recorder.events.find((e) => e.startsWith('Warning FailedPostStartHook')),
    );
    const ev = recorder.events.find((e) => e.startsWith('Warning FailedPostStartHook'))!;
    assert.match(
      ev,
      /^Warning FailedPostStartHook Exec lifecycle hook \(\[sh -c echo nope; exit 7\]\) for Container "c" in Pod "hooked_spec-test\([0-9a-f-]+\)" failed - error: command 'sh -c echo nope; exit 7' exited with 7: nope\n, message: "nope\\n"$/,
    );
    await waitUntil('restarted', () => cstatus('hooked')?.restartCount >= 1);

    const marker = join(dir, 'prestop-ran');
    const p = await create('stopping', {
      containers: [
        {
          name: 'c',
          image: 'busybox:1.36',
          lifecycle: { preStop: { exec: { command: ['sh', '-c', `echo bye > ${marker}; sleep 1`] } } },
        },
      ],
    });
    await waitUntil('running', () => cstatus('stopping')?.state?.running);
    const deleting = await client
      .resource('pods')
      .namespace(ns)
      .delete('stopping', { gracePeriodSeconds: 5 });
    mgr.apiPodUpdated(deleting as KubeObject);
    // The hook's shell creates the file, then writes to it.
    await waitUntil('preStop', () => existsSync(marker) && readFileSync(marker, 'utf8') === 'bye\n');
    const stopped = await waitUntil('stopped', () => cstatus('stopping')?.state?.terminated);
    // The stop gets what the hook left of the 5 s grace period.
    const grace = runtime.stopGrace.get(stopped.containerID)!;
    assert.ok(grace >= 2 && grace <= 4, `grace ${grace}`);
    assert.ok(recorder.events.includes('Normal Killing Stopping container c'));
    void p;
  });

  it('fails a running pod whose activeDeadlineSeconds an update lowered, in the API too', async () => {
    await create('deadline', { containers: [{ name: 'c', image: 'busybox:1.36' }] });
    await waitUntil('running', () => cstatus('deadline')?.state?.running);
    const updated = await client
      .resource('pods')
      .namespace(ns)
      .patch('deadline', { spec: { activeDeadlineSeconds: 1 } }, 'strategic');
    mgr.apiPodUpdated(updated);
    await waitUntil('stopped', () => cstatus('deadline')?.state?.terminated);
    assert.equal(statusOf('deadline').phase, 'Failed');
    let inAPI: any;
    for (let i = 0; i < 100; i++) {
      inAPI = await client.resource('pods').namespace(ns).get('deadline');
      if (inAPI.status?.containerStatuses?.[0]?.state?.terminated) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.equal(inAPI.status.phase, 'Failed');
    assert.equal(inAPI.status.reason, 'DeadlineExceeded');
    assert.equal(inAPI.status.message, 'Pod was active on the node longer than the specified deadline');
  });

  it('reports the termination message file, or the log tail with FallbackToLogsOnError', async () => {
    const p = await create(
      'msg',
      {
        restartPolicy: 'Never',
        containers: [
          { name: 'c', image: 'busybox:1.36', terminationMessagePath: '/tmp/done' },
          { name: 'd', image: 'busybox:1.36', terminationMessagePolicy: 'FallbackToLogsOnError' },
        ],
      },
      { 'tkube.io/fake-run-seconds': '2', 'tkube.io/fake-exit-code.d': '1' },
    );
    const id = await waitUntil('running', () => cstatus('msg')?.state?.running && cstatus('msg').containerID);
    const file = runtime.configs.get(id)!.mounts.find((m) => m.containerPath === '/tmp/done')!.hostPath;
    writeFileSync(file, 'all done');
    const t = await waitUntil('terminated', () => cstatus('msg')?.state?.terminated);
    assert.equal(t.message, 'all done');
    const td = await waitUntil('d terminated', () => cstatus('msg', 'd')?.state?.terminated);
    assert.equal(td.exitCode, 1);
    assert.match(td.message, /fake container d started/);
    // Finished: its volumes and files are released, the messages stay in its status.
    await waitUntil('Failed', () => statusOf('msg')?.phase === 'Failed');
    await waitUntil('released', () => !existsSync(join(dir, 'pods', p.metadata.uid!)));
    assert.equal(cstatus('msg').state.terminated.message, 'all done');
  });
});
