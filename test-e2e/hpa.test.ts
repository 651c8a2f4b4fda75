// The horizontal pod autoscaler end to end: a local cluster with the fake
// runtime, whose pods report the CPU their tkube.io/fake-cpu annotation asks
// for through the node agent's /metrics/resource to the metrics server, which
// serves them as metrics.k8s.io PodMetrics through the aggregation layer. The
// controller manager's HPA controller reads those and scales the Deployment.
import assert from 'node:assert/strict';
import { startCluster } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { waitUntil } from '../shared/cluster/process';
import type { LocalCluster } from '../shared/cluster/local-cluster';

function deployment(name: string, fakeCpu: string): object {
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: { 'tkube.io/fake-cpu': fakeCpu } },
        spec: {
          containers: [{ name: 'c', image: 'busybox', resources: { requests: { cpu: '200m' } } }],
        },
      },
    },
  };
}

describe('horizontal pod autoscaler', function () {
  this.timeout(240_000);
  let cluster: LocalCluster & { cleanup(): Promise<void> };
  const k = (...args: string[]) => kubectl(cluster.kubeconfig, args);
  const json = async (...args: string[]) => {
    const r = await k(...args, '-o', 'json');
    assert.equal(r.code, 0, r.stderr);
    return JSON.parse(r.stdout);
  };

  before(async function () {
    if (!kubectlAvailable()) this.skip();
    cluster = await startCluster({
      nodes: 1,
      metricsServerArgs: ['--metric-resolution=2s'],
      controllerManagerArgs: [
        '--horizontal-pod-autoscaler-sync-period=1s',
        '--horizontal-pod-autoscaler-downscale-stabilization=5s',
      ],
    });
  });
  after(async () => {
    await cluster?.cleanup();
  });

  it('scales a Deployment whose pods use 200% of their cpu request up to maxReplicas', async () => {
    let r = await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], {
      input: JSON.stringify(deployment('web', '400m')),
    });
    assert.equal(r.code, 0, r.stderr);
    // kubectl autoscale writes autoscaling/v1; the controller reads it as v2.
    r = await k('autoscale', 'deployment', 'web', '--cpu-percent=50', '--min=1', '--max=3');
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => (await json('get', 'deployment', 'web')).spec.replicas === 3,
      150_000,
      'the HPA to scale web to 3 replicas',
    );
    let hpa: any;
    await waitUntil(
      async () => {
        hpa = await json('get', 'hpa.v2.autoscaling', 'web');
        return hpa.status?.currentReplicas === 3 && hpa.status?.desiredReplicas === 3;
      },
      60_000,
      'the HPA status to show 3 replicas',
    );
    const metric = hpa.status.currentMetrics[0];
    assert.equal(metric.type, 'Resource');
    assert.equal(metric.resource.name, 'cpu');
    // The fake runtime's counter accrues 400m exactly and the agent stamps each sample with the time
    // it was read, so metrics-server's rate does not follow its scrape spacing: within the real
    // HPA's own tolerance (--horizontal-pod-autoscaler-tolerance, 10%).
    const near = (v: number, want: number) => Math.abs(v - want) <= want * 0.1;
    assert.ok(near(metric.resource.current.averageUtilization, 200), JSON.stringify(metric));
    const avg = /^(\d+)m$/.exec(metric.resource.current.averageValue);
    assert.ok(avg && near(Number(avg[1]), 400), JSON.stringify(metric));
    assert.ok(hpa.status.lastScaleTime);
    const cond = (t: string) => hpa.status.conditions.find((c: any) => c.type === t);
    assert.equal(cond('AbleToScale').status, 'True');
    assert.equal(cond('ScalingActive').reason, 'ValidMetricFound');
    assert.equal(
      cond('ScalingActive').message,
      'the HPA was able to successfully calculate a replica count from cpu resource utilization (percentage of request)',
    );
    assert.equal(cond('ScalingLimited').status, 'True');
    assert.equal(cond('ScalingLimited').reason, 'TooManyReplicas');

    const table = await k('get', 'hpa', 'web');
    const row = /^web\s+Deployment\/web\s+cpu: (\d+)%\/50%\s+1\s+3\s+3\s/m.exec(table.stdout);
    assert.ok(row && near(Number(row[1]), 200), table.stdout);

    const events = await json(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=web,reason=SuccessfulRescale',
    );
    assert.ok(
      events.items.some((e: any) =>
        /^New size: 3; reason: cpu resource utilization \(percentage of request\) above target$/.test(
          e.message,
        ),
      ),
      JSON.stringify(events.items.map((e: any) => e.message)),
    );
  });

  it('scales back down to minReplicas when the load drops, after the downscale stabilization', async () => {
    const patch = { spec: { template: { metadata: { annotations: { 'tkube.io/fake-cpu': '20m' } } } } };
    const r = await k('patch', 'deployment', 'web', '--type=merge', '-p', JSON.stringify(patch));
    assert.equal(r.code, 0, r.stderr);
    await waitUntil(
      async () => (await json('get', 'deployment', 'web')).spec.replicas === 1,
      150_000,
      'the HPA to scale web back to 1 replica',
    );
    const events = await json(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=web,reason=SuccessfulRescale',
    );
    assert.ok(
      events.items.some((e: any) => e.message === 'New size: 1; reason: All metrics below target'),
      JSON.stringify(events.items.map((e: any) => e.message)),
    );
    const hpa = await json('get', 'hpa.v2.autoscaling', 'web');
    const limited = hpa.status.conditions.find((c: any) => c.type === 'ScalingLimited');
    // 10% of the request: one pod is what the metric asks for.
    assert.deepEqual([limited.status, limited.reason], ['False', 'DesiredWithinRange']);
  });

  it('reports a Pods metric as not computable, since there is no custom metrics API', async () => {
    let r = await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], {
      input: JSON.stringify(deployment('queue', '1m')),
    });
    assert.equal(r.code, 0, r.stderr);
    const hpa = {
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'queue' },
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'queue' },
        minReplicas: 1,
        maxReplicas: 5,
        metrics: [
          {
            type: 'Pods',
            pods: { metric: { name: 'jobs' }, target: { type: 'AverageValue', averageValue: '1' } },
          },
        ],
      },
    };
    r = await kubectl(cluster.kubeconfig, ['apply', '-f', '-'], { input: JSON.stringify(hpa) });
    assert.equal(r.code, 0, r.stderr);
    let got: any;
    await waitUntil(
      async () => {
        got = await json('get', 'hpa.v2.autoscaling', 'queue');
        return !!got.status?.conditions?.find((c: any) => c.type === 'ScalingActive');
      },
      60_000,
      'the HPA to report ScalingActive',
    );
    const active = got.status.conditions.find((c: any) => c.type === 'ScalingActive');
    assert.equal(active.status, 'False');
    assert.equal(active.reason, 'FailedGetPodsMetric');
    assert.equal(
      active.message,
      'the HPA was unable to compute the replica count: unable to get metric jobs: unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered',
    );
    assert.equal((await json('get', 'deployment', 'queue')).spec.replicas, 1);
    const events = await json(
      'get',
      'events',
      '--field-selector',
      'involvedObject.name=queue,involvedObject.kind=HorizontalPodAutoscaler',
    );
    const reasons = new Set(events.items.map((e: any) => e.reason));
    assert.ok(
      reasons.has('FailedGetPodsMetric') && reasons.has('FailedComputeMetricsReplicas'),
      [...reasons].join(),
    );
  });
});
