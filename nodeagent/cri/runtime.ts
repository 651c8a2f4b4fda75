// The CRI runtime (--runtime=remote): the pod workers' ContainerRuntime seam
// on a real container runtime (containerd) through the CRI, as kubelet's
// kuberuntime manager does it:
// - one sandbox per pod (RunPodSandbox; its IP from the runtime's CNI), made
//   again when it is no longer ready;
// - containers created in it with kubelet's labels and annotations, so that a
//   restarted agent finds and adopts them (init()) instead of duplicating them;
// - a relist every second (kubelet's PLEG) that notices exits and reads their
//   exit code, reason (OOMKilled ...) and times from ContainerStatus;
// - ExecSync and the streaming URLs; log rotation; image GC (images.ts).
import { renameSync, statSync } from 'node:fs';
import { relative } from 'node:path';
import { realClock, type Clock, type Timer } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import { compressAndPrune, moveLogAside, type LogRotation } from '../pods/logs';
import type {
  ContainerConfig,
  ContainerKind,
  ContainerRecord,
  ContainerRuntime,
  ContainerUsage,
  ExecSyncResult,
  PullResult,
  RegistryAuth,
  RuntimeImage,
  SandboxResult,
  StreamRequest,
} from '../pods/runtime';
import { removePodCgroup } from './cgroups';
import { isNotFoundError, type CriClient } from './client';
import { criContainerConfig } from './container-config';
import { CriImages, type ImageGCPolicy } from './images';
import { ANNOTATION, LABEL } from './labels';
import { podCgroupParent, podSandboxConfig, type PodConfigOptions } from './pod-config';

const log = logger('nodeagent/cri');

export interface CriRuntimeOptions {
  client: CriClient;
  clock?: Clock;
  pod: PodConfigOptions;
  /** For the OOM score of burstable containers. */
  memoryCapacityBytes: number;
  /** Where a pod's container logs go: <root-dir>/logs/pods/<ns>_<name>_<uid>. */
  podLogDirectory(pod: any): string;
  sandboxImage: string;
  imageGC: ImageGCPolicy;
  logRotation: LogRotation;
  /** kubelet's PLEG relist period (1 s). */
  relistPeriodMs?: number;
}

interface Sandbox {
  id: string;
  podUID: string;
  attempt: number;
  podIPs: string[];
  ready: boolean;
  config?: any;
}

/** CRI int64 nanoseconds (decimal string) → ms; 0 → undefined. */
const nsToMs = (ns: string | number | undefined) => {
  if (ns === undefined || ns === '0' || ns === 0) return undefined;
  return Number(BigInt(ns) / 1_000_000n);
};

const STATE: Record<string, ContainerRecord['state']> = {
  CONTAINER_CREATED: 'created',
  CONTAINER_RUNNING: 'running',
  CONTAINER_EXITED: 'exited',
  CONTAINER_UNKNOWN: 'exited',
};

export class CriRuntime implements ContainerRuntime {
  readonly type = 'containerd';
  version = '';
  private readonly clock: Clock;
  private readonly imageStore: CriImages;
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly ctrs = new Map<string, ContainerRecord & { criID: string }>();
  private readonly listeners: ((c: ContainerRecord) => void)[] = [];
  /** By container id (containerd://...): the last ListContainerStats reading. */
  private readonly usage = new Map<string, ContainerUsage>();
  private timers: Timer[] = [];
  private closed = false;
  private relisting = false;
  /** The runtime's own readiness conditions (RuntimeReady, NetworkReady) from its last Status. */
  conditions: { type: string; status: boolean; reason: string; message: string }[] = [];

  constructor(private readonly o: CriRuntimeOptions) {
    this.clock = o.clock ?? realClock;
    this.imageStore = new CriImages(o.client, this.clock, { sandboxImage: o.sandboxImage, gc: o.imageGC });
  }

