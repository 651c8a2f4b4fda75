// The pod workers with the fake runtime and a fake clock, in standalone mode
// (static pods, no apiserver): what the agent would report, without waiting.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { FakeClock } from '../../shared/client/clock';
import { FakeRecorder } from '../../shared/events';
import { PodManager } from './manager';
import { LogLookupError } from './pod-logs';
import { FakeRuntime } from './runtime-fake';
import { staticPod } from './static';

describe('nodeagent/pods: pod workers (fake runtime)', () => {
  let dir: string;
  let clock: FakeClock;
  let recorder: FakeRecorder;
  let runtime: FakeRuntime;
  let mgr: PodManager;

  const make = (maxPods = 110) => {
    runtime = new FakeRuntime({ clock, logRotation: { maxSizeBytes: 1 << 20, maxFiles: 3 } });
    mgr = new PodManager({
      nodeName: 'n1',
      maxPods,
      runtime,
      recorder,
      logsDir: join(dir, 'logs'),
      clock,
      nodeIPs: () => ['192.168.0.10'],
      nodeUID: () => undefined,
      podCIDR: () => '10.244.0.0/24',
    });
  };

  const pod = (name: string, spec: any, annotations: Record<string, string> = {}) =>
    staticPod(
      { apiVersion: 'v1', kind: 'Pod', metadata: { name, annotations }, spec },
      { nodeName: 'n1', source: 'file', location: `/m/${name}.yaml`, now: clock.now() },
    );

  const statusOf = (name: string): any =>
    mgr.runningPods().find((p) => p.metadata.name === `${name}-n1`)?.status;
  const settle = async () => {
    for (let i = 0; i < 5; i++) await clock.advance(0);
  };

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-pods-'));
    clock = new FakeClock(Date.UTC(2025, 0, 1));
    recorder = new FakeRecorder();
    make();
  });
  afterEach(async () => {
    await mgr.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('runs init containers to completion, then the containers; events and logs', async () => {
    mgr.setStaticPods('file', [
      pod('web', {
        initContainers: [{ name: 'init', image: 'busybox:1.36' }],
        containers: [{ name: 'nginx', image: 'nginx:1.25' }],
      }),
    ]);
    mgr.markSynced();
    await settle();
    const s = statusOf('web');
    assert.equal(s.phase, 'Running');
    assert.equal(s.podIP, '10.244.0.2');
    assert.equal(s.hostIP, '192.168.0.10');
    assert.equal(s.initContainerStatuses[0].state.terminated.reason, 'Completed');
    assert.ok(s.containerStatuses[0].state.running);
    assert.match(s.containerStatuses[0].containerID, /^fake:\/\/[0-9a-f]{64}$/);
    assert.equal(s.conditions.find((c: any) => c.type === 'Ready').status, 'True');
    assert.deepEqual(recorder.events, [
      'Normal Pulling Pulling image "busybox:1.36"',
      'Normal Pulled Successfully pulled image "busybox:1.36" in 0s (0s including waiting). Image size: 76546048 bytes.',
      'Normal Created Created container: init',
      'Normal Started Started container init',
      'Normal Pulling Pulling image "nginx:1.25"',
      'Normal Pulled Successfully pulled image "nginx:1.25" in 0s (0s including waiting). Image size: 187695104 bytes.',
      'Normal Created Created container: nginx',
      'Normal Started Started container nginx',
    ]);
    const target = mgr.logTarget('default', 'web-n1', 'nginx', false);
    assert.match(readFileSync(target.path, 'utf8'), /stdout F fake container nginx started/);
    assert.ok(target.running());
    assert.throws(
      () => mgr.logTarget('default', 'nope', 'nginx', false),
      (e: LogLookupError) => e.code === 404 && e.message === 'pod "nope" does not exist',
    );
    assert.throws(
      () => mgr.logTarget('default', 'web-n1', 'x', false),
      /container "x" not found in pod "web-n1"/,
    );
    assert.throws(
      () => mgr.logTarget('default', 'web-n1', 'nginx', true),
      /previous terminated container "nginx" in pod "web-n1" not found/,
    );
  });

  it('completes Job-style pods told to exit (restartPolicy Never): Succeeded or Failed', async () => {
    mgr.setStaticPods('file', [
      pod(
        'ok',
        { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] },
        { 'tkube.io/fake-run-seconds': '2' },
      ),
      pod(
        'bad',
        { restartPolicy: 'Never', containers: [{ name: 'c', image: 'x:1' }] },
        { 'tkube.io/fake-exit-code': '3', 'tkube.io/fake-run-seconds': '1' },
      ),
    ]);
    mgr.markSynced();
    await settle();
    assert.equal(statusOf('ok').phase, 'Running');
    await clock.advance(1000);
    await settle();
    assert.equal(statusOf('bad').phase, 'Failed');
    assert.equal(statusOf('bad').containerStatuses[0].state.terminated.exitCode, 3);
    assert.equal(statusOf('bad').containerStatuses[0].state.terminated.reason, 'Error');
    await clock.advance(1000);
    await settle();
    const ok = statusOf('ok');
    assert.equal(ok.phase, 'Succeeded');
    assert.equal(ok.conditions.find((c: any) => c.type === 'Ready').reason, 'PodCompleted');
    assert.equal(ok.podIP, '10.244.0.2', 'the address stays in the status of a finished pod');
  });

  it('restarts exited containers (restartPolicy Always) with the kubelet backoff', async () => {
    mgr.setStaticPods('file', [
      pod(
        'crash',
        { containers: [{ name: 'c', image: 'x:1' }] },
        { 'tkube.io/fake-exit-code': '1', 'tkube.io/fake-run-seconds': '1' },
      ),
    ]);
    mgr.markSynced();
    await settle();
    await clock.advance(1000); // exits, restarted at once
    await settle();
    let c = statusOf('crash').containerStatuses[0];
    assert.equal(c.restartCount, 1);
    assert.ok(c.state.running);
    assert.equal(c.lastState.terminated.exitCode, 1);
    await clock.advance(1000); // exits again: back-off 10s
    await settle();
    c = statusOf('crash').containerStatuses[0];
    assert.equal(c.state.waiting.reason, 'CrashLoopBackOff');
    assert.match(
      c.state.waiting.message,
      /^back-off 10s restarting failed container=c pod=crash-n1_default\(/,
    );
    assert.ok(
      recorder.events.some((e) =>
        /^Warning BackOff Back-off restarting failed container c in pod crash-n1_default/.test(e),
      ),
    );
    await clock.advance(9000);
    await settle();
    assert.equal(statusOf('crash').containerStatuses[0].restartCount, 1);
    await clock.advance(1000);
    await settle();
    c = statusOf('crash').containerStatuses[0];
    assert.equal(c.restartCount, 2);
    assert.ok(c.state.running);
    await clock.advance(1000); // exits: back-off 20s now
    await settle();
    assert.match(statusOf('crash').containerStatuses[0].state.waiting.message, /^back-off 20s /);
    // The previous instance's log is there for --previous.
    assert.match(
      readFileSync(mgr.logTarget('default', 'crash-n1', 'c', true).path, 'utf8'),
      /exited with code 1/,
    );
  });

  it('fails a running pod once an activeDeadlineSeconds set by an update passes (DeadlineExceeded)', async () => {
    const apiPod = (spec: any = {}) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'deadline',
        namespace: 'default',
        uid: 'uid-deadline',
        annotations: { 'tkube.io/fake-stop-seconds': '2' },
      },
      spec: {
        nodeName: 'n1',
        terminationGracePeriodSeconds: 5,
        containers: [{ name: 'c', image: 'x:1' }],
        ...spec,
      },
    });
    const status = () => mgr.runningPods().find((p) => p.metadata.name === 'deadline')?.status;
    mgr.apiPodUpdated(apiPod());
    mgr.markSynced();
    await settle();
    assert.equal(status().phase, 'Running');
    await clock.advance(10_000);
    // Running for 10 s: a deadline of 30 s from its start passes in 20 s.
    mgr.apiPodUpdated(apiPod({ activeDeadlineSeconds: 30 }));
    await settle();
    assert.equal(status().phase, 'Running');
    await clock.advance(19_000);
    await settle();
    assert.equal(status().phase, 'Running');
    await clock.advance(1000);
    await settle();
    // Failed at once, its container killed within the grace period.
    let s = status();
    assert.equal(s.phase, 'Failed');
    assert.equal(s.reason, 'DeadlineExceeded');
    assert.equal(s.message, 'Pod was active on the node longer than the specified deadline');
    assert.ok(s.containerStatuses[0].state.running, 'still stopping');
    assert.ok(
      recorder.events.includes(
        'Normal DeadlineExceeded Pod was active on the node longer than the specified deadline',
      ),
    );
    assert.ok(recorder.events.includes('Normal Killing Stopping container c'));
    await clock.advance(2000);
    await settle();
    s = status();
    assert.equal(s.phase, 'Failed');
    assert.equal(s.reason, 'DeadlineExceeded');
    assert.ok(s.containerStatuses[0].state.terminated, 'the container is not restarted');
    assert.equal(runtime.containers('uid-deadline').filter((c) => c.state !== 'exited').length, 0);
    assert.equal(s.conditions.find((c: any) => c.type === 'Ready').reason, 'PodFailed');
  });

  it('rejects pods beyond --max-pods with OutOfpods', async () => {
    await mgr.stop();
    make(1);
    mgr.setStaticPods('file', [
      pod('a', { containers: [{ name: 'c', image: 'x:1' }] }),
      pod('b', { containers: [{ name: 'c', image: 'x:1' }] }),
    ]);
    mgr.markSynced();
    await settle();
    const phases = ['a', 'b'].map((n) => statusOf(n)?.phase).sort();
    assert.deepEqual(phases, ['Failed', 'Running']);
    const rejected = ['a', 'b'].map(statusOf).find((s) => s.phase === 'Failed');
    assert.equal(rejected.reason, 'OutOfpods');
    assert.equal(
      rejected.message,
      "Pod was rejected: Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
    );
    assert.ok(
      recorder.events.includes(
        "Warning OutOfpods Node didn't have enough resource: pods, requested: 1, used: 1, capacity: 1",
      ),
    );
  });

  it('stops a removed static pod within its grace period and forgets it', async () => {
    mgr.setStaticPods('file', [
      pod(
        'slow',
        { terminationGracePeriodSeconds: 5, containers: [{ name: 'c', image: 'x:1' }] },
        { 'tkube.io/fake-stop-seconds': '60' },
      ),
    ]);
    mgr.markSynced();
    await settle();
    assert.equal(statusOf('slow').phase, 'Running');
    const path = mgr.logTarget('default', 'slow-n1', 'c', false).path;
    const log = readFileSync(path, 'utf8');
    const uid = mgr.records()[0].uid;
    mgr.setStaticPods('file', []);
    await settle();
    assert.ok(recorder.events.includes('Normal Killing Stopping container c'));
    assert.ok(log.length > 0);
    await clock.advance(4000);
    await settle();
    assert.equal(runtime.containers(uid).filter((c) => c.state === 'running').length, 1, 'still stopping');
    await clock.advance(1000);
    await settle();
    assert.equal(runtime.containers(uid).length, 0);
    assert.equal(mgr.runningPods().length, 0);
    assert.match(log, /fake container c started/);
  });
});
