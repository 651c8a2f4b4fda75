// The HPA's replica arithmetic for resource metrics (kube's ReplicaCalculator):
// pods are grouped into ready, unready (pending, or cpu samples taken while the
// pod was still starting), missing (no sample) and ignored (deleted, failed);
// the usage ratio to the target decides the count, within the tolerance, and
// unready/missing pods are then assumed at 0% on a scale-up and at 100% (of
// the request, or the target when higher) on a scale-down, so an incomplete
// sample never turns the direction of scaling around.
import type { KubeObject } from '../../../shared/client';
import { milliValue, parseQuantity } from '../../../shared/api/validation/quantity';
import { parseTime } from '../util/base';

/** One pod's sample of a resource (milli units), as the resource metrics client reads PodMetrics. */
export interface PodMetric {
  /** ms since epoch; 0 for the values the calculator assumes. */
  timestamp: number;
  windowMs: number;
  value: number;
}

export type PodMetricsInfo = Map<string, PodMetric>;

export interface CalculatorOptions {
  tolerance: number;
  cpuInitializationPeriodMs: number;
  delayOfInitialReadinessStatusMs: number;
  now(): number;
}

export interface ResourceReplicas {
  replicas: number;
  /** Utilization in percent of the requests (0 for AverageValue targets). */
  utilization: number;
  /** The average usage per pod (milli units). */
  rawAverage: number;
  timestamp: number;
}

/** Quantity string to Go's MilliValue (rounded up). */
export function milli(q: unknown): number {
  return Number(milliValue(parseQuantity(String(q))));
}

/** PodMetrics items to per-pod sums of `resource` (pods missing a container's value are left out). */
export function podMetricsInfo(items: KubeObject[], resource: string, container: string): PodMetricsInfo {
  const out: PodMetricsInfo = new Map();
  for (const m of items) {
    const containers: any[] = m.containers ?? [];
    const timestamp = parseTime(m.timestamp) ?? 0;
    const windowMs = goDurationMs(m.window);
    if (container) {
      for (const c of containers) {
        if (c.name !== container) continue;
        const v = c.usage?.[resource];
        if (v === undefined)
          throw new Error(
            `failed to get resource ${resource} for container ${container} in pod ${m.metadata.namespace}/${m.metadata.name}`,
          );
        out.set(m.metadata.name!, { timestamp, windowMs, value: milli(v) });
      }
      continue;
    }
    if (containers.length === 0 || containers.some((c) => c.usage?.[resource] === undefined)) continue;
    const sum = containers.reduce((s, c) => s + milli(c.usage[resource]), 0);
    out.set(m.metadata.name!, { timestamp, windowMs, value: sum });
  }
  return out;
}

/** "30s", "1m0.5s", "250ms" → ms (0 when unparseable). */
export function goDurationMs(d: unknown): number {
  if (typeof d !== 'string') return 0;
  const unit: Record<string, number> = {
    h: 3600_000,
    m: 60_000,
    s: 1000,
    ms: 1,
    us: 1e-3,
    µs: 1e-3,
    ns: 1e-6,
  };
  let ms = 0;
  for (const [, n, u] of d.matchAll(/([\d.]+)(h|ms|m|s|us|µs|ns)/g)) ms += Number(n) * (unit[u] ?? 0);
  return ms;
}

function readyCondition(pod: KubeObject): { status: string; lastTransitionTime?: string } | undefined {
  return (pod.status?.conditions ?? []).find((c: any) => c.type === 'Ready');
}

export interface PodGroups {
  readyPodCount: number;
  unready: Set<string>;
  missing: Set<string>;
  ignored: Set<string>;
}

/** kube's groupPods. */
export function groupPods(
  pods: KubeObject[],
  metrics: PodMetricsInfo,
  resource: string,
  o: CalculatorOptions,
): PodGroups {
  const g: PodGroups = { readyPodCount: 0, unready: new Set(), missing: new Set(), ignored: new Set() };
  const now = o.now();
  for (const pod of pods) {
    const name = pod.metadata.name!;
    const phase = pod.status?.phase;
    if (pod.metadata.deletionTimestamp || phase === 'Failed') {
      g.ignored.add(name);
      continue;
    }
    if (phase === 'Pending') {
      g.unready.add(name);
      continue;
    }
    const metric = metrics.get(name);
    if (!metric) {
      g.missing.add(name);
      continue;
    }
    if (resource === 'cpu') {
      const cond = readyCondition(pod);
      const start = parseTime(pod.status?.startTime);
      let unready: boolean;
      if (!cond || start === undefined) unready = true;
      else {
        const transition = parseTime(cond.lastTransitionTime) ?? 0;
        if (start + o.cpuInitializationPeriodMs > now)
          // Still starting: the sample must cover a whole window after it became ready.
          unready = cond.status === 'False' || metric.timestamp < transition + metric.windowMs;
        else
          // Never been ready since its start.
          unready = cond.status === 'False' && start + o.delayOfInitialReadinessStatusMs > transition;
      }
      if (unready) {
        g.unready.add(name);
        continue;
      }
    }
    g.readyPodCount++;
  }
  return g;
}