  /** Connects: the runtime's version, images, and the sandboxes and containers left from before (adopted). */
  async init(): Promise<void> {
    const v = await this.o.client.call('Version', { version: 'v1' });
    this.version = v.runtimeVersion;
    log.info('container runtime', {
      name: v.runtimeName,
      version: v.runtimeVersion,
      api: v.runtimeApiVersion,
    });
    await this.status();
    await this.imageStore.refresh();
    await this.adoptAll();
    await this.readStats().catch((err) => log.warn('reading container stats failed', { err: String(err) }));
    const relist = () => {
      if (this.closed) return;
      this.relist()
        .catch((err) => log.warn('relist failed', { err: String(err) }))
        .finally(() => {
          if (!this.closed) this.timers[0] = this.clock.setTimer(relist, this.o.relistPeriodMs ?? 1000);
        });
    };
    this.timers = [this.clock.setTimer(relist, this.o.relistPeriodMs ?? 1000)];
    const housekeeping = () => {
      if (this.closed) return;
      void this.rotateLogs()
        .then(() => this.status())
        .then(() => this.readStats())
        .catch((err) => log.warn('runtime housekeeping failed', { err: String(err) }))
        .finally(() => {
          if (!this.closed) this.timers[1] = this.clock.setTimer(housekeeping, 10_000);
        });
    };
    this.timers[1] = this.clock.setTimer(housekeeping, 10_000);
    const imageGC = () => {
      if (this.closed) return;
      const inUse = new Set([...this.ctrs.values()].map((c) => c.imageID));
      void this.imageStore
        .collectGarbage(inUse)
        .catch((err) => log.warn('image garbage collection failed', { err: String(err) }))
        .finally(() => {
          if (!this.closed) this.timers[2] = this.clock.setTimer(imageGC, 5 * 60_000);
        });
    };
    this.timers[2] = this.clock.setTimer(imageGC, 5 * 60_000);
  }

  /** The runtime's Status (RuntimeReady, NetworkReady), kept for the Node's Ready condition. */
  async status(): Promise<void> {
    const s = await this.o.client.call('Status', {});
    this.conditions = s.status?.conditions ?? [];
  }

  /** "" when ready, else kubelet's message for the Node's Ready condition. */
  notReadyReason(): string {
    const bad = this.conditions.filter((c) => !c.status);
    if (!this.conditions.length) return 'container runtime status check may not have completed yet';
    if (!bad.length) return '';
    const c = bad[0];
    if (c.type === 'NetworkReady')
      return `container runtime network not ready: NetworkReady=false reason:${c.reason} message:${c.message}`;
    return `container runtime is down: ${c.type}=false reason:${c.reason} message:${c.message}`;
  }

  // ---- images -----------------------------------------------------------------

  hasImage(image: string): boolean {
    return this.imageStore.has(image);
  }

  pullImage(image: string, auths?: RegistryAuth[]): Promise<PullResult> {
    return this.imageStore.pull(image, auths);
  }

  images(): RuntimeImage[] {
    return this.imageStore.list();
  }

  // ---- sandboxes -------------------------------------------------------------------

  async ensureSandbox(pod: any): Promise<SandboxResult> {
    const uid = pod.metadata.uid;
    let sb = this.sandboxes.get(uid);
    if (sb?.ready) return { podIPs: sb.podIPs };
    const attempt = sb ? sb.attempt + 1 : 0;
    if (sb) await this.dropSandbox(sb);
    const config = podSandboxConfig(pod, attempt, this.o.podLogDirectory(pod), this.o.pod);
    let id: string;
    try {
      id = (
        await this.o.client.call('RunPodSandbox', {
          config,
          runtimeHandler: pod.spec?.runtimeClassName ?? '',
        })
      ).podSandboxId;
    } catch (err) {
      // A sandbox whose network set-up failed stays listed NOTREADY: remove it, or it piles up.
      await this.removeFailedSandboxes(uid);
      throw err;
    }
    const st = (await this.o.client.call('PodSandboxStatus', { podSandboxId: id })).status;
    sb = { id, podUID: uid, attempt, podIPs: sandboxIPs(st), ready: true, config };
    this.sandboxes.set(uid, sb);
    return { podIPs: sb.podIPs };
  }

  private async removeFailedSandboxes(uid: string): Promise<void> {
    const list = await this.o.client
      .call('ListPodSandbox', { filter: { labelSelector: { [LABEL.podUID]: uid } } })
      .catch(() => ({ items: [] }));
    for (const s of list.items)
      if (s.state !== 'SANDBOX_READY' && ![...this.sandboxes.values()].some((k) => k.id === s.id))
        await this.o.client.call('RemovePodSandbox', { podSandboxId: s.id }).catch(() => {});
  }

  /** Stops and removes one sandbox (and so its containers). */
  private async dropSandbox(sb: Sandbox): Promise<void> {
    await this.o.client.call('StopPodSandbox', { podSandboxId: sb.id }).catch(ignoreNotFound);
    await this.o.client.call('RemovePodSandbox', { podSandboxId: sb.id }).catch(ignoreNotFound);
  }

  async stopSandbox(podUID: string): Promise<void> {
    const sb = this.sandboxes.get(podUID);
    if (!sb?.ready) return;
    await this.o.client.call('StopPodSandbox', { podSandboxId: sb.id }).catch(ignoreNotFound);
    sb.ready = false;
  }

