import assert from 'node:assert/strict';
import { formatHPAMetrics, printerFor } from './printers';
import { ago, S, M, H, D, row, names, meta } from './printers-testing';

const template = {
  metadata: { labels: { app: 'web' } },
  spec: {
    containers: [
      { name: 'app', image: 'nginx:1.27' },
      { name: 'sidecar', image: 'envoyproxy/envoy:v1.30' },
    ],
  },
};

describe('printers: apps', () => {
  it('deployment: READY 2/3, UP-TO-DATE, AVAILABLE, wide selector', () => {
    const d = {
      metadata: meta('web', ago(5 * D + 4 * H)),
      spec: { replicas: 3, selector: { matchLabels: { app: 'web' } }, template },
      status: { replicas: 3, updatedReplicas: 3, readyReplicas: 2, availableReplicas: 2 },
    };
    assert.deepEqual(names('apps', 'Deployment'), [
      'Name',
      'Ready',
      'Up-to-date',
      'Available',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    assert.deepEqual(row('apps', 'Deployment', d), [
      'web',
      '2/3',
      3,
      2,
      '5d4h',
      'app,sidecar',
      'nginx:1.27,envoyproxy/envoy:v1.30',
      'app=web',
    ]);
    // A fresh deployment: status fields omitted, replicas 0.
    assert.deepEqual(
      row('apps', 'Deployment', { metadata: meta('new', ago(5 * S)), spec: { replicas: 0 } }).slice(0, 5),
      ['new', '0/0', 0, 0, '5s'],
    );
  });

  it('replica set and stateful set', () => {
    const rs = {
      metadata: meta('web-7d4b9c8f6', ago(H)),
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: 'web', 'pod-template-hash': '7d4b9c8f6' } },
        template,
      },
      status: { replicas: 3, readyReplicas: 3 },
    };
    assert.deepEqual(row('apps', 'ReplicaSet', rs), [
      'web-7d4b9c8f6',
      3,
      3,
      3,
      '60m',
      'app,sidecar',
      'nginx:1.27,envoyproxy/envoy:v1.30',
      'app=web,pod-template-hash=7d4b9c8f6',
    ]);
    const ss = {
      metadata: meta('db', ago(2 * D)),
      spec: { replicas: 3, template },
      status: { readyReplicas: 1 },
    };
    assert.deepEqual(row('apps', 'StatefulSet', ss), [
      'db',
      '1/3',
      '2d',
      'app,sidecar',
      'nginx:1.27,envoyproxy/envoy:v1.30',
    ]);
    assert.deepEqual(names('apps', 'StatefulSet'), ['Name', 'Ready', 'Age', 'Containers', 'Images']);
  });

  it('daemon set', () => {
    const ds = {
      metadata: meta('kube-proxy', ago(40 * D)),
      spec: {
        selector: { matchLabels: { 'k8s-app': 'kube-proxy' } },
        template: {
          spec: {
            nodeSelector: { 'kubernetes.io/os': 'linux' },
            containers: [{ name: 'kube-proxy', image: 'kube-proxy:v1.36.0' }],
          },
        },
      },
      status: {
        desiredNumberScheduled: 3,
        currentNumberScheduled: 3,
        numberReady: 3,
        updatedNumberScheduled: 3,
        numberAvailable: 3,
      },
    };
    assert.deepEqual(row('apps', 'DaemonSet', ds), [
      'kube-proxy',
      3,
      3,
      3,
      3,
      3,
      'kubernetes.io/os=linux',
      '40d',
      'kube-proxy',
      'kube-proxy:v1.36.0',
      'k8s-app=kube-proxy',
    ]);
  });

  it('controller revision names its controller', () => {
    const cr = {
      metadata: meta('web-5c9d7f', ago(H), {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'web', controller: true, uid: 'x' },
        ],
      }),
      revision: 2,
    };
    assert.deepEqual(row('apps', 'ControllerRevision', cr), ['web-5c9d7f', 'statefulset.apps/web', 2, '60m']);
    assert.equal(row('apps', 'ControllerRevision', { metadata: meta('x'), revision: 1 })[1], '<none>');
  });
});