/**
 * Per pod, its request of `resource`: the pod-level request (spec.resources) when the pod
 * has one and no container is named, else the sum over its containers (and restartable
 * init containers), or the named container's.
 */
export function podRequests(pods: KubeObject[], container: string, resource: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const pod of pods) {
    const name = pod.metadata.name!;
    const podLevel = pod.spec?.resources?.requests;
    if (!container && podLevel && Object.keys(podLevel).length > 0) {
      if (podLevel[resource] === undefined)
        throw new Error(`missing pod-level request for ${resource} in Pod ${name}`);
      out.set(name, milli(podLevel[resource]));
      continue;
    }
    const containers: any[] = [
      ...(pod.spec?.containers ?? []),
      ...(pod.spec?.initContainers ?? []).filter((c: any) => c.restartPolicy === 'Always'),
    ];
    let sum = 0;
    let found = false;
    for (const c of containers) {
      if (container && c.name !== container) continue;
      const r = c.resources?.requests?.[resource];
      if (r === undefined)
        throw new Error(`missing request for ${resource} in container ${c.name} of Pod ${name}`);
      sum += milli(r);
      found = true;
      if (container) break; // container names are unique in a pod
    }
    if (container && !found) throw new Error(`container ${container} not found in Pod ${name}`);
    out.set(name, sum);
  }
  return out;
}

/** kube's GetResourceUtilizationRatio. */
export function utilizationRatio(
  metrics: PodMetricsInfo,
  requests: Map<string, number>,
  targetUtilization: number,
): { ratio: number; utilization: number; rawAverage: number } {
  let metricsTotal = 0;
  let requestsTotal = 0;
  let n = 0;
  for (const [name, m] of metrics) {
    const req = requests.get(name);
    if (req === undefined) continue; // a sample of a pod we do not know
    metricsTotal += m.value;
    requestsTotal += req;
    n++;
  }
  if (requestsTotal === 0) throw new Error('no metrics returned matched known pods');
  const utilization = Math.trunc((metricsTotal * 100) / requestsTotal);
  return { ratio: utilization / targetUtilization, utilization, rawAverage: Math.trunc(metricsTotal / n) };
}

function usageRatio(metrics: PodMetricsInfo, targetUsage: number): { ratio: number; usage: number } {
  let total = 0;
  for (const m of metrics.values()) total += m.value;
  const usage = Math.trunc(total / metrics.size);
  return { ratio: usage / targetUsage, usage };
}

/** How far below and above 1 the usage ratio may be before scaling. */
export interface Tolerances {
  scaleDown: number;
  scaleUp: number;
}

export class ReplicaCalculator {
  private readonly t: Tolerances;

  constructor(
    private readonly o: CalculatorOptions,
    tolerances?: Tolerances,
  ) {
    this.t = tolerances ?? { scaleDown: o.tolerance, scaleUp: o.tolerance };
  }

  /**
   * The calculator for one HPA: spec.behavior.scaleDown/scaleUp.tolerance where set
   * (HPAConfigurableTolerance), else --horizontal-pod-autoscaler-tolerance.
   */
  forHPA(hpa: KubeObject): ReplicaCalculator {
    const b = hpa.spec?.behavior;
    const q = (v: unknown, dflt: number) => (v === undefined || v === null ? dflt : milli(v) / 1000);
    return new ReplicaCalculator(this.o, {
      scaleDown: q(b?.scaleDown?.tolerance, this.o.tolerance),
      scaleUp: q(b?.scaleUp?.tolerance, this.o.tolerance),
    });
  }

  /** The ratio is close enough to 1 to leave the count alone. */
  private within(ratio: number): boolean {
    return 1 - this.t.scaleDown <= ratio && ratio <= 1 + this.t.scaleUp;
  }

