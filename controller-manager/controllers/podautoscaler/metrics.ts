// One metric of an autoscaling/v2 HPA to a replica proposal and its status
// (kube's computeReplicasForMetric). Resource and ContainerResource metrics
// are read from the resource metrics API (metrics.k8s.io PodMetrics, served
// through the aggregation layer); Pods, Object and External metrics need the
// custom metrics API, which tkube does not have, so they fail with the errors
// and conditions Kubernetes reports when it is missing; External metrics are
// asked of external.metrics.k8s.io (an extension server may serve it).
import type { KubeObject } from '../../../shared/client';
import { formatQuantity } from '../../../shared/api/validation/quantity';
import { selectorFromObject } from '../../../shared/api/labels';
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
  /** ExternalMetricValue items of external.metrics.k8s.io for the metric (throws like the API). */
  externalMetrics(namespace: string, metric: string, selector: string): Promise<KubeObject[]>;
}

const milliQuantity = (v: number) => formatQuantity({ mant: BigInt(v), exp: -3, format: 'DecimalSI' });

const NO_CUSTOM =
  'unable to fetch metrics from custom metrics API: no custom metrics API (custom.metrics.k8s.io) registered';

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
  statusReplicas: number,
  selector: string,
): Promise<MetricProposal> {
  const ns = hpa.metadata.namespace!;
  calc = calc.forHPA(hpa);
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
          ? `failed to get ${source?.container} container metric value: ${inner}`
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
      const target = o.target ?? {};
      let inner: string;
      let middle: string;
      if (target.type === 'Value' && target.value !== undefined) {
        // Kubernetes' own argument order in this message.
        inner = `unable to get metric ${o.metric?.name}: ${o.describedObject?.kind} on ${ns} ${o.describedObject?.name}/${NO_CUSTOM}`;
        middle = inner;
      } else if (target.type === 'AverageValue' && target.averageValue !== undefined) {
        inner = `unable to get metric ${o.metric?.name}: ${o.describedObject?.kind} on ${ns} ${o.describedObject?.name}/${NO_CUSTOM}`;
        middle = `failed to get ${o.metric?.name} object metric: ${inner}`;
      } else {
        inner = middle =
          'invalid object metric source: neither a value target nor an average value target was set';
      }
      throw new MetricError(`failed to get object metric value: ${middle}`, 'FailedGetObjectMetric', inner);
    }
    case 'External':
      return externalProposal(calc, src, hpa, spec, specReplicas, statusReplicas, selector);
    default: {
      const inner = `unknown metric source type "${spec.type ?? ''}"`;
      throw new MetricError(inner, 'InvalidMetricSourceType', inner);
    }
  }
}

/** External metrics: whatever external.metrics.k8s.io serves (through the aggregation layer), if anything. */
async function externalProposal(
  calc: ReplicaCalculator,
  src: MetricSources,
  hpa: KubeObject,
  spec: any,
  specReplicas: number,
  statusReplicas: number,
  selector: string,
): Promise<MetricProposal> {
  const ns = hpa.metadata.namespace!;
  const m = spec.external?.metric ?? {};
  const target = spec.external?.target ?? {};
  const name: string = m.name;
  const metricName = `external metric ${name}(${goSelectorString(m.selector)})`;
  const outer = (middle: string) => `failed to get ${name} external metric value: ${middle}`;
  const perPod = target.averageValue !== undefined && target.averageValue !== null;
  if (!perPod && (target.value === undefined || target.value === null)) {
    const inner =
      'invalid external metric source: neither a value target nor an average value target was set';
    throw new MetricError(outer(inner), 'FailedGetExternalMetric', inner);
  }
  let values: number[];
  let timestamp: number;
  try {
    let items: KubeObject[];
    try {
      items = await src.externalMetrics(ns, name, selectorString(m.selector));
    } catch (err) {
      throw new Error(`unable to fetch metrics from external metrics API: ${errMessage(err)}`, {
        cause: err,
      });
    }
    if (items.length === 0) throw new Error('no metrics returned from external metrics API');
    values = items.map((i: any) => milli(i.value));
    timestamp = Date.parse(items[0].timestamp);
  } catch (err) {
    const inner = `unable to get external metric ${ns}/${name}/${goSelectorString(m.selector)}: ${errMessage(err)}`;
    const middle = perPod
      ? `failed to get ${name} external metric: ${inner}`
      : `failed to get external metric ${name}: ${inner}`;
    throw new MetricError(outer(middle), 'FailedGetExternalMetric', inner);
  }
  const usage = values.reduce((a, b) => a + b, 0);
  const identifier = { name, ...(m.selector ? { selector: m.selector } : {}) };
  if (perPod) {
    const r = calc.externalPerPodReplicas(statusReplicas, milli(target.averageValue), usage);
    return {
      replicas: r.replicas,
      metricName,
      timestamp,
      status: {
        type: 'External',
        external: { metric: identifier, current: { averageValue: milliQuantity(r.usage) } },
      },
    };
  }
  let replicas: number;
  try {
    replicas = calc.usageRatioReplicas(specReplicas, usage / milli(target.value), src.pods(ns, selector));
  } catch (err) {
    const inner = errMessage(err);
    throw new MetricError(
      outer(`failed to get external metric ${name}: ${inner}`),
      'FailedGetExternalMetric',
      inner,
    );
  }
  return {
    replicas,
    metricName,
    timestamp,
    status: { type: 'External', external: { metric: identifier, current: { value: milliQuantity(usage) } } },
  };
}

/** A metav1.LabelSelector as the selector string of a list request. */
function selectorString(sel: any): string {
  return selectorFromObject(sel)?.toString() ?? '';
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
