// kubectl top on a local cluster: metrics-server runs as its own process,
// scrapes the node agents' /metrics/resource and registers v1beta1.metrics.k8s.io
// with the apiserver's aggregation layer, through which kubectl reads it.
import assert from 'node:assert/strict';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';
import type { LocalCluster } from '../shared/cluster/local-cluster';

describe('metrics-server and kubectl top', function () {
  this.timeout(180_000);
  let cluster: LocalCluster & { cleanup(): Promise<void> };
  const k = (...args: string[]) => kubectl(cluster.kubeconfig, args);

  before(async function () {
    if (!kubectlAvailable()) this.skip();
    cluster = await startCluster({ nodes: 1, metricsServerArgs: ['--metric-resolution=2s'] });
  });
  after(async () => {
    await cluster?.cleanup();
  });

  it('registers v1beta1.metrics.k8s.io, which becomes Available', async () => {
    await waitUntil(
      async () => {
        const r = await k('get', 'apiservice', 'v1beta1.metrics.k8s.io', '-o', 'json');
        if (r.code !== 0) return false;
        const c = JSON.parse(r.stdout).status?.conditions?.find((x: any) => x.type === 'Available');
        return c?.status === 'True' && c.reason === 'Passed';
      },
      60_000,
      'v1beta1.metrics.k8s.io Available',
    );
    const list = await k('get', 'apiservices');
    assert.match(list.stdout, /^v1beta1\.metrics\.k8s\.io\s+kube-system\/metrics-server\s+True\s/m);
    const res = await k('api-resources', '--api-group', 'metrics.k8s.io');
    assert.match(res.stdout, /^nodes\s+metrics\.k8s\.io\/v1beta1\s+false\s+NodeMetrics$/m);
    assert.match(res.stdout, /^pods\s+metrics\.k8s\.io\/v1beta1\s+true\s+PodMetrics$/m);
  });

  it('prints node figures with kubectl top nodes', async () => {
    let out = '';
    await waitUntil(
      async () => {
        const r = await k('top', 'nodes');
        out = r.stdout;
        return r.code === 0 && /tkube-node-1/.test(r.stdout);
      },
      60_000,
      'kubectl top nodes',
    );
    assert.match(out, /^NAME\s+CPU\(cores\)\s+CPU(%|\(%\))\s+MEMORY\(bytes\)\s+MEMORY(%|\(%\))/m);
    const row = /^tkube-node-1\s+(\d+)m\s+(\d+)%\s+(\d+)Mi\s+(\d+)%\s*$/m.exec(out);
    assert.ok(row, out);
    assert.ok(Number(row[3]) > 0, 'the node uses some memory');
  });

  it('prints pod and container figures with kubectl top pods -A --containers', async () => {
    const c = await k('run', 'busy', '--image=busybox', '--restart=Never', '--', 'sleep', '3600');
    assert.equal(c.code, 0, c.stderr);
    await waitUntil(
      async () => {
        const r = await k('get', 'pod', 'busy', '-o', 'jsonpath={.status.phase}');
        return r.stdout === 'Running';
      },
      60_000,
      'pod Running',
    );
    let out = '';
    await waitUntil(
      async () => {
        const r = await k('top', 'pods', '-A', '--containers');
        out = r.stdout;
        return r.code === 0 && /busy/.test(r.stdout);
      },
      60_000,
      'kubectl top pods',
    );
    assert.match(out, /^NAMESPACE\s+POD\s+NAME\s+CPU\(cores\)\s+MEMORY\(bytes\)/m);
    assert.match(out, /^default\s+busy\s+busy\s+\d+m\s+\d+Mi\s*$/m);
    const one = await k('get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/busy');
    const pm = JSON.parse(one.stdout);
    assert.equal(pm.kind, 'PodMetrics');
    assert.equal(pm.containers[0].name, 'busy');
    // A Go duration: the spacing of the two samples' own timestamps, which the agent's answer
    // latency can bring under a second on a loaded host ("765ms") however far apart the scrapes.
    assert.match(pm.window, /^(\d+(\.\d+)?(ms|s|m|h))+$/);
    const missing = await k('get', '--raw', '/apis/metrics.k8s.io/v1beta1/namespaces/default/pods/nope');
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /NotFound|not found/);
  });
});
