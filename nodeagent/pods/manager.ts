// The pods of this node: what the sources want (pods bound to the node from
// the apiserver, static pods from files and a URL), admitted against
// --max-pods, run through the container runtime by one serialized worker per
// pod, their status written back to the API (to the mirror pod for static
// pods), and graceful termination ending with the final delete.
//
// PodManager is the coordinator the rest of the agent talks to; each job is
// its own module:
//   records.ts          what is known of each pod (PodRecord) and the table of them
//   admission.ts        waiting for the sources, resources and host ports
//   sync-queue.ts       when a pod is synced (serialized per pod, wake-ups, resync)
//   worker.ts           what one sync does (run, restart, terminate, final delete, teardown)
//   active-deadline.ts  when spec.activeDeadlineSeconds fails the pod (DeadlineExceeded)
//   containers.ts       one container: pull, start, restart with backoff, stop
//   status-reporter.ts  the status computed and written to pods/status
//   mirrors.ts          mirror pods of the static pods
//   network.ts          pod sandboxes and addresses; dns.ts their resolv.conf
//   pod-logs.ts         log file paths and links, the /containerLogs lookup
//   pod-events.ts       events on the pod and its containers
//   container-setup.ts  with a runtime that runs processes: volumes (volumes.ts),
//                       env (env.ts), hooks (hooks.ts); probes are prober.ts
import { cpus, totalmem } from 'node:os';
import { dirname } from 'node:path';
import type { Client } from '../../shared/client/client';
import { realClock, type Clock } from '../../shared/client/clock';
import type { KubeObject } from '../../shared/client/types';
import type { EventRecorder } from '../../shared/events';
import { logger } from '../../shared/log';
import { PodAdmission } from './admission';
import { ContainerSetup } from './container-setup';
import { ContainerLifecycle } from './containers';
import type { ClusterDNSSettings } from './dns';
import { MirrorPods } from './mirrors';
import { PodNetwork } from './network';
import { PodEvents } from './pod-events';
import { PodLogs, type LogTarget } from './pod-logs';
import { PodObjects } from './pod-objects';
import { Prober } from './prober';
import { graceSeconds, newPodRecord, PodRecords, type PodRecord } from './records';
import type { ContainerRuntime } from './runtime';
import { isMirrorPod, type PodSource } from './static';
import { newStartTrace } from './start-trace';
import { PodStatusReporter } from './status-reporter';
import { PodSyncQueue } from './sync-queue';
import { PodVolumes } from './volumes';
import { PodWorker } from './worker';

const log = logger('nodeagent/pods');

export interface PodManagerOptions {
  /** Absent in standalone mode (no --kubeconfig): static pods only, no API writes. */
  client?: Client;
  nodeName: string;
  maxPods: number;
  runtime: ContainerRuntime;
  recorder: EventRecorder;
  /** <root-dir>/logs: pods/<ns>_<name>_<uid>/<container>/<n>.log and containers/ links. */
  logsDir: string;
  /** --root-dir: pods/<uid>/volumes ... (default: the parent of logsDir). */
  rootDir?: string;
  /** --cluster-dns, --cluster-domain (also the pods' FQDNs in their /etc/hosts), --resolv-conf. */
  dns?: ClusterDNSSettings;
  /** The node's allocatable (the downward API's default of unset limits); default: the machine's. */
  allocatable?(): Record<string, string> | undefined;
  /** The Node as last read (admission checks its allocatable). */
  node?(): KubeObject | undefined;
  clock?: Clock;
  nodeIPs(): string[];
  /** The Node's uid once registered (mirror pods are owned by it). */
  nodeUID(): string | undefined;
  /** --pod-cidr or the Node's spec.podCIDR. */
  podCIDR(): string | undefined;
  /** False until pods can get addresses (the Node, which may carry the pod CIDR, is known). */
  networkReady?(): boolean;
}

