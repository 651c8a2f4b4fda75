// Real pods: a whole local cluster (tkube's launcher) whose node runs pods
// through its own containerd, driven with the real kubectl — a busybox pod
// that runs and logs, is visible through the CRI and is removed with its
// sandbox; Jobs that fail with their container's exit code or complete; a
// memory limit that OOM-kills; liveness and readiness probes (restarts, the
// Ready condition, Service endpoints); env and volumes from ConfigMaps and
// Secrets; the end of a log without a newline (termination message, kubectl
// logs); a subPathExpr that expands to an absolute path; a projected service
// account token that authenticates.
import assert from 'node:assert/strict';
import { Agent, request } from 'undici';
import { CriClient } from '../shared/cri/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { freePort, waitUntil } from '../shared/cluster/process';
import { startCluster } from './support/cluster';
import { kubectlAvailable, kubectlOn } from './support/kubectl';

describe('pods on containerd: a local cluster running real containers', function () {
  this.timeout(180_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let cri: CriClient;
  const podCIDR = testPodCIDR();

  const { ok, json, apply } = kubectlOn(() => cluster.kubeconfig);
  const getPod = (name: string) => json('get', 'pod', name);
  const bb = (name: string, script: string, extra: any = {}) => ({
    name,
    image: 'busybox',
    imagePullPolicy: 'IfNotPresent',
    command: ['sh', '-c', script],
    ...extra,
  });

  before(async function () {
    const why = runtimeTestsUnavailable() ?? (kubectlAvailable() ? undefined : 'kubectl is not installed');
    if (why) {
      console.warn(`skipping the containerd e2e tests: ${why}`);
      this.skip();
    }
    testImagesDir();
    cluster = await startCluster({ runtime: 'containerd', podCIDR: () => podCIDR, timeoutMs: 90_000 });
    cri = new CriClient({ runtimeEndpoint: cluster.containerds[0].endpoint, requestTimeoutMs: 10_000 });
  });

  after(async () => {
    cri?.close();
    await cluster?.cleanup();
  });

  it('runs a busybox pod whose logs kubectl reads, visible through the CRI, removed with its sandbox', async () => {
    await ok([
      'run',
      'b',
      '--image=busybox',
      '--image-pull-policy=IfNotPresent',
      '--restart=Never',
      '--',
      'sh',
      '-c',
      "trap 'exit 0' TERM; echo hello; while true; do sleep 1; done",
    ]);
    const pod = await waitUntil(
      async () => {
        const p = await json('get', 'pod', 'b');
        return p.status?.phase === 'Running' && p.status.containerStatuses?.[0]?.ready ? p : undefined;
      },
      60_000,
      'pod b Running',
    );
    const prefix = podCIDR.split('.').slice(0, 3).join('.');
    assert.ok(pod.status.podIP.startsWith(`${prefix}.`), `pod IP ${pod.status.podIP} is in ${podCIDR}`);
    const id = pod.status.containerStatuses[0].containerID;
    assert.match(id, /^containerd:\/\/[0-9a-f]{64}$/);
    await waitUntil(async () => (await ok(['logs', 'b'])).includes('hello'), 20_000, 'kubectl logs b');
    const listed = await cri.call('ListContainers', {
      filter: { labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid } },
    });
    assert.deepEqual(
      listed.containers.map((c: any) => `containerd://${c.id}`),
      [id],
    );
    await ok(['delete', 'pod', 'b', '--wait=true']);
    await waitUntil(
      async () => {
        const sb = await cri.call('ListPodSandbox', {
          filter: { labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid } },
        });
        const cs = await cri.call('ListContainers', {
          filter: { labelSelector: { 'io.kubernetes.pod.uid': pod.metadata.uid } },
        });
        return sb.items.length === 0 && cs.containers.length === 0;
      },
      30_000,
      'sandbox and container removed',
    );
  });

  it('fails a Job with its container exit code and backoffLimit, and completes one that exits 0', async () => {
    const job = (name: string, script: string, backoffLimit: number) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: {
        backoffLimit,
        template: {
          spec: {
            restartPolicy: 'Never',
            containers: [
              { name: 'c', image: 'busybox', imagePullPolicy: 'IfNotPresent', command: ['sh', '-c', script] },
            ],
          },
        },
      },
    });
    const manifest = JSON.stringify({
      apiVersion: 'v1',
      kind: 'List',
      items: [job('fails', 'exit 3', 1), job('succeeds', 'echo done', 0)],
    });
    await ok(['apply', '-f', '-'], manifest);
    const cond = (j: any, type: string) =>
      j.status?.conditions?.some((c: any) => c.type === type && c.status === 'True');
    await waitUntil(
      async () => cond(await json('get', 'job', 'fails'), 'Failed'),
      90_000,
      'job fails Failed',
    );
    await waitUntil(
      async () => cond(await json('get', 'job', 'succeeds'), 'Complete'),
      60_000,
      'job succeeds Complete',
    );
    const failed = (await json('get', 'pods', '-l', 'job-name=fails')).items;
    assert.equal(failed.length, 2, 'backoffLimit 1: two attempts');
    for (const p of failed) {
      assert.equal(p.status.phase, 'Failed');
      const t = p.status.containerStatuses[0].state.terminated;
      assert.equal(t.exitCode, 3);
      assert.equal(t.reason, 'Error');
    }
    const done = (await json('get', 'pods', '-l', 'job-name=succeeds')).items;
    assert.equal(done[0].status.phase, 'Succeeded');
    assert.equal(done[0].status.containerStatuses[0].state.terminated.reason, 'Completed');
    assert.match(await ok(['logs', 'job/succeeds']), /done/);
  });

  it('OOM-kills a container over its memory limit, with reason OOMKilled', async () => {
    const pod = {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'oom' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          {
            name: 'c',
            image: 'busybox',
            imagePullPolicy: 'IfNotPresent',
            command: ['sh', '-c', 'tail /dev/zero'],
            resources: { limits: { memory: '20Mi' } },
          },
        ],
      },
    };
    await ok(['apply', '-f', '-'], JSON.stringify(pod));
    const p = await waitUntil(
      async () => {
        const x = await json('get', 'pod', 'oom');
        return x.status?.phase === 'Failed' ? x : undefined;
      },
      60_000,
      'pod oom Failed',
    );
    const t = p.status.containerStatuses[0].state.terminated;
    assert.equal(t.reason, 'OOMKilled');
    assert.equal(t.exitCode, 137);
    assert.equal(p.status.qosClass, 'Burstable', 'a memory limit alone (requests default to it, no CPU)');
  });

  it('restarts a container whose liveness probe fails, with CrashLoopBackOff in between', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'liveness' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          bb(
            'c',
            // `wait` returns on the signal (a foreground sleep would hold the trap up to 1 s, the grace period).
            "trap 'exit 0' TERM; touch /tmp/healthy; sleep 2; rm /tmp/healthy; while true; do sleep 1 & wait $!; done",
            {
              livenessProbe: {
                exec: { command: ['cat', '/tmp/healthy'] },
                periodSeconds: 1,
                failureThreshold: 1,
              },
            },
          ),
        ],
      },
    });
    const restarted = await waitUntil(
      async () => {
        const p = await getPod('liveness');
        return (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 2 ? p : undefined;
      },
      90_000,
      'two liveness restarts',
    );
    assert.equal(restarted.status.containerStatuses[0].lastState.terminated.exitCode, 0);
    const events = await json('get', 'events', '--field-selector', 'involvedObject.name=liveness');
    const reasons = events.items.map((e: any) => e.reason);
    assert.ok(reasons.includes('Unhealthy'), `Unhealthy in ${reasons}`);
    assert.ok(reasons.includes('BackOff'), `BackOff (CrashLoopBackOff) in ${reasons}`);
    assert.ok(
      events.items.some((e: any) => /failed liveness probe, will be restarted/.test(e.message)),
      'the Killing event says why',
    );
    await ok(['delete', 'pod', 'liveness', '--wait=false']);
  });

  it("flips the pod's Ready condition and the Service's endpoints with a readiness probe", async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'ready', labels: { app: 'ready' } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [
            bb('c', "trap 'exit 0' TERM; while true; do sleep 1; done", {
              ports: [{ containerPort: 80 }],
              readinessProbe: { exec: { command: ['test', '-e', '/tmp/ready'] }, periodSeconds: 1 },
            }),
          ],
        },
      },
      {
        apiVersion: 'v1',
        kind: 'Service',
        metadata: { name: 'ready' },
        spec: { selector: { app: 'ready' }, ports: [{ port: 80 }] },
      },
    );
    const readyAddresses = async () => {
      const slices = await json('get', 'endpointslices', '-l', 'kubernetes.io/service-name=ready');
      return slices.items.flatMap((s: any) => (s.endpoints ?? []).filter((e: any) => e.conditions?.ready));
    };
    const isReady = (p: any) => p.status?.conditions?.find((c: any) => c.type === 'Ready')?.status === 'True';
    const pod = await waitUntil(
      async () => {
        const p = await getPod('ready');
        return p.status?.phase === 'Running' ? p : undefined;
      },
      60_000,
      'pod ready Running',
    );
    assert.ok(!isReady(pod), 'not Ready before the probe passes');
    assert.equal((await readyAddresses()).length, 0);
    // The file the probe looks for, made and removed inside the container through the CRI.
    const cid = pod.status.containerStatuses[0].containerID.replace('containerd://', '');
    await cri.call('ExecSync', { containerId: cid, cmd: ['touch', '/tmp/ready'], timeout: 10 });
    await waitUntil(async () => isReady(await getPod('ready')), 30_000, 'pod Ready');
    await waitUntil(async () => (await readyAddresses()).length === 1, 30_000, 'a ready endpoint');
    await cri.call('ExecSync', { containerId: cid, cmd: ['rm', '/tmp/ready'], timeout: 10 });
    await waitUntil(async () => !isReady(await getPod('ready')), 30_000, 'pod not Ready again');
    await waitUntil(async () => (await readyAddresses()).length === 0, 30_000, 'no ready endpoint');
    await ok(['delete', 'pod', 'ready', '--wait=false']);
  });

  const running = (name: string) =>
    waitUntil(
      async () => {
        const p = await getPod(name);
        return p.status?.phase === 'Running' && p.status.containerStatuses?.every((c: any) => c.ready)
          ? p
          : undefined;
      },
      60_000,
      `pod ${name} Running`,
    );

  it("runs a preStop exec hook that reaches another pod's IP before the container is stopped", async () => {
    // The lifecycle-hook spec's handler: an HTTP server that logs each request line (here busybox nc).
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'hook-handler' },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          bb(
            'handler',
            "trap 'exit 0' TERM; while true; do printf 'HTTP/1.0 200 OK\\r\\n\\r\\nok' | nc -l -p 8080; done",
          ),
        ],
      },
    });
    const handler = await running('hook-handler');
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pod-with-prestop-exec-hook' },
      spec: {
        containers: [
          bb('hooked', "trap 'exit 0' TERM; while true; do sleep 1; done", {
            lifecycle: {
              preStop: {
                exec: {
                  command: ['sh', '-c', `wget -q -O- http://${handler.status.podIP}:8080/echo?msg=prestop`],
                },
              },
            },
          }),
        ],
      },
    });
    await running('pod-with-prestop-exec-hook');
    await ok(['delete', 'pod', 'pod-with-prestop-exec-hook', '--grace-period=15', '--wait=true']);
    await waitUntil(
      async () => /GET \/echo\?msg=prestop/.test(await ok(['logs', 'hook-handler'])),
      30_000,
      'the handler to log the preStop request',
    );
    const events = await json(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=pod-with-prestop-exec-hook',
    );
    assert.deepEqual(
      events.items.filter((e: any) => e.reason === 'FailedPreStopHook').map((e: any) => e.message),
      [],
    );
    await ok(['delete', 'pod', 'hook-handler', '--wait=false']);
  });

  it("runs the hostPort predicate spec's pods: one port on localhost, the node's IP, and UDP, each answering on its own address", async () => {
    const node = (await json('get', 'nodes')).items[0];
    const nodeIP = node.status.addresses.find((a: any) => a.type === 'InternalIP').address;
    assert.notEqual(nodeIP, '127.0.0.1', "the node's IP is not localhost");
    const hostPort = await freePort();
    /** A pod answering its name on 8080, published on hostIP:hostPort. */
    const published = (name: string, hostIP: string, protocol = 'TCP') => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          bb(
            'web',
            `trap 'exit 0' TERM; while true; do printf 'HTTP/1.0 200 OK\\r\\n\\r\\n${name}' | nc -l -p 8080; done`,
            { ports: [{ containerPort: 8080, hostPort, hostIP, protocol }] },
          ),
        ],
      },
    });
    await apply(
      published('port-local', '127.0.0.1'),
      published('port-node', nodeIP),
      published('port-node-udp', nodeIP, 'UDP'),
    );
    for (const name of ['port-local', 'port-node', 'port-node-udp']) await running(name);
    const answer = (ip: string) =>
      waitUntil(
        async () => {
          try {
            const r = await request(`http://${ip}:${hostPort}/`, { headersTimeout: 5000, bodyTimeout: 5000 });
            return (await r.body.text()).trim();
          } catch {
            return undefined;
          }
        },
        30_000,
        `an answer on ${ip}:${hostPort}`,
      );
    assert.equal(await answer('127.0.0.1'), 'port-local');
    assert.equal(await answer(nodeIP), 'port-node');
    await ok(['delete', 'pod', 'port-local', 'port-node', 'port-node-udp', '--wait=false']);
  });

  it('gives a container env from a ConfigMap and a Secret and mounts a ConfigMap', async () => {
    await apply(
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: { name: 'cfg' },
        data: { color: 'blue', 'app.conf': 'x=1\n' },
      },
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'sec' }, stringData: { password: 's3cret' } },
      {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'env' },
        spec: {
          restartPolicy: 'Never',
          containers: [
            bb('c', 'echo "color=$COLOR pw=$PW"; cat /etc/cfg/app.conf', {
              env: [
                { name: 'COLOR', valueFrom: { configMapKeyRef: { name: 'cfg', key: 'color' } } },
                { name: 'PW', valueFrom: { secretKeyRef: { name: 'sec', key: 'password' } } },
              ],
              volumeMounts: [{ name: 'cfg', mountPath: '/etc/cfg' }],
            }),
          ],
          volumes: [{ name: 'cfg', configMap: { name: 'cfg' } }],
        },
      },
    );
    await waitUntil(
      async () => (await getPod('env')).status?.phase === 'Succeeded',
      60_000,
      'pod env Succeeded',
    );
    const out = await ok(['logs', 'env']);
    assert.match(out, /^color=blue pw=s3cret$/m);
    assert.match(out, /^x=1$/m);
  });

  it('reports the end of the log as termination message and log without adding a newline', async () => {
    // printf leaves a partial last line (tag P in the CRI log): kubelet and kubectl logs add nothing to it.
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'partial' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          bb('c', 'echo first; printf DONE; exit 1', { terminationMessagePolicy: 'FallbackToLogsOnError' }),
        ],
      },
    });
    const pod = await waitUntil(
      async () => {
        const p = await getPod('partial');
        return p.status?.phase === 'Failed' && p;
      },
      60_000,
      'pod partial Failed',
    );
    assert.equal(pod.status.containerStatuses[0].state.terminated.message, 'first\nDONE');
    assert.equal(await ok(['logs', 'partial']), 'first\nDONE');
  });

  it('fails a container whose subPathExpr expands to an absolute path with CreateContainerConfigError', async () => {
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'abs-subpath' },
      spec: {
        restartPolicy: 'Never',
        containers: [
          bb('c', 'echo started', {
            env: [{ name: 'POD_NAME', value: '/tmp' }],
            volumeMounts: [{ name: 'work', mountPath: '/work', subPathExpr: '$(POD_NAME)' }],
          }),
        ],
        volumes: [{ name: 'work', emptyDir: {} }],
      },
    });
    const waiting = await waitUntil(
      async () => {
        const w = (await getPod('abs-subpath')).status?.containerStatuses?.[0]?.state?.waiting;
        return w?.reason === 'CreateContainerConfigError' && w;
      },
      60_000,
      'abs-subpath CreateContainerConfigError',
    );
    assert.equal(waiting.message, 'error SubPath `/tmp` must not be an absolute path');
    const events = await json('get', 'events', '--field-selector', 'involvedObject.name=abs-subpath');
    assert.ok(
      events.items.some(
        (e: any) =>
          e.reason === 'Failed' && e.message === 'Error: error SubPath `/tmp` must not be an absolute path',
      ),
      JSON.stringify(events.items.map((e: any) => e.message)),
    );
  });

  it('mounts a projected service account token that authenticates to the apiserver', async () => {
    // busybox's TLS client offers only RSA signatures and the apiserver's certificate is ECDSA,
    // so the pod hands its token out through its log and the test presents it.
    await apply({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'whoami' },
      spec: {
        restartPolicy: 'Never',
        hostNetwork: true,
        containers: [bb('c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token')],
      },
    });
    await waitUntil(
      async () => (await getPod('whoami')).status?.phase === 'Succeeded',
      60_000,
      'pod whoami done',
    );
    const token = (await ok(['logs', 'whoami'])).trim();
    const kc = loadKubeconfig(cluster.kubeconfig);
    const dispatcher = new Agent({ connect: { ca: kc.caPem } });
    try {
      const r = await request(`${cluster.server}/apis/authentication.k8s.io/v1/selfsubjectreviews`, {
        method: 'POST',
        dispatcher,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }),
      });
      const who: any = await r.body.json();
      assert.equal(r.statusCode, 201, JSON.stringify(who));
      assert.equal(who.status.userInfo.username, 'system:serviceaccount:default:default');
      assert.equal(who.status.userInfo.extra['authentication.kubernetes.io/pod-name'][0], 'whoami');
    } finally {
      await dispatcher.close();
    }
  });
});
