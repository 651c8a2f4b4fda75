// One sync of one pod (the kubelet's syncPod and syncTerminatingPod): report a
// rejected pod; take over containers after an agent restart; run the init
// containers in order, then the containers, restarting them per the
// restartPolicy; fail a pod past its active deadline (active-deadline.ts);
// stop everything within the grace period when the pod is deleted or
// finished and send the final delete; tear down a pod gone from its source.
// When syncs run is sync-queue.ts; one container's steps are containers.ts.
import type { Clock } from '../../shared/client/clock';
import { isConflict, isNotFound } from '../../shared/client/errors';
import type { ResourceClient } from '../../shared/client/resource';
import { logger } from '../../shared/log';
import { activeDeadlineAt, DEADLINE_EXCEEDED } from './active-deadline';
import type { ContainerSetup } from './container-setup';
import type { ContainerLifecycle } from './containers';
import type { MirrorPods } from './mirrors';
import type { PodNetwork } from './network';
import type { PodEvents } from './pod-events';
import type { PodLogs } from './pod-logs';
import type { Prober } from './prober';
import { containerState, graceSeconds, isTerminalPhase, type PodRecord, type PodRecords } from './records';
import type { ContainerKind, ContainerRecord, ContainerRuntime } from './runtime';
import { markStart } from './start-trace';
import type { PodStatusReporter } from './status-reporter';
import { isSidecar, podFullName, rejectedPodStatus } from './status';

const log = logger('nodeagent/pods');

export class PodWorker {
  constructor(
    private readonly d: {
      runtime: ContainerRuntime;
      clock: Clock;
      /** Absent in standalone mode: no final delete. */
      podsClient?: ResourceClient;
      records: PodRecords;
      network: PodNetwork;
      logs: PodLogs;
      events: PodEvents;
      containers: ContainerLifecycle;
      status: PodStatusReporter;
      mirrors: MirrorPods;
      /** Volumes, env, hooks and probes when the runtime runs real processes (absent with the fake one). */
      setup?: ContainerSetup;
      prober?: Prober;
      wakeAt(rec: PodRecord, at: number): void;
    },
  ) {}

  async sync(rec: PodRecord): Promise<void> {
    if (rec.removed) return this.teardown(rec);
    if (rec.rejected) {
      await this.d.status.send(rec, rejectedPodStatus(rec.rejected.reason, rec.rejected.message));
      return;
    }
    const live = this.d.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
    // Terminal before this agent ran anything of it (e.g. a finished Job pod after a restart): nothing to do.
    if (isTerminalPhase(rec.pod.status?.phase) && !live.length && !rec.startTime) {
      rec.terminal = true;
      rec.status = rec.pod.status;
      if (rec.pod.metadata.deletionTimestamp) await this.finalDelete(rec);
      return;
    }
    if (rec.pod.metadata.deletionTimestamp) return this.terminate(rec);
    if (rec.terminal) {
      await this.d.status.send(rec, this.d.status.compute(rec, true));
      return;
    }
    await this.runPod(rec);
  }

  /**
   * After an agent restart: the pod's containers are taken over, not restarted — those the runtime
   * still has (CRI: found by their labels), else those the API reports running (fake).
   */
  private adopt(rec: PodRecord): void {
    rec.adopted = true;
    const runtime = this.d.runtime;
    const known = runtime.containers(rec.uid);
    if (known.length) return this.adoptFromRuntime(rec, known);
    if (!runtime.adoptContainer) return;
    const all: [any, ContainerKind, any[]][] = [
      [rec.pod.spec?.initContainers ?? [], 'init', rec.pod.status?.initContainerStatuses ?? []],
      [rec.pod.spec?.containers ?? [], 'regular', rec.pod.status?.containerStatuses ?? []],
    ];
    let any = false;
    for (const [specs, kind, statuses] of all) {
      for (const c of specs) {
        const st = statuses.find((s: any) => s.name === c.name);
        if (!st?.containerID?.startsWith(`${runtime.type}://`)) continue;
        const s = containerState(rec, c.name);
        s.restartCount = st.restartCount ?? 0;
        const r = runtime.adoptContainer(rec.pod, c, kind, st, this.d.logs.path(rec, c.name, s.restartCount));
        if (r) {
          s.current = r;
          any = true;
        }
      }
    }
    if (any && rec.pod.status?.startTime) rec.startTime = Date.parse(rec.pod.status.startTime);
  }

