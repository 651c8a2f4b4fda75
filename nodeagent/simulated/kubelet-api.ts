// The kubelet API of every simulated node, from the one simulator process:
// each node listens on --address at a port the system picks (--port is one
// port, and a fixed range would collide with parallel clusters), published in
// its status.daemonEndpoints, so the apiserver's pods/log, node proxy and
// metrics-server (through the node proxy) reach it as they reach a kubelet.
// Distinct ports rather than distinct loopback addresses with the kubelet's
// port: nothing to set up, no two simulators fighting over 127.0.x.y:10250,
// and the nodes keep the address they report.
//
// Sockets are the only per-node cost: the listeners hand their connections to
// one HTTPS server (one TLS context, the handler the node agent uses), which
// tells the node by the port a connection came in on. What a node serves —
// its authorizer (SubjectAccessReview with its name, as the kubelet's) and
// views of its pods — is made on its first request. Figures are the fake
// runtime's synthetic load (tkube.io/fake-cpu, fake-memory) plus the node's
// own; logs are what the fake runtime writes when a container starts.
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createServer as createNetServer, type Server as NetServer } from 'node:net';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Client } from '../../shared/client/client';
import type { KubeObject } from '../../shared/client/types';
import { logger } from '../../shared/log';
import type { MetricsRegistry } from '../../shared/metrics/registry';
import type { NodeAgentConfig } from '../app/config';
import { toKubeletConfiguration } from '../app/configz';
import { criLogLine } from '../pods/logs';
import { logLookupErrors, podHasContainer, type LogTarget } from '../pods/pod-logs';
import type { ServedPod } from '../pods/records';
import type { ContainerRecord, ContainerUsage } from '../pods/runtime';
import { fakeExitLine, fakeStartLines, fakeUsage } from '../pods/runtime-fake';
import { NodeAuth } from '../server/auth';
import { KubeletHandler, text, type KubeletNode } from '../server/handler';
import { closeServer, listenOn } from '../server/server';
import type { Readings } from '../status/sysinfo';
import { StreamingEndpoints } from '../server/streaming';
import { secureServerOptions, type ServingCert } from '../server/tls';
import { KUBELET_VERSION } from '../status/node';
import { SIMULATED_CAPACITY, SIMULATED_SYSTEM_USAGE, type SimulatedNode } from './nodes';
import type { SimulatedPods } from './pods';

const log = logger('simulated-nodes');

export interface SimulatedKubeletOptions {
  config: NodeAgentConfig;
  tls: ServingCert;
  /** For the webhook authenticator and authorizer. */
  client: Client;
  metrics: MetricsRegistry;
  pods: SimulatedPods;
}

/** A status time in ms (the fallback when it is absent or unreadable). */
const timeOf = (t: string | undefined, fallback: number) => (t ? Date.parse(t) || fallback : fallback);

export class SimulatedKubeletAPI {
  private readonly server: HttpsServer;
  private readonly listeners: NetServer[] = [];
  private readonly byPort = new Map<number, SimulatedNode>();
  /** What each node serves, made on its first request. */
  private readonly served = new Map<SimulatedNode, KubeletNode>();
  private readonly handler: KubeletHandler;
  private readonly startTime = Date.now();

  constructor(private readonly o: SimulatedKubeletOptions) {
    this.handler = new KubeletHandler(o.metrics);
    this.server = createHttpsServer(secureServerOptions(o.tls, o.config.tlsMinVersion), (req, res) => {
      const node = this.nodeOf(req);
      if (!node) return text(res, 404, '404 page not found\n');
      void this.handler.serve(node, req, res, 'secure');
    });
    this.server.on('upgrade', (req: IncomingMessage, socket: Duplex, head: Buffer) => {
      const node = this.nodeOf(req);
      if (!node) return socket.destroy();
      void this.handler.upgrade(node, req, socket, head);
    });
  }

  /** Opens a port for each node and sets it as the node's kubelet port. */
  async listen(nodes: SimulatedNode[]): Promise<void> {
    const c = this.o.config;
    for (const n of nodes) {
      const l = createNetServer((socket) => this.server.emit('connection', socket));
      const port = await listenOn(l, 0, c.address);
      this.listeners.push(l);
      this.byPort.set(port, n);
      n.kubeletPort = port;
    }
    log.info('serving the kubelet API', { nodes: nodes.length, address: c.address });
  }

  async close(): Promise<void> {
    this.handler.closeStreams();
    for (const l of this.listeners) l.close();
    await closeServer(this.server);
    this.listeners.length = 0;
  }

  private nodeOf(req: IncomingMessage): KubeletNode | undefined {
    const n = this.byPort.get(req.socket.localPort ?? 0);
    if (!n) return undefined;
    let served = this.served.get(n);
    if (!served) this.served.set(n, (served = this.kubeletNode(n)));
    return served;
  }

