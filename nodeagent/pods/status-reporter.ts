// The status the agent reports for a pod (the kubelet's status manager): a
// view of each container from the pod's record — with the wake-ups that
// startup and readiness delays need — turned into a PodStatus by status.ts,
// and written to pods/status when it changed (to the mirror pod for a static
// pod).
import type { Clock } from '../../shared/client/clock';
import { isConflict, isNotFound } from '../../shared/client/errors';
import type { ResourceClient } from '../../shared/client/resource';
import { logger } from '../../shared/log';
import { canonical } from '../status/node';
import type { ContainerSetup } from './container-setup';
import type { MirrorPods } from './mirrors';
import type { Prober } from './prober';
import type { ContainerState, PodRecord } from './records';
import type { ContainerKind, ContainerRecord } from './runtime';
import { FAKE_ANNOTATIONS, fakeSetting } from './runtime-fake';
import { statusWritten } from './start-trace';
import { mirrorMatches } from './static';
import { computePodStatus, isSidecar, podFullName, type ContainerView } from './status';

const log = logger('nodeagent/pods');

export class PodStatusReporter {
  constructor(
    private readonly d: {
      clock: Clock;
      nodeIPs(): string[];
      /** Absent in standalone mode: the status is computed (for /pods), not written. */
      podsClient?: ResourceClient;
      mirrors: MirrorPods;
      /** Sync the pod again at `at` (a container becomes started or ready then). */
      wakeAt(rec: PodRecord, at: number): void;
      /** Real probes (a runtime that runs processes); absent: readiness from delays and annotations. */
      prober?: Prober;
      /** Termination messages read after exit. */
      setup?: ContainerSetup;
    },
  ) {}

  /** The pod's status as of now. */
  compute(rec: PodRecord, terminating: boolean): any {
    return computePodStatus({
      pod: this.apiView(rec),
      init: this.views(rec, rec.pod.spec?.initContainers ?? [], 'init'),
      containers: this.views(rec, rec.pod.spec?.containers ?? [], 'regular'),
      // kubelet makes no sandbox before the volumes, so no IP yet (a host-network pod has the node's).
      podIPs: rec.volumesPending && !rec.pod.spec?.hostNetwork ? [] : rec.podIPs,
      hostIPs: this.d.nodeIPs(),
      startTime: rec.startTime,
      terminating,
      evicted: rec.evicted,
      now: this.d.clock.now(),
    });
  }

  private views(rec: PodRecord, specs: any[], kind: ContainerKind): ContainerView[] {
    const now = this.d.clock.now();
    return specs.map((c) => {
      const s = rec.containers.get(c.name) ?? { restartCount: 0 };
      if (this.d.prober) return this.probedView(rec, c, kind, s);
      const cur = s.current;
      const running = cur?.state === 'running';
      const since = (probe: any) =>
        (cur?.startedAt ?? now) + (Number(probe?.initialDelaySeconds) || 0) * 1000;
      const startedAt = c.startupProbe ? since(c.startupProbe) : (cur?.startedAt ?? now);
      const started = running && now >= startedAt;
      const probeReadyAt = c.readinessProbe ? Math.max(startedAt, since(c.readinessProbe)) : startedAt;
      const notReady = fakeSetting(rec.pod, FAKE_ANNOTATIONS.ready, c.name) === 'false';
      // Completed init containers report ready, as the kubelet's do.
      const completedInit = kind === 'init' && !isSidecar(c) && cur?.state === 'exited' && cur.exitCode === 0;
      const ready =
        completedInit || (started && !notReady && now >= probeReadyAt && !(kind === 'init' && !isSidecar(c)));
      if (running && !started) this.d.wakeAt(rec, startedAt + 1);
      else if (running && !ready && !notReady && probeReadyAt > now) this.d.wakeAt(rec, probeReadyAt + 1);
      let waiting = s.waiting;
      if (!cur && !waiting)
        waiting = {
          reason:
            kind === 'regular' && !this.initDone(rec)
              ? 'PodInitializing'
              : kind === 'init'
                ? 'PodInitializing'
                : 'ContainerCreating',
        };
      return {
        spec: c,
        kind,
        current: cur,
        last: s.last,
        restartCount: s.restartCount,
        waiting,
        ready: !!ready,
        started: !!started,
      };
    });
  }