  /** Replicas for a Utilization target (percent of the pods' requests). */
  resourceReplicas(
    currentReplicas: number,
    targetUtilization: number,
    resource: string,
    container: string,
    metrics: PodMetricsInfo,
    pods: KubeObject[],
    timestamp: number,
  ): ResourceReplicas {
    if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
    const g = this.prepare(pods, metrics, resource);
    const requests = podRequests(pods, container, resource);
    const first = utilizationRatio(metrics, requests, targetUtilization);
    const result = (replicas: number): ResourceReplicas => ({
      replicas,
      utilization: first.utilization,
      rawAverage: first.rawAverage,
      timestamp,
    });
    const replicas = this.adjust(currentReplicas, first.ratio, g, metrics, {
      missingDown: (pod) => Math.trunc(((requests.get(pod) ?? 0) * Math.max(100, targetUtilization)) / 100),
      ratio: () => utilizationRatio(metrics, requests, targetUtilization).ratio,
    });
    return result(replicas);
  }

  /** Replicas for an AverageValue target (milli units per pod). */
  rawResourceReplicas(
    currentReplicas: number,
    targetUsage: number,
    resource: string,
    metrics: PodMetricsInfo,
    pods: KubeObject[],
    timestamp: number,
  ): ResourceReplicas {
    if (pods.length === 0) throw new Error('no pods returned by selector while calculating replica count');
    const g = this.prepare(pods, metrics, resource);
    const first = usageRatio(metrics, targetUsage);
    const replicas = this.adjust(currentReplicas, first.ratio, g, metrics, {
      missingDown: () => targetUsage,
      ratio: () => usageRatio(metrics, targetUsage).ratio,
    });
    return { replicas, utilization: 0, rawAverage: first.usage, timestamp };
  }

  /** kube's getUsageRatioReplicaCount: a ratio of a metric not per pod, times the ready pods. */
  usageRatioReplicas(currentReplicas: number, ratio: number, pods: KubeObject[]): number {
    if (currentReplicas === 0) return Math.ceil(ratio);
    if (this.within(ratio)) return currentReplicas;
    if (pods.length === 0)
      throw new Error(
        'unable to calculate ready pods: no pods returned by selector while calculating replica count',
      );
    const ready = pods.filter(
      (p) => p.status?.phase === 'Running' && readyCondition(p)?.status === 'True',
    ).length;
    return Math.ceil(ratio * ready);
  }

  /** kube's GetExternalPerPodMetricReplicas: the total over the target per pod. */
  externalPerPodReplicas(
    statusReplicas: number,
    targetPerPod: number,
    usage: number,
  ): { replicas: number; usage: number } {
    let replicas = statusReplicas;
    const ratio = usage / (targetPerPod * statusReplicas);
    if (!this.within(ratio)) replicas = Math.ceil(usage / targetPerPod);
    return { replicas, usage: Math.ceil(usage / statusReplicas) };
  }

  private prepare(pods: KubeObject[], metrics: PodMetricsInfo, resource: string): PodGroups {
    const g = groupPods(pods, metrics, resource, this.o);
    for (const name of [...g.ignored, ...g.unready]) metrics.delete(name);
    if (metrics.size === 0)
      throw new Error('did not receive metrics for targeted pods (pods might be unready)');
    return g;
  }

  /** The common tail of both calculations: tolerance, then the assumptions for unready and missing pods. */
  private adjust(
    currentReplicas: number,
    ratio: number,
    g: PodGroups,
    metrics: PodMetricsInfo,
    f: { missingDown(pod: string): number; ratio(): number },
  ): number {
    const scaleUpWithUnready = g.unready.size > 0 && ratio > 1;
    if (!scaleUpWithUnready && g.missing.size === 0) {
      if (this.within(ratio)) return currentReplicas;
      return Math.ceil(ratio * g.readyPodCount);
    }
    const assumed = (value: number): PodMetric => ({ timestamp: 0, windowMs: 0, value });
    if (ratio < 1) for (const pod of g.missing) metrics.set(pod, assumed(f.missingDown(pod)));
    else if (ratio > 1) for (const pod of g.missing) metrics.set(pod, assumed(0));
    if (scaleUpWithUnready) for (const pod of g.unready) metrics.set(pod, assumed(0));
    const newRatio = f.ratio();
    if (this.within(newRatio) || (ratio < 1 && newRatio > 1) || (ratio > 1 && newRatio < 1))
      return currentReplicas;
    const replicas = Math.ceil(newRatio * metrics.size);
    if ((newRatio < 1 && replicas > currentReplicas) || (newRatio > 1 && replicas < currentReplicas))
      return currentReplicas;
    return replicas;
  }
}