  /** The newest instance of each container is its current one, the one before it its last; attempts count restarts. */
  private adoptFromRuntime(rec: PodRecord, known: ContainerRecord[]): void {
    const specs = [...(rec.pod.spec?.initContainers ?? []), ...(rec.pod.spec?.containers ?? [])];
    for (const c of specs) {
      const s = containerState(rec, c.name);
      if (s.current) continue;
      const mine = known.filter((k) => k.name === c.name).sort((a, b) => a.attempt - b.attempt);
      if (!mine.length) continue;
      s.current = mine[mine.length - 1];
      s.last = mine.length > 1 ? mine[mine.length - 2] : undefined;
      s.restartCount = s.current.attempt;
      this.d.logs.link(rec, c.name, s.current);
    }
    const started = rec.pod.status?.startTime ? Date.parse(rec.pod.status.startTime) : undefined;
    rec.startTime ??= started ?? Math.min(...known.map((k) => k.createdAt));
  }

  private async runPod(rec: PodRecord): Promise<void> {
    const { containers, status } = this.d;
    if (!rec.adopted) this.adopt(rec);
    rec.startTime ??= this.d.clock.now();
    this.enforceActiveDeadline(rec);
    if (!rec.evicted) {
      if (!(await this.runContainers(rec))) return;
      this.d.prober?.sync(rec);
    }
    let next = status.compute(rec, false);
    if (isTerminalPhase(next.phase)) {
      // Finished (restartPolicy Never / OnFailure, a failed init container, evicted): stop what still runs.
      const live = this.d.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
      if (live.length) {
        for (const c of live) containers.stop(rec, c, graceSeconds(rec));
        await status.send(rec, next);
        return;
      }
      rec.terminal = true;
      this.d.prober?.forget(rec.uid);
      await this.d.network.release(rec);
      next = status.compute(rec, true);
      // Nothing runs any more: its volumes go (tmpfs memory freed), as the kubelet's volume manager does.
      await this.d.setup?.releaseVolumes(rec);
    }
    await status.send(rec, next);
  }

  /**
   * The kubelet's active deadline handler, on every sync (so an update of the field counts): evicts
   * the pod once the deadline passed, else wakes it then.
   */
  private enforceActiveDeadline(rec: PodRecord): void {
    if (rec.evicted) return;
    const at = activeDeadlineAt(rec.pod, rec.startTime);
    if (at === undefined) return;
    if (this.d.clock.now() < at) return this.d.wakeAt(rec, at);
    rec.evicted = DEADLINE_EXCEEDED;
    this.d.events.emit(rec, undefined, 'Normal', DEADLINE_EXCEEDED.reason, 'Kill', DEADLINE_EXCEEDED.message);
  }

  /**
   * The sandbox, the volumes, then the init containers in order and the containers, (re)started per
   * the restart policy; false when the pod must wait (its status already sent).
   */
  private async runContainers(rec: PodRecord): Promise<boolean> {
    const pod = rec.pod;
    const { containers, status } = this.d;
    markStart(rec, 'sync');
    // kubelet mounts the volumes, then makes the sandbox. Neither needs the other (a first mount sees
    // no pod IP either way), so both at once: the volumes' API reads (TokenRequest, ConfigMap) and
    // mounts were 0.5-1 s of a pod's start when 30 started at once, after a sandbox as long.
    const [sandbox, mounted] = await Promise.all([
      this.d.network.ensure(rec).finally(() => markStart(rec, 'sandbox')),
      (this.d.setup?.volumesReady(rec) ?? Promise.resolve(true)).finally(() => markStart(rec, 'volumes')),
    ]);
    // Until its volumes are in place the pod shows no IP, as a kubelet pod without a sandbox yet
    // (status-reporter.ts).
    rec.volumesPending = !mounted;
    if (sandbox !== 'ready') {
      // The kubelet's "network is not ready" or a failed sandbox: containers wait in ContainerCreating.
      this.d.wakeAt(rec, this.d.clock.now() + (sandbox === 'waiting' ? 1000 : 10_000));
      await status.send(rec, status.compute(rec, false));
      return false;
    }
    if (!mounted) {
      // kubelet's volume manager: the containers wait in ContainerCreating while a volume fails to mount.
      this.d.wakeAt(rec, this.d.clock.now() + this.d.setup!.volumeRetryDelay(rec));
      await status.send(rec, status.compute(rec, false));
      return false;
    }
    const policy = rec.pod.spec?.restartPolicy ?? 'Always';
    let initDone = true;
    let initFailed = false;
    for (const c of pod.spec?.initContainers ?? []) {
      const s = containerState(rec, c.name);
      const sidecar = isSidecar(c);
      const cur = s.current;
      if (cur?.state === 'running' || cur?.state === 'created') {
        // A sidecar with a startup probe holds back the next init containers until it passed.
        if (sidecar && (!this.d.prober || this.d.prober.started(rec, c))) continue;
        initDone = false;
        break;
      }
      if (cur?.state === 'exited') {
        if (!sidecar && cur.exitCode === 0) continue;
        if (!sidecar && policy === 'Never') {
          initFailed = true;
          initDone = false;
          break;
        }
        const restarted = await containers.restartWithBackoff(rec, c, 'init', s);
        if (!restarted || !sidecar) {
          initDone = false;
          break;
        }
        continue;
      }
      if (!(await containers.start(rec, c, 'init', s))) {
        initDone = false;
        break;
      }
      if (!sidecar || (this.d.prober && !this.d.prober.started(rec, c))) {
        initDone = false;
        break;
      }
    }
    if (initDone && !initFailed) {
      for (const c of pod.spec?.containers ?? []) {
        const s = containerState(rec, c.name);
        const cur = s.current;
        if (!cur) {
          await containers.start(rec, c, 'regular', s);
          continue;
        }
        if (cur.state === 'running' && cur.image !== c.image && !s.specChanged) {
          // The container's definition changed (a new image): restart it.
          s.specChanged = true;
          containers.stop(
            rec,
            cur,
            graceSeconds(rec),
            `Container ${c.name} definition changed, will be restarted`,
          );
          continue;
        }
        if (cur.state !== 'exited') continue;
        if (s.specChanged) {
          s.specChanged = false;
          s.last = cur;
          s.restartCount++;
          s.current = undefined;
          await containers.start(rec, c, 'regular', s);
          continue;
        }
        const restart = policy === 'Always' || (policy === 'OnFailure' && cur.exitCode !== 0);
        if (restart) await containers.restartWithBackoff(rec, c, 'regular', s);
      }
    }
    return true;
  }

