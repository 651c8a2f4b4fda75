// What the agent prepares for a pod's containers when the runtime runs real
// processes (kubelet's volume manager and generateContainerConfig): the pod's
// volumes set up on each sync (FailedMount events while one fails), each
// container's resolved environment and bind mounts, its termination message
// read after it exited, and the lifecycle hooks. One place for the pod-spec
// machinery the pod workers call.
import type { Clock, Timer } from '../../shared/client/clock';
import type { DownwardContext } from './downward';
import { resolveEnv } from './env';
import { runLifecycleHandler } from './hooks';
import { readLogTail } from './logs';
import type { PodEvents } from './pod-events';
import type { PodObjects } from './pod-objects';
import { registryAuths } from './pull-secrets';
import type { PodRecord } from './records';
import type { ContainerConfig, ContainerRecord, ContainerRuntime, RegistryAuth } from './runtime';
import type { PodVolumes } from './volumes';

/** Retries of a pod whose volumes fail: 500 ms doubling to 2 min 2 s (the kubelet's volume operation back-off). */
const VOLUME_RETRY = { initialMs: 500, maxMs: 122_000 };

/** kubelet's fallback-to-logs limits: the last 80 lines, at most 2048 bytes. */
const LOG_TAIL_LINES = 80;
const LOG_TAIL_BYTES = 2048;

export interface ContainerSetupDeps {
  runtime: ContainerRuntime;
  clock: Clock;
  objects: PodObjects;
  volumes: PodVolumes;
  events: PodEvents;
  nodeIPs(): string[];
  /** The node's allocatable (defaults of unset limits in the downward API). */
  allocatable(): Record<string, string>;
}

export class ContainerSetup {
  /** Termination messages read, by container id (read once after exit). */
  private readonly messages = new Map<string, string>();
  /** Containers whose preStop hook ran. */
  private readonly preStopped = new Set<string>();
  /** Pods whose volumes failed: the next retry's delay. */
  private readonly volumeRetries = new Map<string, number>();

  constructor(private readonly d: ContainerSetupDeps) {}

  private downward(rec: PodRecord): DownwardContext {
    return { podIPs: rec.podIPs, hostIPs: this.d.nodeIPs(), allocatable: this.d.allocatable() };
  }

  /**
   * Registry credentials from the pod's imagePullSecrets; a secret that cannot be read is left
   * out with kubelet's FailedToRetrieveImagePullSecret event.
   */
  async pullCredentials(rec: PodRecord): Promise<RegistryAuth[]> {
    const secrets: any[] = [];
    for (const ref of rec.pod.spec?.imagePullSecrets ?? []) {
      if (!ref?.name) continue;
      try {
        secrets.push(await this.d.objects.secret(rec.pod.metadata.namespace!, ref.name));
      } catch {
        this.d.events.emit(
          rec,
          undefined,
          'Warning',
          'FailedToRetrieveImagePullSecret',
          'Pull',
          `Unable to retrieve some image pull secrets (${ref.name}); attempting to pull the image may not succeed.`,
        );
      }
    }
    return registryAuths(secrets);
  }

  /** Sets up (refreshes) the pod's volumes; false while one is not in place (FailedMount recorded). */
  async volumesReady(rec: PodRecord): Promise<boolean> {
    const failures = await this.d.volumes.setUp(rec.pod, this.downward(rec));
    const unprocessed = failures.filter((f) => f.processing);
    if (unprocessed.length) {
      const names = unprocessed.map((f) => f.volume).join(' ');
      this.d.events.emit(
        rec,
        undefined,
        'Warning',
        'FailedMount',
        'Mount',
        `Unable to attach or mount volumes: unmounted volumes=[${names}], unattached volumes=[], failed to process volumes=[${names}]: ${unprocessed.map((f) => f.message).join('; ')}`,
      );
    }
    for (const f of failures.filter((x) => !x.processing))
      this.d.events.emit(
        rec,
        undefined,
        'Warning',
        'FailedMount',
        'Mount',
        `MountVolume.SetUp failed for volume "${f.volume}" : ${f.message}`,
      );
    const blocking = failures.filter((f) => !f.refresh);
    if (!blocking.length) this.volumeRetries.delete(rec.uid);
    return blocking.length === 0;
  }