  async removeSandbox(podUID: string): Promise<void> {
    const sb = this.sandboxes.get(podUID);
    for (const [id, c] of this.ctrs) if (c.podUID === podUID) this.ctrs.delete(id);
    if (sb) {
      await this.dropSandbox(sb);
      this.sandboxes.delete(podUID);
    }
    await this.removeFailedSandboxes(podUID);
    removePodCgroup(sb?.config?.linux?.cgroupParent);
  }

  podUIDs(): string[] {
    const uids = new Set(this.sandboxes.keys());
    for (const c of this.ctrs.values()) uids.add(c.podUID);
    return [...uids];
  }

  /** The cgroup a pod's containers run under (for the stats and the tests). */
  podCgroup(pod: any): string {
    return podCgroupParent(pod, this.o.pod.cgroupRoot);
  }

  // ---- containers ------------------------------------------------------------------

  async createContainer(
    pod: any,
    container: any,
    kind: ContainerKind,
    attempt: number,
    logPath: string,
    config?: ContainerConfig,
  ): Promise<ContainerRecord> {
    await this.ensureSandbox(pod);
    const sb = this.sandboxes.get(pod.metadata.uid)!;
    const imageID = this.imageStore.idOf(container.image);
    const logDir = sb.config?.logDirectory ?? this.o.podLogDirectory(pod);
    const res = await this.o.client.call('CreateContainer', {
      podSandboxId: sb.id,
      config: criContainerConfig({
        pod,
        container,
        kind,
        attempt,
        image: imageID ?? container.image,
        logPath: relative(logDir, logPath),
        config,
        memoryCapacityBytes: this.o.memoryCapacityBytes,
      }),
      sandboxConfig: sb.config,
    });
    this.imageStore.markUsed(container.image);
    const rec = {
      id: `${this.type}://${res.containerId}`,
      criID: res.containerId as string,
      podUID: pod.metadata.uid,
      name: container.name,
      kind,
      image: container.image,
      imageID: imageID ?? '',
      attempt,
      state: 'created' as const,
      createdAt: this.clock.now(),
      logPath,
    };
    this.ctrs.set(rec.id, rec);
    return rec;
  }

  private criID(id: string): string {
    const c = this.ctrs.get(id);
    if (!c) throw new Error(`container ${id} not found`);
    return c.criID;
  }

  async startContainer(id: string): Promise<void> {
    try {
      await this.o.client.call('StartContainer', { containerId: this.criID(id) });
    } catch (err) {
      // A process that cannot start leaves an exited container (StartError, exit code 128): that is its status.
      await this.refresh(id);
      if (this.ctrs.get(id)?.state === 'exited') return;
      throw err;
    }
    await this.refresh(id);
  }

  async stopContainer(id: string, gracePeriodSeconds: number): Promise<void> {
    const c = this.ctrs.get(id);
    if (!c || c.state === 'exited') return;
    const grace = Math.max(0, Math.floor(gracePeriodSeconds));
    // The call lasts as long as the grace period: give it that on top of the usual deadline.
    await this.o.client
      .call('StopContainer', { containerId: c.criID, timeout: grace }, 120_000 + grace * 1000)
      .catch(ignoreNotFound);
    await this.refresh(id);
  }

  async removeContainer(id: string): Promise<void> {
    const c = this.ctrs.get(id);
    if (!c) return;
    this.ctrs.delete(id);
    await this.o.client.call('RemoveContainer', { containerId: c.criID }).catch(ignoreNotFound);
  }

  container(id: string): ContainerRecord | undefined {
    return this.ctrs.get(id);
  }

  containers(podUID: string): ContainerRecord[] {
    return [...this.ctrs.values()]
      .filter((c) => c.podUID === podUID)
      .sort((a, b) => a.createdAt - b.createdAt);
  }

  onExit(listener: (c: ContainerRecord) => void): void {
    this.listeners.push(listener);
  }

  // ---- stats ------------------------------------------------------------------------

  containerUsage(id: string): ContainerUsage | undefined {
    return this.usage.get(id);
  }

