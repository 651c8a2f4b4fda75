// Printers of workload kinds: apps (deployments, replica sets, stateful sets,
// daemon sets, controller revisions), batch (jobs, cron jobs), autoscaling
// (horizontal pod autoscalers, scale) and policy (pod disruption budgets).
import {
  age,
  boolPtr,
  column,
  containerCells,
  formatLabelSelector,
  formatLabels,
  humanDuration,
  int,
  intOrString,
  labelSelectorString,
  nameColumn,
  ageColumn,
  parseTime,
  since,
  wide,
  type Printer,
} from './printers-util';

const containersWide = () => wide('Containers', 'string', 'Names of the containers in the pod template.');
const imagesWide = () => wide('Images', 'string', 'Images of the containers in the pod template.');
const selectorWide = () => wide('Selector', 'string', 'Label selector of the pods the object manages.');

// spec.replicas is defaulted to 1 on write, so a stored object always has it;
// 1 keeps objects that skipped defaulting printing as Kubernetes would.
const replicas = (obj: any): number => int(obj.spec?.replicas ?? 1);

const deployments: Printer = {
  columns: [
    nameColumn(),
    column('Ready', 'string', 'Ready replicas out of desired replicas.'),
    column('Up-to-date', 'string', 'Replicas that run the current pod template.'),
    column('Available', 'string', 'Replicas available to serve.'),
    ageColumn(),
    containersWide(),
    imagesWide(),
    selectorWide(),
  ],
  cells(d, now) {
    const [names, images] = containerCells(d.spec?.template?.spec?.containers);
    const selector = labelSelectorString(d.spec?.selector);
    return [
      d.metadata?.name ?? '',
      `${int(d.status?.readyReplicas)}/${replicas(d)}`,
      int(d.status?.updatedReplicas),
      int(d.status?.availableReplicas),
      age(d, now),
      names,
      images,
      selector === undefined ? '<invalid>' : selector,
    ];
  },
};

const replicaSets: Printer = {
  columns: [
    nameColumn(),
    column('Desired', 'integer', 'Number of replicas asked for.'),
    column('Current', 'integer', 'Number of replicas that exist.'),
    column('Ready', 'integer', 'Number of ready replicas.'),
    ageColumn(),
    containersWide(),
    imagesWide(),
    selectorWide(),
  ],
  cells(rs, now) {
    const [names, images] = containerCells(rs.spec?.template?.spec?.containers);
    return [
      rs.metadata?.name ?? '',
      replicas(rs),
      int(rs.status?.replicas),
      int(rs.status?.readyReplicas),
      age(rs, now),
      names,
      images,
      formatLabelSelector(rs.spec?.selector),
    ];
  },
};

const statefulSets: Printer = {
  columns: [
    nameColumn(),
    column('Ready', 'string', 'Ready replicas out of desired replicas.'),
    ageColumn(),
    containersWide(),
    imagesWide(),
  ],
  cells(ss, now) {
    const [names, images] = containerCells(ss.spec?.template?.spec?.containers);
    return [
      ss.metadata?.name ?? '',
      `${int(ss.status?.readyReplicas)}/${replicas(ss)}`,
      age(ss, now),
      names,
      images,
    ];
  },
};

const daemonSets: Printer = {
  columns: [
    nameColumn(),
    column('Desired', 'integer', 'Nodes that should run the daemon pod.'),
    column('Current', 'integer', 'Nodes that run the daemon pod.'),
    column('Ready', 'integer', 'Nodes whose daemon pod is ready.'),
    column('Up-to-date', 'integer', 'Nodes that run the current pod template.'),
    column('Available', 'integer', 'Nodes whose daemon pod is available.'),
    column('Node Selector', 'string', 'Node selector of the pod template.'),
    ageColumn(),
    containersWide(),
    imagesWide(),
    selectorWide(),
  ],
  cells(ds, now) {
    const st = ds.status ?? {};
    const [names, images] = containerCells(ds.spec?.template?.spec?.containers);
    return [
      ds.metadata?.name ?? '',
      int(st.desiredNumberScheduled),
      int(st.currentNumberScheduled),
      int(st.numberReady),
      int(st.updatedNumberScheduled),
      int(st.numberAvailable),
      formatLabels(ds.spec?.template?.spec?.nodeSelector),
      age(ds, now),
      names,
      images,
      formatLabelSelector(ds.spec?.selector),
    ];
  },
};

/** "statefulset.apps/web": the lower-cased Kind.group of the controller and its name. */
function controllerName(obj: any): string {
  const ref = (obj.metadata?.ownerReferences as any[] | undefined)?.find((r) => r?.controller === true);
  if (!ref) return '<none>';
  const apiVersion: string = ref.apiVersion ?? '';
  const slash = apiVersion.indexOf('/');
  const group = slash < 0 ? '' : apiVersion.slice(0, slash);
  const kind: string = ref.kind ?? '';
  if (!kind && !group) return ref.name ?? '';
  return `${(group ? `${kind}.${group}` : kind).toLowerCase()}/${ref.name ?? ''}`;
}