  /** A container's view with real probes and termination messages. */
  private probedView(rec: PodRecord, c: any, kind: ContainerKind, s: ContainerState): ContainerView {
    const prober = this.d.prober!;
    let cur = s.current;
    let last = s.last;
    const withMessage = (r: ContainerRecord | undefined) => {
      const m = r && this.d.setup?.terminationMessage(rec, c, r);
      return r && m ? { ...r, message: r.message ? `${r.message}: ${m}` : m } : r;
    };
    cur = withMessage(cur);
    last = withMessage(last);
    const started = prober.started(rec, c);
    const completedInit = kind === 'init' && !isSidecar(c) && cur?.state === 'exited' && cur.exitCode === 0;
    const ready = completedInit || (!(kind === 'init' && !isSidecar(c)) && prober.ready(rec, c));
    return {
      spec: c,
      kind,
      current: cur,
      last,
      restartCount: s.restartCount,
      waiting:
        s.waiting ??
        (!cur
          ? { reason: kind === 'init' || !this.initDone(rec) ? 'PodInitializing' : 'ContainerCreating' }
          : undefined),
      ready,
      started,
    };
  }

  private initDone(rec: PodRecord): boolean {
    for (const c of rec.pod.spec?.initContainers ?? []) {
      const cur = rec.containers.get(c.name)?.current;
      if (isSidecar(c)) {
        if (cur?.state !== 'running') return false;
        if (this.d.prober && !this.d.prober.started(rec, c)) return false;
      } else if (!(cur?.state === 'exited' && cur.exitCode === 0)) return false;
    }
    return true;
  }

  /** The pod as the API shows it (the mirror for a static pod), for conditions others own. */
  private apiView(rec: PodRecord): any {
    if (rec.source === 'api') return rec.pod;
    const mirror = this.d.mirrors.of(rec);
    return { ...rec.pod, status: mirror?.status ?? rec.status ?? rec.pod.status };
  }

  /** Writes the status when it changed (strategic merge patch of pods/status, uid as precondition). */
  async send(rec: PodRecord, status: any): Promise<void> {
    rec.status = status;
    const text = canonical(status);
    if (text === rec.lastSent || !this.d.podsClient) return;
    let target: { ns: string; name: string; uid: string } | undefined;
    if (rec.source === 'api')
      target = { ns: rec.pod.metadata.namespace!, name: rec.pod.metadata.name!, uid: rec.uid };
    else {
      const mirror = this.d.mirrors.of(rec);
      if (!mirror || !mirrorMatches(mirror, rec.pod)) return;
      target = { ns: mirror.metadata.namespace!, name: mirror.metadata.name!, uid: mirror.metadata.uid! };
    }
    // Strategic merge patch merges conditions by type: clear what a condition no longer has.
    const patchStatus = {
      ...status,
      conditions: (status.conditions ?? []).map((c: any) => ({ reason: null, message: null, ...c })),
    };
    if (!('reason' in status)) patchStatus.reason = null;
    if (!('message' in status)) patchStatus.message = null;
    try {
      const updated = await this.d.podsClient
        .namespace(target.ns)
        .patch(target.name, { metadata: { uid: target.uid }, status: patchStatus }, 'strategic', {
          subresource: 'status',
        });
      rec.lastSent = text;
      statusWritten(rec, status);
      if (rec.source === 'api' && updated?.metadata?.uid === rec.uid && !rec.removed)
        rec.pod = { ...rec.pod, status: updated.status };
    } catch (err) {
      if (isNotFound(err) || isConflict(err)) {
        log.v(2)?.info('pod status not written (pod gone or replaced)', {
          pod: podFullName(rec.pod),
          err: String(err),
        });
        return;
      }
      throw err;
    }
  }
}
