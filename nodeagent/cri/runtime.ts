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
import { relative } from 'node:path';
import { realClock, type Clock, type Timer } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import type { ResolverConfig } from '../pods/dns';
import type { LogRotation } from '../pods/logs';
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
import { isNotFoundError, type CriClient } from '../../shared/cri/client';
import { criContainerConfig } from './container-config';
import { CriImages, type ImageGCPolicy } from './images';
import { LABEL } from './labels';
import { rotateContainerLogs } from './log-rotation';
import {
  applyStatus,
  CONTAINER_STATE,
  listRuntimeState,
  sandboxIPs,
  type CriContainer,
  type Sandbox,
} from './state';
import { ContainerStats } from './stats';
import { podSandboxConfig, type PodConfigOptions } from './pod-config';

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
  /** The registry containerd pulls through, named in pull errors. */
  registryMirror?: string;
  imageGC: ImageGCPolicy;
  logRotation: LogRotation;
  /** kubelet's PLEG relist period (1 s). */
  relistPeriodMs?: number;
}

export class CriRuntime implements ContainerRuntime {
  readonly type = 'containerd';
  version = '';
  private readonly clock: Clock;
  private readonly imageStore: CriImages;
  private readonly sandboxes = new Map<string, Sandbox>();
  private readonly ctrs = new Map<string, CriContainer>();
  private readonly listeners: ((c: ContainerRecord) => void)[] = [];
  private readonly stats: ContainerStats;
  private timers: Timer[] = [];
  private closed = false;
  private relisting = false;
  /** The runtime's own readiness conditions (RuntimeReady, NetworkReady) from its last Status. */
  conditions: { type: string; status: boolean; reason: string; message: string }[] = [];

  constructor(private readonly o: CriRuntimeOptions) {
    this.clock = o.clock ?? realClock;
    this.stats = new ContainerStats(o.client, this.type, this.clock);
    this.imageStore = new CriImages(o.client, this.clock, {
      sandboxImage: o.sandboxImage,
      gc: o.imageGC,
      registryMirror: o.registryMirror,
    });
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
    this.every(this.o.relistPeriodMs ?? 1000, () => this.relist(), 'relist');
    this.every(
      10_000,
      async () => {
        await this.rotateLogs();
        await this.status();
        await this.readStats();
        // The node status' images (kubelet re-lists them every 30 s): imports show up too.
        await this.imageStore.refresh();
      },
      'runtime housekeeping',
    );
    this.every(
      5 * 60_000,
      () => this.imageStore.collectGarbage(this.imagesInUse()),
      'image garbage collection',
    );
  }

  /** The ids of the images any container has (a pulled image's imageRef is its repo digest, not its id). */
  private imagesInUse(): Set<string> {
    const ids = new Set<string>();
    for (const c of this.ctrs.values())
      for (const name of [c.imageID, c.image]) {
        const id = name ? this.imageStore.idOf(name) : undefined;
        if (id) ids.add(id);
      }
    return ids;
  }

  /** Runs fn every periodMs (from the end of one run to the start of the next) until close(). */
  private every(periodMs: number, fn: () => Promise<unknown>, what: string): void {
    const i = this.timers.length;
    const run = () => {
      if (this.closed) return;
      fn()
        .catch((err) => log.warn(`${what} failed`, { err: String(err) }))
        .finally(() => {
          if (!this.closed) this.timers[i] = this.clock.setTimer(run, periodMs);
        });
    };
    this.timers[i] = this.clock.setTimer(run, periodMs);
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

  refreshImages(): Promise<void> {
    return this.imageStore.refresh();
  }

  // ---- sandboxes -------------------------------------------------------------------

  async ensureSandbox(pod: any, dns?: () => ResolverConfig): Promise<SandboxResult> {
    const uid = pod.metadata.uid;
    let sb = this.sandboxes.get(uid);
    if (sb?.ready) return { podIPs: sb.podIPs };
    const attempt = sb ? sb.attempt + 1 : 0;
    if (sb) await this.dropSandbox(sb);
    const resolver = dns?.() ?? { servers: [], searches: [], options: [] };
    const config = podSandboxConfig(pod, attempt, this.o.podLogDirectory(pod), this.o.pod, resolver);
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
    await removePodCgroup(sb?.config?.linux?.cgroupParent);
  }

  podUIDs(): string[] {
    const uids = new Set(this.sandboxes.keys());
    for (const c of this.ctrs.values()) uids.add(c.podUID);
    return [...uids];
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
    // The pod network makes the sandbox (with the pod's DNS) before its containers; one that died
    // since is made again by the next sync, not here without it.
    const sb = this.sandboxes.get(pod.metadata.uid);
    if (!sb?.ready) throw new Error('the pod sandbox is not ready');
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
    return this.stats.get(id);
  }

  /** Reads every container's resource use now (the housekeeping loop does every 10 s). */
  readStats(): Promise<void> {
    return this.stats.read();
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
        if (now === undefined || CONTAINER_STATE[now] !== c.state) await this.refresh(c.id);
      }
    } finally {
      this.relisting = false;
    }
  }

  /** After an agent restart: every sandbox and container of kubelet's labels, with its status. */
  private async adoptAll(): Promise<void> {
    const found = await listRuntimeState(this.o.client, this.type, this.clock.now());
    for (const [uid, sb] of found.sandboxes) this.sandboxes.set(uid, sb);
    for (const [id, c] of found.containers) this.ctrs.set(id, c);
    if (this.sandboxes.size || this.ctrs.size)
      log.info('adopted pods from the runtime', {
        sandboxes: this.sandboxes.size,
        containers: this.ctrs.size,
      });
  }

  /** Rotates the logs of running containers past --container-log-max-size (the housekeeping loop does every 10 s). */
  rotateLogs(): Promise<void> {
    return rotateContainerLogs(this.o.client, this.ctrs.values(), this.o.logRotation, this.clock.now());
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const t of this.timers) t?.cancel();
    this.o.client.close();
  }
}

function ignoreNotFound(err: unknown): void {
  if (!isNotFoundError(err)) throw err;
}