const controllerRevisions: Printer = {
  columns: [
    nameColumn(),
    column('Controller', 'string', 'Object that owns the revision.'),
    column('Revision', 'string', 'Revision number of the stored state.'),
    ageColumn(),
  ],
  cells: (cr, now) => [
    cr.metadata?.name ?? '',
    controllerName(cr),
    typeof cr.revision === 'bigint' ? cr.revision : int(cr.revision),
    age(cr, now),
  ],
};

// ---------------------------------------------------------------------------
// Batch

const jobStatus = (job: any): string => {
  const conditions: any[] = job.status?.conditions ?? [];
  // The first condition of a type decides, as Kubernetes looks them up.
  const is = (type: string) => conditions.find((c) => c?.type === type)?.status === 'True';
  if (is('Complete')) return 'Complete';
  if (is('Failed')) return 'Failed';
  if (job.metadata?.deletionTimestamp) return 'Terminating';
  if (is('Suspended')) return 'Suspended';
  if (is('FailureTarget')) return 'FailureTarget';
  return 'Running';
};

const jobs: Printer = {
  columns: [
    nameColumn(),
    column('Status', 'string', 'State of the job.'),
    column('Completions', 'string', 'Succeeded pods out of the completions asked for.'),
    column('Duration', 'string', 'How long the job ran, or has been running.'),
    ageColumn(),
    containersWide(),
    imagesWide(),
    selectorWide(),
  ],
  cells(job, now) {
    const spec = job.spec ?? {};
    const st = job.status ?? {};
    const succeeded = int(st.succeeded);
    let completions: string;
    if (typeof spec.completions === 'number') completions = `${succeeded}/${spec.completions}`;
    else if (int(spec.parallelism) > 1) completions = `${succeeded}/1 of ${int(spec.parallelism)}`;
    else completions = `${succeeded}/1`;
    const start = parseTime(st.startTime);
    const end = parseTime(st.completionTime);
    const duration = start === undefined ? '' : humanDuration((end ?? now) - start);
    const [names, images] = containerCells(spec.template?.spec?.containers);
    return [
      job.metadata?.name ?? '',
      jobStatus(job),
      completions,
      duration,
      age(job, now),
      names,
      images,
      formatLabelSelector(spec.selector),
    ];
  },
};

const cronJobs: Printer = {
  columns: [
    nameColumn(),
    column('Schedule', 'string', 'Cron schedule of the jobs.'),
    column('Timezone', 'string', 'Time zone of the schedule.'),
    column('Suspend', 'boolean', 'Whether new runs are suspended.'),
    column('Active', 'integer', 'Number of running jobs.'),
    column('Last Schedule', 'string', 'Time since a job was last scheduled.'),
    ageColumn(),
    containersWide(),
    imagesWide(),
    selectorWide(),
  ],
  cells(cj, now) {
    const spec = cj.spec ?? {};
    const jobSpec = spec.jobTemplate?.spec ?? {};
    const [names, images] = containerCells(jobSpec.template?.spec?.containers);
    const last = cj.status?.lastScheduleTime;
    return [
      cj.metadata?.name ?? '',
      spec.schedule ?? '',
      spec.timeZone ?? '<none>',
      boolPtr(spec.suspend),
      cj.status?.active?.length ?? 0,
      last ? since(last, now) : '<none>',
      age(cj, now),
      names,
      images,
      formatLabelSelector(jobSpec.selector),
    ];
  },
};

// ---------------------------------------------------------------------------
// Autoscaling and policy

/** autoscaling/v1 objects carry one CPU target; view them as the v2 metrics they convert to. */
function hpaMetrics(hpa: any): { specs: any[]; statuses: any[] } {
  if (Array.isArray(hpa.spec?.metrics) || hpa.spec?.targetCPUUtilizationPercentage === undefined) {
    return { specs: hpa.spec?.metrics ?? [], statuses: hpa.status?.currentMetrics ?? [] };
  }
  const cur = hpa.status?.currentCPUUtilizationPercentage;
  return {
    specs: [
      {
        type: 'Resource',
        resource: {
          name: 'cpu',
          target: { type: 'Utilization', averageUtilization: hpa.spec.targetCPUUtilizationPercentage },
        },
      },
    ],
    statuses:
      cur === undefined
        ? []
        : [{ type: 'Resource', resource: { name: 'cpu', current: { averageUtilization: cur } } }],
  };
}

/** A `*Quantity` as Go prints it: "<nil>" when unset. */
const q = (v: unknown): string => (v === undefined || v === null ? '<nil>' : String(v));
const percent = (v: unknown): string | undefined => (typeof v === 'number' ? `${v}%` : undefined);

