// The horizontal-pod-autoscaler controller (kube's HorizontalController):
// every --horizontal-pod-autoscaler-sync-period each autoscaling/v2 HPA reads
// its target's /scale subresource, computes a replica count from its metrics
// (the highest proposal wins), stabilizes and limits it (normalize.ts),
// writes it back through /scale and reports status, conditions and events
// with Kubernetes' reasons and messages.
import type { ControllerContext, EventRecorderLike } from '../../controller';
import { isNotFound, type KubeObject, type ResourceSpec } from '../../../shared/client';
import { parseLabelSelector, type LabelSelector } from '../../../shared/api/labels';
import { errMessage, keyOf, rfc3339 } from '../util/base';
import { jsonClone, jsonEqual } from '../../../shared/api/json-value';
import type { HPAControllerOptions } from './podautoscaler';
import { ReplicaCalculator } from './replica-calculator';
import { Normalizer, type ConditionUpdate } from './normalize';
import { computeReplicasForMetric, MetricError, type MetricSources } from './metrics';

export const HPA_RESOURCE: ResourceSpec = {
  group: 'autoscaling',
  version: 'v2',
  resource: 'horizontalpodautoscalers',
  namespaced: true,
  kind: 'HorizontalPodAutoscaler',
};
const POD_METRICS: ResourceSpec = {
  group: 'metrics.k8s.io',
  version: 'v1beta1',
  resource: 'pods',
  namespaced: true,
  kind: 'PodMetrics',
};

const EXTERNAL_METRICS = {
  group: 'external.metrics.k8s.io',
  version: 'v1beta1',
  namespaced: true,
  kind: 'ExternalMetricValue',
};

type ConditionType = 'AbleToScale' | 'ScalingActive' | 'ScalingLimited';

/** Thrown to stop a reconcile after the status was written (the error is only logged and retried). */
class ReconcileError extends Error {}

export class HorizontalController {
  readonly normalizer: Normalizer;
  private readonly calc: ReplicaCalculator;
  private readonly recorder: EventRecorderLike;
  private readonly sources: MetricSources;

  constructor(
    private readonly ctx: ControllerContext,
    readonly o: HPAControllerOptions,
    pods: { namespace(ns: string): { list(sel: any): KubeObject[] } },
  ) {
    this.normalizer = new Normalizer(o.downscaleStabilizationMs, ctx.now);
    this.calc = new ReplicaCalculator({
      tolerance: o.tolerance,
      cpuInitializationPeriodMs: o.cpuInitializationPeriodMs,
      delayOfInitialReadinessStatusMs: o.initialReadinessDelayMs,
      now: ctx.now,
    });
    this.recorder = ctx.recorder('horizontal-pod-autoscaler');
    const metrics = ctx.client.resource(POD_METRICS);
    this.sources = {
      podMetrics: async (ns, selector) =>
        (await metrics.namespace(ns).list({ labelSelector: selector, signal: ctx.signal })).items,
      pods: (ns, selector) => pods.namespace(ns).list(parseLabelSelector(selector)),
      externalMetrics: async (ns, metric, selector) =>
        (
          await ctx.client
            .resource({ ...EXTERNAL_METRICS, resource: metric })
            .namespace(ns)
            .list({ labelSelector: selector, signal: ctx.signal })
        ).items,
    };
  }

  private setCondition(
    hpa: KubeObject,
    type: ConditionType,
    status: string,
    reason: string,
    message: string,
  ): void {
    const conds: any[] = (hpa.status.conditions ??= []);
    const now = rfc3339(this.ctx.now());
    const c = conds.find((x) => x.type === type);
    if (!c) {
      conds.push({ type, status, lastTransitionTime: now, reason, message });
      return;
    }
    if (c.status !== status) c.lastTransitionTime = now;
    Object.assign(c, { status, reason, message });
  }

  private apply(hpa: KubeObject, updates: ConditionUpdate[]): void {
    for (const u of updates) this.setCondition(hpa, u.type, u.status, u.reason, u.message);
  }

