// The pods of this node: what the sources want (pods bound to the node from
// the apiserver, static pods from files and a URL), admitted against
// --max-pods, run through the container runtime by one serialized worker per
// pod, their status written back to the API (to the mirror pod for static
// pods), and graceful termination ending with the final delete — the
// kubelet's pod workers, status manager and mirror pod manager in one place.
import { mkdirSync, rmSync, symlinkSync, unlinkSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Client } from '../../shared/client/client';
import type { ResourceClient } from '../../shared/client/resource';
import { realClock, type Clock, type Timer } from '../../shared/client/clock';
import { isAlreadyExists, isConflict, isNotFound } from '../../shared/client/errors';
import type { KubeObject } from '../../shared/client/types';
import type { EventRecorder, ObjectReference } from '../../shared/events';
import { logger } from '../../shared/log';
import { formatDuration } from '../../shared/options/duration';
import { canonical } from '../status/node';
import { PodIPAllocator } from './ipam';
import type { ContainerKind, ContainerRecord, ContainerRuntime } from './runtime';
import { FAKE_ANNOTATIONS, fakeSetting } from './runtime-fake';
import { isMirrorPod, mirrorMatches, mirrorPodFor, type PodSource } from './static';
import { computePodStatus, isSidecar, podFullName, rejectedPodStatus, type ContainerView } from './status';

const log = logger('nodeagent/pods');

/** The kubelet's container restart backoff: 10 s doubling to 5 min, forgotten after 10 min. */
export const BACKOFF = { initialMs: 10_000, maxMs: 300_000 };
/** Every pod is looked at again this often even when nothing happened (the kubelet's sync frequency). */
const RESYNC_MS = 60_000;
const RETRY_MS = 2_000;
/** Used when neither --pod-cidr nor the Node's spec.podCIDR gives a range (containerd's default bridge). */
export const FALLBACK_POD_CIDR = '10.88.0.0/16';

interface ContainerState {
  current?: ContainerRecord;
  last?: ContainerRecord;
  restartCount: number;
  waiting?: { reason: string; message?: string };
  /** The finishedAt the BackOff event was recorded for (once per wait). */
  backoffEventFor?: number;
  /** Asked to stop (pod termination or a changed spec). */
  stopRequestedAt?: number;
  specChanged?: boolean;
}

export interface PodRecord {
  uid: string;
  pod: KubeObject;
  source: PodSource;
  admitted: boolean;
  rejected?: { reason: string; message: string };
  startTime?: number;
  podIPs: string[];
  containers: Map<string, ContainerState>;
  /** All containers stopped and the pod reached a terminal phase here. */
  terminal: boolean;
  /** Kill deadline while terminating (ms). */
  killDeadline?: number;
  finalDeleteSent: boolean;
  /** Gone from its source: tear down and forget. */
  removed: boolean;
  /** The status last computed (served on /pods) and last written. */
  status?: any;
  lastSent?: string;
  adopted: boolean;
  /** The earliest timed resync already scheduled (ms). */
  wakeAt?: number;
  dirty: boolean;
  busy: boolean;
  timers: Timer[];
}

export interface PodManagerOptions {
  /** Absent in standalone mode (no --kubeconfig): static pods only, no API writes. */
  client?: Client;
  nodeName: string;
  maxPods: number;
  runtime: ContainerRuntime;
  recorder: EventRecorder;
  /** <root-dir>/logs: pods/<ns>_<name>_<uid>/<container>/<n>.log and containers/ links. */
  logsDir: string;
  clock?: Clock;
  nodeIPs(): string[];
  /** The Node's uid once registered (mirror pods are owned by it). */
  nodeUID(): string | undefined;
  /** --pod-cidr or the Node's spec.podCIDR. */
  podCIDR(): string | undefined;
  /** False until pods can get addresses (the Node, which may carry the pod CIDR, is known). */
  networkReady?(): boolean;
}

export interface LogTarget {
  path: string;
  running(): boolean;
}

/** A /containerLogs failure with the kubelet's status code and message. */
export class LogLookupError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

const podKey = (ns: string, name: string) => `${ns}/${name}`;
const isTerminalPhase = (p: string | undefined) => p === 'Succeeded' || p === 'Failed';