  /** How long until the pod's failed volumes are tried again (doubling with each failure). */
  volumeRetryDelay(rec: PodRecord): number {
    const next = this.volumeRetries.get(rec.uid) ?? VOLUME_RETRY.initialMs;
    this.volumeRetries.set(rec.uid, Math.min(next * 2, VOLUME_RETRY.maxMs));
    return next;
  }

  /** The container's resolved env and mounts; throws ContainerConfigError (CreateContainerConfigError). */
  async config(rec: PodRecord, c: any, attempt: number): Promise<ContainerConfig> {
    const env = await resolveEnv(rec.pod, c, {
      ...this.downward(rec),
      objects: this.d.objects,
      warn: (reason, message) => this.d.events.emit(rec, undefined, 'Warning', reason, 'Create', message),
    });
    const mounts = this.d.volumes.mountsFor(rec.pod, c, env, attempt, rec.podIPs);
    return { env, mounts };
  }

  /** kubelet's termination message: the file's content, or the log tail for FallbackToLogsOnError. */
  terminationMessage(rec: PodRecord, c: any, r: ContainerRecord): string | undefined {
    if (r.state !== 'exited') return undefined;
    if (this.messages.has(r.id)) return this.messages.get(r.id) || undefined;
    let msg = this.d.volumes.terminationMessage(rec.uid, c.name, r.attempt) ?? '';
    if (!msg && c.terminationMessagePolicy === 'FallbackToLogsOnError' && (r.exitCode ?? 0) !== 0) {
      try {
        msg = readLogTail(r.logPath, LOG_TAIL_LINES, LOG_TAIL_BYTES);
      } catch {
        // no log
      }
    }
    this.messages.set(r.id, msg);
    return msg || undefined;
  }

  /** postStart: the failure message (the container is then killed), or undefined. */
  postStart(rec: PodRecord, c: any, r: ContainerRecord): Promise<string | undefined> {
    const h = c.lifecycle?.postStart;
    if (!h) return Promise.resolve(undefined);
    const timeout = Number(rec.pod.spec?.terminationGracePeriodSeconds ?? 30) || 30;
    return runLifecycleHandler(h, rec.pod, c, r.id, rec.podIPs[0] ?? '', this.d.runtime, timeout, (ms) =>
      this.d.clock.sleep(ms),
    );
  }

  /**
   * preStop, once per container, within graceSeconds; resolves to the grace period left for the
   * stop (at least 2 s, as the kubelet's minimum) and the failure message if it failed.
   */
  async preStop(
    rec: PodRecord,
    c: any,
    r: ContainerRecord,
    graceSeconds: number,
  ): Promise<{ grace: number; failure?: string }> {
    const h = c?.lifecycle?.preStop;
    if (!h || graceSeconds <= 0 || r.state !== 'running' || this.preStopped.has(r.id))
      return { grace: graceSeconds };
    this.preStopped.add(r.id);
    const start = this.d.clock.now();
    let timer: Timer | undefined;
    const timeout = new Promise<string>((resolve) => {
      timer = this.d.clock.setTimer(() => resolve('timeout'), graceSeconds * 1000);
    });
    const run = runLifecycleHandler(
      h,
      rec.pod,
      c,
      r.id,
      rec.podIPs[0] ?? '',
      this.d.runtime,
      graceSeconds,
      (ms) => this.d.clock.sleep(ms),
    );
    const out = await Promise.race([run, timeout]);
    timer?.cancel();
    const used = (this.d.clock.now() - start) / 1000;
    const grace = Math.max(2, Math.ceil(graceSeconds - used));
    return { grace, failure: out === 'timeout' ? undefined : out };
  }

  /** The pod finished: its volumes are unmounted and removed (the messages read stay for its status). */
  releaseVolumes(rec: PodRecord): Promise<void> {
    return this.d.volumes.tearDown(rec.uid);
  }

  /** The pod is gone: volumes unmounted and removed, what was kept of its containers dropped. */
  async tearDown(rec: PodRecord): Promise<void> {
    this.volumeRetries.delete(rec.uid);
    for (const s of rec.containers.values())
      for (const r of [s.current, s.last]) {
        if (!r) continue;
        this.messages.delete(r.id);
        this.preStopped.delete(r.id);
      }
    await this.d.volumes.tearDown(rec.uid);
  }
}