/** The machine's CPU and memory, when the Node's allocatable is not known. */
function machineAllocatable(): Record<string, string> {
  return { cpu: String(cpus().length), memory: String(totalmem()) };
}

export class PodManager {
  private readonly table = new PodRecords();
  private readonly staticSets = new Map<PodSource, Map<string, KubeObject>>();
  private readonly queue: PodSyncQueue;
  private readonly admission: PodAdmission;
  private readonly mirrors: MirrorPods;
  private readonly network: PodNetwork;
  private readonly logs: PodLogs;
  private readonly objects?: PodObjects;
  private readonly volumes?: PodVolumes;
  private readonly prober?: Prober;

  constructor(private readonly o: PodManagerOptions) {
    const clock = o.clock ?? realClock;
    const podsClient = o.client?.resource('pods');
    const records = this.table;
    const wakeAt = (rec: PodRecord, at: number) => this.queue.wakeAt(rec, at);
    const requestSync = (uid: string) => this.queue.request(uid);
    this.mirrors = new MirrorPods({
      podsClient,
      nodeName: o.nodeName,
      nodeUID: () => o.nodeUID(),
      records,
      ready: () => !this.queue.isStopped && this.admission.isSynced,
      requestSync,
    });
    const events = new PodEvents(o.recorder, this.mirrors);
    const dns = o.dns ?? { clusterDNS: [], clusterDomain: '', resolvConf: '' };
    this.network = new PodNetwork({
      ...o,
      events,
      dns,
      nodeWarning: (reason, message) =>
        o.recorder.eventf(
          { apiVersion: 'v1', kind: 'Node', name: o.nodeName, uid: o.nodeName },
          null,
          'Warning',
          reason,
          'CreatePodSandbox',
          '%s',
          message,
        ),
    });
    this.logs = new PodLogs({ logsDir: o.logsDir, records, runtime: o.runtime });
    // The pod spec's volumes, env, hooks and probes matter only where processes really run.
    let setup: ContainerSetup | undefined;
    if (o.runtime.execSync) {
      const objects = (this.objects = new PodObjects(o.client));
      setup = new ContainerSetup({
        runtime: o.runtime,
        clock,
        objects,
        volumes: (this.volumes = new PodVolumes({
          rootDir: o.rootDir ?? dirname(o.logsDir),
          objects,
          now: () => clock.now(),
          realRuntime: true,
          clusterDomain: dns.clusterDomain || undefined,
        })),
        events,
        nodeIPs: () => o.nodeIPs(),
        allocatable: () => o.allocatable?.() ?? machineAllocatable(),
      });
      this.prober = new Prober({
        runtime: o.runtime,
        clock,
        events,
        requestSync,
        kill: (rec, c, grace, note) => containers.stop(rec, c, grace, note),
        graceSeconds,
      });
    }
    const status = new PodStatusReporter({
      clock,
      nodeIPs: () => o.nodeIPs(),
      podsClient,
      mirrors: this.mirrors,
      wakeAt,
      prober: this.prober,
      setup,
    });
    const containers = new ContainerLifecycle({
      runtime: o.runtime,
      clock,
      events,
      logs: this.logs,
      setup,
      wakeAt,
    });
    const worker = new PodWorker({
      runtime: o.runtime,
      clock,
      podsClient,
      records,
      network: this.network,
      logs: this.logs,
      events,
      containers,
      status,
      mirrors: this.mirrors,
      setup,
      prober: this.prober,
      wakeAt,
    });
    this.admission = new PodAdmission({
      records,
      maxPods: o.maxPods,
      node: o.node,
      runtime: o.runtime,
      events,
      requestSync,
    });
    o.runtime.onExit((c) => this.requestSync(c.podUID));
    this.queue = new PodSyncQueue({
      records,
      clock,
      sync: (rec) => worker.sync(rec),
      onResync: () => void this.mirrors.sync(),
    });
  }

  // ---- sources ---------------------------------------------------------------