export class PodManager {
  private readonly pods = new Map<string, PodRecord>();
  private readonly mirrors = new Map<string, KubeObject>();
  private readonly staticSets = new Map<PodSource, Map<string, KubeObject>>();
  private readonly backoffs = new Map<string, { durationMs: number; lastUpdate: number }>();
  private readonly pendingAdds: PodRecord[] = [];
  private readonly mirrorOps = new Set<string>();
  private readonly podsClient?: ResourceClient;
  private readonly clock: Clock;
  private ipam?: PodIPAllocator;
  private synced = false;
  private stopped = false;
  private resyncTimer?: Timer;

  constructor(private readonly o: PodManagerOptions) {
    this.clock = o.clock ?? realClock;
    this.podsClient = o.client?.resource('pods');
    o.runtime.onExit((c) => this.requestSync(c.podUID));
    this.scheduleResync();
  }

  // ---- sources ---------------------------------------------------------------

  /** A pod bound to this node was added or changed in the API. */
  apiPodUpdated(pod: KubeObject): void {
    if (isMirrorPod(pod)) return this.mirrorUpdated(pod);
    const uid = pod.metadata.uid!;
    const rec = this.pods.get(uid);
    if (rec) {
      rec.pod = pod;
      this.requestSync(uid);
      return;
    }
    this.add(pod, 'api');
  }

  /** A pod bound to this node is gone from the API. */
  apiPodRemoved(pod: KubeObject): void {
    if (isMirrorPod(pod)) return this.mirrorRemoved(pod);
    const rec = this.pods.get(pod.metadata.uid!);
    if (!rec || rec.source !== 'api') return;
    rec.removed = true;
    this.requestSync(rec.uid);
  }

  /** The complete set of static pods of one source (file or http). */
  setStaticPods(source: PodSource, pods: KubeObject[]): void {
    const next = new Map(pods.map((p) => [p.metadata.uid!, p]));
    const prev = this.staticSets.get(source) ?? new Map<string, KubeObject>();
    this.staticSets.set(source, next);
    for (const [uid] of prev) {
      if (next.has(uid)) continue;
      const rec = this.pods.get(uid);
      if (rec) {
        rec.removed = true;
        this.requestSync(uid);
      }
    }
    for (const [uid, pod] of next) {
      const rec = this.pods.get(uid);
      if (rec) {
        rec.pod = { ...pod, status: rec.pod.status };
        this.requestSync(uid);
      } else this.add(pod, source);
    }
    void this.syncMirrors();
  }

