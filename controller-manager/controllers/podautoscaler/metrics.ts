// One metric of an autoscaling/v2 HPA to a replica proposal and its status
// (kube's computeReplicasForMetric). Resource and ContainerResource metrics
// are read from the resource metrics API (metrics.k8s.io PodMetrics, served
// through the aggregation layer); Pods, Object and External metrics need the
// custom and external metrics APIs, which tkube does not have, so they fail
// with the errors and conditions Kubernetes reports when those are missing.
import type { KubeObject } from '../../../shared/client';
import { formatQuantity } from '../../../shared/api/validation/quantity';
import { errMessage } from '../util/base';
import { milli, podMetricsInfo, type ReplicaCalculator, type ResourceReplicas } from './replica-calculator';

/** A ScalingActive=False condition with the error that caused it (the metric is invalid). */
export class MetricError extends Error {
  constructor(
    message: string,
    readonly reason: string,
    /** The error the event and the condition's message carry (kube: before the last wrapping). */
    readonly inner: string,
  ) {
    super(message);
  }
}

export interface MetricProposal {
  replicas: number;
  metricName: string;
  timestamp: number;
  status: any;
}

/** What a metric computation reads: PodMetrics of the target's pods, and the pods themselves. */
export interface MetricSources {
  /** PodMetrics items of the namespace matching the selector (throws like the API). */
  podMetrics(namespace: string, selector: string): Promise<KubeObject[]>;
  pods(namespace: string, selector: string): KubeObject[];
}

const milliQuantity = (v: number) => formatQuantity({ mant: BigInt(v), exp: -3, format: 'DecimalSI' });

const NO_CUSTOM =
  'unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered';
const NO_EXTERNAL =
  'unable to fetch metrics from external metrics API: no external metrics API (external.metrics.k8s.io) registered';

/** Go's %+v of a *metav1.LabelSelector (its generated String()). */
function goSelectorString(sel: any): string {
  if (!sel) return 'nil';
  const labels = Object.keys(sel.matchLabels ?? {})
    .sort()
    .map((k) => `${k}: ${sel.matchLabels[k]},`)
    .join('');
  const exprs = (sel.matchExpressions ?? [])
    .map(
      (e: any) =>
        `LabelSelectorRequirement{Key:${e.key},Operator:${e.operator},Values:[${(e.values ?? []).join(' ')}],}`,
    )
    .join(',');
  return `&LabelSelector{MatchLabels:map[string]string{${labels}},MatchExpressions:[]LabelSelectorRequirement{${exprs}},}`;
}

export async function computeReplicasForMetric(
  calc: ReplicaCalculator,
  src: MetricSources,
  hpa: KubeObject,
  spec: any,
  specReplicas: number,
  selector: string,
): Promise<MetricProposal> {
  const ns = hpa.metadata.namespace!;
  switch (spec.type) {
    case 'Resource':
    case 'ContainerResource': {
      const container = spec.type === 'ContainerResource';
      const source = container ? spec.containerResource : spec.resource;
      const name: string = source?.name;
      let r: { replicas: ResourceReplicas; metricName: string; current: any };
      try {
        r = await resourceProposal(calc, src, ns, selector, specReplicas, source, container);
      } catch (err) {
        const reason = container ? 'FailedGetContainerResourceMetric' : 'FailedGetResourceMetric';
        const inner = errMessage(err);
        const outer = container
          ? `failed to get ${name} container metric value: ${inner}`
          : `failed to get ${name} resource metric value: ${inner}`;
        throw new MetricError(outer, reason, inner);
      }
      const status = container
        ? {
            type: 'ContainerResource',
            containerResource: { name, container: source.container, current: r.current },
          }
        : { type: 'Resource', resource: { name, current: r.current } };
      return {
        replicas: r.replicas.replicas,
        metricName: r.metricName,
        timestamp: r.replicas.timestamp,
        status,
      };
    }
    case 'Pods': {
      const inner = `unable to get metric ${spec.pods?.metric?.name}: ${NO_CUSTOM}`;
      throw new MetricError(`failed to get pods metric value: ${inner}`, 'FailedGetPodsMetric', inner);
    }
    case 'Object': {
      const o = spec.object ?? {};
      // Kubernetes' own argument order in this message.
      const inner = `unable to get metric ${o.metric?.name}: ${o.describedObject?.kind} on ${ns} ${o.describedObject?.name}/${NO_CUSTOM}`;
      throw new MetricError(`failed to get object metric value: ${inner}`, 'FailedGetObjectMetric', inner);
    }
    case 'External': {
      const m = spec.external?.metric ?? {};
      const inner = `unable to get external metric ${ns}/${m.name}/${goSelectorString(m.selector)}: ${NO_EXTERNAL}`;
      throw new MetricError(
        `failed to get ${m.name} external metric value: ${inner}`,
        'FailedGetExternalMetric',
        inner,
      );
    }
    default: {
      const inner = `unknown metric source type "${spec.type ?? ''}"`;
      throw new MetricError(inner, 'InvalidMetricSourceType', inner);
    }
  }
}

async function resourceProposal(
  calc: ReplicaCalculator,
  src: MetricSources,
  ns: string,
  selector: string,
  specReplicas: number,
  source: any,
  isContainer: boolean,
): Promise<{ replicas: ResourceReplicas; metricName: string; current: any }> {
  const name: string = source?.name;
  const container: string = isContainer ? (source?.container ?? '') : '';
  const target = source?.target ?? {};
  const fetch = async () => {
    try {
      let items: KubeObject[];
      try {
        items = await src.podMetrics(ns, selector);
      } catch (err) {
        throw new Error(`unable to fetch metrics from resource metrics API: ${errMessage(err)}`, {
          cause: err,
        });
      }
      if (items.length === 0) throw new Error('no metrics returned from resource metrics API');
      try {
        return { metrics: podMetricsInfo(items, name, container), timestamp: Date.parse(items[0].timestamp) };
      } catch (err) {
        throw new Error(`failed to get container metrics: ${errMessage(err)}`, { cause: err });
      }
    } catch (err) {
      throw new Error(`unable to get metrics for resource ${name}: ${errMessage(err)}`, { cause: err });
    }
  };
  if (target.averageValue !== undefined && target.averageValue !== null) {
    try {
      const { metrics, timestamp } = await fetch();
      const r = calc.rawResourceReplicas(
        specReplicas,
        milli(target.averageValue),
        name,
        metrics,
        src.pods(ns, selector),
        timestamp,
      );
      return {
        replicas: r,
        metricName: `${name} resource`,
        current: { averageValue: milliQuantity(r.rawAverage) },
      };
    } catch (err) {
      throw new Error(`failed to get ${name} usage: ${errMessage(err)}`, { cause: err });
    }
  }
  if (typeof target.averageUtilization !== 'number')
    throw new Error(
      'invalid resource metric source: neither an average utilization target nor an average value (usage) target was set',
    );
  try {
    const { metrics, timestamp } = await fetch();
    const r = calc.resourceReplicas(
      specReplicas,
      target.averageUtilization,
      name,
      container,
      metrics,
      src.pods(ns, selector),
      timestamp,
    );
    return {
      replicas: r,
      metricName: isContainer
        ? `${name} container resource utilization (percentage of request)`
        : `${name} resource utilization (percentage of request)`,
      current: { averageUtilization: r.utilization, averageValue: milliQuantity(r.rawAverage) },
    };
  } catch (err) {
    throw new Error(`failed to get ${name} utilization: ${errMessage(err)}`, { cause: err });
  }
}
