// autoscaling/v1 <-> autoscaling/v2 HorizontalPodAutoscaler. v2 is the storage
// version; v1 shows the CPU utilization target in its own fields and keeps
// everything else v1 cannot express in annotations (like Kubernetes'
// autoscaling.alpha.kubernetes.io/* annotations), so objects round-trip
// between the versions without loss.

const A = 'autoscaling.alpha.kubernetes.io/';
const METRICS = A + 'metrics';
const BEHAVIOR = A + 'behavior';
const CURRENT = A + 'current-metrics';
const CONDITIONS = A + 'conditions';
const CONVERSION_KEYS = [METRICS, BEHAVIOR, CURRENT, CONDITIONS];

const isCPUUtilization = (m: any) =>
  m?.type === 'Resource' && m.resource?.name === 'cpu' && m.resource?.target?.type === 'Utilization';

const isCurrentCPU = (m: any) =>
  m?.type === 'Resource' &&
  m.resource?.name === 'cpu' &&
  m.resource?.current?.averageUtilization !== undefined;

function withoutConversionAnnotations(md: any): any {
  const out = { ...md };
  if (out.annotations) {
    const a = { ...out.annotations };
    for (const k of CONVERSION_KEYS) delete a[k];
    if (Object.keys(a).length) out.annotations = a;
    else delete out.annotations;
  }
  return out;
}

const parse = (s: string | undefined): any => {
  if (s === undefined) return undefined;
  try {
    return JSON.parse(s);
  } catch {
    return undefined;
  }
};

/** v2 (storage) → v1 (served). */
export function hpaV2ToV1(o: any): any {
  const spec = o.spec ?? {};
  const status = o.status;
  const annotations: Record<string, string> = { ...(o.metadata?.annotations ?? {}) };
  const metrics: any[] = spec.metrics ?? [];
  const cpu = metrics.find(isCPUUtilization);
  // v1 can say "CPU utilization" alone; anything more travels whole in an annotation.
  const simpleSpec =
    metrics.length === 0 ||
    (metrics.length === 1 && sameJSON(metrics[0], cpuMetric(cpu?.resource.target.averageUtilization)));
  if (!simpleSpec) annotations[METRICS] = JSON.stringify(metrics);
  if (spec.behavior) annotations[BEHAVIOR] = JSON.stringify(spec.behavior);
  const v1spec: any = { scaleTargetRef: spec.scaleTargetRef, maxReplicas: spec.maxReplicas };
  if (spec.minReplicas !== undefined) v1spec.minReplicas = spec.minReplicas;
  if (cpu) v1spec.targetCPUUtilizationPercentage = cpu.resource.target.averageUtilization;
  const out: any = {
    apiVersion: 'autoscaling/v1',
    kind: 'HorizontalPodAutoscaler',
    metadata: { ...o.metadata },
    spec: v1spec,
  };
  if (status) {
    const v1status: any = {
      currentReplicas: status.currentReplicas ?? 0,
      desiredReplicas: status.desiredReplicas ?? 0,
    };
    if (status.observedGeneration !== undefined) v1status.observedGeneration = status.observedGeneration;
    if (status.lastScaleTime !== undefined) v1status.lastScaleTime = status.lastScaleTime;
    const current: any[] = status.currentMetrics ?? [];
    const cur = current.find(isCurrentCPU);
    if (cur) v1status.currentCPUUtilizationPercentage = cur.resource.current.averageUtilization;
    const simpleCurrent =
      current.length === 0 ||
      (current.length === 1 && sameJSON(current[0], currentCPU(cur?.resource.current.averageUtilization)));
    if (!simpleCurrent) annotations[CURRENT] = JSON.stringify(current);
    if (status.conditions?.length) annotations[CONDITIONS] = JSON.stringify(status.conditions);
    out.status = v1status;
  }
  if (Object.keys(annotations).length) out.metadata.annotations = annotations;
  return out;
}

/** v1 (served) → v2 (storage). */
export function hpaV1ToV2(o: any): any {
  const spec = o.spec ?? {};
  const ann = o.metadata?.annotations ?? {};
  let metrics: any[] | undefined = parse(ann[METRICS]);
  const target = spec.targetCPUUtilizationPercentage;
  if (metrics) {
    // A v1 writer may have changed the CPU target: carry it into the full list.
    if (target !== undefined) {
      const cpu = metrics.find(isCPUUtilization);
      if (cpu) cpu.resource.target.averageUtilization = target;
      else metrics = [cpuMetric(target), ...metrics];
    } else metrics = metrics.filter((m) => !isCPUUtilization(m));
  } else if (target !== undefined) metrics = [cpuMetric(target)];
  const v2spec: any = { scaleTargetRef: spec.scaleTargetRef, maxReplicas: spec.maxReplicas };
  if (spec.minReplicas !== undefined) v2spec.minReplicas = spec.minReplicas;
  if (metrics?.length) v2spec.metrics = metrics;
  const behavior = parse(ann[BEHAVIOR]);
  if (behavior) v2spec.behavior = behavior;
  const out: any = {
    apiVersion: 'autoscaling/v2',
    kind: 'HorizontalPodAutoscaler',
    metadata: withoutConversionAnnotations(o.metadata ?? {}),
    spec: v2spec,
  };
  if (o.status) {
    const s = o.status;
    const v2status: any = {
      currentReplicas: s.currentReplicas ?? 0,
      desiredReplicas: s.desiredReplicas ?? 0,
    };
    if (s.observedGeneration !== undefined) v2status.observedGeneration = s.observedGeneration;
    if (s.lastScaleTime !== undefined) v2status.lastScaleTime = s.lastScaleTime;
    let current: any[] | undefined = parse(ann[CURRENT]);
    if (!current && s.currentCPUUtilizationPercentage !== undefined)
      current = [currentCPU(s.currentCPUUtilizationPercentage)];
    if (current?.length) v2status.currentMetrics = current;
    const conditions = parse(ann[CONDITIONS]);
    if (conditions?.length) v2status.conditions = conditions;
    out.status = v2status;
  }
  return out;
}

function cpuMetric(utilization: number): any {
  return {
    type: 'Resource',
    resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: utilization } },
  };
}

function currentCPU(utilization: number): any {
  return { type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: utilization } } };
}

const sameJSON = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
