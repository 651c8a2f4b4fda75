// The fake runtime (--runtime=fake, the default): containers run no process.
// Images "pull" at once (deterministic digest and size), containers start at
// once and write log lines, and the pod's annotations shape their life:
//
//   tkube.io/fake-exit-code[.<container>]   exit with this code ...
//   tkube.io/fake-run-seconds[.<container>] ... after running this long
//                                           (either one set: the container exits;
//                                           run-seconds alone exits 0, exit-code
//                                           alone exits at once; neither: runs
//                                           until stopped. Init containers exit 0
//                                           at once unless told otherwise)
//   tkube.io/fake-log-interval[.<container>] seconds between "running" log lines
//   tkube.io/fake-stop-seconds[.<container>] seconds to shut down after SIGTERM
//                                           (beyond the grace period it is killed: 137)
//   tkube.io/fake-ready[.<container>]       "false": the readiness probe never passes
//   tkube.io/fake-cpu[.<container>]         CPU it uses while running (a quantity; default 1m)
//   tkube.io/fake-memory[.<container>]      its memory working set (a quantity; default 4Mi)
//
// The per-container form (key suffixed with ".<container name>") wins over the pod-wide one.
import { createHash, randomBytes } from 'node:crypto';
import { milliValue, parseQuantity } from '../../shared/api/validation/quantity';
import { realClock, type Clock, type Timer } from '../../shared/client/clock';
import { normalizeImage } from './image-names';
import { ContainerLogWriter, type LogRotation } from './logs';
import type {
  ContainerKind,
  ContainerRecord,
  ContainerRuntime,
  ContainerUsage,
  PullResult,
  RuntimeImage,
} from './runtime';

export const FAKE_RUNTIME_VERSION = '0.1.0';

export const FAKE_ANNOTATIONS = {
  exitCode: 'tkube.io/fake-exit-code',
  runSeconds: 'tkube.io/fake-run-seconds',
  logInterval: 'tkube.io/fake-log-interval',
  stopSeconds: 'tkube.io/fake-stop-seconds',
  ready: 'tkube.io/fake-ready',
  cpu: 'tkube.io/fake-cpu',
  memory: 'tkube.io/fake-memory',
} as const;

/** A synthetic load when the annotations give none: plausible for an idle process, and stable. */
const DEFAULT_USAGE = { milliCPU: 1, memoryBytes: 4 * 1024 * 1024 };

function quantitySetting(pod: any, key: string, container: string): number | undefined {
  const v = fakeSetting(pod, key, container);
  if (!v) return undefined;
  try {
    return Number(milliValue(parseQuantity(v)));
  } catch {
    return undefined;
  }
}

/** A pod annotation for one container: the ".<container>" form first, then the pod-wide one. */
export function fakeSetting(pod: any, key: string, container: string): string | undefined {
  const a = pod?.metadata?.annotations ?? {};
  return a[`${key}.${container}`] ?? a[key];
}

function numberSetting(pod: any, key: string, container: string): number | undefined {
  const v = fakeSetting(pod, key, container);
  if (v === undefined || v.trim() === '') return undefined;
  const n = Number(v);
  return Number.isFinite(n) ? n : undefined;
}

/** The synthetic load of tkube.io/fake-cpu and fake-memory of a running container: constant, CPU time accruing. */
export function fakeUsage(pod: any, container: string, startedAt: number, now: number): ContainerUsage {
  const milliCPU = quantitySetting(pod, FAKE_ANNOTATIONS.cpu, container) ?? DEFAULT_USAGE.milliCPU;
  const memMilli = quantitySetting(pod, FAKE_ANNOTATIONS.memory, container);
  const memory = memMilli !== undefined ? Math.round(memMilli / 1000) : DEFAULT_USAGE.memoryBytes;
  const nanoCores = milliCPU * 1_000_000;
  const upMs = Math.max(0, now - startedAt);
  return {
    time: now,
    cpuCoreNanoSeconds: Math.round((nanoCores * upMs) / 1000),
    cpuNanoCores: nanoCores,
    memoryWorkingSetBytes: memory,
    memoryUsageBytes: memory,
    memoryRSSBytes: memory,
    rootfsUsedBytes: 0,
  };
}

