// The node agent assembled: machine facts, the apiserver client, events,
// the runtime, registration and node status, the lease, the pod manager fed
// by the apiserver (an informer on pods bound to this node) and the static
// sources, and the three ports. cmd/nodeagent.ts builds the configuration and
// calls startNodeAgent; tests call it in-process too.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../../shared/client/client';
import { realClock, type Clock } from '../../shared/client/clock';
import { loadKubeconfig } from '../../shared/client/kubeconfig';
import type { KubeObject } from '../../shared/client/types';
import { EventBroadcaster, type EventRecorder } from '../../shared/events';
import { SharedInformerFactory, unwrapTombstone } from '../../shared/informers';
import { logger } from '../../shared/log';
import { MetricsRegistry } from '../../shared/metrics/registry';
import { processMetrics } from '../../shared/metrics/process';
import { featureGates } from '../../shared/options/feature-gates';
import { NodeLeaseController } from '../lease/lease';
import { hostResolvConfProblem, readHostResolvConf } from '../pods/dns';
import { PodManager } from '../pods/manager';
import { podLogDirectory } from '../pods/pod-logs';
import { FakeRuntime } from '../pods/runtime-fake';
import type { ContainerRuntime } from '../pods/runtime';
import { FileSource, HttpSource } from '../pods/sources';
import { NodeAuth } from '../server/auth';
import { NodeAgentServer, type Ports } from '../server/server';
import { servingCertificate } from '../server/tls';
import { KUBELET_VERSION, validateNodeLabels } from '../status/node';
import { NodeStatusManager } from '../status/node-status';
import {
  defaultNodeIP,
  readMachineInfo,
  SystemReader,
  type MachineInfo,
  type Readings,
} from '../status/sysinfo';
import type { NodeAgentConfig } from './config';
import { toKubeletConfiguration } from './configz';

const log = logger('nodeagent');

export interface RunningNodeAgent {
  config: NodeAgentConfig;
  machine: MachineInfo;
  ports: Ports;
  pods: PodManager;
  status?: NodeStatusManager;
  lease?: NodeLeaseController;
  /** SIGTERM: stop heartbeats and serving; the Node and the pods stay as they are in the API. */
  stop(): Promise<void>;
}

/** A recorder for standalone mode (no apiserver): events go to the log. */
const logRecorder: EventRecorder = {
  eventf(regarding: any, _related, type, reason, _action, note, ...args) {
    log.v(2)?.info('event', {
      type,
      reason,
      object: regarding?.name,
      note: args.length ? `${note} ${args.join(' ')}` : note,
    });
  },
};

function goArch(): string {
  return process.arch === 'x64' ? 'amd64' : process.arch;
}

/** The container runtime of --runtime: the fake one, or the CRI runtime (connected, its pods adopted). */
async function startRuntime(
  cfg: NodeAgentConfig,
  machine: MachineInfo,
  logsDir: string,
  clock: Clock,
): Promise<ContainerRuntime> {
  const logRotation = { maxSizeBytes: cfg.containerLogMaxSizeBytes, maxFiles: cfg.containerLogMaxFiles };
  if (cfg.runtime === 'fake') return new FakeRuntime({ clock, logRotation });
  if (cfg.runtime !== 'remote') throw new Error(`unsupported runtime "${cfg.runtime}"`);
  // Loaded only here: grpc-js, protobufjs and the CRI runtime are ~180 modules a node on the
  // fake runtime never runs (they were ~5 MB of its idle heap).
  const [{ CriClient }, { CriRuntime }] = await Promise.all([
    import('../../shared/cri/client.js'),
    import('../cri/runtime.js'),
  ]);
  const runtime = new CriRuntime({
    client: new CriClient({
      runtimeEndpoint: cfg.containerRuntimeEndpoint,
      imageEndpoint: cfg.imageServiceEndpoint,
      requestTimeoutMs: cfg.runtimeRequestTimeoutMs,
    }),
    clock,
    pod: { cgroupRoot: cfg.cgroupRoot },
    memoryCapacityBytes: machine.memoryCapacity,
    podLogDirectory: (pod) => podLogDirectory(logsDir, pod),
    sandboxImage: cfg.podInfraContainerImage,
    registryMirror: cfg.registryMirror,
    imageGC: {
      highThresholdPercent: cfg.imageGCHighThresholdPercent,
      lowThresholdPercent: cfg.imageGCLowThresholdPercent,
      minAgeMs: cfg.imageMinimumGCAgeMs,
    },
    logRotation,
  });
  try {
    await runtime.init();
  } catch (err) {
    await runtime.close();
    throw new Error(`container runtime at ${cfg.containerRuntimeEndpoint}: ${(err as Error).message}`, {
      cause: err,
    });
  }
  return runtime;
}