  /** The target's Scale, trying every version of its group/kind that discovery serves. */
  private async getScale(hpa: KubeObject): Promise<{ scale: any; resource: ResourceSpec }> {
    const ref = hpa.spec.scaleTargetRef ?? {};
    const apiVersion: string = ref.apiVersion ?? '';
    const parts = apiVersion.split('/');
    if (parts.length > 2)
      throw new TargetError(
        `unexpected GroupVersion string: ${apiVersion}`,
        `invalid API version in scale target reference`,
      );
    const group = parts.length === 2 ? parts[0] : '';
    const all = await this.ctx.client.discovery().serverResources();
    let mappings = all.filter((r) => r.group === group && r.kind === ref.kind);
    if (mappings.length === 0) {
      this.ctx.client.discovery().invalidate();
      mappings = (await this.ctx.client.discovery().serverResources()).filter(
        (r) => r.group === group && r.kind === ref.kind,
      );
    }
    if (mappings.length === 0)
      throw new TargetError(
        `no matches for kind "${ref.kind}" in group "${group}"`,
        'unable to determine resource for scale target reference',
      );
    mappings.sort((a, b) => Number(b.preferred) - Number(a.preferred));
    let first: unknown;
    for (const m of mappings) {
      try {
        const scale = await this.ctx.client.resource(m).namespace(hpa.metadata.namespace!).getScale(ref.name);
        return { scale, resource: m };
      } catch (err) {
        first ??= err;
      }
    }
    const reference = `${ref.kind}/${hpa.metadata.namespace}/${ref.name}`;
    throw new TargetError(errMessage(first), `failed to query scale subresource for ${reference}`);
  }

  async sync(key: string, hpaShared: KubeObject): Promise<void> {
    const hpa: KubeObject = jsonClone(hpaShared);
    hpa.status ??= {};
    const original = jsonClone(hpa.status);
    const ref = hpa.spec.scaleTargetRef ?? {};
    const reference = `${ref.kind}/${hpa.metadata.namespace}/${ref.name}`;

    let target: { scale: any; resource: ResourceSpec };
    try {
      target = await this.getScale(hpa);
    } catch (err) {
      const msg = errMessage(err);
      this.recorder.event(hpa, 'Warning', 'FailedGetScale', 'GetScale', msg);
      this.setCondition(
        hpa,
        'AbleToScale',
        'False',
        'FailedGetScale',
        `the HPA controller was unable to get the target's current scale: ${msg}`,
      );
      await this.updateStatusIfNeeded(original, hpa);
      throw new ReconcileError(err instanceof TargetError ? `${err.context}: ${msg}` : msg);
    }
    const { scale } = target;
    this.setCondition(
      hpa,
      'AbleToScale',
      'True',
      'SucceededGetScale',
      "the HPA controller was able to get the target's current scale",
    );
    const currentReplicas: number = scale.spec?.replicas ?? 0;
    this.normalizer.recordInitialRecommendation(key, currentReplicas);

    const minReplicas: number = hpa.spec.minReplicas ?? 1;
    const maxReplicas: number = hpa.spec.maxReplicas;
    let desiredReplicas = 0;
    let rescaleReason = '';
    let rescale = true;
    let metricStatuses: any[] = [];

    if (currentReplicas === 0 && minReplicas !== 0) {
      // Autoscaling is off while the target is scaled to zero.
      desiredReplicas = 0;
      rescale = false;
      this.setCondition(
        hpa,
        'ScalingActive',
        'False',
        'ScalingDisabled',
        'scaling is disabled since the replica count of the target is zero',
      );
    } else if (currentReplicas > maxReplicas) {
      rescaleReason = 'Current number of replicas above Spec.MaxReplicas';
      desiredReplicas = maxReplicas;
    } else if (currentReplicas < minReplicas) {
      rescaleReason = 'Current number of replicas below Spec.MinReplicas';
      desiredReplicas = minReplicas;
    } else {
      const computed = await this.computeReplicasForMetrics(hpa, scale);
      metricStatuses = computed.statuses;
      if (computed.error && computed.replicas === -1) {
        this.setStatus(hpa, currentReplicas, hpa.status.desiredReplicas ?? 0, metricStatuses, false);
        await this.updateStatusIfNeeded(original, hpa);
        this.recorder.event(
          hpa,
          'Warning',
          'FailedComputeMetricsReplicas',
          'ComputeMetricsReplicas',
          computed.error,
        );
        throw new ReconcileError(
          `failed to compute desired number of replicas based on listed metrics for ${reference}: ${computed.error}`,
        );
      }
      let rescaleMetric = '';
      if (computed.replicas > desiredReplicas) {
        desiredReplicas = computed.replicas;
        rescaleMetric = computed.metricName;
      }
      if (desiredReplicas > currentReplicas) rescaleReason = `${rescaleMetric} above target`;
      if (desiredReplicas < currentReplicas) rescaleReason = 'All metrics below target';
      const normalized = this.normalizer.normalize({
        key,
        behavior: hpa.spec.behavior,
        minReplicas,
        maxReplicas,
        currentReplicas,
        desiredReplicas,
      });
      this.apply(hpa, normalized.conditions);
      desiredReplicas = normalized.replicas;
      rescale = desiredReplicas !== currentReplicas;
    }

    if (rescale) {
      try {
        await this.ctx.client
          .resource(target.resource)
          .namespace(hpa.metadata.namespace!)
          .updateScale(ref.name, {
            metadata: scale.metadata,
            spec: { ...scale.spec, replicas: desiredReplicas },
          });
      } catch (err) {
        const msg = errMessage(err);
        this.recorder.event(
          hpa,
          'Warning',
          'FailedRescale',
          'Rescale',
          `New size: ${desiredReplicas}; reason: ${rescaleReason}; error: ${msg}`,
        );
        this.setCondition(
          hpa,
          'AbleToScale',
          'False',
          'FailedUpdateScale',
          `the HPA controller was unable to update the target scale: ${msg}`,
        );
        this.setStatus(hpa, currentReplicas, hpa.status.desiredReplicas ?? 0, metricStatuses, false);
        await this.updateStatusIfNeeded(original, hpa);
        throw new ReconcileError(`failed to rescale ${reference}: ${msg}`);
      }
      this.setCondition(
        hpa,
        'AbleToScale',
        'True',
        'SucceededRescale',
        `the HPA controller was able to update the target scale to ${desiredReplicas}`,
      );
      this.recorder.event(
        hpa,
        'Normal',
        'SuccessfulRescale',
        'Rescale',
        `New size: ${desiredReplicas}; reason: ${rescaleReason}`,
      );
      this.normalizer.storeScaleEvent(key, hpa.spec.behavior, currentReplicas, desiredReplicas);
      this.ctx.log
        .v(2)
        ?.info('Successful rescale', { hpa: key, currentReplicas, desiredReplicas, reason: rescaleReason });
    } else {
      desiredReplicas = currentReplicas;
    }
    this.setStatus(hpa, currentReplicas, desiredReplicas, metricStatuses, rescale);
    await this.updateStatusIfNeeded(original, hpa);
  }

