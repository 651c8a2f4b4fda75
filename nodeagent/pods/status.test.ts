import assert from 'node:assert/strict';
import type { ContainerRecord } from './runtime';
import { computePodStatus, podPhase, rejectedPodStatus, type ContainerView } from './status';

const T0 = Date.UTC(2025, 0, 1, 12, 0, 0);

function rec(
  name: string,
  state: ContainerRecord['state'],
  extra: Partial<ContainerRecord> = {},
): ContainerRecord {
  return {
    id: `fake://${name}-${extra.attempt ?? 0}`,
    podUID: 'uid-1',
    name,
    kind: 'regular',
    image: `${name}:1`,
    imageID: `docker.io/library/${name}@sha256:abc`,
    attempt: 0,
    state,
    createdAt: T0,
    startedAt: state === 'created' ? undefined : T0,
    ...(state === 'exited' ? { finishedAt: T0 + 5000, exitCode: 0, reason: 'Completed' } : {}),
    logPath: '/dev/null',
    ...extra,
  };
}

function view(name: string, r: ContainerRecord | undefined, o: Partial<ContainerView> = {}): ContainerView {
  return {
    spec: { name, image: `${name}:1` },
    kind: 'regular',
    current: r,
    restartCount: 0,
    ready: r?.state === 'running',
    started: r?.state === 'running',
    ...o,
  };
}

const pod = (spec: any = {}, status: any = {}) => ({
  metadata: { name: 'p', namespace: 'default', uid: 'uid-1' },
  spec: { restartPolicy: 'Always', ...spec },
  status,
});

const cond = (s: any, type: string) => s.conditions.find((c: any) => c.type === type);

