// One container's steps within a pod sync: pull its image (per the pull
// policy), create and start it; restart it after it exited, with the
// kubelet's restart backoff (CrashLoopBackOff while waiting); ask it to stop.
// Each step records the event the kubelet records.
import type { Clock } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import { formatDuration } from '../../shared/options/duration';
import type { ContainerSetup } from './container-setup';
import { ContainerConfigError, expandCommandAndArgs } from './env';
import type { PodEvents } from './pod-events';
import type { PodLogs } from './pod-logs';
import { containerState, type ContainerState, type PodRecord } from './records';
import type { ContainerConfig, ContainerKind, ContainerRecord, ContainerRuntime } from './runtime';
import { markStart } from './start-trace';
import { podFullName } from './status';

const log = logger('nodeagent/pods');

/** The kubelet's container restart backoff: 10 s doubling to 5 min, forgotten after 10 min. */
export const BACKOFF = { initialMs: 10_000, maxMs: 300_000 };

/** When a container that could not be configured (CreateContainerConfigError) is tried again. */
export const CONFIG_RETRY_MS = 10_000;

/** The image pull policy, defaulted like the API does: Always for :latest or no tag, else IfNotPresent. */
function pullPolicy(c: any): string {
  if (c.imagePullPolicy) return c.imagePullPolicy;
  const image: string = c.image ?? '';
  const slash = image.lastIndexOf('/');
  const tagged = image.lastIndexOf(':') > slash || image.includes('@');
  return !tagged || image.endsWith(':latest') ? 'Always' : 'IfNotPresent';
}

export class ContainerLifecycle {
  /** Per pod uid/container: the current backoff and when it was last lengthened. */
  private readonly backoffs = new Map<string, { durationMs: number; lastUpdate: number }>();
  /** Per pod uid/container: the image pull backoff after a failed pull. */
  private readonly pullBackoffs = new Map<string, { ms: number; until: number }>();

  constructor(
    private readonly d: {
      runtime: ContainerRuntime;
      clock: Clock;
      events: PodEvents;
      logs: PodLogs;
      /** Env, mounts and hooks (a runtime that runs real processes); absent: the fake runtime's plain containers. */
      setup?: ContainerSetup;
      /** Sync the pod again at `at` (when the backoff ends). */
      wakeAt(rec: PodRecord, at: number): void;
    },
  ) {}

  /** Pull (per the pull policy), create and start one container; false when it could not start. */
  async start(rec: PodRecord, c: any, kind: ContainerKind, s: ContainerState): Promise<boolean> {
    const event = this.d.events;
    const policy = pullPolicy(c);
    let present = this.d.runtime.hasImage(c.image);
    // Imported since the list was read (tkube image load)? kubelet asks the runtime every time.
    if (!present && policy !== 'Always' && this.d.runtime.refreshImages) {
      await this.d.runtime.refreshImages();
      present = this.d.runtime.hasImage(c.image);
    }
    if (policy === 'Never' && !present) {
      const message = `Container image "${c.image}" is not present with pull policy of Never`;
      s.waiting = { reason: 'ErrImageNeverPull', message };
      event.emit(rec, c, 'Warning', 'ErrImageNeverPull', 'Pull', message, kind);
      return false;
    }
    if (policy === 'IfNotPresent' && present) {
      event.emit(
        rec,
        c,
        'Normal',
        'Pulled',
        'Pull',
        `Container image "${c.image}" already present on machine`,
        kind,
      );
    } else {
      const key = `${rec.uid}/${c.name}`;
      const backoff = this.pullBackoffs.get(key);
      if (backoff && this.d.clock.now() < backoff.until) {
        s.waiting = { reason: 'ImagePullBackOff', message: `Back-off pulling image "${c.image}"` };
        event.emit(rec, c, 'Normal', 'BackOff', 'Pull', `Back-off pulling image "${c.image}"`, kind);
        this.d.wakeAt(rec, backoff.until);
        return false;
      }
      event.emit(rec, c, 'Normal', 'Pulling', 'Pull', `Pulling image "${c.image}"`, kind);
      let r: Awaited<ReturnType<ContainerRuntime['pullImage']>>;
      try {
        r = await this.d.runtime.pullImage(c.image, await this.d.setup?.pullCredentials(rec));
      } catch (err) {
        // kubelet's ErrImagePull, then ImagePullBackOff: 10 s doubling to 5 min between attempts.
        const ms = Math.min(backoff ? backoff.ms * 2 : BACKOFF.initialMs, BACKOFF.maxMs);
        this.pullBackoffs.set(key, { ms, until: this.d.clock.now() + ms });
        const message = `Failed to pull image "${c.image}": ${(err as Error).message}`;
        s.waiting = { reason: 'ErrImagePull', message };
        event.emit(rec, c, 'Warning', 'Failed', 'Pull', message, kind);
        event.emit(rec, c, 'Warning', 'Failed', 'Pull', 'Error: ErrImagePull', kind);
        this.d.wakeAt(rec, this.d.clock.now() + ms);
        return false;
      }
      this.pullBackoffs.delete(key);
      const took = formatDuration(r.durationMs);
      event.emit(
        rec,
        c,
        'Normal',
        'Pulled',
        'Pull',
        `Successfully pulled image "${c.image}" in ${took} (${took} including waiting). Image size: ${r.sizeBytes} bytes.`,
        kind,
      );
    }
    markStart(rec, 'image');
    let config: ContainerConfig | undefined;
    if (this.d.setup) {
      try {
        config = await this.d.setup.config(rec, c, s.restartCount);
      } catch (err) {
        if (!(err instanceof ContainerConfigError)) throw err;
        // kubelet's CreateContainerConfigError: tried again on a later sync.
        s.waiting = { reason: 'CreateContainerConfigError', message: err.message };
        event.emit(rec, c, 'Warning', 'Failed', 'Create', `Error: ${err.message}`, kind);
        this.d.wakeAt(rec, this.d.clock.now() + CONFIG_RETRY_MS);
        return false;
      }
    }
    markStart(rec, 'config');
    const path = this.d.logs.path(rec, c.name, s.restartCount);
    // The runtime gets command and args with $(VAR) expanded, as the kubelet hands them to CRI.
    const spec = config ? expandCommandAndArgs(c, config.env) : c;
    let created: ContainerRecord;
    try {
      created = await this.d.runtime.createContainer(rec.pod, spec, kind, s.restartCount, path, config);
    } catch (err) {
      // kubelet's CreateContainerError: the container waits and the next sync tries again.
      const message = (err as Error).message;
      s.waiting = { reason: 'CreateContainerError', message };
      event.emit(rec, c, 'Warning', 'Failed', 'Create', `Error: ${message}`, kind);
      this.d.wakeAt(rec, this.d.clock.now() + BACKOFF.initialMs);
      return false;
    }
    markStart(rec, 'created');
    this.d.logs.link(rec, c.name, created);
    event.emit(rec, c, 'Normal', 'Created', 'Create', `Created container: ${c.name}`, kind);
    s.current = created;
    s.waiting = undefined;
    s.stopRequestedAt = undefined;
    await this.d.runtime.startContainer(created.id);
    markStart(rec, 'started');
    event.emit(rec, c, 'Normal', 'Started', 'Start', `Started container ${c.name}`, kind);
    const failed = await this.d.setup?.postStart(rec, c, created);
    if (failed) {
      // kubelet kills a container whose postStart hook failed; it is restarted per the restart policy.
      event.emit(rec, c, 'Warning', 'FailedPostStartHook', 'Start', failed, kind);
      containerState(rec, c.name).stopRequestedAt = this.d.clock.now();
      await this.d.runtime
        .stopContainer(created.id, 0)
        .catch((err) => log.error('killing a container failed', { container: c.name, err: String(err) }));
      return false;
    }
    return true;
  }

