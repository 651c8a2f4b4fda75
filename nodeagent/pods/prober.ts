// The kubelet's prober: one worker per running container and probe
// (startup, liveness, readiness) that probes every periodSeconds after
// initialDelaySeconds, turns successThreshold / failureThreshold consecutive
// results into a state, records Unhealthy events, and
//   - startup: the container is "started" once it passed (liveness and
//     readiness wait for it); failing it restarts the container,
//   - liveness: failing it restarts the container,
//   - readiness: the container's ready flag (the Ready condition, endpoints).
// Only used when the runtime runs real processes; with the fake runtime the
// status reporter keeps its annotation-driven readiness.
import type { Clock, Timer } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import type { PodEvents } from './pod-events';
import { runProbeHandler, type ProbeAttempt } from './probe-handlers';
import type { PodRecord } from './records';
import type { ContainerKind, ContainerRecord, ContainerRuntime } from './runtime';
import { isSidecar } from './status';

const log = logger('nodeagent/pods');

type ProbeType = 'startup' | 'liveness' | 'readiness';
const SPEC_FIELD: Record<ProbeType, string> = {
  startup: 'startupProbe',
  liveness: 'livenessProbe',
  readiness: 'readinessProbe',
};
const TITLE: Record<ProbeType, string> = { startup: 'Startup', liveness: 'Liveness', readiness: 'Readiness' };

interface Worker {
  type: ProbeType;
  probe: any;
  containerID: string;
  timer?: Timer;
  /** The state the thresholds produced; undefined until the first decisive result. */
  ok?: boolean;
  successes: number;
  failures: number;
  /** Killed for failing: no more probing of this instance. */
  onHold: boolean;
  stopped: boolean;
}

export interface ProberDeps {
  runtime: ContainerRuntime;
  clock: Clock;
  events: PodEvents;
  /** The pod's state changed (ready, started, or a container to restart). */
  requestSync(uid: string): void;
  /** Stops a container that failed its liveness or startup probe (the Killing event's text is `note`). */
  kill(rec: PodRecord, c: ContainerRecord, graceSeconds: number, note: string): void;
  /** The pod's grace period (terminationGracePeriodSeconds). */
  graceSeconds(rec: PodRecord): number;
}

export class Prober {
  /** uid → "<container>/<type>" → worker */
  private readonly workers = new Map<string, Map<string, Worker>>();

  constructor(private readonly d: ProberDeps) {}

  /** Starts workers for the running containers with probes, stops those of containers gone (each sync). */
  sync(rec: PodRecord): void {
    let ws = this.workers.get(rec.uid);
    const wanted = new Set<string>();
    const specs: [any, ContainerKind][] = [
      ...(rec.pod.spec?.initContainers ?? [])
        .filter(isSidecar)
        .map((c: any) => [c, 'init'] as [any, ContainerKind]),
      ...(rec.pod.spec?.containers ?? []).map((c: any) => [c, 'regular'] as [any, ContainerKind]),
    ];
    for (const [c] of specs) {
      const cur = rec.containers.get(c.name)?.current;
      if (cur?.state !== 'running') continue;
      for (const type of ['startup', 'liveness', 'readiness'] as ProbeType[]) {
        const probe = c[SPEC_FIELD[type]];
        if (!probe) continue;
        const key = `${c.name}/${type}`;
        wanted.add(key);
        const w = ws?.get(key);
        if (w && w.containerID === cur.id) continue;
        if (w) this.stopWorker(w);
        if (!ws) this.workers.set(rec.uid, (ws = new Map()));
        const nw: Worker = {
          type,
          probe,
          containerID: cur.id,
          successes: 0,
          failures: 0,
          onHold: false,
          stopped: false,
        };
        ws.set(key, nw);
        const delay = (Number(probe.initialDelaySeconds) || 0) * 1000;
        const since = cur.startedAt ?? this.d.clock.now();
        this.schedule(rec, c, nw, Math.max(0, since + delay - this.d.clock.now()));
      }
    }
    for (const [key, w] of ws ?? []) {
      if (wanted.has(key)) continue;
      this.stopWorker(w);
      ws!.delete(key);
    }
  }