  /** The first full list of every source arrived: admit what waited, oldest first (kubelet's HandlePodAdditions). */
  markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    const waiting = this.pendingAdds.splice(0);
    waiting.sort((a, b) =>
      String(a.pod.metadata.creationTimestamp ?? '').localeCompare(
        String(b.pod.metadata.creationTimestamp ?? ''),
      ),
    );
    this.reserveKnownAddresses(waiting);
    for (const rec of waiting) this.admitAndSync(rec);
    void this.syncMirrors();
  }

  /** The Node was registered (mirror pods can be owned by it now). */
  nodeRegistered(): void {
    void this.syncMirrors();
  }

  private add(pod: KubeObject, source: PodSource): void {
    const rec: PodRecord = {
      uid: pod.metadata.uid!,
      pod,
      source,
      admitted: false,
      podIPs: [],
      containers: new Map(),
      terminal: false,
      finalDeleteSent: false,
      removed: false,
      adopted: false,
      dirty: false,
      busy: false,
      timers: [],
    };
    this.pods.set(rec.uid, rec);
    // Static pods do not wait for the apiserver (they may be what brings it up).
    if (this.synced || source !== 'api') this.admitAndSync(rec);
    else this.pendingAdds.push(rec);
  }

  private activeCount(except: PodRecord): number {
    let n = 0;
    for (const r of this.pods.values()) {
      if (r === except || !r.admitted || r.rejected || r.terminal || r.removed) continue;
      if (isTerminalPhase(r.pod.status?.phase) && !this.o.runtime.containers(r.uid).length) continue;
      n++;
    }
    return n;
  }

  /** The kubelet's pod admission (the max-pods predicate), then the first sync. */
  private admitAndSync(rec: PodRecord): void {
    if (rec.removed) {
      this.pods.delete(rec.uid);
      return;
    }
    const deleting = !!rec.pod.metadata.deletionTimestamp;
    if (!isTerminalPhase(rec.pod.status?.phase) && !deleting) {
      const used = this.activeCount(rec);
      if (used >= this.o.maxPods) {
        const message = `Node didn't have enough resource: pods, requested: 1, used: ${used}, capacity: ${this.o.maxPods}`;
        rec.rejected = { reason: 'OutOfpods', message };
        this.event(rec, undefined, 'Warning', 'OutOfpods', 'Admit', message);
        log.info('pod rejected', { pod: podFullName(rec.pod), reason: 'OutOfpods' });
      }
    }
    rec.admitted = true;
    this.requestSync(rec.uid);
  }

  // ---- mirror pods -------------------------------------------------------------

  private mirrorUpdated(pod: KubeObject): void {
    const key = podKey(pod.metadata.namespace!, pod.metadata.name!);
    const before = this.mirrors.get(key);
    this.mirrors.set(key, pod);
    const rec = this.staticByName(pod.metadata.namespace!, pod.metadata.name!);
    if (rec) {
      if (before?.metadata.uid !== pod.metadata.uid) rec.lastSent = undefined;
      this.requestSync(rec.uid);
    }
    void this.syncMirrors();
  }

  private mirrorRemoved(pod: KubeObject): void {
    const key = podKey(pod.metadata.namespace!, pod.metadata.name!);
    if (this.mirrors.get(key)?.metadata.uid === pod.metadata.uid) this.mirrors.delete(key);
    void this.syncMirrors();
  }

  private staticByName(ns: string, name: string): PodRecord | undefined {
    for (const r of this.pods.values())
      if (r.source !== 'api' && !r.removed && r.pod.metadata.namespace === ns && r.pod.metadata.name === name)
        return r;
    return undefined;
  }

  /** Creates missing mirror pods, replaces stale ones and deletes orphans (the kubelet's mirror pod manager). */
  async syncMirrors(): Promise<void> {
    if (!this.podsClient || this.stopped || !this.synced) return;
    const nodeUID = this.o.nodeUID();
    if (!nodeUID) return;
    const wanted = new Map<string, PodRecord>();
    for (const r of this.pods.values()) {
      if (r.source === 'api' || r.removed) continue;
      wanted.set(podKey(r.pod.metadata.namespace!, r.pod.metadata.name!), r);
    }
    for (const [key, mirror] of this.mirrors) {
      const r = wanted.get(key);
      if (r && mirrorMatches(mirror, r.pod) && !mirror.metadata.deletionTimestamp) continue;
      await this.mirrorOp(`delete:${mirror.metadata.uid}`, async () => {
        log.info('deleting mirror pod', { pod: key, reason: r ? 'outdated' : 'no static pod' });
        await this.podsClient!.namespace(mirror.metadata.namespace!).delete(mirror.metadata.name!, {
          gracePeriodSeconds: 0,
          preconditions: { uid: mirror.metadata.uid },
        });
      });
    }
    for (const [key, r] of wanted) {
      if (this.mirrors.has(key)) continue;
      await this.mirrorOp(`create:${key}`, async () => {
        log.info('creating mirror pod', { pod: key });
        const created = await this.podsClient!.namespace(r.pod.metadata.namespace!).create(
          mirrorPodFor(r.pod, { name: this.o.nodeName, uid: nodeUID }),
        );
        if (!this.mirrors.has(key)) this.mirrorUpdated(created);
      });
    }
  }

  private async mirrorOp(key: string, fn: () => Promise<void>): Promise<void> {
    if (this.mirrorOps.has(key)) return;
    this.mirrorOps.add(key);
    try {
      await fn();
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err) && !isAlreadyExists(err))
        log.error('mirror pod operation failed', { op: key, err: String(err) });
    } finally {
      this.mirrorOps.delete(key);
    }
  }

  // ---- the worker -----------------------------------------------------------

  /** Runs the pod's sync (again) — serialized per pod. */
  requestSync(uid: string, delayMs = 0): void {
    const rec = this.pods.get(uid);
    if (!rec || this.stopped) return;
    if (delayMs > 0) {
      const t = this.clock.setTimer(() => {
        rec.timers = rec.timers.filter((x) => x !== t);
        this.requestSync(uid);
      }, delayMs);
      rec.timers.push(t);
      return;
    }
    if (!rec.admitted) return;
    rec.dirty = true;
    if (rec.busy) return;
    rec.busy = true;
    void (async () => {
      try {
        while (rec.dirty && !this.stopped) {
          rec.dirty = false;
          await this.syncPod(rec);
        }
      } catch (err) {
        log.error('error syncing pod, will retry', { pod: podFullName(rec.pod), err: String(err) });
        this.requestSync(uid, RETRY_MS);
      } finally {
        rec.busy = false;
      }
    })();
  }

  /** Makes sure the pod is synced again at `at` (one timer for the earliest time asked). */
  private wakeAt(rec: PodRecord, at: number): void {
    const now = this.clock.now();
    if (rec.wakeAt !== undefined && rec.wakeAt > now && rec.wakeAt <= at) return;
    rec.wakeAt = at;
    const t = this.clock.setTimer(
      () => {
        rec.timers = rec.timers.filter((x) => x !== t);
        if (rec.wakeAt === at) rec.wakeAt = undefined;
        this.requestSync(rec.uid);
      },
      Math.max(0, at - now),
    );
    rec.timers.push(t);
  }

  private scheduleResync(): void {
    this.resyncTimer = this.clock.setTimer(() => {
      if (this.stopped) return;
      for (const uid of this.pods.keys()) this.requestSync(uid);
      void this.syncMirrors();
      this.scheduleResync();
    }, RESYNC_MS);
  }

  private state(rec: PodRecord, name: string): ContainerState {
    let s = rec.containers.get(name);
    if (!s) {
      s = { restartCount: 0 };
      rec.containers.set(name, s);
    }
    return s;
  }

  private async syncPod(rec: PodRecord): Promise<void> {
    if (rec.removed) return this.teardown(rec);
    if (rec.rejected) {
      await this.sendStatus(rec, rejectedPodStatus(rec.rejected.reason, rec.rejected.message));
      return;
    }
    const live = this.o.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
    // Terminal before this agent ran anything of it (e.g. a finished Job pod after a restart): nothing to do.
    if (isTerminalPhase(rec.pod.status?.phase) && !live.length && !rec.startTime) {
      rec.terminal = true;
      rec.status = rec.pod.status;
      if (rec.pod.metadata.deletionTimestamp) await this.finalDelete(rec);
      return;
    }
    if (rec.pod.metadata.deletionTimestamp) return this.terminate(rec);
    if (rec.terminal) {
      await this.sendStatus(rec, this.status(rec, true));
      return;
    }
    await this.runPod(rec);
  }

  private policy(rec: PodRecord): string {
    return rec.pod.spec?.restartPolicy ?? 'Always';
  }

  private allocator(): PodIPAllocator | undefined {
    if (this.ipam) return this.ipam;
    if (this.o.networkReady && !this.o.networkReady()) return undefined;
    const cidr = this.o.podCIDR() || FALLBACK_POD_CIDR;
    this.ipam = new PodIPAllocator(cidr);
    log.info('pod addresses from', { cidr, gateway: this.ipam.gateway() });
    return this.ipam;
  }

  /** Pods that already have an address (an agent restart) keep it: reserve those before handing out new ones. */
  private reserveKnownAddresses(recs: PodRecord[]): void {
    const ipam = this.allocator();
    if (!ipam) return;
    for (const r of recs) {
      const ip = r.pod.status?.podIP;
      if (!ip || r.pod.spec?.hostNetwork || isTerminalPhase(r.pod.status?.phase)) continue;
      if (ipam.reserve(r.uid, ip)) r.podIPs = [ip];
    }
  }

  /** The pod's addresses; false while the network is not ready. */
  private ensureNetwork(rec: PodRecord): boolean {
    if (rec.podIPs.length) return true;
    if (rec.pod.spec?.hostNetwork) {
      rec.podIPs = this.o.nodeIPs().slice(0, 1);
      return true;
    }
    const ipam = this.allocator();
    if (!ipam) return false;
    const known = rec.pod.status?.podIP;
    if (known && ipam.reserve(rec.uid, known)) rec.podIPs = [known];
    else rec.podIPs = [ipam.allocate(rec.uid)];
    return true;
  }

  private releaseNetwork(rec: PodRecord): void {
    this.ipam?.release(rec.uid);
  }

  /** After an agent restart: containers the API reports running are taken over, not restarted. */
  private adopt(rec: PodRecord): void {
    rec.adopted = true;
    const runtime = this.o.runtime;
    if (!runtime.adoptContainer || runtime.containers(rec.uid).length) return;
    const all: [any, ContainerKind, any[]][] = [
      [rec.pod.spec?.initContainers ?? [], 'init', rec.pod.status?.initContainerStatuses ?? []],
      [rec.pod.spec?.containers ?? [], 'regular', rec.pod.status?.containerStatuses ?? []],
    ];
    let any = false;
    for (const [specs, kind, statuses] of all) {
      for (const c of specs) {
        const st = statuses.find((s: any) => s.name === c.name);
        if (!st?.containerID?.startsWith(`${this.o.runtime.type}://`)) continue;
        const s = this.state(rec, c.name);
        s.restartCount = st.restartCount ?? 0;
        const r = runtime.adoptContainer(rec.pod, c, kind, st, this.logPath(rec, c.name, s.restartCount));
        if (r) {
          s.current = r;
          any = true;
        }
      }
    }
    if (any && rec.pod.status?.startTime) rec.startTime = Date.parse(rec.pod.status.startTime);
  }

  private async runPod(rec: PodRecord): Promise<void> {
    const pod = rec.pod;
    if (!rec.adopted) this.adopt(rec);
    rec.startTime ??= this.clock.now();
    if (!this.ensureNetwork(rec)) {
      // The kubelet's "network is not ready": containers wait in ContainerCreating.
      this.wakeAt(rec, this.clock.now() + 1000);
      await this.sendStatus(rec, this.status(rec, false));
      return;
    }
    const policy = this.policy(rec);
    let initDone = true;
    let initFailed = false;
    for (const c of pod.spec?.initContainers ?? []) {
      const s = this.state(rec, c.name);
      const sidecar = isSidecar(c);
      const cur = s.current;
      if (cur?.state === 'running' || cur?.state === 'created') {
        if (sidecar) continue;
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
        const restarted = await this.restartWithBackoff(rec, c, 'init', s);
        if (!restarted || !sidecar) {
          initDone = false;
          break;
        }
        continue;
      }
      if (!(await this.startContainer(rec, c, 'init', s))) {
        initDone = false;
        break;
      }
      if (!sidecar) {
        initDone = false;
        break;
      }
    }
    if (initDone && !initFailed) {
      for (const c of pod.spec?.containers ?? []) {
        const s = this.state(rec, c.name);
        const cur = s.current;
        if (!cur) {
          await this.startContainer(rec, c, 'regular', s);
          continue;
        }
        if (cur.state === 'running' && cur.image !== c.image && !s.specChanged) {
          // The container's definition changed (a new image): restart it.
          s.specChanged = true;
          this.event(
            rec,
            c,
            'Normal',
            'Killing',
            'Kill',
            `Container ${c.name} definition changed, will be restarted`,
          );
          this.o.runtime
            .stopContainer(cur.id, this.graceSeconds(rec))
            .catch((err) => log.error('stop failed', { err: String(err) }));
          continue;
        }
        if (cur.state !== 'exited') continue;
        if (s.specChanged) {
          s.specChanged = false;
          s.last = cur;
          s.restartCount++;
          s.current = undefined;
          await this.startContainer(rec, c, 'regular', s);
          continue;
        }
        const restart = policy === 'Always' || (policy === 'OnFailure' && cur.exitCode !== 0);
        if (restart) await this.restartWithBackoff(rec, c, 'regular', s);
      }
    }
    let status = this.status(rec, false);
    if (isTerminalPhase(status.phase)) {
      // Finished (restartPolicy Never / OnFailure, or a failed init container): stop what still runs (sidecars).
      const live = this.o.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
      if (live.length) {
        for (const c of live) this.stopOne(rec, c, this.graceSeconds(rec));
        await this.sendStatus(rec, status);
        return;
      }
      rec.terminal = true;
      this.releaseNetwork(rec);
      status = this.status(rec, true);
    }
    await this.sendStatus(rec, status);
  }

  private graceSeconds(rec: PodRecord): number {
    const md = rec.pod.metadata;
    if (md.deletionGracePeriodSeconds !== undefined && md.deletionGracePeriodSeconds !== null)
      return Number(md.deletionGracePeriodSeconds);
    return Number(rec.pod.spec?.terminationGracePeriodSeconds ?? 30);
  }

  /** kubelet's doBackOff: restart now and lengthen the backoff, or wait (CrashLoopBackOff). */
  private async restartWithBackoff(
    rec: PodRecord,
    c: any,
    kind: ContainerKind,
    s: ContainerState,
  ): Promise<boolean> {
    const cur = s.current!;
    const key = `${rec.uid}/${c.name}`;
    const finished = cur.finishedAt ?? this.clock.now();
    const now = this.clock.now();
    let e = this.backoffs.get(key);
    const expired = e && finished - e.lastUpdate > 2 * BACKOFF.maxMs;
    if (e && !expired && now - finished < e.durationMs) {
      s.waiting = {
        reason: 'CrashLoopBackOff',
        message: `back-off ${formatDuration(e.durationMs)} restarting failed container=${c.name} pod=${podFullName(rec.pod)}`,
      };
      if (s.backoffEventFor !== finished) {
        s.backoffEventFor = finished;
        this.event(
          rec,
          c,
          'Warning',
          'BackOff',
          'Restart',
          `Back-off restarting failed container ${c.name} in pod ${podFullName(rec.pod)}`,
          kind,
        );
      }
      this.wakeAt(rec, finished + e.durationMs);
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
    await this.o.runtime.removeContainer(cur.id).catch(() => {});
    return this.startContainer(rec, c, kind, s);
  }

  private pullPolicy(c: any): string {
    if (c.imagePullPolicy) return c.imagePullPolicy;
    const image: string = c.image ?? '';
    const slash = image.lastIndexOf('/');
    const tagged = image.lastIndexOf(':') > slash || image.includes('@');
    return !tagged || image.endsWith(':latest') ? 'Always' : 'IfNotPresent';
  }

  /** Pull (per the pull policy), create and start one container; false when it could not start. */
  private async startContainer(
    rec: PodRecord,
    c: any,
    kind: ContainerKind,
    s: ContainerState,
  ): Promise<boolean> {
    const policy = this.pullPolicy(c);
    const present = this.o.runtime.hasImage(c.image);
    if (policy === 'Never' && !present) {
      const message = `Container image "${c.image}" is not present with pull policy of Never`;
      s.waiting = { reason: 'ErrImageNeverPull', message };
      this.event(rec, c, 'Warning', 'ErrImageNeverPull', 'Pull', message, kind);
      return false;
    }
    if (policy === 'IfNotPresent' && present) {
      this.event(
        rec,
        c,
        'Normal',
        'Pulled',
        'Pull',
        `Container image "${c.image}" already present on machine`,
        kind,
      );
    } else {
      this.event(rec, c, 'Normal', 'Pulling', 'Pull', `Pulling image "${c.image}"`, kind);
      const r = await this.o.runtime.pullImage(c.image);
      const took = formatDuration(r.durationMs);
      this.event(
        rec,
        c,
        'Normal',
        'Pulled',
        'Pull',
        `Successfully pulled image "${c.image}" in ${took} (${took} including waiting). Image size: ${r.sizeBytes} bytes.`,
        kind,
      );
    }
    const path = this.logPath(rec, c.name, s.restartCount);
    const created = await this.o.runtime.createContainer(rec.pod, c, kind, s.restartCount, path);
    this.linkLog(rec, c.name, created);
    this.event(rec, c, 'Normal', 'Created', 'Create', `Created container: ${c.name}`, kind);
    s.current = created;
    s.waiting = undefined;
    await this.o.runtime.startContainer(created.id);
    this.event(rec, c, 'Normal', 'Started', 'Start', `Started container ${c.name}`, kind);
    return true;
  }

  private stopOne(rec: PodRecord, c: ContainerRecord, graceSeconds: number): void {
    const s = this.state(rec, c.name);
    if (s.stopRequestedAt === undefined) {
      s.stopRequestedAt = this.clock.now();
      const spec = [...(rec.pod.spec?.containers ?? []), ...(rec.pod.spec?.initContainers ?? [])].find(
        (x: any) => x.name === c.name,
      ) ?? { name: c.name };
      this.event(rec, spec, 'Normal', 'Killing', 'Kill', `Stopping container ${c.name}`, c.kind);
    }
    this.o.runtime
      .stopContainer(c.id, graceSeconds)
      .catch((err) => log.error('stopping a container failed', { container: c.name, err: String(err) }));
  }

  /** Graceful deletion: stop every container within the grace period, report, then the final delete. */
  private async terminate(rec: PodRecord): Promise<void> {
    const grace = this.graceSeconds(rec);
    const now = this.clock.now();
    const deadline = now + grace * 1000;
    const live = this.o.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
    if (live.length) {
      // A later delete may shorten the grace period: the earlier deadline wins.
      const first = rec.killDeadline === undefined;
      if (first || deadline < rec.killDeadline!) {
        rec.killDeadline = deadline;
        const left = Math.max(0, (deadline - now) / 1000);
        for (const c of live) this.stopOne(rec, c, left);
      }
      await this.sendStatus(rec, this.status(rec, true));
      return;
    }
    rec.terminal = true;
    this.releaseNetwork(rec);
    await this.sendStatus(rec, this.status(rec, true));
    if (rec.source === 'api') await this.finalDelete(rec);
  }

  /** The kubelet's final delete: grace 0 and the uid as precondition, once the containers are gone. */
  private async finalDelete(rec: PodRecord): Promise<void> {
    if (rec.finalDeleteSent || !this.podsClient) return;
    rec.finalDeleteSent = true;
    try {
      await this.podsClient.namespace(rec.pod.metadata.namespace!).delete(rec.pod.metadata.name!, {
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
    const live = this.o.runtime.containers(rec.uid).filter((c) => c.state !== 'exited');
    const grace = rec.source === 'api' ? 0 : this.graceSeconds(rec);
    await Promise.all(
      live.map((c) => {
        this.stopOne(rec, c, grace);
        return this.o.runtime.stopContainer(c.id, grace);
      }),
    );
    for (const c of this.o.runtime.containers(rec.uid)) await this.o.runtime.removeContainer(c.id);
    for (const t of rec.timers) t.cancel();
    this.releaseNetwork(rec);
    for (const name of rec.containers.keys()) this.backoffs.delete(`${rec.uid}/${name}`);
    this.pods.delete(rec.uid);
    const dir = this.podLogDir(rec);
    rmSync(dir, { recursive: true, force: true });
    this.unlinkLogs(rec);
    if (rec.source !== 'api') void this.syncMirrors();
    log.v(2)?.info('pod forgotten', { pod: podFullName(rec.pod) });
  }

  // ---- status -----------------------------------------------------------------

  private views(rec: PodRecord, specs: any[], kind: ContainerKind): ContainerView[] {
    const now = this.clock.now();
    return specs.map((c) => {
      const s = rec.containers.get(c.name) ?? { restartCount: 0 };
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
      if (running && !started) this.wakeAt(rec, startedAt + 1);
      else if (running && !ready && !notReady && probeReadyAt > now) this.wakeAt(rec, probeReadyAt + 1);
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

  private initDone(rec: PodRecord): boolean {
    for (const c of rec.pod.spec?.initContainers ?? []) {
      const cur = rec.containers.get(c.name)?.current;
      if (isSidecar(c)) {
        if (cur?.state !== 'running') return false;
      } else if (!(cur?.state === 'exited' && cur.exitCode === 0)) return false;
    }
    return true;
  }

  /** The pod as the API shows it (the mirror for a static pod), for conditions others own. */
  private apiView(rec: PodRecord): any {
    if (rec.source === 'api') return rec.pod;
    const mirror = this.mirrors.get(podKey(rec.pod.metadata.namespace!, rec.pod.metadata.name!));
    return { ...rec.pod, status: mirror?.status ?? rec.status ?? rec.pod.status };
  }

  private status(rec: PodRecord, terminating: boolean): any {
    return computePodStatus({
      pod: this.apiView(rec),
      init: this.views(rec, rec.pod.spec?.initContainers ?? [], 'init'),
      containers: this.views(rec, rec.pod.spec?.containers ?? [], 'regular'),
      podIPs: rec.podIPs,
      hostIPs: this.o.nodeIPs(),
      startTime: rec.startTime,
      terminating,
      now: this.clock.now(),
    });
  }

  /** Writes the status when it changed (strategic merge patch of pods/status, uid as precondition). */
  private async sendStatus(rec: PodRecord, status: any): Promise<void> {
    rec.status = status;
    const text = canonical(status);
    if (text === rec.lastSent || !this.podsClient) return;
    let target: { ns: string; name: string; uid: string } | undefined;
    if (rec.source === 'api')
      target = { ns: rec.pod.metadata.namespace!, name: rec.pod.metadata.name!, uid: rec.uid };
    else {
      const mirror = this.mirrors.get(podKey(rec.pod.metadata.namespace!, rec.pod.metadata.name!));
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
      const updated = await this.podsClient
        .namespace(target.ns)
        .patch(target.name, { metadata: { uid: target.uid }, status: patchStatus }, 'strategic', {
          subresource: 'status',
        });
      rec.lastSent = text;
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

  // ---- events and logs --------------------------------------------------------

  private podRef(rec: PodRecord): ObjectReference {
    const md = rec.pod.metadata;
    const mirror = rec.source === 'api' ? undefined : this.mirrors.get(podKey(md.namespace!, md.name!));
    return {
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: md.namespace,
      name: md.name,
      uid: mirror?.metadata.uid ?? md.uid,
    };
  }

  private event(
    rec: PodRecord,
    c: any,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
    kind: ContainerKind = 'regular',
  ): void {
    const ref = this.podRef(rec);
    if (c?.name)
      ref.fieldPath = kind === 'init' ? `spec.initContainers{${c.name}}` : `spec.containers{${c.name}}`;
    this.o.recorder.eventf(ref, null, type, reason, action, '%s', note);
  }

  private podLogDir(rec: PodRecord): string {
    const md = rec.pod.metadata;
    return join(this.o.logsDir, 'pods', `${md.namespace}_${md.name}_${rec.uid}`);
  }

  logPath(rec: PodRecord, container: string, restartCount: number): string {
    return join(this.podLogDir(rec), container, `${restartCount}.log`);
  }

  private linkLog(rec: PodRecord, container: string, c: ContainerRecord): void {
    const md = rec.pod.metadata;
    const id = c.id.replace(/^[a-z]+:\/\//, '');
    const link = join(this.o.logsDir, 'containers', `${md.name}_${md.namespace}_${container}-${id}.log`);
    try {
      mkdirSync(dirname(link), { recursive: true });
      symlinkSync(c.logPath, link);
    } catch {
      // best effort, like the kubelet's
    }
  }

  private unlinkLogs(rec: PodRecord): void {
    for (const s of rec.containers.values()) {
      for (const c of [s.current, s.last]) {
        if (!c) continue;
        const md = rec.pod.metadata;
        const id = c.id.replace(/^[a-z]+:\/\//, '');
        try {
          unlinkSync(join(this.o.logsDir, 'containers', `${md.name}_${md.namespace}_${c.name}-${id}.log`));
        } catch {
          // already gone
        }
      }
    }
  }

  // ---- queries (the server's) -------------------------------------------------

  /** The pods this agent runs, with the status it computed (static pods under their own uid). */
  runningPods(): KubeObject[] {
    return [...this.pods.values()]
      .filter((r) => !r.removed && r.admitted)
      .map((r) => ({ ...r.pod, apiVersion: 'v1', kind: 'Pod', status: r.status ?? r.pod.status }));
  }

  records(): PodRecord[] {
    return [...this.pods.values()].filter((r) => !r.removed && r.admitted);
  }

  podByName(ns: string, name: string): PodRecord | undefined {
    for (const r of this.pods.values())
      if (!r.removed && r.pod.metadata.namespace === ns && r.pod.metadata.name === name) return r;
    return undefined;
  }

  /** Where /containerLogs reads, with the kubelet's errors. */
  logTarget(ns: string, podName: string, container: string, previous: boolean): LogTarget {
    const rec = this.podByName(ns, podName);
    if (!rec) throw new LogLookupError(404, `pod "${podName}" does not exist`);
    const spec = [
      ...(rec.pod.spec?.initContainers ?? []),
      ...(rec.pod.spec?.containers ?? []),
      ...(rec.pod.spec?.ephemeralContainers ?? []),
    ].find((c: any) => c.name === container);
    if (!spec) throw new LogLookupError(404, `container "${container}" not found in pod "${podName}"`);
    const s = rec.containers.get(container);
    if (previous) {
      const last = s?.current?.state === 'exited' && s.waiting ? s.current : s?.last;
      if (!last)
        throw new LogLookupError(
          400,
          `previous terminated container "${container}" in pod "${podName}" not found`,
        );
      return { path: last.logPath, running: () => false };
    }
    const cur = s?.current;
    if (!cur) {
      const reason = s?.waiting?.reason ?? (rec.rejected ? rec.rejected.reason : 'ContainerCreating');
      throw new LogLookupError(
        400,
        `container "${container}" in pod "${podName}" is waiting to start: ${reason}`,
      );
    }
    return { path: cur.logPath, running: () => this.o.runtime.container(cur.id)?.state === 'running' };
  }

  get size(): number {
    return this.records().length;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.resyncTimer?.cancel();
    for (const r of this.pods.values()) for (const t of r.timers) t.cancel();
    await this.o.runtime.close();
  }
}