  /** Graceful deletion: stop every container within the grace period, report, then the final delete. */
  private async terminate(rec: PodRecord): Promise<void> {
    const grace = graceSeconds(rec);
    const now = this.d.clock.now();
    const deadline = now + grace * 1000;
    const live = this.d.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
    if (live.length) {
      // A later delete may shorten the grace period: the earlier deadline wins.
      const first = rec.killDeadline === undefined;
      if (first || deadline < rec.killDeadline!) {
        rec.killDeadline = deadline;
        const left = Math.max(0, (deadline - now) / 1000);
        for (const c of live) this.d.containers.stop(rec, c, left);
      }
      await this.d.status.send(rec, this.d.status.compute(rec, true));
      return;
    }
    rec.terminal = true;
    this.d.prober?.forget(rec.uid);
    await this.d.network.release(rec);
    const final = this.d.status.compute(rec, true);
    await this.d.setup?.releaseVolumes(rec);
    await this.d.status.send(rec, final);
    if (rec.source === 'api') await this.finalDelete(rec);
  }

  /** The kubelet's final delete: grace 0 and the uid as precondition, once the containers are gone. */
  private async finalDelete(rec: PodRecord): Promise<void> {
    if (rec.finalDeleteSent || !this.d.podsClient) return;
    rec.finalDeleteSent = true;
    try {
      await this.d.podsClient.namespace(rec.pod.metadata.namespace!).delete(rec.pod.metadata.name!, {
        gracePeriodSeconds: 0,
        preconditions: { uid: rec.uid },
      });
      log.info('pod deleted', { pod: podFullName(rec.pod) });
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) return;
      rec.finalDeleteSent = false;
      throw err;
    }
  }

  /** Gone from its source: stop what runs, give back the address, forget the pod. */
  private async teardown(rec: PodRecord): Promise<void> {
    const runtime = this.d.runtime;
    const live = runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
    const grace = rec.source === 'api' ? 0 : graceSeconds(rec);
    await Promise.all(
      live.map((c) => {
        this.d.containers.stop(rec, c, grace);
        return runtime.stopContainer(c.id, grace);
      }),
    );
    for (const c of runtime.containers(rec.uid)) await runtime.removeContainer(c.id);
    for (const t of rec.timers) t.cancel();
    this.d.prober?.forget(rec.uid);
    await this.d.setup?.tearDown(rec);
    await this.d.network.remove(rec);
    this.d.containers.forget(rec);
    this.d.records.delete(rec.uid);
    await this.d.logs.remove(rec);
    if (rec.source !== 'api') void this.d.mirrors.sync();
    log.v(2)?.info('pod forgotten', { pod: podFullName(rec.pod) });
  }
}