  private async computeReplicasForMetrics(
    hpa: KubeObject,
    scale: any,
  ): Promise<{ replicas: number; metricName: string; statuses: any[]; error?: string }> {
    const selector: string | undefined = scale.status?.selector;
    if (!selector) {
      const msg = 'selector is required';
      this.recorder.event(hpa, 'Warning', 'SelectorRequired', 'ComputeMetricsReplicas', msg);
      this.setCondition(
        hpa,
        'ScalingActive',
        'False',
        'InvalidSelector',
        "the HPA target's scale is missing a selector",
      );
      return { replicas: -1, metricName: '', statuses: [], error: msg };
    }
    let parsed: LabelSelector;
    try {
      parsed = parseLabelSelector(selector);
    } catch (err) {
      const msg = `couldn't convert selector into a corresponding internal selector object: ${errMessage(err)}`;
      this.recorder.event(hpa, 'Warning', 'InvalidSelector', 'ComputeMetricsReplicas', msg);
      this.setCondition(hpa, 'ScalingActive', 'False', 'InvalidSelector', msg);
      return { replicas: -1, metricName: '', statuses: [], error: msg };
    }
    const ambiguous = this.ambiguousSelector(hpa, selector, parsed);
    if (ambiguous) {
      this.recorder.event(hpa, 'Warning', 'AmbiguousSelector', 'ComputeMetricsReplicas', ambiguous);
      this.setCondition(hpa, 'ScalingActive', 'False', 'AmbiguousSelector', ambiguous);
      return { replicas: -1, metricName: '', statuses: [], error: ambiguous };
    }
    const specs: any[] = hpa.spec.metrics ?? [];
    const specReplicas: number = scale.spec?.replicas ?? 0;
    const statusReplicas: number = scale.status?.replicas ?? 0;
    const statuses: any[] = specs.map(() => ({ type: '' }));
    let replicas = 0;
    let metricName = '';
    let invalid = 0;
    let firstError: MetricError | undefined;
    for (let i = 0; i < specs.length; i++) {
      try {
        const p = await computeReplicasForMetric(
          this.calc,
          this.sources,
          hpa,
          specs[i],
          specReplicas,
          statusReplicas,
          selector,
        );
        statuses[i] = p.status;
        if (replicas === 0 || p.replicas > replicas) {
          replicas = p.replicas;
          metricName = p.metricName;
        }
      } catch (err) {
        const me =
          err instanceof MetricError
            ? err
            : new MetricError(errMessage(err), 'FailedGetResourceMetric', errMessage(err));
        // kube records an event for each metric that could not be computed.
        this.recorder.event(hpa, 'Warning', me.reason, 'ComputeMetricsReplicas', me.inner);
        firstError ??= me;
        invalid++;
      }
    }
    const error = firstError
      ? `invalid metrics (${invalid} invalid out of ${specs.length}), first error is: ${firstError.message}`
      : undefined;
    // All metrics failed, or some did and the others would scale down: do nothing.
    if (firstError && (invalid >= specs.length || replicas < specReplicas)) {
      this.setCondition(
        hpa,
        'ScalingActive',
        'False',
        firstError.reason,
        `the HPA was unable to compute the replica count: ${firstError.inner}`,
      );
      return { replicas: -1, metricName: '', statuses, error };
    }
    this.setCondition(
      hpa,
      'ScalingActive',
      'True',
      'ValidMetricFound',
      `the HPA was able to successfully calculate a replica count from ${metricName}`,
    );
    return { replicas, metricName, statuses, error };
  }

