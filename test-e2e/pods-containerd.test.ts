// Real pods: a whole local cluster (tkube's launcher) whose node runs pods
// through its own containerd, driven with the real kubectl — a busybox pod
// that runs and logs, is visible through the CRI and is removed with its
// sandbox; Jobs that fail with their container's exit code or complete;
// a memory limit that OOM-kills.
import assert from 'node:assert/strict';
import { CriClient } from '../nodeagent/cri/client';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { waitUntil } from '../shared/cluster/process';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';

describe('pods on containerd: a local cluster running real containers', function () {
  this.timeout(180_000);
  let cluster: Awaited<ReturnType<typeof startCluster>>;
  let cri: CriClient;
  const podCIDR = testPodCIDR();

  const ok = async (args: string[], input?: string) => {
    const r = await kubectl(cluster.kubeconfig, args, { input });
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const json = async (...args: string[]) => JSON.parse(await ok([...args, '-o', 'json']));

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
});
