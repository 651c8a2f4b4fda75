// The pod status the agent reports, computed like the kubelet's
// generateAPIPodStatus: container statuses from what the runtime has, the
// phase (getPhase), and the conditions the kubelet owns
// (PodReadyToStartContainers, Initialized, Ready, ContainersReady) with its
// reasons and messages; readiness gates are honoured, lastTransitionTime is
// kept while a condition's status stays the same.
import { rfc3339 } from '../status/node';
import type { ContainerRecord } from './runtime';
import { compareKeys } from '../../shared/codec/protobuf-wire';

/** What the pod worker knows of one container of the pod spec. */
export interface ContainerView {
  spec: any;
  kind: 'init' | 'regular';
  /** The latest instance. */
  current?: ContainerRecord;
  /** The instance before it (lastState), when the container restarted. */
  last?: ContainerRecord;
  restartCount: number;
  /** Why there is no running instance (ContainerCreating, PodInitializing, CrashLoopBackOff ...). */
  waiting?: { reason: string; message?: string };
  ready: boolean;
  started: boolean;
}

export interface PodStatusInput {
  /** The pod as the API has it (its status holds conditions others own, and transition times). */
  pod: any;
  init: ContainerView[];
  containers: ContainerView[];
  podIPs: string[];
  hostIPs: string[];
  startTime?: number;
  /** The pod is being terminated (deleted) or was told to stop: the phase becomes terminal once all stopped. */
  terminating?: boolean;
  /** The agent evicted the pod (its active deadline passed): Failed at once, with this reason and message. */
  evicted?: { reason: string; message: string };
  now: number;
}

/** Restartable init containers (native sidecars). */
export const isSidecar = (c: any) => c?.restartPolicy === 'Always';

/** Go's %s of a []string: "[a b]". */
const goList = (xs: string[]) => `[${xs.join(' ')}]`;

function stateOf(r: ContainerRecord | undefined, waiting: ContainerView['waiting']): any {
  if (!r || r.state === 'created') {
    return {
      waiting: {
        reason: waiting?.reason ?? 'ContainerCreating',
        ...(waiting?.message ? { message: waiting.message } : {}),
      },
    };
  }
  if (r.state === 'running') return { running: { startedAt: rfc3339(r.startedAt ?? r.createdAt) } };
  return terminatedState(r);
}

function terminatedState(r: ContainerRecord): any {
  return {
    terminated: {
      exitCode: r.exitCode ?? 0,
      reason: r.reason ?? ((r.exitCode ?? 0) === 0 ? 'Completed' : 'Error'),
      ...(r.message ? { message: r.message } : {}),
      startedAt: r.startedAt ? rfc3339(r.startedAt) : null,
      finishedAt: rfc3339(r.finishedAt ?? r.startedAt ?? r.createdAt),
      containerID: r.id,
    },
  };
}

export function containerStatus(v: ContainerView): any {
  const r = v.current;
  // A container waiting to be restarted shows its last instance as lastState.
  const waitingForRestart = r?.state === 'exited' && v.waiting;
  const state = waitingForRestart
    ? {
        waiting: {
          reason: v.waiting!.reason,
          ...(v.waiting!.message ? { message: v.waiting!.message } : {}),
        },
      }
    : stateOf(r, v.waiting);
  const lastRec = waitingForRestart ? r : v.last;
  return {
    name: v.spec.name,
    state,
    lastState: lastRec && lastRec.state === 'exited' ? terminatedState(lastRec) : {},
    ready: v.ready,
    restartCount: v.restartCount,
    image: v.spec.image,
    imageID: r?.imageID ?? '',
    ...(r ? { containerID: r.id } : {}),
    started: v.started,
  };
}

/** kubelet's getPhase. */
export function podPhase(
  pod: any,
  init: ContainerView[],
  containers: ContainerView[],
  terminating: boolean,
): string {
  const policy = pod.spec?.restartPolicy ?? 'Always';
  let pendingInit = 0;
  let failedInit = 0;
  for (const v of init) {
    const r = v.current;
    if (isSidecar(v.spec)) {
      if (!(r?.state === 'running' && v.started)) pendingInit++;
      continue;
    }
    if (r?.state === 'exited') {
      if (r.exitCode === 0) continue;
      failedInit++;
      continue;
    }
    pendingInit++;
  }
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const v of containers) {
    const r = v.current;
    if (r?.state === 'running') running++;
    else if (r?.state === 'exited') {
      stopped++;
      if (r.exitCode === 0) succeeded++;
    } else waiting++;
  }
  if (failedInit > 0 && policy === 'Never') return 'Failed';
  if (terminating) {
    if (running > 0 || init.some((v) => v.current?.state === 'running')) return 'Running';
    if (stopped > 0 && stopped === succeeded && waiting === 0) return 'Succeeded';
    return 'Failed';
  }
  if (pendingInit > 0 || failedInit > 0) return 'Pending';
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    if (policy === 'Always') return 'Running';
    if (stopped === succeeded) return 'Succeeded';
    if (policy === 'Never') return 'Failed';
    return 'Running';
  }
  return 'Pending';
}

