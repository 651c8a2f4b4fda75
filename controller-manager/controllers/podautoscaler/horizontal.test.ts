// The HPA controller against a real apiserver (no metrics server here: the
// resource metrics API is missing): targets reached through /scale of any
// resource (StatefulSet, a custom resource), min/max enforcement, and the
// conditions and events of targets and metrics that cannot be read.
import assert from 'node:assert/strict';
import type { KubeObject } from '../../../shared/client';
import { TestEnv, waitFor } from '../testing';
import { horizontalPodAutoscalerController } from './podautoscaler';

const HPA = { group: 'autoscaling', version: 'v2', resource: 'horizontalpodautoscalers', namespaced: true };
const WIDGETS = {
  group: 'example.com',
  version: 'v1',
  resource: 'widgets',
  namespaced: true,
  kind: 'Widget',
};

describe('controllers/podautoscaler', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await TestEnv.start({ horizontalPodAutoscalerSyncPeriod: 200 });
    await env.run(horizontalPodAutoscalerController);
  });
  after(async () => env?.stop());

  const hpas = () => env.client.resource(HPA).namespace('default');
  const createHPA = (name: string, target: object, min: number, max: number, metrics?: object[]) =>
    hpas().create({
      apiVersion: 'autoscaling/v2',
      kind: 'HorizontalPodAutoscaler',
      metadata: { name },
      spec: { scaleTargetRef: target, minReplicas: min, maxReplicas: max, ...(metrics ? { metrics } : {}) },
    });
  const condition = (hpa: KubeObject, type: string) =>
    (hpa.status?.conditions ?? []).find((c: any) => c.type === type);
  const waitCondition = (name: string, type: string, reason: string) =>
    waitFor(`${name}: ${type} ${reason}`, async () => {
      const h = await hpas().get(name);
      return condition(h, type)?.reason === reason ? h : undefined;
    });
  const statefulSet = (name: string, replicas: number) =>
    env.client
      .resource('statefulsets.apps')
      .namespace('default')
      .create({
        metadata: { name },
        spec: {
          replicas,
          serviceName: name,
          selector: { matchLabels: { app: name } },
          template: {
            metadata: { labels: { app: name } },
            spec: { containers: [{ name: 'c', image: 'i', resources: { requests: { cpu: '100m' } } }] },
          },
        },
      });

  it('reports a target it cannot read as FailedGetScale', async () => {
    await createHPA('missing', { apiVersion: 'apps/v1', kind: 'Deployment', name: 'nope' }, 1, 3);
    const h = await waitCondition('missing', 'AbleToScale', 'FailedGetScale');
    const c = condition(h, 'AbleToScale');
    assert.equal(c.status, 'False');
    assert.equal(
      c.message,
      `the HPA controller was unable to get the target's current scale: deployments.apps "nope" not found`,
    );
    await env.expectEvent('missing', 'FailedGetScale', (n) => n === 'deployments.apps "nope" not found');
    await createHPA('nokind', { apiVersion: 'example.com/v1', kind: 'Gadget', name: 'g' }, 1, 3);
    const k = await waitCondition('nokind', 'AbleToScale', 'FailedGetScale');
    assert.match(condition(k, 'AbleToScale').message, /no matches for kind "Gadget" in group "example.com"$/);
  });

  it('brings a custom resource with a scale subresource within maxReplicas', async () => {
    await env.client.resource('customresourcedefinitions.apiextensions.k8s.io').create({
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope: 'Namespaced',
        names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
            subresources: {
              scale: {
                specReplicasPath: '.spec.replicas',
                statusReplicasPath: '.status.replicas',
                labelSelectorPath: '.status.selector',
              },
            },
          },
        ],
      },
    });
    const widgets = env.client.resource(WIDGETS).namespace('default');
    await waitFor('the Widget API', async () => (await widgets.list()).items !== undefined);
    await widgets.create({
      apiVersion: 'example.com/v1',
      kind: 'Widget',
      metadata: { name: 'w' },
      spec: { replicas: 8 },
    });
    await createHPA('w', { apiVersion: 'example.com/v1', kind: 'Widget', name: 'w' }, 1, 5);
    await waitFor('the widget scaled to 5', async () => (await widgets.get('w')).spec.replicas === 5);
    const h = await waitFor('the HPA status', async () => {
      const x = await hpas().get('w');
      return x.status?.desiredReplicas === 5 ? x : undefined;
    });
    assert.equal(h.status.currentReplicas, 8);
    assert.ok(h.status.lastScaleTime);
    assert.equal(condition(h, 'AbleToScale').reason, 'SucceededRescale');
    assert.equal(
      condition(h, 'AbleToScale').message,
      'the HPA controller was able to update the target scale to 5',
    );
    await env.expectEvent(
      'w',
      'SuccessfulRescale',
      (n) => n === 'New size: 5; reason: Current number of replicas above Spec.MaxReplicas',
    );
  });

  it('reports a missing resource metrics API as FailedGetResourceMetric and does not scale', async () => {
    await statefulSet('db', 2);
    await createHPA('db', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'db' }, 1, 5, [
      {
        type: 'Resource',
        resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 50 } },
      },
    ]);
    const h = await waitCondition('db', 'ScalingActive', 'FailedGetResourceMetric');
    const c = condition(h, 'ScalingActive');
    assert.equal(c.status, 'False');
    assert.ok(
      c.message.startsWith(
        'the HPA was unable to compute the replica count: failed to get cpu utilization: unable to get metrics for resource cpu: unable to fetch metrics from resource metrics API: ',
      ),
      c.message,
    );
    assert.equal(condition(h, 'AbleToScale').reason, 'SucceededGetScale');
    await env.expectEvent('db', 'FailedComputeMetricsReplicas', (n) =>
      n.startsWith(
        'invalid metrics (1 invalid out of 1), first error is: failed to get cpu resource metric value: failed to get cpu utilization: ',
      ),
    );
    assert.equal(
      (await env.client.resource('statefulsets.apps').namespace('default').get('db')).spec.replicas,
      2,
    );
    assert.equal(h.status.currentReplicas, 2);
  });

  it('asks external.metrics.k8s.io for External metrics and reports its absence', async () => {
    await statefulSet('q', 1);
    await createHPA('q', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'q' }, 1, 5, [
      {
        type: 'External',
        external: {
          metric: { name: 'queue_depth', selector: { matchLabels: { queue: 'jobs' } } },
          target: { type: 'Value', value: '10' },
        },
      },
    ]);
    const h = await waitCondition('q', 'ScalingActive', 'FailedGetExternalMetric');
    const prefix =
      'unable to get external metric default/queue_depth/&LabelSelector{MatchLabels:map[string]string{queue: jobs,},MatchExpressions:[]LabelSelectorRequirement{},}: unable to fetch metrics from external metrics API: ';
    const c = condition(h, 'ScalingActive');
    assert.ok(c.message.startsWith(`the HPA was unable to compute the replica count: ${prefix}`), c.message);
    assert.match(c.message, /the server could not find the requested resource/);
    await env.expectEvent('q', 'FailedGetExternalMetric', (n) => n.startsWith(prefix));
  });

  it('refuses to scale pods that two HPAs select (AmbiguousSelector)', async () => {
    await statefulSet('amb', 1);
    await env.client
      .resource('pods')
      .namespace('default')
      .create({
        metadata: { name: 'amb-0', labels: { app: 'amb' } },
        spec: { containers: [{ name: 'c', image: 'i' }] },
      });
    const target = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'amb' };
    await createHPA('amb-a', target, 1, 5);
    await createHPA('amb-b', target, 1, 5);
    for (const name of ['amb-a', 'amb-b']) {
      const h = await waitCondition(name, 'ScalingActive', 'AmbiguousSelector');
      assert.equal(
        condition(h, 'ScalingActive').message,
        'pods by selector app=amb are controlled by multiple HPAs: [default/amb-a default/amb-b]',
      );
    }
    await hpas().delete('amb-b');
    await waitFor('amb-a to leave AmbiguousSelector', async () => {
      const h = await hpas().get('amb-a');
      return condition(h, 'ScalingActive')?.reason !== 'AmbiguousSelector';
    });
  });

  it('leaves a target scaled to zero alone (ScalingDisabled)', async () => {
    await statefulSet('idle', 0);
    await createHPA('idle', { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'idle' }, 1, 5);
    const h = await waitCondition('idle', 'ScalingActive', 'ScalingDisabled');
    assert.equal(
      condition(h, 'ScalingActive').message,
      'scaling is disabled since the replica count of the target is zero',
    );
    assert.equal(h.status.desiredReplicas, 0);
    assert.equal(
      (await env.client.resource('statefulsets.apps').namespace('default').get('idle')).spec.replicas,
      0,
    );
  });
});
