// Printers of pods and of the core kinds that carry a pod template (pod
// templates, replication controllers): the columns and cells kube-apiserver
// renders for `kubectl get pods`.
import {
  age,
  column,
  conditionStatus,
  containerCells,
  formatLabels,
  humanDuration,
  int,
  nameColumn,
  ageColumn,
  parseTime,
  wide,
  type Cell,
  type Printer,
  type TableRowCondition,
} from './printers-util';

const containersColumn = (priority: number) =>
  column('Containers', 'string', 'Names of the containers in the pod template.', { priority });
const imagesColumn = (priority: number) =>
  column('Images', 'string', 'Images of the containers in the pod template.', { priority });

// ---------------------------------------------------------------------------
// Pods

const podSucceeded: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Succeeded', message: 'The pod has completed successfully.' },
];
const podFailed: TableRowCondition[] = [
  { type: 'Completed', status: 'True', reason: 'Failed', message: 'The pod failed.' },
];

/** Latest of a running maximum and a container's last termination time. */
function laterFinish(current: number | undefined, status: any): number | undefined {
  const t = parseTime(status?.lastState?.terminated?.finishedAt);
  if (t === undefined) return current;
  return current === undefined || current < t ? t : current;
}

function terminatedReason(prefix: string, t: any): string {
  if (t.reason) return prefix + t.reason;
  if (t.signal) return `${prefix}Signal:${t.signal}`;
  return `${prefix}ExitCode:${t.exitCode ?? 0}`;
}

function podCells(pod: any, now: number): Cell[] {
  const spec = pod.spec ?? {};
  const status = pod.status ?? {};
  const phase: string = status.phase ?? '';
  let reason: string = status.reason || phase;
  let restarts = 0;
  let sidecarRestarts = 0;
  let ready = 0;
  let total: number = spec.containers?.length ?? 0;
  let lastRestart: number | undefined;
  let lastSidecarRestart: number | undefined;

  const conditions: any[] = status.conditions ?? [];
  for (const c of conditions) {
    if (c?.type === 'PodScheduled' && c.reason === 'SchedulingGated') reason = 'SchedulingGated';
  }

  // Init containers with restartPolicy Always are sidecars: they count as containers.
  const initSpecs: any[] = spec.initContainers ?? [];
  let sidecars: Set<string> | undefined;
  for (const ic of initSpecs) {
    if (ic?.restartPolicy === 'Always') {
      (sidecars ??= new Set()).add(ic.name);
      total++;
    }
  }

  let initializing = false;
  const initStatuses: any[] = status.initContainerStatuses ?? [];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    restarts += int(c.restartCount);
    lastRestart = laterFinish(lastRestart, c);
    const sidecar = sidecars?.has(c.name) ?? false;
    if (sidecar) {
      sidecarRestarts += int(c.restartCount);
      lastSidecarRestart = laterFinish(lastSidecarRestart, c);
    }
    const state = c.state ?? {};
    if (state.terminated && int(state.terminated.exitCode) === 0) continue;
    if (sidecar && c.started === true) {
      if (c.ready) ready++;
      continue;
    }
    if (state.terminated) reason = terminatedReason('Init:', state.terminated);
    else if (state.waiting?.reason && state.waiting.reason !== 'PodInitializing')
      reason = 'Init:' + state.waiting.reason;
    else reason = `Init:${i}/${initSpecs.length}`;
    initializing = true;
    break;
  }

  if (!initializing || conditionStatus(conditions, 'Initialized') === 'True') {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses: any[] = status.containerStatuses ?? [];
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      restarts += int(c.restartCount);
      lastRestart = laterFinish(lastRestart, c);
      const state = c.state ?? {};
      if (state.waiting?.reason) reason = state.waiting.reason;
      else if (state.terminated) reason = terminatedReason('', state.terminated);
      else if (c.ready && state.running) {
        hasRunning = true;
        ready++;
      }
    }
    // A pod whose last container completed but another still runs is not Completed.
    if (reason === 'Completed' && hasRunning) {
      reason = conditionStatus(conditions, 'Ready') === 'True' ? 'Running' : 'NotReady';
    }
  }

  if (pod.metadata?.deletionTimestamp) {
    if (status.reason === 'NodeLost') reason = 'Unknown';
    else if (phase !== 'Failed' && phase !== 'Succeeded') reason = 'Terminating';
  }

  const restartsCell =
    restarts !== 0 && lastRestart !== undefined
      ? `${restarts} (${humanDuration(now - lastRestart)} ago)`
      : String(restarts);

  let gates = '<none>';
  const readinessGates: any[] | undefined = spec.readinessGates;
  if (readinessGates && readinessGates.length > 0) {
    let trueGates = 0;
    for (const g of readinessGates) {
      if (conditionStatus(conditions, g?.conditionType) === 'True') trueGates++;
    }
    gates = `${trueGates}/${readinessGates.length}`;
  }

  return [
    pod.metadata?.name ?? '',
    `${ready}/${total}`,
    reason,
    restartsCell,
    age(pod, now),
    status.podIPs?.[0]?.ip || '<none>',
    spec.nodeName || '<none>',
    status.nominatedNodeName || '<none>',
    gates,
  ];
}

const pods: Printer = {
  columns: [
    nameColumn(),
    column('Ready', 'string', 'Ready containers out of all containers of the pod.'),
    column('Status', 'string', 'Summary of the state of the pod and its containers.'),
    column('Restarts', 'string', 'Container restarts, and how long ago the last one was.'),
    ageColumn(),
    wide('IP', 'string', 'IP address of the pod.'),
    wide('Node', 'string', 'Node the pod is bound to.'),
    wide('Nominated Node', 'string', 'Node the scheduler nominated for a preempting pod.'),
    wide('Readiness Gates', 'string', 'Readiness gates that are true, out of all.'),
  ],
  cells: podCells,
  conditions(pod) {
    const phase = pod.status?.phase;
    return phase === 'Succeeded' ? podSucceeded : phase === 'Failed' ? podFailed : undefined;
  },
};

const podTemplates: Printer = {
  columns: [
    nameColumn(),
    containersColumn(0),
    imagesColumn(0),
    column('Pod Labels', 'string', 'Labels of the pod template.'),
  ],
  cells(obj) {
    const [names, images] = containerCells(obj.template?.spec?.containers);
    return [obj.metadata?.name ?? '', names, images, formatLabels(obj.template?.metadata?.labels)];
  },
};

const replicationControllers: Printer = {
  columns: [
    nameColumn(),
    column('Desired', 'integer', 'Number of replicas asked for.'),
    column('Current', 'integer', 'Number of replicas that exist.'),
    column('Ready', 'integer', 'Number of ready replicas.'),
    ageColumn(),
    containersColumn(1),
    imagesColumn(1),
    wide('Selector', 'string', 'Labels of the pods the controller manages.'),
  ],
  cells(obj, now) {
    const [names, images] = containerCells(obj.spec?.template?.spec?.containers);
    return [
      obj.metadata?.name ?? '',
      int(obj.spec?.replicas ?? 1),
      int(obj.status?.replicas),
      int(obj.status?.readyReplicas),
      age(obj, now),
      names,
      images,
      formatLabels(obj.spec?.selector),
    ];
  },
};

export const podPrinters: Record<string, Printer> = {
  '/Pod': pods,
  '/PodTemplate': podTemplates,
  '/ReplicationController': replicationControllers,
};