  /** A pod bound to this node was added or changed in the API. */
  apiPodUpdated(pod: KubeObject): void {
    if (isMirrorPod(pod)) return this.mirrors.updated(pod);
    const uid = pod.metadata.uid!;
    const rec = this.table.get(uid);
    if (rec) {
      rec.pod = pod;
      this.requestSync(uid);
      return;
    }
    this.add(pod, 'api');
  }

  /** A pod bound to this node is gone from the API. */
  apiPodRemoved(pod: KubeObject): void {
    if (isMirrorPod(pod)) return this.mirrors.removed(pod);
    const rec = this.table.get(pod.metadata.uid!);
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
      const rec = this.table.get(uid);
      if (rec) {
        rec.removed = true;
        this.requestSync(uid);
      }
    }
    for (const [uid, pod] of next) {
      const rec = this.table.get(uid);
      if (rec) {
        rec.pod = { ...pod, status: rec.pod.status };
        this.requestSync(uid);
      } else this.add(pod, source);
    }
    void this.syncMirrors();
  }

  /** The first full list of every source arrived: admit what waited, oldest first (kubelet's HandlePodAdditions). */
  markSynced(): void {
    const waiting = this.admission.markSynced();
    if (!waiting) return;
    this.network.reserveKnownAddresses(waiting);
    for (const rec of waiting) this.admission.admit(rec);
    void this.syncMirrors();
    void this.removeOrphans();
  }

  /** Sandboxes the runtime still has of pods no source wants any more (deleted while the agent was down). */
  private async removeOrphans(): Promise<void> {
    const runtime = this.o.runtime;
    for (const uid of runtime.podUIDs?.() ?? []) {
      if (this.table.get(uid)) continue;
      await runtime
        .removeSandbox?.(uid)
        .catch((err) => log.warn('removing an orphaned pod failed', { uid, err: String(err) }));
      log.info('orphaned pod removed from the runtime', { uid });
    }
  }

  /** The Node was registered (mirror pods can be owned by it now). */
  nodeRegistered(): void {
    void this.syncMirrors();
  }

  private add(pod: KubeObject, source: PodSource): void {
    const rec = newPodRecord(pod, source);
    rec.startTrace = newStartTrace();
    this.table.add(rec);
    this.admission.add(rec);
  }

  /** Creates missing mirror pods, replaces stale ones and deletes orphans (the kubelet's mirror pod manager). */
  syncMirrors(): Promise<void> {
    return this.mirrors.sync();
  }

  /** Runs the pod's sync (again) — serialized per pod. */
  requestSync(uid: string, delayMs = 0): void {
    this.queue.request(uid, delayMs);
  }

  logPath(rec: PodRecord, container: string, restartCount: number): string {
    return this.logs.path(rec, container, restartCount);
  }

  // ---- queries (the server's) -------------------------------------------------

  /** The pods this agent runs, with the status it computed (static pods under their own uid). */
  /** The node status's volumesInUse: the local PVs mounted for pods. */
  volumesInUse(): string[] {
    return this.volumes?.inUse() ?? [];
  }

  runningPods(): KubeObject[] {
    return this.records().map((r) => ({
      ...r.pod,
      apiVersion: 'v1',
      kind: 'Pod',
      status: r.status ?? r.pod.status,
    }));
  }

  records(): PodRecord[] {
    return this.table.active();
  }

  podByName(ns: string, name: string): PodRecord | undefined {
    return this.table.byName(ns, name);
  }

  /** Where /containerLogs reads, with the kubelet's errors. */
  logTarget(ns: string, podName: string, container: string, previous: boolean): LogTarget {
    return this.logs.target(ns, podName, container, previous);
  }

  get size(): number {
    return this.records().length;
  }

  async stop(): Promise<void> {
    this.queue.stop();
    this.prober?.close();
    await this.objects?.close();
    await this.o.runtime.close();
  }
}