  /** kubelet's doBackOff: restart now and lengthen the backoff, or wait (CrashLoopBackOff). */
  async restartWithBackoff(rec: PodRecord, c: any, kind: ContainerKind, s: ContainerState): Promise<boolean> {
    const cur = s.current!;
    const key = `${rec.uid}/${c.name}`;
    const finished = cur.finishedAt ?? this.d.clock.now();
    const now = this.d.clock.now();
    let e = this.backoffs.get(key);
    const expired = e && finished - e.lastUpdate > 2 * BACKOFF.maxMs;
    if (e && !expired && now - finished < e.durationMs) {
      s.waiting = {
        reason: 'CrashLoopBackOff',
        message: `back-off ${formatDuration(e.durationMs)} restarting failed container=${c.name} pod=${podFullName(rec.pod)}`,
      };
      if (s.backoffEventFor !== finished) {
        s.backoffEventFor = finished;
        this.d.events.emit(
          rec,
          c,
          'Warning',
          'BackOff',
          'Restart',
          `Back-off restarting failed container ${c.name} in pod ${podFullName(rec.pod)}`,
          kind,
        );
      }
      this.d.wakeAt(rec, finished + e.durationMs);
      return false;
    }
    e =
      !e || expired
        ? { durationMs: BACKOFF.initialMs, lastUpdate: finished }
        : { durationMs: Math.min(e.durationMs * 2, BACKOFF.maxMs), lastUpdate: finished };
    this.backoffs.set(key, e);
    s.last = cur;
    s.restartCount++;
    s.current = undefined;
    s.waiting = undefined;
    await this.d.runtime.removeContainer(cur.id).catch(() => {});
    return this.start(rec, c, kind, s);
  }

  /**
   * Asks the runtime to stop the container (the Killing event once per container, `note` its text),
   * after its preStop hook, which runs within the grace period.
   */
  stop(rec: PodRecord, c: ContainerRecord, graceSeconds: number, note?: string): void {
    const s = containerState(rec, c.name);
    const spec = [...(rec.pod.spec?.containers ?? []), ...(rec.pod.spec?.initContainers ?? [])].find(
      (x: any) => x.name === c.name,
    ) ?? { name: c.name };
    if (s.stopRequestedAt === undefined) {
      s.stopRequestedAt = this.d.clock.now();
      this.d.events.emit(
        rec,
        spec,
        'Normal',
        'Killing',
        'Kill',
        note ?? `Stopping container ${c.name}`,
        c.kind,
      );
    }
    void (async () => {
      let grace = graceSeconds;
      if (this.d.setup) {
        const r = await this.d.setup.preStop(rec, spec, c, graceSeconds);
        grace = r.grace;
        if (r.failure)
          this.d.events.emit(rec, spec, 'Warning', 'FailedPreStopHook', 'Kill', r.failure, c.kind);
      }
      await this.d.runtime.stopContainer(c.id, grace);
    })().catch((err) => log.error('stopping a container failed', { container: c.name, err: String(err) }));
  }

  /** The pod is gone: its backoffs with it. */
  forget(rec: PodRecord): void {
    for (const name of rec.containers.keys()) {
      this.backoffs.delete(`${rec.uid}/${name}`);
      this.pullBackoffs.delete(`${rec.uid}/${name}`);
    }
  }
}