  private kubeletNode(n: SimulatedNode): KubeletNode {
    const c = this.o.config;
    const pods = this.o.pods;
    const served = () => pods.onNode(n.name).map(servedPod);
    const byName = (ns: string, name: string) =>
      pods.onNode(n.name).find((p) => p.metadata.namespace === ns && p.metadata.name === name);
    return {
      auth: new NodeAuth({
        nodeName: n.name,
        anonymous: c.anonymousAuth,
        x509: !!this.o.tls.clientCaPem,
        webhookAuthentication: c.webhookAuthentication,
        webhookAuthenticationCacheTTLMs: c.webhookAuthenticationCacheTTLMs,
        authorizationMode: c.authorizationMode,
        authorizedCacheTTLMs: c.authorizedCacheTTLMs,
        unauthorizedCacheTTLMs: c.unauthorizedCacheTTLMs,
        client: this.o.client,
      }),
      pods: {
        runningPods: () => pods.onNode(n.name).map((p) => ({ ...p, apiVersion: 'v1', kind: 'Pod' })),
        logTarget: (ns, name, container, previous) => {
          const pod = byName(ns, name);
          if (!pod) throw logLookupErrors.noPod(name);
          return logTarget(pod, container, previous, () => {
            const now = pods.byUID(pod.metadata.uid!);
            return !!now && !now.metadata.deletionTimestamp;
          });
        },
      },
      stats: {
        nodeName: n.name,
        machine: n.machine,
        readings: () => this.readings(served()),
        pods: served,
        startTime: this.startTime,
        currentVersion: KUBELET_VERSION.replace(/^v(\d+\.\d+).*$/, '$1'),
        usage: (id) => this.usage(id),
      },
      streaming: new StreamingEndpoints({
        pods: {
          podByName: (ns, name) => {
            const p = byName(ns, name);
            return p && servedPod(p);
          },
        },
        runtimeName: c.runtime,
      }),
      configz: () => toKubeletConfiguration(n.config),
      checks: () => ({ syncloop: true }),
    };
  }

  /** A running container's synthetic load, by the container ID its pod reports. */
  private usage(containerID: string): ContainerUsage | undefined {
    const m = /^fake:\/\/([^/]+)\/(.+)$/.exec(containerID);
    const pod = m && this.o.pods.byUID(m[1]);
    const started = pod?.status?.containerStatuses?.find((s: any) => s.name === m![2])?.state?.running;
    if (!pod || !started) return undefined;
    const now = Date.now();
    return fakeUsage(pod, m![2], timeOf(started.startedAt, now), now);
  }

  /** The node's figures: its own load (SIMULATED_SYSTEM_USAGE) and its running containers'. */
  private readings(pods: ServedPod[]): Readings {
    const now = Date.now();
    const own = SIMULATED_SYSTEM_USAGE;
    let nanoCores = own.milliCPU * 1e6;
    let cpuTime = (nanoCores * (now - this.startTime)) / 1000;
    let memory = own.memoryBytes;
    for (const p of pods)
      for (const s of p.containers.values()) {
        const u = s.current?.state === 'running' ? this.usage(s.current.id) : undefined;
        if (!u) continue;
        nanoCores += u.cpuNanoCores;
        cpuTime += u.cpuCoreNanoSeconds;
        memory += u.memoryWorkingSetBytes;
      }
    const disk = SIMULATED_CAPACITY.ephemeralStorage;
    return {
      time: now,
      memory: {
        capacity: SIMULATED_CAPACITY.memory,
        available: SIMULATED_CAPACITY.memory - memory,
        used: memory,
      },
      fs: { device: 'simulated', mountpoint: '/', capacity: disk, available: disk, used: 0 },
      pids: { max: 4_194_304, running: 0 },
      cpu: { usageCoreNanoSeconds: Math.round(cpuTime), usageNanoCores: nanoCores },
    };
  }
}

/** The containers a simulated pod reports, as container records (from its status). */
function servedPod(pod: KubeObject): ServedPod {
  const containers = new Map<string, { current?: ContainerRecord }>();
  const st = pod.status ?? {};
  const add = (s: any, kind: ContainerRecord['kind']) => {
    const running = s.state?.running;
    const done = s.state?.terminated;
    if (!s.containerID || (!running && !done)) return;
    const startedAt = timeOf(running?.startedAt ?? done?.startedAt, Date.now());
    containers.set(s.name, {
      current: {
        id: s.containerID,
        podUID: pod.metadata.uid!,
        name: s.name,
        kind,
        image: s.image,
        imageID: s.imageID,
        attempt: s.restartCount ?? 0,
        state: running ? 'running' : 'exited',
        createdAt: startedAt,
        startedAt,
        logPath: '',
        ...(done ? { finishedAt: timeOf(done.finishedAt, startedAt), exitCode: done.exitCode ?? 0 } : {}),
      },
    });
  };
  for (const s of st.initContainerStatuses ?? []) add(s, 'init');
  for (const s of st.containerStatuses ?? []) add(s, 'regular');
  return { uid: pod.metadata.uid!, pod, startTime: timeOf(st.startTime, Date.now()), containers };
}

/** A simulated container's log: what the fake runtime writes at its start (and exit), at those times. */
function logTarget(
  pod: KubeObject,
  container: string,
  previous: boolean,
  podStays: () => boolean,
): LogTarget {
  const name = pod.metadata.name!;
  if (!podHasContainer(pod, container)) throw logLookupErrors.noContainer(container, name);
  // Simulated containers never restart: there is no previous instance.
  if (previous) throw logLookupErrors.noPrevious(container, name);
  const c = servedPod(pod).containers.get(container)?.current;
  if (!c) throw logLookupErrors.waiting(container, name, 'ContainerCreating');
  const lines: [number, string][] = fakeStartLines(c.name, c.image, c.attempt).map((l) => [c.startedAt!, l]);
  if (c.state === 'exited') lines.push([c.finishedAt!, fakeExitLine(c.name, c.exitCode!)]);
  const text = lines.map(([at, line], seq) => criLogLine(at, seq, 'stdout', line)).join('');
  return { path: '', text, running: () => c.state === 'running' && podStays() };
}