/** What a fake container logs when it starts. */
export function fakeStartLines(name: string, image: string, attempt: number): string[] {
  return [`fake container ${name} started`, `image ${image}, attempt ${attempt}`];
}

/** What a fake container logs when it exits. */
export const fakeExitLine = (name: string, code: number) => `fake container ${name} exited with code ${code}`;

/** How a fake container behaves, from the pod's annotations. */
export interface FakeBehaviour {
  /** ms until it exits on its own; undefined: runs until stopped. */
  runMs?: number;
  exitCode: number;
  logIntervalMs?: number;
  stopMs: number;
}

export function fakeBehaviour(
  pod: any,
  container: string,
  kind: ContainerKind,
  restartable = false,
): FakeBehaviour {
  const exit = numberSetting(pod, FAKE_ANNOTATIONS.exitCode, container);
  const run = numberSetting(pod, FAKE_ANNOTATIONS.runSeconds, container);
  const interval = numberSetting(pod, FAKE_ANNOTATIONS.logInterval, container);
  const stop = numberSetting(pod, FAKE_ANNOTATIONS.stopSeconds, container) ?? 0;
  let runMs: number | undefined;
  if (run !== undefined || exit !== undefined) runMs = Math.max(0, (run ?? 0) * 1000);
  // Init containers complete unless told otherwise (sidecars, restartPolicy Always, keep running).
  else if (kind === 'init' && !restartable) runMs = 0;
  return {
    runMs,
    exitCode: Math.trunc(exit ?? 0),
    logIntervalMs: interval !== undefined && interval > 0 ? interval * 1000 : undefined,
    stopMs: Math.max(0, stop * 1000),
  };
}

interface FakeImage {
  names: string[];
  ref: string;
  size: number;
}

interface FakeContainer {
  rec: ContainerRecord;
  pod: any;
  behaviour: FakeBehaviour;
  log: ContainerLogWriter;
  timers: Timer[];
  stopping?: Promise<void>;
  exited?: () => void;
  /** When SIGKILL comes, while stopping (ms). */
  killAt?: number;
  killTimer?: Timer;
}

export interface FakeRuntimeOptions {
  clock?: Clock;
  logRotation: LogRotation;
}

export class FakeRuntime implements ContainerRuntime {
  readonly type = 'fake';
  readonly version = FAKE_RUNTIME_VERSION;
  private readonly clock: Clock;
  private readonly imageStore = new Map<string, FakeImage>();
  private readonly ctrs = new Map<string, FakeContainer>();
  private readonly listeners: ((c: ContainerRecord) => void)[] = [];
  private closed = false;

  constructor(private readonly o: FakeRuntimeOptions) {
    this.clock = o.clock ?? realClock;
  }

  private imageOf(image: string): FakeImage {
    const { repository, tag } = normalizeImage(image);
    const digest = createHash('sha256').update(`${repository}:${tag}`).digest('hex');
    // A stable, plausible size between 1 MiB and 200 MiB.
    const size = (1 + (parseInt(digest.slice(0, 8), 16) % 200)) * 1024 * 1024;
    const ref = `${repository}@sha256:${digest}`;
    const tagged = tag.startsWith('sha256:') ? [] : [`${repository}:${tag}`];
    return { names: [ref, ...tagged], ref, size };
  }

  hasImage(image: string): boolean {
    return this.imageStore.has(image);
  }

  async pullImage(image: string): Promise<PullResult> {
    const have = this.imageStore.get(image);
    if (have) return { imageRef: have.ref, alreadyPresent: true, sizeBytes: have.size, durationMs: 0 };
    const img = this.imageOf(image);
    this.imageStore.set(image, img);
    return { imageRef: img.ref, alreadyPresent: false, sizeBytes: img.size, durationMs: 0 };
  }