function formatMetric(spec: any, status: any): string {
  switch (spec.type) {
    case 'External':
    case 'Object': {
      const key = spec.type === 'External' ? 'external' : 'object';
      const target = spec[key]?.target ?? {};
      const cur = status?.[key];
      if (target.averageValue !== undefined && target.averageValue !== null) {
        const current = cur?.current?.averageValue ?? '<unknown>';
        return `${current}/${target.averageValue} (avg)`;
      }
      return `${cur ? q(cur.current?.value) : '<unknown>'}/${q(target.value)}`;
    }
    case 'Pods':
      return `${status?.pods ? q(status.pods.current?.averageValue) : '<unknown>'}/${q(spec.pods?.target?.averageValue)}`;
    case 'Resource':
    case 'ContainerResource': {
      const key = spec.type === 'Resource' ? 'resource' : 'containerResource';
      const src = spec[key] ?? {};
      const target = src.target ?? {};
      const cur = status?.[key];
      if (target.averageValue !== undefined && target.averageValue !== null) {
        return `${src.name}: ${cur ? q(cur.current?.averageValue) : '<unknown>'}/${target.averageValue}`;
      }
      const current = percent(cur?.current?.averageUtilization) ?? '<unknown>';
      return `${src.name}: ${current}/${percent(target.averageUtilization) ?? '<auto>'}`;
    }
    default:
      return '<unknown type>';
  }
}

/** "cpu: 45%/80%, memory: 1Gi/2Gi + 1 more..." as kube-apiserver summarises HPA targets. */
export function formatHPAMetrics(specs: any[], statuses: any[]): string {
  if (specs.length === 0) return '<none>';
  const list: string[] = [];
  for (let i = 0; i < specs.length; i++) list.push(formatMetric(specs[i] ?? {}, statuses[i]));
  const max = 2;
  if (list.length > max) return `${list.slice(0, max).join(', ')} + ${list.length - max} more...`;
  return list.join(', ');
}

const horizontalPodAutoscalers: Printer = {
  columns: [
    nameColumn(),
    column('Reference', 'string', 'Object the autoscaler scales.'),
    column('Targets', 'string', 'Current and target values of the metrics.'),
    column('MinPods', 'string', 'Lowest replica count.'),
    column('MaxPods', 'string', 'Highest replica count.'),
    column('Replicas', 'string', 'Current replica count.'),
    ageColumn(),
  ],
  cells(hpa, now) {
    const ref = hpa.spec?.scaleTargetRef ?? {};
    const { specs, statuses } = hpaMetrics(hpa);
    const min = hpa.spec?.minReplicas;
    return [
      hpa.metadata?.name ?? '',
      `${ref.kind ?? ''}/${ref.name ?? ''}`,
      formatHPAMetrics(specs, statuses),
      typeof min === 'number' ? String(min) : '<unset>',
      int(hpa.spec?.maxReplicas),
      int(hpa.status?.currentReplicas),
      age(hpa, now),
    ];
  },
};

const podDisruptionBudgets: Printer = {
  columns: [
    nameColumn(),
    column('Min Available', 'string', 'Pods that must stay available.'),
    column('Max Unavailable', 'string', 'Pods that may be unavailable.'),
    column('Allowed Disruptions', 'integer', 'Pods that may be disrupted now.'),
    ageColumn(),
  ],
  cells(pdb, now) {
    const spec = pdb.spec ?? {};
    return [
      pdb.metadata?.name ?? '',
      spec.minAvailable === undefined || spec.minAvailable === null ? 'N/A' : intOrString(spec.minAvailable),
      spec.maxUnavailable === undefined || spec.maxUnavailable === null
        ? 'N/A'
        : intOrString(spec.maxUnavailable),
      int(pdb.status?.disruptionsAllowed),
      age(pdb, now),
    ];
  },
};

const scales: Printer = {
  columns: [
    // Kubernetes leaves the name format off this one.
    column('Name', 'string', 'Name of the scaled object.'),
    column('Desired', 'integer', 'Replicas asked for.'),
    column('Available', 'integer', 'Replicas that exist.'),
    ageColumn(),
  ],
  cells: (s, now) => [s.metadata?.name ?? '', int(s.spec?.replicas), int(s.status?.replicas), age(s, now)],
};

export const appsPrinters: Record<string, Printer> = {
  'apps/Deployment': deployments,
  'apps/ReplicaSet': replicaSets,
  'apps/StatefulSet': statefulSets,
  'apps/DaemonSet': daemonSets,
  'apps/ControllerRevision': controllerRevisions,
  'batch/Job': jobs,
  'batch/CronJob': cronJobs,
  'autoscaling/HorizontalPodAutoscaler': horizontalPodAutoscalers,
  'autoscaling/Scale': scales,
  'policy/PodDisruptionBudget': podDisruptionBudgets,
};