describe('nodeagent/pods: pod status', () => {
  it('reports a running pod: phase, conditions, statuses, IPs', () => {
    const s = computePodStatus({
      pod: pod(),
      init: [],
      containers: [view('b', rec('b', 'running')), view('a', rec('a', 'running'))],
      podIPs: ['10.244.0.2'],
      hostIPs: ['192.168.1.5'],
      startTime: T0,
      now: T0 + 1000,
    });
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.244.0.2');
    assert.deepEqual(s.podIPs, [{ ip: '10.244.0.2' }]);
    assert.equal(s.hostIP, '192.168.1.5');
    assert.deepEqual(s.hostIPs, [{ ip: '192.168.1.5' }]);
    assert.equal(s.startTime, '2025-01-01T12:00:00Z');
    assert.deepEqual(
      s.conditions.map((c: any) => [c.type, c.status]),
      [
        ['PodReadyToStartContainers', 'True'],
        ['Initialized', 'True'],
        ['Ready', 'True'],
        ['ContainersReady', 'True'],
      ],
    );
    // Sorted by name, like the kubelet.
    assert.deepEqual(
      s.containerStatuses.map((c: any) => c.name),
      ['a', 'b'],
    );
    const a = s.containerStatuses[0];
    assert.deepEqual(a.state, { running: { startedAt: '2025-01-01T12:00:00Z' } });
    assert.deepEqual(a.lastState, {});
    assert.equal(a.containerID, 'fake://a-0');
    assert.equal(a.imageID, 'docker.io/library/a@sha256:abc');
    assert.equal(a.ready, true);
    assert.equal(a.started, true);
    assert.equal(a.restartCount, 0);
    assert.equal(s.initContainerStatuses, undefined);
  });

  it('keeps lastTransitionTime while a condition holds its status', () => {
    const earlier = '2024-12-31T00:00:00Z';
    const s = computePodStatus({
      pod: pod(
        {},
        {
          conditions: [
            { type: 'Ready', status: 'True', lastTransitionTime: earlier },
            { type: 'Initialized', status: 'False', lastTransitionTime: earlier },
          ],
        },
      ),
      init: [],
      containers: [view('a', rec('a', 'running'))],
      podIPs: [],
      hostIPs: [],
      now: T0,
    });
    assert.equal(cond(s, 'Ready').lastTransitionTime, earlier);
    assert.equal(cond(s, 'Initialized').lastTransitionTime, '2025-01-01T12:00:00Z');
  });

  it('is Pending with init containers to run, with the kubelet messages', () => {
    const init = [
      { ...view('setup', rec('setup', 'running', { kind: 'init' })), kind: 'init' as const, ready: false },
      { ...view('migrate', undefined, { waiting: { reason: 'PodInitializing' } }), kind: 'init' as const },
    ];
    const s = computePodStatus({
      pod: pod({ initContainers: [{ name: 'setup' }, { name: 'migrate' }] }),
      init,
      containers: [view('app', undefined, { waiting: { reason: 'PodInitializing' } })],
      podIPs: ['10.0.0.2'],
      hostIPs: [],
      now: T0,
    });
    assert.equal(s.phase, 'Pending');
    assert.deepEqual(cond(s, 'Initialized'), {
      type: 'Initialized',
      status: 'False',
      lastProbeTime: null,
      lastTransitionTime: '2025-01-01T12:00:00Z',
      reason: 'ContainersNotInitialized',
      message: 'containers with incomplete status: [setup migrate]',
    });
    assert.equal(cond(s, 'ContainersReady').message, 'containers with unready status: [app]');
    assert.equal(cond(s, 'Ready').reason, 'ContainersNotReady');
    assert.deepEqual(s.containerStatuses[0].state, { waiting: { reason: 'PodInitializing' } });
    assert.equal(s.initContainerStatuses.length, 2);
    assert.equal(s.initContainerStatuses[0].name, 'setup');
  });

  it('shows a crash-looping container waiting, its last run as lastState', () => {
    const dead = rec('app', 'exited', { exitCode: 1, reason: 'Error', attempt: 2 });
    const s = computePodStatus({
      pod: pod(),
      init: [],
      containers: [
        view('app', dead, {
          restartCount: 2,
          waiting: {
            reason: 'CrashLoopBackOff',
            message: 'back-off 20s restarting failed container=app pod=p_default(uid-1)',
          },
        }),
      ],
      podIPs: [],
      hostIPs: [],
      now: T0 + 10_000,
    });
    assert.equal(s.phase, 'Running');
    const c = s.containerStatuses[0];
    assert.deepEqual(c.state, {
      waiting: {
        reason: 'CrashLoopBackOff',
        message: 'back-off 20s restarting failed container=app pod=p_default(uid-1)',
      },
    });
    assert.equal(c.lastState.terminated.exitCode, 1);
    assert.equal(c.lastState.terminated.reason, 'Error');
    assert.equal(c.lastState.terminated.finishedAt, '2025-01-01T12:00:05Z');
    assert.equal(c.restartCount, 2);
  });

  it('follows restartPolicy to Succeeded and Failed (Job-style completion)', () => {
    const ok = view('a', rec('a', 'exited'));
    const bad = view('b', rec('b', 'exited', { exitCode: 3, reason: 'Error' }));
    assert.equal(podPhase(pod({ restartPolicy: 'Never' }), [], [ok], false), 'Succeeded');
    assert.equal(podPhase(pod({ restartPolicy: 'OnFailure' }), [], [ok], false), 'Succeeded');
    assert.equal(podPhase(pod({ restartPolicy: 'Never' }), [], [ok, bad], false), 'Failed');
    assert.equal(podPhase(pod({ restartPolicy: 'OnFailure' }), [], [ok, bad], false), 'Running');
    assert.equal(podPhase(pod({ restartPolicy: 'Always' }), [], [ok], false), 'Running');
    // A failed init container with restartPolicy Never fails the pod.
    const initBad = {
      ...view('i', rec('i', 'exited', { exitCode: 1, kind: 'init' })),
      kind: 'init' as const,
    };
    assert.equal(
      podPhase(pod({ restartPolicy: 'Never' }), [initBad], [view('a', undefined)], false),
      'Failed',
    );
    assert.equal(
      podPhase(pod({ restartPolicy: 'Always' }), [initBad], [view('a', undefined)], false),
      'Pending',
    );
    const s = computePodStatus({
      pod: pod({ restartPolicy: 'Never' }),
      init: [],
      containers: [ok],
      podIPs: ['10.0.0.9'],
      hostIPs: [],
      now: T0,
    });
    assert.equal(s.phase, 'Succeeded');
    assert.equal(cond(s, 'Ready').reason, 'PodCompleted');
    assert.equal(cond(s, 'ContainersReady').reason, 'PodCompleted');
    assert.equal(cond(s, 'PodReadyToStartContainers').status, 'False');
    assert.equal(s.podIP, '10.0.0.9');
  });

  it('ends a deleted pod in a terminal phase once its containers stopped', () => {
    const running = view('a', rec('a', 'running'));
    assert.equal(podPhase(pod(), [], [running], true), 'Running');
    const stopped = view('a', rec('a', 'exited'));
    const killed = view('a', rec('a', 'exited', { exitCode: 137, reason: 'Error' }));
    assert.equal(podPhase(pod(), [], [stopped], true), 'Succeeded');
    assert.equal(podPhase(pod(), [], [killed], true), 'Failed');
    assert.equal(podPhase(pod(), [], [view('a', undefined)], true), 'Failed');
  });

  it('honours readiness gates', () => {
    const base = { init: [], containers: [view('a', rec('a', 'running'))], podIPs: [], hostIPs: [], now: T0 };
    const spec = {
      readinessGates: [{ conditionType: 'example.com/lb' }, { conditionType: 'example.com/dns' }],
    };
    let s = computePodStatus({
      ...base,
      pod: pod(spec, { conditions: [{ type: 'example.com/dns', status: 'False' }] }),
    });
    assert.equal(cond(s, 'ContainersReady').status, 'True');
    assert.deepEqual(
      [cond(s, 'Ready').status, cond(s, 'Ready').reason, cond(s, 'Ready').message],
      [
        'False',
        'ReadinessGatesNotReady',
        'corresponding condition of pod readiness gate "example.com/lb" does not exist., the status of pod readiness gate "example.com/dns" is not "True", but False',
      ],
    );
    s = computePodStatus({
      ...base,
      pod: pod(spec, {
        conditions: [
          { type: 'example.com/dns', status: 'True' },
          { type: 'example.com/lb', status: 'True' },
        ],
      }),
    });
    assert.equal(cond(s, 'Ready').status, 'True');
  });

  it('treats restartable init containers (sidecars) as started, not completed', () => {
    const sidecar = {
      ...view('proxy', rec('proxy', 'running', { kind: 'init' })),
      spec: { name: 'proxy', image: 'proxy:1', restartPolicy: 'Always' },
      kind: 'init' as const,
    };
    const s = computePodStatus({
      pod: pod({ initContainers: [{ name: 'proxy', restartPolicy: 'Always' }] }),
      init: [sidecar],
      containers: [view('app', rec('app', 'running'))],
      podIPs: [],
      hostIPs: [],
      now: T0,
    });
    assert.equal(s.phase, 'Running');
    assert.equal(cond(s, 'Initialized').status, 'True');
    assert.equal(cond(s, 'Ready').status, 'True');
  });

  it('describes a rejected pod like the kubelet', () => {
    assert.deepEqual(
      rejectedPodStatus(
        'OutOfpods',
        "Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
      ),
      {
        phase: 'Failed',
        reason: 'OutOfpods',
        message:
          "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 2, capacity: 2",
      },
    );
  });
});