describe('printers: batch', () => {
  it('jobs: Complete with duration, Running, parallel work queue, Failed', () => {
    const job = {
      metadata: meta('pi', ago(10 * M)),
      spec: {
        completions: 1,
        parallelism: 1,
        selector: { matchLabels: { 'batch.kubernetes.io/controller-uid': 'abc' } },
        template: { spec: { containers: [{ name: 'pi', image: 'perl:5.34' }] } },
      },
      status: {
        succeeded: 1,
        startTime: ago(10 * M),
        completionTime: ago(10 * M - 42 * S),
        conditions: [
          { type: 'SuccessCriteriaMet', status: 'True' },
          { type: 'Complete', status: 'True' },
        ],
      },
    };
    assert.deepEqual(names('batch', 'Job'), [
      'Name',
      'Status',
      'Completions',
      'Duration',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    assert.deepEqual(row('batch', 'Job', job), [
      'pi',
      'Complete',
      '1/1',
      '42s',
      '10m',
      'pi',
      'perl:5.34',
      'batch.kubernetes.io/controller-uid=abc',
    ]);
    assert.deepEqual(
      row('batch', 'Job', {
        metadata: meta('q', ago(3 * M)),
        spec: { parallelism: 4 },
        status: { startTime: ago(3 * M), active: 4 },
      }).slice(1, 5),
      ['Running', '0/1 of 4', '3m', '3m'],
    );
    assert.equal(
      row('batch', 'Job', {
        metadata: meta('f'),
        spec: {},
        status: { conditions: [{ type: 'Failed', status: 'True' }] },
      })[1],
      'Failed',
    );
    assert.equal(
      row('batch', 'Job', {
        metadata: meta('s'),
        spec: { completions: 5 },
        status: { conditions: [{ type: 'Suspended', status: 'True' }] },
      })[1],
      'Suspended',
    );
    assert.equal(row('batch', 'Job', { metadata: meta('n'), spec: { completions: 5 }, status: {} })[3], '');
  });

  it('cron job: schedule, timezone, suspend, active, last schedule', () => {
    const cj = {
      metadata: meta('hello', ago(2 * D)),
      spec: {
        schedule: '*/5 * * * *',
        suspend: false,
        jobTemplate: {
          spec: { template: { spec: { containers: [{ name: 'hello', image: 'busybox:1.36' }] } } },
        },
      },
      status: { lastScheduleTime: ago(2 * M + 10 * S), active: [{ name: 'hello-28571234' }] },
    };
    assert.deepEqual(names('batch', 'CronJob'), [
      'Name',
      'Schedule',
      'Timezone',
      'Suspend',
      'Active',
      'Last Schedule',
      'Age',
      'Containers',
      'Images',
      'Selector',
    ]);
    assert.deepEqual(row('batch', 'CronJob', cj), [
      'hello',
      '*/5 * * * *',
      '<none>',
      'False',
      1,
      '2m10s',
      '2d',
      'hello',
      'busybox:1.36',
      '<none>',
    ]);
    assert.deepEqual(
      row('batch', 'CronJob', {
        metadata: meta('x'),
        spec: { schedule: '@daily', timeZone: 'Etc/UTC' },
      }).slice(2, 6),
      ['Etc/UTC', '<unset>', 0, '<none>'],
    );
  });
});

describe('printers: autoscaling and policy', () => {
  it('HPA v2: Reference, Targets, MinPods, MaxPods, Replicas', () => {
    const hpa = {
      apiVersion: 'autoscaling/v2',
      metadata: meta('web', ago(D)),
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
        minReplicas: 2,
        maxReplicas: 10,
        metrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 80 } },
          },
          {
            type: 'Resource',
            resource: { name: 'memory', target: { type: 'AverageValue', averageValue: '500Mi' } },
          },
        ],
      },
      status: {
        currentReplicas: 3,
        currentMetrics: [
          {
            type: 'Resource',
            resource: { name: 'cpu', current: { averageUtilization: 45, averageValue: '45m' } },
          },
          { type: 'Resource', resource: { name: 'memory', current: { averageValue: '300Mi' } } },
        ],
      },
    };
    assert.deepEqual(names('autoscaling', 'HorizontalPodAutoscaler'), [
      'Name',
      'Reference',
      'Targets',
      'MinPods',
      'MaxPods',
      'Replicas',
      'Age',
    ]);
    assert.deepEqual(row('autoscaling', 'HorizontalPodAutoscaler', hpa), [
      'web',
      'Deployment/web',
      'cpu: 45%/80%, memory: 300Mi/500Mi',
      '2',
      10,
      3,
      '24h',
    ]);
  });

  it('HPA v1 and unknown current values', () => {
    const v1 = {
      apiVersion: 'autoscaling/v1',
      metadata: meta('web', ago(D)),
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'web' },
        maxReplicas: 5,
        targetCPUUtilizationPercentage: 50,
      },
      status: { currentReplicas: 1 },
    };
    assert.deepEqual(row('autoscaling', 'HorizontalPodAutoscaler', v1).slice(2, 6), [
      'cpu: <unknown>/50%',
      '<unset>',
      5,
      1,
    ]);
    assert.equal(formatHPAMetrics([], []), '<none>');
    assert.equal(
      formatHPAMetrics(
        [
          {
            type: 'Pods',
            pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } },
          },
          {
            type: 'External',
            external: { metric: { name: 'queue' }, target: { type: 'AverageValue', averageValue: '30' } },
          },
          { type: 'Object', object: { metric: { name: 'rps' }, target: { type: 'Value', value: '2k' } } },
        ],
        [{ type: 'Pods', pods: { current: { averageValue: '7' } } }],
      ),
      '7/10, <unknown>/30 (avg) + 1 more...',
    );
  });

  it('pod disruption budget and scale', () => {
    assert.deepEqual(
      row('policy', 'PodDisruptionBudget', {
        metadata: meta('web-pdb', ago(D)),
        spec: { minAvailable: 2 },
        status: { disruptionsAllowed: 1 },
      }),
      ['web-pdb', '2', 'N/A', 1, '24h'],
    );
    assert.deepEqual(
      row('policy', 'PodDisruptionBudget', {
        metadata: meta('p', ago(D)),
        spec: { maxUnavailable: '25%' },
        status: {},
      }),
      ['p', 'N/A', '25%', 0, '24h'],
    );
    assert.deepEqual(
      row('autoscaling', 'Scale', {
        metadata: meta('web', ago(D)),
        spec: { replicas: 3 },
        status: { replicas: 2 },
      }),
      ['web', 3, 2, '24h'],
    );
    assert.equal(printerFor('autoscaling', 'Scale').columns[0].format, '');
  });
});