  images(): RuntimeImage[] {
    const byRef = new Map<string, RuntimeImage>();
    for (const img of this.imageStore.values()) {
      const e = byRef.get(img.ref) ?? { names: [img.ref], sizeBytes: img.size };
      for (const n of img.names) if (!e.names.includes(n)) e.names.push(n);
      byRef.set(img.ref, e);
    }
    return [...byRef.values()];
  }

  private track(rec: ContainerRecord, pod: any, container: any, kind: ContainerKind): FakeContainer {
    const restartable = kind === 'init' && container.restartPolicy === 'Always';
    const c: FakeContainer = {
      rec,
      pod,
      behaviour: fakeBehaviour(pod, container.name, kind, restartable),
      log: new ContainerLogWriter(rec.logPath, this.o.logRotation, this.clock),
      timers: [],
    };
    this.ctrs.set(rec.id, c);
    return c;
  }

  async createContainer(
    pod: any,
    container: any,
    kind: ContainerKind,
    attempt: number,
    logPath: string,
  ): Promise<ContainerRecord> {
    const img = this.imageStore.get(container.image) ?? this.imageOf(container.image);
    const rec: ContainerRecord = {
      id: `fake://${randomBytes(32).toString('hex')}`,
      podUID: pod.metadata.uid,
      name: container.name,
      kind,
      image: container.image,
      imageID: img.ref,
      attempt,
      state: 'created',
      createdAt: this.clock.now(),
      logPath,
    };
    this.track(rec, pod, container, kind);
    return rec;
  }

  async startContainer(id: string): Promise<void> {
    const c = this.ctrs.get(id);
    if (!c) throw new Error(`container ${id} not found`);
    if (c.rec.state !== 'created') throw new Error(`container ${id} is ${c.rec.state}, not created`);
    c.rec.state = 'running';
    c.rec.startedAt = this.clock.now();
    for (const line of fakeStartLines(c.rec.name, c.rec.image, c.rec.attempt)) c.log.write('stdout', line);
    this.runLife(c, c.rec.startedAt);
  }

  /** Log ticks and the exit the annotations ask for, counted from startedAt. */
  private runLife(c: FakeContainer, startedAt: number): void {
    const b = c.behaviour;
    if (b.logIntervalMs) {
      const every = b.logIntervalMs;
      const tick = () => {
        if (c.rec.state !== 'running' || this.closed) return;
        const up = Math.round((this.clock.now() - startedAt) / 1000);
        c.log.write('stdout', `fake container ${c.rec.name} is running (${up}s)`);
        c.timers.push(this.clock.setTimer(tick, every));
      };
      c.timers.push(this.clock.setTimer(tick, every));
    }
    if (b.runMs !== undefined) {
      const left = Math.max(0, startedAt + b.runMs - this.clock.now());
      c.timers.push(this.clock.setTimer(() => this.exit(c, b.exitCode), left));
    }
  }

  private exit(c: FakeContainer, code: number, reason?: string): void {
    if (c.rec.state === 'exited') return;
    for (const t of c.timers) t.cancel();
    c.timers = [];
    c.rec.state = 'exited';
    c.rec.finishedAt = this.clock.now();
    c.rec.exitCode = code;
    c.rec.reason = reason ?? (code === 0 ? 'Completed' : 'Error');
    c.log.write('stdout', fakeExitLine(c.rec.name, code));
    c.exited?.();
    for (const l of this.listeners) l(c.rec);
  }

