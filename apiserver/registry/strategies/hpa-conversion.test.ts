import assert from 'node:assert/strict';
import { hpaV1ToV2, hpaV2ToV1 } from './hpa-conversion';
import { startTestAPIServer, testRequester } from '../../server/testing';

const v2 = {
  apiVersion: 'autoscaling/v2',
  kind: 'HorizontalPodAutoscaler',
  metadata: { name: 'web', namespace: 'default', annotations: { team: 'a' } },
  spec: {
    scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'web' },
    minReplicas: 2,
    maxReplicas: 10,
    metrics: [
      {
        type: 'Pods',
        pods: { metric: { name: 'qps' }, target: { type: 'AverageValue', averageValue: '10' } },
      },
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 70 } },
      },
    ],
    behavior: {
      scaleDown: {
        stabilizationWindowSeconds: 60,
        selectPolicy: 'Max',
        policies: [{ type: 'Percent', value: 10, periodSeconds: 60 }],
      },
    },
  },
  status: {
    observedGeneration: 3,
    currentReplicas: 4,
    desiredReplicas: 5,
    currentMetrics: [
      {
        type: 'Resource',
        resource: { name: 'cpu', current: { averageUtilization: 90, averageValue: '450m' } },
      },
    ],
    conditions: [
      {
        type: 'AbleToScale',
        status: 'True',
        reason: 'ReadyForNewScale',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ],
  },
};

describe('HorizontalPodAutoscaler autoscaling/v1 <-> autoscaling/v2', () => {
  it('round-trips a v2 object through v1 without loss', () => {
    const v1 = hpaV2ToV1(structuredClone(v2));
    assert.equal(v1.apiVersion, 'autoscaling/v1');
    assert.equal(v1.spec.targetCPUUtilizationPercentage, 70);
    assert.equal(v1.status.currentCPUUtilizationPercentage, 90);
    assert.equal(v1.metadata.annotations.team, 'a');
    assert.deepEqual(hpaV1ToV2(v1), v2);
  });

  it('round-trips a plain v1 object through v2', () => {
    const v1 = {
      apiVersion: 'autoscaling/v1',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name: 'x' },
      spec: {
        scaleTargetRef: { kind: 'Deployment', name: 'x' },
        maxReplicas: 3,
        targetCPUUtilizationPercentage: 50,
      },
    };
    const stored = hpaV1ToV2(structuredClone(v1));
    assert.deepEqual(stored.spec.metrics, [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
      },
    ]);
    assert.deepEqual(hpaV2ToV1(stored), v1);
  });

  it("carries a v1 writer's new CPU target into the full v2 metric list", () => {
    const v1 = hpaV2ToV1(structuredClone(v2));
    v1.spec.targetCPUUtilizationPercentage = 55;
    const back = hpaV1ToV2(v1);
    assert.equal(back.spec.metrics.length, 2);
    assert.equal(back.spec.metrics[1].resource.target.averageUtilization, 55);
  });

  it('serves both versions of one stored object over HTTP', async function () {
    this.timeout(30_000);
    const srv = await startTestAPIServer();
    const api = testRequester(srv.config);
    try {
      const { status: _s, ...spec } = v2;
      const created = await api('POST', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers', {
        body: spec,
      });
      assert.equal(created.status, 201, created.body.toString());
      const asV1 = await api('GET', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web');
      assert.equal(asV1.json.apiVersion, 'autoscaling/v1');
      assert.equal(asV1.json.spec.targetCPUUtilizationPercentage, 70);
      const upd = await api('PUT', '/apis/autoscaling/v1/namespaces/default/horizontalpodautoscalers/web', {
        body: { ...asV1.json, spec: { ...asV1.json.spec, maxReplicas: 12 } },
      });
      assert.equal(upd.status, 200, upd.body.toString());
      const asV2 = await api('GET', '/apis/autoscaling/v2/namespaces/default/horizontalpodautoscalers/web');
      assert.equal(asV2.json.spec.maxReplicas, 12);
      assert.deepEqual(asV2.json.spec.metrics, v2.spec.metrics);
      assert.deepEqual(asV2.json.spec.behavior.scaleDown, v2.spec.behavior.scaleDown);
      const list = await api('GET', '/apis/autoscaling/v1/horizontalpodautoscalers');
      assert.equal(list.json.kind, 'HorizontalPodAutoscalerList');
      assert.equal(list.json.items[0].apiVersion, 'autoscaling/v1');
    } finally {
      await api.close();
      await srv.stop();
    }
  });
});