interface Cond {
  type: string;
  status: 'True' | 'False';
  reason?: string;
  message?: string;
}

function initializedCondition(init: ContainerView[], phase: string): Cond {
  if (!init.length) return { type: 'Initialized', status: 'True' };
  const incomplete: string[] = [];
  for (const v of init) {
    if (isSidecar(v.spec)) {
      if (!v.started) incomplete.push(v.spec.name);
      continue;
    }
    if (!(v.current?.state === 'exited' && v.current.exitCode === 0)) incomplete.push(v.spec.name);
  }
  if (phase === 'Succeeded') return { type: 'Initialized', status: 'True', reason: 'PodCompleted' };
  if (!incomplete.length) return { type: 'Initialized', status: 'True' };
  return {
    type: 'Initialized',
    status: 'False',
    reason: 'ContainersNotInitialized',
    message: `containers with incomplete status: ${goList(incomplete)}`,
  };
}

function containersReadyCondition(init: ContainerView[], containers: ContainerView[], phase: string): Cond {
  if (phase === 'Succeeded') return { type: 'ContainersReady', status: 'False', reason: 'PodCompleted' };
  if (phase === 'Failed') return { type: 'ContainersReady', status: 'False', reason: 'PodFailed' };
  const unready = [...init.filter((v) => isSidecar(v.spec)), ...containers]
    .filter((v) => !v.ready)
    .map((v) => v.spec.name);
  if (unready.length)
    return {
      type: 'ContainersReady',
      status: 'False',
      reason: 'ContainersNotReady',
      message: `containers with unready status: ${goList(unready)}`,
    };
  return { type: 'ContainersReady', status: 'True' };
}

function readyCondition(pod: any, containersReady: Cond): Cond {
  if (containersReady.status !== 'True') return { ...containersReady, type: 'Ready' };
  const existing: any[] = pod.status?.conditions ?? [];
  const msgs: string[] = [];
  for (const g of pod.spec?.readinessGates ?? []) {
    const c = existing.find((x) => x.type === g.conditionType);
    if (!c) msgs.push(`corresponding condition of pod readiness gate "${g.conditionType}" does not exist.`);
    else if (c.status !== 'True')
      msgs.push(`the status of pod readiness gate "${g.conditionType}" is not "True", but ${c.status}`);
  }
  if (msgs.length)
    return { type: 'Ready', status: 'False', reason: 'ReadinessGatesNotReady', message: msgs.join(', ') };
  return { type: 'Ready', status: 'True' };
}

/** The kubelet-owned conditions, with lastTransitionTime kept from the pod's current ones when unchanged. */
export function podConditions(
  pod: any,
  init: ContainerView[],
  containers: ContainerView[],
  phase: string,
  sandboxReady: boolean,
  now: number,
): any[] {
  const containersReady = containersReadyCondition(init, containers, phase);
  const conds: Cond[] = [
    { type: 'PodReadyToStartContainers', status: sandboxReady ? 'True' : 'False' },
    initializedCondition(init, phase),
    readyCondition(pod, containersReady),
    containersReady,
  ];
  const prev = new Map<string, any>((pod.status?.conditions ?? []).map((c: any) => [c.type, c]));
  return conds.map((c) => {
    const old = prev.get(c.type);
    return {
      type: c.type,
      status: c.status,
      lastProbeTime: null,
      lastTransitionTime:
        old && old.status === c.status && old.lastTransitionTime ? old.lastTransitionTime : rfc3339(now),
      ...(c.reason ? { reason: c.reason } : {}),
      ...(c.message ? { message: c.message } : {}),
    };
  });
}

/** The status the agent sends for a pod it runs. */
export function computePodStatus(i: PodStatusInput): any {
  // As kubelet's generateAPIPodStatus: an eviction overrides the phase even while containers still stop.
  const phase = i.evicted ? 'Failed' : podPhase(i.pod, i.init, i.containers, !!i.terminating);
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const sandboxReady = !terminal && !i.terminating;
  const status: any = {
    phase,
    conditions: podConditions(i.pod, i.init, i.containers, phase, sandboxReady, i.now),
    hostIP: i.hostIPs[0] ?? '',
    hostIPs: i.hostIPs.map((ip) => ({ ip })),
    ...(i.podIPs.length ? { podIP: i.podIPs[0], podIPs: i.podIPs.map((ip) => ({ ip })) } : {}),
    ...(i.startTime !== undefined ? { startTime: rfc3339(i.startTime) } : {}),
    containerStatuses: i.containers.map(containerStatus).sort((a, b) => compareKeys(a.name, b.name)),
  };
  if (i.init.length) status.initContainerStatuses = i.init.map(containerStatus);
  if (i.evicted) Object.assign(status, { reason: i.evicted.reason, message: i.evicted.message });
  return status;
}

/** The status of a pod the agent refused to run (max pods): Failed, with the kubelet's reason. */
export function rejectedPodStatus(reason: string, message: string): any {
  return { phase: 'Failed', reason, message: `Pod was rejected: ${message}` };
}

/** The pod's full name as the kubelet writes it in messages: "<name>_<namespace>(<uid>)". */
export function podFullName(pod: any): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}