export async function startNodeAgent(
  cfg: NodeAgentConfig,
  o: { clock?: Clock } = {},
): Promise<RunningNodeAgent> {
  const clock = o.clock ?? realClock;
  featureGates.set(cfg.featureGates);
  for (const w of featureGates.warnings) log.warn(w);
  validateNodeLabels(cfg.nodeLabels);
  const startTime = clock.now();

  const machine = await readMachineInfo();
  const nodeIPs = cfg.nodeIPs.length ? cfg.nodeIPs : [defaultNodeIP()];
  const logsDir = join(cfg.rootDir, 'logs');
  mkdirSync(logsDir, { recursive: true });

  const client = cfg.kubeconfig
    ? Client.create(loadKubeconfig(cfg.kubeconfig), {
        qps: cfg.kubeAPIQPS,
        burst: cfg.kubeAPIBurst,
        contentType: cfg.contentType,
        userAgent: `kubelet/${KUBELET_VERSION} (${process.platform}/${goArch()}) kubernetes/tkube`,
        clock,
      })
    : undefined;
  if (!client) log.info('no --kubeconfig: standalone mode, static pods only');
  const broadcaster = client
    ? new EventBroadcaster(client, { qps: cfg.eventQPS, burst: cfg.eventBurst, clock, api: 'v1' })
    : undefined;
  const recorder = broadcaster ? broadcaster.newRecorder('kubelet', cfg.nodeName) : logRecorder;

  const runtime = await startRuntime(cfg, machine, logsDir, clock);
  const reader = new SystemReader(cfg.rootDir);
  /** Without an apiserver no status loop reads the machine: /stats gets its own readings. */
  let standaloneReadings: Readings | undefined;
  const runtimeVersion = `${runtime.type}://${runtime.version}`;

  const status = client
    ? new NodeStatusManager({
        client,
        config: cfg,
        machine,
        nodeIPs,
        runtimeVersion,
        read: () => reader.read(clock.now()),
        images: () => runtime.images(),
        volumesInUse: () => manager.volumesInUse(),
        runtimeNotReady: () => runtime.notReadyReason?.() ?? '',
        recorder,
        clock,
        onNode: () => manager.nodeRegistered(),
      })
    : undefined;
  const nodeUID = () => status?.current()?.metadata.uid;
  const lease = client
    ? new NodeLeaseController({
        client,
        nodeName: cfg.nodeName,
        leaseDurationSeconds: cfg.nodeLeaseDurationSeconds,
        nodeUID,
        clock,
      })
    : undefined;
  const manager: PodManager = new PodManager({
    client,
    nodeName: cfg.nodeName,
    maxPods: cfg.maxPods,
    runtime,
    recorder,
    logsDir,
    rootDir: cfg.rootDir,
    dns: { clusterDNS: cfg.clusterDNS, clusterDomain: cfg.clusterDomain, resolvConf: cfg.resolvConf },
    allocatable: () => status?.current()?.status?.allocatable,
    node: () => status?.current(),
    clock,
    nodeIPs: () => nodeIPs,
    nodeUID,
    podCIDR: () => cfg.podCIDR ?? status?.current()?.spec?.podCIDR,
    networkReady: () => !!cfg.podCIDR || !status || !!status.current(),
  });

  // Metrics of /metrics.
  const metrics = new MetricsRegistry({ currentVersion: KUBELET_VERSION.replace(/^v(\d+\.\d+).*$/, '$1') });
  processMetrics(metrics);
  metrics
    .gauge({ name: 'kubelet_node_name', help: "The node's name. The count is always 1.", labels: ['node'] })
    .set({ node: cfg.nodeName }, 1);
  metrics
    .gauge({
      name: 'kubernetes_build_info',
      help: "A metric with a constant '1' value labeled by major, minor, git version, git commit, git tree state, build date, Go version, and compiler from which Kubernetes was built, and platform on which it is running.",
      labels: ['git_version', 'platform'],
    })
    .set({ git_version: KUBELET_VERSION, platform: `${process.platform}/${goArch()}` }, 1);
  const runningPods = metrics.gauge({
    name: 'kubelet_running_pods',
    help: 'Number of pods that have a running pod sandbox',
    stability: 'ALPHA',
  });
  const runningContainers = metrics.gauge({
    name: 'kubelet_running_containers',
    help: 'Number of containers currently running',
    labels: ['container_state'],
  });
  metrics.addCollector(() => {
    const recs = manager.records();
    runningPods.set(
      undefined,
      recs.filter((r) => !r.terminal && r.startTime !== undefined && !r.rejected).length,
    );
    const counts: Record<string, number> = { created: 0, running: 0, exited: 0 };
    for (const r of recs) for (const c of runtime.containers(r.uid)) counts[c.state]++;
    for (const [state, n] of Object.entries(counts)) runningContainers.set({ container_state: state }, n);
  });

  // The sources.
  const ac = new AbortController();
  const factory = client
    ? new SharedInformerFactory(client, {
        clock,
        transform: (obj: KubeObject) => {
          if (obj.metadata?.managedFields) obj.metadata = { ...obj.metadata, managedFields: undefined };
          return obj;
        },
      })
    : undefined;
  let podHandler: { hasSynced(): boolean } | undefined;
  if (factory) {
    const informer = factory.forResource('pods', { fieldSelector: `spec.nodeName=${cfg.nodeName}` });
    podHandler = informer.addEventHandler({
      onAdd: (pod) => manager.apiPodUpdated(pod),
      onUpdate: (_old, pod) => manager.apiPodUpdated(pod),
      onDelete: (obj) => manager.apiPodRemoved(unwrapTombstone(obj) as KubeObject),
    });
  }
  const sourceOpts = {
    nodeName: cfg.nodeName,
    clock,
    onPods: (source: any, list: KubeObject[]) => manager.setStaticPods(source, list),
  };
  const fileSource = cfg.podManifestPath
    ? new FileSource(cfg.podManifestPath, cfg.fileCheckFrequencyMs, sourceOpts)
    : undefined;
  const httpSource = cfg.manifestURL
    ? new HttpSource(cfg.manifestURL, cfg.manifestURLHeader, cfg.httpCheckFrequencyMs, sourceOpts)
    : undefined;

  // The ports.
  const tls = await servingCertificate(cfg, nodeIPs);
  const auth = new NodeAuth({
    nodeName: cfg.nodeName,
    anonymous: cfg.anonymousAuth,
    x509: !!tls.clientCaPem,
    webhookAuthentication: cfg.webhookAuthentication,
    webhookAuthenticationCacheTTLMs: cfg.webhookAuthenticationCacheTTLMs,
    authorizationMode: cfg.authorizationMode,
    authorizedCacheTTLMs: cfg.authorizedCacheTTLMs,
    unauthorizedCacheTTLMs: cfg.unauthorizedCacheTTLMs,
    client,
    clock,
  });
  const server = new NodeAgentServer({
    config: cfg,
    tls,
    auth,
    pods: manager,
    runtime,
    stats: {
      nodeName: cfg.nodeName,
      machine,
      readings: () => status?.readings() ?? standaloneReadings,
      pods: () => manager.records(),
      startTime,
      currentVersion: KUBELET_VERSION.replace(/^v(\d+\.\d+).*$/, '$1'),
      usage: (id) => runtime.containerUsage?.(id),
    },
    metrics,
    configz: () => toKubeletConfiguration(cfg),
    logsDir,
    checks: () => ({ syncloop: true }),
    clock,
  });
  const ports = await server.listen();

  // Run.
  const loops: Promise<void>[] = [];
  if (status) {
    recorder.eventf(
      { apiVersion: 'v1', kind: 'Node', name: cfg.nodeName, uid: cfg.nodeName },
      null,
      'Normal',
      'Starting',
      'StartKubelet',
      'Starting kubelet.',
    );
    loops.push(status.run(ac.signal));
  }
  // The lease is owned by the Node: start renewing once the Node is there.
  if (!status) {
    loops.push(
      (async () => {
        while (!ac.signal.aborted) {
          standaloneReadings = await reader.read(clock.now()).catch(() => standaloneReadings);
          await clock.sleep(cfg.nodeStatusUpdateFrequencyMs, ac.signal);
        }
      })(),
    );
  }
  if (lease)
    loops.push(
      (status ? status.whenRegistered(ac.signal) : Promise.resolve()).then(() => lease.run(ac.signal)),
    );
  if (cfg.resolvConf)
    loops.push(
      (async () => {
        // kubelet's check of the pods' base resolv.conf, every 30 s (the recorder counts repeats).
        while (!ac.signal.aborted) {
          let text: string | Error;
          try {
            text = readHostResolvConf(cfg.resolvConf);
          } catch (err) {
            text = err as Error;
          }
          const problem = hostResolvConfProblem(cfg.resolvConf, text, cfg.clusterDomain);
          if (problem)
            recorder.eventf(
              { apiVersion: 'v1', kind: 'Node', name: cfg.nodeName, uid: cfg.nodeName },
              null,
              'Warning',
              'CheckLimitsForResolvConf',
              'CheckLimitsForResolvConf',
              '%s',
              problem,
            );
          await clock.sleep(30_000, ac.signal);
        }
      })(),
    );
  fileSource?.start();
  const sourcesReady = (async () => {
    await httpSource?.start();
    if (factory) {
      factory.start(ac.signal);
      await factory.waitForCacheSync(ac.signal);
      // The handler gets the initial list asynchronously: admit only once it has seen all of it.
      while (podHandler && !podHandler.hasSynced() && !ac.signal.aborted) await clock.sleep(10, ac.signal);
    }
    if (!ac.signal.aborted) manager.markSynced();
  })();
  loops.push(sourcesReady);
  log.info('node agent started', {
    node: cfg.nodeName,
    nodeIPs,
    runtime: runtimeVersion,
    rootDir: cfg.rootDir,
    ...ports,
  });

  let stopped = false;
  return {
    config: cfg,
    machine,
    ports,
    pods: manager,
    status,
    lease,
    async stop() {
      if (stopped) return;
      stopped = true;
      ac.abort();
      fileSource?.stop();
      httpSource?.stop();
      await factory?.shutdown();
      await server.close();
      await manager.stop();
      await Promise.allSettled(loops);
      await broadcaster?.shutdown(2000);
      await client?.close();
      featureGates.reset();
      log.info('node agent stopped', { node: cfg.nodeName });
    },
  };
}