  stopContainer(id: string, gracePeriodSeconds: number): Promise<void> {
    const c = this.ctrs.get(id);
    if (!c || c.rec.state === 'exited') return Promise.resolve();
    if (c.rec.state === 'created') {
      this.exit(c, 0, 'Completed');
      return Promise.resolve();
    }
    const now = this.clock.now();
    const killAt = now + Math.max(0, gracePeriodSeconds) * 1000;
    if (c.stopping) {
      // Asked again with a shorter grace period: the kill comes sooner.
      if (c.killAt !== undefined && killAt < c.killAt) this.scheduleKill(c, killAt, gracePeriodSeconds);
      return c.stopping;
    }
    c.stopping = new Promise<void>((resolve) => {
      c.exited = resolve;
    });
    c.log.write('stdout', `fake container ${c.rec.name} received SIGTERM`);
    // A graceful exit after stopMs, unless the kill at the end of the grace period comes first.
    if (c.behaviour.stopMs === 0 || c.behaviour.stopMs < killAt - now)
      c.timers.push(this.clock.setTimer(() => this.exit(c, 0, 'Completed'), c.behaviour.stopMs));
    this.scheduleKill(c, killAt, gracePeriodSeconds);
    return c.stopping;
  }

  private scheduleKill(c: FakeContainer, killAt: number, graceSeconds: number): void {
    c.killTimer?.cancel();
    c.killAt = killAt;
    c.killTimer = this.clock.setTimer(
      () => {
        if (c.rec.state === 'exited') return;
        c.log.write(
          'stderr',
          `fake container ${c.rec.name} killed (SIGKILL) after the grace period of ${graceSeconds}s`,
        );
        this.exit(c, 137, 'Error');
      },
      Math.max(0, killAt - this.clock.now()),
    );
    c.timers.push(c.killTimer);
  }

  adoptContainer(
    pod: any,
    container: any,
    kind: ContainerKind,
    status: any,
    logPath: string,
  ): ContainerRecord | undefined {
    const id: string = status?.containerID;
    const running = status?.state?.running;
    const terminated = status?.state?.terminated;
    if (!id || (!running?.startedAt && !terminated) || this.ctrs.has(id)) return undefined;
    const img = this.imageOf(container.image);
    this.imageStore.set(container.image, img);
    const startedAt = Date.parse(running?.startedAt ?? terminated?.startedAt ?? '') || this.clock.now();
    const rec: ContainerRecord = {
      id,
      podUID: pod.metadata.uid,
      name: container.name,
      kind,
      image: container.image,
      imageID: status.imageID || img.ref,
      attempt: status.restartCount ?? 0,
      state: running ? 'running' : 'exited',
      createdAt: startedAt,
      startedAt,
      logPath,
      ...(terminated
        ? {
            finishedAt: Date.parse(terminated.finishedAt ?? '') || startedAt,
            exitCode: terminated.exitCode ?? 0,
            reason: terminated.reason,
            message: terminated.message,
          }
        : {}),
    };
    const c = this.track(rec, pod, container, kind);
    if (!running) return rec;
    c.log.write('stdout', `fake container ${container.name} re-attached after a node agent restart`);
    this.runLife(c, startedAt);
    return rec;
  }

  async removeContainer(id: string): Promise<void> {
    const c = this.ctrs.get(id);
    if (!c) return;
    for (const t of c.timers) t.cancel();
    this.ctrs.delete(id);
  }

  container(id: string): ContainerRecord | undefined {
    return this.ctrs.get(id)?.rec;
  }

  containerUsage(id: string): ContainerUsage | undefined {
    const c = this.ctrs.get(id);
    if (!c || c.rec.state !== 'running') return undefined;
    const now = this.clock.now();
    return fakeUsage(c.pod, c.rec.name, c.rec.startedAt ?? now, now);
  }

  containers(podUID: string): ContainerRecord[] {
    return [...this.ctrs.values()].filter((c) => c.rec.podUID === podUID).map((c) => c.rec);
  }

  onExit(listener: (c: ContainerRecord) => void): void {
    this.listeners.push(listener);
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const c of this.ctrs.values()) for (const t of c.timers) t.cancel();
  }
}