  /** Every container's CPU, memory and writable layer use (cAdvisor's job in kubelet; the CRI's here). */
  async readStats(): Promise<void> {
    const res = await this.o.client.call('ListContainerStats', {});
    const seen = new Set<string>();
    for (const st of res.stats) {
      const id = `${this.type}://${st.attributes?.id}`;
      seen.add(id);
      const v = (x: any) => Number(x?.value ?? 0);
      const time = nsToMs(st.cpu?.timestamp) ?? this.clock.now();
      const cpu = v(st.cpu?.usageCoreNanoSeconds);
      const prev = this.usage.get(id);
      // containerd 1.6 leaves usage_nano_cores empty on its first readings: the rate since the last one.
      let nanoCores = v(st.cpu?.usageNanoCores);
      if (!nanoCores && prev && time > prev.time)
        nanoCores = ((cpu - prev.cpuCoreNanoSeconds) * 1e6) / (time - prev.time);
      this.usage.set(id, {
        time,
        cpuCoreNanoSeconds: cpu,
        cpuNanoCores: Math.max(0, Math.round(nanoCores)),
        memoryWorkingSetBytes: v(st.memory?.workingSetBytes),
        memoryUsageBytes: v(st.memory?.usageBytes),
        memoryRSSBytes: v(st.memory?.rssBytes),
        rootfsUsedBytes: v(st.writableLayer?.usedBytes),
      });
    }
    for (const id of this.usage.keys()) if (!seen.has(id)) this.usage.delete(id);
  }

  // ---- exec and streaming ----------------------------------------------------------

  async execSync(containerID: string, cmd: string[], timeoutSeconds: number): Promise<ExecSyncResult> {
    const res = await this.o.client.call(
      'ExecSync',
      { containerId: this.criID(containerID), cmd, timeout: timeoutSeconds },
      (timeoutSeconds + 120) * 1000,
    );
    return { exitCode: res.exitCode, stdout: Buffer.from(res.stdout), stderr: Buffer.from(res.stderr) };
  }

  async streamURL(req: StreamRequest): Promise<string> {
    if (req.kind === 'portforward') {
      const sb = this.sandboxes.get(req.podUID);
      if (!sb?.ready) throw new Error(`pod sandbox of pod ${req.podUID} is not running`);
      return (await this.o.client.call('PortForward', { podSandboxId: sb.id, port: req.ports })).url;
    }
    const { kind, containerID, ...rest } = req;
    const containerId = this.criID(containerID);
    if (kind === 'exec') return (await this.o.client.call('Exec', { containerId, ...rest })).url;
    return (await this.o.client.call('Attach', { containerId, ...rest })).url;
  }

  // ---- state -------------------------------------------------------------------------

  /** Reads one container's status into its record; tells the listeners when it exited. */
  private async refresh(id: string): Promise<void> {
    const c = this.ctrs.get(id);
    if (!c) return;
    let st: any;
    try {
      st = (await this.o.client.call('ContainerStatus', { containerId: c.criID })).status;
    } catch (err) {
      if (!isNotFoundError(err)) throw err;
      st = { state: 'CONTAINER_EXITED', exitCode: 137, reason: 'ContainerGone', finishedAt: '0' };
    }
    const before = c.state;
    applyStatus(c, st);
    if (before !== 'exited' && c.state === 'exited') for (const l of this.listeners) l(c);
  }

  /** kubelet's PLEG: one ListContainers, then a status read of whatever changed state. */
  private async relist(): Promise<void> {
    if (this.relisting) return;
    this.relisting = true;
    try {
      // A sandbox that died (its pause process killed) is made anew by the next sync of its pod.
      const sbs = await this.o.client.call('ListPodSandbox', {});
      const sbState = new Map<string, string>(sbs.items.map((x: any) => [x.id, x.state]));
      for (const sb of this.sandboxes.values())
        if (sb.ready && sbState.get(sb.id) !== 'SANDBOX_READY') {
          sb.ready = false;
          log.info('pod sandbox is not ready any more', { pod: sb.podUID, sandbox: sb.id });
        }
      const res = await this.o.client.call('ListContainers', {});
      const states = new Map<string, string>(res.containers.map((x: any) => [x.id, x.state]));
      for (const c of [...this.ctrs.values()]) {
        if (c.state === 'exited') continue;
        const now = states.get(c.criID);
        if (now === undefined || STATE[now] !== c.state) await this.refresh(c.id);
      }
    } finally {
      this.relisting = false;
    }
  }