  private worker(rec: PodRecord, name: string, type: ProbeType): Worker | undefined {
    const w = this.workers.get(rec.uid)?.get(`${name}/${type}`);
    const cur = rec.containers.get(name)?.current;
    return w && cur && w.containerID === cur.id ? w : undefined;
  }

  /** Started: no startup probe, or it passed. */
  started(rec: PodRecord, c: any): boolean {
    const cur = rec.containers.get(c.name)?.current;
    if (cur?.state !== 'running') return false;
    if (!c.startupProbe) return true;
    return this.worker(rec, c.name, 'startup')?.ok === true;
  }

  /** Ready: started, and no readiness probe or it passed. */
  ready(rec: PodRecord, c: any): boolean {
    if (!this.started(rec, c)) return false;
    if (!c.readinessProbe) return true;
    return this.worker(rec, c.name, 'readiness')?.ok === true;
  }

  private schedule(rec: PodRecord, c: any, w: Worker, ms: number): void {
    if (w.stopped) return;
    w.timer = this.d.clock.setTimer(() => void this.tick(rec, c, w), ms);
  }

  private async tick(rec: PodRecord, c: any, w: Worker): Promise<void> {
    const period = (Number(w.probe.periodSeconds) || 10) * 1000;
    if (w.stopped) return;
    // Liveness and readiness wait for the startup probe; the startup probe stops once it passed.
    const waitForStartup = w.type !== 'startup' && c.startupProbe && !this.started(rec, c);
    if (!w.onHold && !waitForStartup && !(w.type === 'startup' && w.ok)) {
      let r: ProbeAttempt;
      try {
        r = await runProbeHandler(w.probe, {
          container: c,
          containerID: w.containerID,
          podIP: rec.podIPs[0] ?? '',
          runtime: this.d.runtime,
        });
      } catch (err) {
        r = { result: 'failure', output: err instanceof Error ? err.message : String(err) };
      }
      if (w.stopped) return;
      this.record(rec, c, w, r);
    }
    // A passed startup probe is done with this instance of the container.
    if (w.type === 'startup' && w.ok) return;
    this.schedule(rec, c, w, period);
  }

  private record(rec: PodRecord, c: any, w: Worker, r: ProbeAttempt): void {
    const title = TITLE[w.type];
    if (r.result === 'warning')
      this.d.events.emit(rec, c, 'Warning', 'ProbeWarning', 'Probe', `${title} probe warning: ${r.output}`);
    const success = r.result !== 'failure';
    if (!success) {
      this.d.events.emit(rec, c, 'Warning', 'Unhealthy', 'Probe', `${title} probe failed: ${r.output}`);
      log.v(1)?.info('probe failed', { container: c.name, type: w.type, output: r.output });
    }
    if (success) {
      w.failures = 0;
      w.successes++;
    } else {
      w.successes = 0;
      w.failures++;
    }
    const successThreshold = Number(w.probe.successThreshold) || 1;
    const failureThreshold = Number(w.probe.failureThreshold) || 3;
    const before = w.ok;
    if (success && w.successes >= successThreshold) w.ok = true;
    else if (!success && w.failures >= failureThreshold) w.ok = false;
    if (w.ok === before) return;
    if (w.ok === false && (w.type === 'liveness' || w.type === 'startup')) {
      w.onHold = true;
      const cur = rec.containers.get(c.name)?.current;
      if (cur && cur.id === w.containerID) {
        const grace = Number(w.probe.terminationGracePeriodSeconds ?? this.d.graceSeconds(rec));
        this.d.kill(rec, cur, grace, `Container ${c.name} failed ${w.type} probe, will be restarted`);
      }
    }
    this.d.requestSync(rec.uid);
  }

  private stopWorker(w: Worker): void {
    w.stopped = true;
    w.timer?.cancel();
  }

  /** The pod is gone or finished: every worker stops. */
  forget(uid: string): void {
    for (const w of this.workers.get(uid)?.values() ?? []) this.stopWorker(w);
    this.workers.delete(uid);
  }

  close(): void {
    for (const uid of [...this.workers.keys()]) this.forget(uid);
  }
}
