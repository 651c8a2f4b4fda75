// The three executables together, driven by kubectl like a user would: a
// Deployment to Running pods with logs, apply/get/watch/delete, namespace
// deletion, and a stopped node agent whose node goes NotReady and loses its pods.
import assert from 'node:assert/strict';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable, kubectlStream } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';
import type { LocalCluster } from '../shared/cluster/local-cluster';

describe('a local cluster end to end', function () {
  this.timeout(180_000);
  let cluster: LocalCluster & { cleanup(): Promise<void> };
  const k = (...args: string[]) => kubectl(cluster.kubeconfig, args);
  const ok = async (...args: string[]) => {
    const r = await k(...args);
    assert.equal(r.code, 0, `kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const json = async (...args: string[]) => JSON.parse(await ok(...args, '-o', 'json'));

  before(async function () {
    if (!kubectlAvailable()) this.skip();
    cluster = await startCluster({
      nodes: 2,
      controllerManagerArgs: [
        '--node-monitor-period=1s',
        '--node-monitor-grace-period=6s',
        '--node-startup-grace-period=6s',
        '--leader-elect-lease-duration=4s',
        '--leader-elect-renew-deadline=3s',
        '--leader-elect-retry-period=1s',
      ],
    });
  });
  after(async () => {
    await cluster?.cleanup();
  });

  it('shows every node Ready', async () => {
    const out = await ok('get', 'nodes');
    assert.match(out, /^tkube-node-1\s+Ready\s/m);
    assert.match(out, /^tkube-node-2\s+Ready\s/m);
  });

  it('runs a Deployment to Running pods whose logs kubectl reads, and scales it', async () => {
    await ok('create', 'deployment', 'web', '--image=nginx:1.25', '--replicas=3');
    await waitUntil(
      async () => (await json('get', 'deployment', 'web')).status?.availableReplicas === 3,
      60_000,
      '3 available replicas',
    );
    const pods = (await json('get', 'pods', '-l', 'app=web')).items;
    assert.equal(pods.length, 3);
    for (const p of pods) {
      assert.equal(p.status.phase, 'Running');
      assert.match(p.spec.nodeName, /^tkube-node-[12]$/);
      assert.match(p.status.podIP, /^10\.244\.\d+\.\d+$/);
    }
    // kubectl create deployment sends Protobuf: none of the zeros Go writes shows up.
    const template = (await json('get', 'deployment', 'web')).spec.template;
    assert.deepEqual(Object.keys(template.metadata).sort(), ['labels']);
    assert.equal('stdin' in template.spec.containers[0], false);
    assert.equal('hostNetwork' in template.spec, false);
    // The apiserver's own EndpointSlice outlives the endpointslice controller's syncs.
    const slice = await json('get', 'endpointslice', 'kubernetes', '-n', 'default');
    assert.equal(slice.ports[0].name, 'https');
    assert.equal(slice.endpoints.length, 1);
    const logs = await ok('logs', pods[0].metadata.name);
    assert.ok(logs.trim().length > 0, 'the fake runtime wrote log lines');
    await ok('scale', 'deployment', 'web', '--replicas=1');
    await waitUntil(
      async () => (await json('get', 'pods', '-l', 'app=web')).items.length === 1,
      60_000,
      'scaled down to 1 pod',
    );
  });

  it('applies, watches and deletes objects across the processes', async () => {
    const w = kubectlStream(cluster.kubeconfig, [
      'get',
      'configmaps',
      '-w',
      '--output-watch-events',
      '-l',
      'e2e=yes',
    ]);
    await new Promise((r) => setTimeout(r, 1500));
    const manifest =
      'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: applied\n  labels: {e2e: "yes"}\ndata:\n  a: "1"\n';
    assert.equal((await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], { input: manifest })).code, 0);
    assert.equal(
      (await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], { input: manifest.replace('"1"', '"2"') }))
        .code,
      0,
    );
    await ok('delete', 'configmap', 'applied');
    await waitUntil(async () => /DELETED\s+applied/.test(w.output()), 15_000, 'DELETED event');
    await w.stop();
    assert.deepEqual(
      w
        .output()
        .split('\n')
        .filter((l) => /applied/.test(l))
        .map((l) => l.split(/\s+/)[0]),
      ['ADDED', 'MODIFIED', 'DELETED'],
    );
  });

  it('deletes a namespace with its content through the namespace controller', async () => {
    await ok('create', 'namespace', 'gone');
    await ok('create', 'configmap', 'c', '-n', 'gone');
    await ok('create', 'deployment', 'd', '--image=x', '-n', 'gone');
    await ok('delete', 'namespace', 'gone', '--timeout=60s');
    assert.notEqual((await k('get', 'namespace', 'gone')).code, 0);
  });

  it('marks a node whose agent stops NotReady, taints it and evicts its pods', async () => {
    await ok('create', 'deployment', 'spread', '--image=x', '--replicas=4');
    await waitUntil(
      async () => (await json('get', 'deployment', 'spread')).status?.availableReplicas === 4,
      60_000,
      '4 pods',
    );
    const node2 = cluster.procs.find((p) => p.name === 'tkube-node-2')!;
    await node2.stop('SIGKILL');
    await waitUntil(
      async () => {
        const n = await json('get', 'node', 'tkube-node-2');
        const ready = n.status.conditions.find((c: any) => c.type === 'Ready');
        return (
          ready?.status === 'Unknown' &&
          (n.spec.taints ?? []).some((t: any) => t.key === 'node.kubernetes.io/unreachable')
        );
      },
      60_000,
      'node NotReady with the unreachable taint',
    );
    assert.match(await ok('get', 'nodes'), /^tkube-node-2\s+NotReady\s/m);
    // Pods tolerate unreachable for 300 s by default (DefaultTolerationSeconds); check the
    // taint-based eviction with a pod that tolerates it for 0 s.
    await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], {
      input: `apiVersion: v1
kind: Pod
metadata: {name: short-toleration}
spec:
  nodeName: tkube-node-2
  tolerations: [{key: node.kubernetes.io/unreachable, operator: Exists, effect: NoExecute, tolerationSeconds: 0}]
  containers: [{name: c, image: x}]
`,
    });
    // Evicted: deleted gracefully, so it stays Terminating while its node cannot confirm (as in Kubernetes).
    await waitUntil(
      async () => !!(await json('get', 'pod', 'short-toleration')).metadata.deletionTimestamp,
      60_000,
      'pod evicted from the unreachable node',
    );
    assert.match(await ok('get', 'pod', 'short-toleration'), /Terminating/);
  });
});