  /** After an agent restart: every sandbox and container of kubelet's labels, with its status. */
  private async adoptAll(): Promise<void> {
    const sbs = await this.o.client.call('ListPodSandbox', {});
    for (const s of sbs.items) {
      const uid = s.labels?.[LABEL.podUID];
      if (!uid) continue;
      const known = this.sandboxes.get(uid);
      // The newest attempt wins; older ones are cleaned up when the pod is.
      if (known && known.attempt > s.metadata.attempt) continue;
      const st = (await this.o.client.call('PodSandboxStatus', { podSandboxId: s.id })).status;
      this.sandboxes.set(uid, {
        id: s.id,
        podUID: uid,
        attempt: s.metadata.attempt,
        podIPs: sandboxIPs(st),
        ready: s.state === 'SANDBOX_READY',
        config: { metadata: s.metadata, logDirectory: st.logDirectory ?? undefined, labels: s.labels },
      });
    }
    const list = await this.o.client.call('ListContainers', {});
    for (const x of list.containers) {
      const uid = x.labels?.[LABEL.podUID];
      const name = x.labels?.[LABEL.containerName];
      if (!uid || !name) continue;
      const st = (await this.o.client.call('ContainerStatus', { containerId: x.id })).status;
      const rec = {
        id: `${this.type}://${x.id}`,
        criID: x.id as string,
        podUID: uid,
        name,
        kind: (x.annotations?.[ANNOTATION.kind] === 'init' ? 'init' : 'regular') as ContainerKind,
        image: x.annotations?.[ANNOTATION.image] ?? st.image?.image ?? '',
        imageID: st.imageRef ?? '',
        attempt: Number(x.annotations?.[ANNOTATION.restartCount] ?? x.metadata?.attempt ?? 0),
        state: 'created' as ContainerRecord['state'],
        createdAt: nsToMs(st.createdAt) ?? this.clock.now(),
        logPath: st.logPath,
      };
      applyStatus(rec, st);
      this.ctrs.set(rec.id, rec);
    }
    // The sandboxes' log directories, for containers created in them from now on.
    for (const sb of this.sandboxes.values()) {
      const c = [...this.ctrs.values()].find((x) => x.podUID === sb.podUID && x.logPath);
      if (c && sb.config && !sb.config.logDirectory)
        sb.config.logDirectory = c.logPath.split('/').slice(0, -2).join('/');
    }
    if (this.sandboxes.size || this.ctrs.size)
      log.info('adopted pods from the runtime', {
        sandboxes: this.sandboxes.size,
        containers: this.ctrs.size,
      });
  }

  /** Rotates the log of every running container past --container-log-max-size (kubelet's log manager). */
  async rotateLogs(): Promise<void> {
    for (const c of this.ctrs.values()) {
      if (c.state !== 'running') continue;
      let size: number;
      try {
        size = statSync(c.logPath).size;
      } catch {
        continue;
      }
      if (size < this.o.logRotation.maxSizeBytes) continue;
      const moved = moveLogAside(c.logPath, this.clock.now());
      if (!moved) continue;
      try {
        await this.o.client.call('ReopenContainerLog', { containerId: c.criID });
      } catch (err) {
        // kubelet puts the file back when the runtime cannot reopen it.
        renameSync(moved, c.logPath);
        log.warn('reopening a container log failed', { container: c.name, err: String(err) });
        continue;
      }
      compressAndPrune(c.logPath, this.o.logRotation);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) t?.cancel();
    this.o.client.close();
  }

  /** Every sandbox of the runtime stopped and removed (the launcher's shutdown, the tests' clean-up). */
  async removeAll(): Promise<void> {
    for (const uid of this.podUIDs()) await this.removeSandbox(uid);
    for (const sb of (await this.o.client.call('ListPodSandbox', {})).items)
      await this.o.client.call('RemovePodSandbox', { podSandboxId: sb.id }).catch(() => {});
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFoundError(err)) throw err;
}

function sandboxIPs(st: any): string[] {
  const ip = st?.network?.ip;
  if (!ip) return [];
  return [ip, ...(st.network.additionalIps ?? []).map((a: any) => a.ip)];
}

/** ContainerStatus → the record: state, times, exit code and reason. */
function applyStatus(c: ContainerRecord, st: any): void {
  c.state = STATE[st.state] ?? 'exited';
  c.startedAt = nsToMs(st.startedAt) ?? c.startedAt;
  if (st.imageRef) c.imageID = st.imageRef;
  if (c.state !== 'exited') return;
  c.finishedAt = nsToMs(st.finishedAt) ?? c.finishedAt ?? Date.now();
  c.exitCode = st.exitCode;
  // The runtime says OOMKilled; otherwise kubelet's Completed / Error.
  c.reason = st.reason && st.reason !== 'Completed' && st.reason !== 'Error' ? st.reason : undefined;
  c.reason ??= st.exitCode === 0 ? 'Completed' : 'Error';
  if (st.message) c.message = st.message;
}