  /** Remembers the target selector of each HPA, to find pods that several HPAs would scale. */
  private readonly selectors = new Map<string, LabelSelector>();

  /** Drops what is remembered about a deleted HPA. */
  forget(key: string): void {
    this.normalizer.forget(key);
    this.selectors.delete(key);
  }

  /** kube's check that the target's pods are controlled by this HPA alone; the error message or undefined. */
  private ambiguousSelector(hpa: KubeObject, selector: string, parsed: LabelSelector): string | undefined {
    const ns = hpa.metadata.namespace!;
    this.selectors.set(keyOf(hpa), parsed);
    const pods = this.sources.pods(ns, selector);
    const controlling = new Set<string>();
    for (const [key, sel] of this.selectors) {
      if (!key.startsWith(`${ns}/`)) continue;
      if (pods.some((p) => sel.matches(p.metadata.labels))) controlling.add(key);
    }
    if (controlling.size <= 1) return undefined;
    return `pods by selector ${selector} are controlled by multiple HPAs: [${[...controlling].sort().join(' ')}]`;
  }

  private setStatus(
    hpa: KubeObject,
    current: number,
    desired: number,
    metrics: any[],
    rescale: boolean,
  ): void {
    const s: any = {
      ...(hpa.status.observedGeneration !== undefined
        ? { observedGeneration: hpa.status.observedGeneration }
        : {}),
      ...(hpa.status.lastScaleTime ? { lastScaleTime: hpa.status.lastScaleTime } : {}),
      currentReplicas: current,
      desiredReplicas: desired,
      ...(metrics.length ? { currentMetrics: metrics.filter((m) => m.type) } : {}),
      conditions: hpa.status.conditions,
    };
    if (rescale) s.lastScaleTime = rfc3339(this.ctx.now());
    hpa.status = s;
  }

  private async updateStatusIfNeeded(original: any, hpa: KubeObject): Promise<void> {
    if (jsonEqual(original, hpa.status)) return;
    try {
      await this.ctx.client.resource(HPA_RESOURCE).namespace(hpa.metadata.namespace!).updateStatus(hpa);
    } catch (err) {
      if (isNotFound(err)) return;
      this.recorder.event(hpa, 'Warning', 'FailedUpdateStatus', 'UpdateStatus', errMessage(err));
      throw new ReconcileError(`failed to update status for ${hpa.metadata.name}: ${errMessage(err)}`);
    }
  }
}

/** A scale target that could not be read; context is the reconcile error's prefix. */
class TargetError extends Error {
  constructor(
    message: string,
    readonly context: string,
  ) {
    super(message);
  }
}
