// The process that hosts the simulated nodes (--simulated-nodes N): one
// client whose rate limit is N nodes' worth of --kube-api-qps/--kube-api-burst,
// one pod informer, N Node registrations, leases and status reports spread over
// their periods on one timer wheel (timer-wheel.ts), each node's kubelet API on
// a port of its own (kubelet-api.ts), and /healthz (healthz port) plus /healthz and /metrics on the read-only port.
import { setMaxListeners } from 'node:events';
import { createServer, type Server } from 'node:http';
import { Client } from '../../shared/client/client';
import { realClock } from '../../shared/client/clock';
import { loadKubeconfig } from '../../shared/client/kubeconfig';
import type { KubeObject } from '../../shared/client/types';
import { forEachConcurrently, SharedInformerFactory } from '../../shared/informers';
import { logger } from '../../shared/log';
import { METRICS_CONTENT_TYPE, MetricsRegistry } from '../../shared/metrics/registry';
import { processMetrics } from '../../shared/metrics/process';
import { KUBELET_VERSION } from '../status/node';
import type { NodeAgentConfig } from '../app/config';
import { SimulatedNode } from './nodes';
import { SimulatedPods } from './pods';
import { SimulatedKubeletAPI } from './kubelet-api';
import { servingCertificate } from '../server/tls';
import { TimerWheel } from './timer-wheel';
import { limitHeapGrowth } from '../../shared/heap/growth';

const log = logger('simulated-nodes');

/**
 * The heap's growth past its live size before a full collection. The pod cache is most of
 * the heap, and with V8's own factor the agent held ~2.3x its live heap. At 5,000 nodes x 30
 * pods: 876 MiB with 30%, 978 with 50%, 1,177 with V8's own, at the same pace or better.
 */
const HEAP_GROWING_PERCENT = 30;
/** Nodes registered at once. */
const REGISTER_CONCURRENCY = 50;
/**
 * The connections of the agent's one client. Unbounded, every request that finds the pool busy
 * opens one more: thousands of nodes' renewals at once became thousands of TLS handshakes that
 * took the apiserver's event loop (connect timeouts, and every client's renewals late). kwok's
 * one client-go client holds a single HTTP/2 connection. HTTP/1.1 carries one request at a time
 * on each: 5,000 nodes renew 500 Leases a second, and at 32 connections (~100 ms a write on a
 * loaded host) they got half of that, renewals 20 s apart instead of 10.
 */
export const CLIENT_CONNECTIONS = 128;

export interface RunningSimulatedNodes {
  nodes: SimulatedNode[];
  pods: SimulatedPods;
  ports: { readOnlyPort: number; healthzPort: number };
  stop(): Promise<void>;
}

const sleep = (ms: number, signal: AbortSignal) => realClock.sleep(ms, signal);

export async function startSimulatedNodes(
  cfg: NodeAgentConfig,
  count: number,
): Promise<RunningSimulatedNodes> {
  if (!cfg.kubeconfig) throw new Error('--simulated-nodes needs --kubeconfig');
  const unlimitHeapGrowth = limitHeapGrowth(HEAP_GROWING_PERCENT);
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const perNode = (v: number) => (v > 0 ? v * count : v);
  const client = Client.create(loadKubeconfig(cfg.kubeconfig), {
    qps: perNode(cfg.kubeAPIQPS),
    burst: perNode(cfg.kubeAPIBurst),
    contentType: cfg.contentType,
    userAgent: `kubelet/${KUBELET_VERSION} (${process.platform}/${arch}) kubernetes/tkube/simulated`,
    // HTTP/1.1: CLIENT_CONNECTIONS sockets, sized for thousands of nodes' renewals (see above).
    http2: false,
    connections: CLIENT_CONNECTIONS,
  });
  const ac = new AbortController();
  const signal = ac.signal;
  // Every node's lease and status loop listens to it.
  setMaxListeners(0, signal);
  const nodes = Array.from({ length: count }, (_, i) => new SimulatedNode(cfg, i, client));
  const byName = new Map(nodes.map((n) => [n.name, n]));

  const metrics = new MetricsRegistry({ currentVersion: KUBELET_VERSION.replace(/^v(\d+\.\d+).*$/, '$1') });
  processMetrics(metrics);
  const nodeGauge = metrics.gauge({
    name: 'kubelet_node_name',
    help: "The node's name. The count is always 1.",
    labels: ['node'],
  });
  for (const n of nodes) nodeGauge.set({ node: n.name }, 1);

  const servers: Server[] = [];
  const listen = (
    port: number,
    host: string,
    paths: Record<string, () => [string, string]>,
  ): Promise<number> =>
    new Promise((resolve, reject) => {
      const s = createServer((req, res) => {
        const handler = paths[(req.url ?? '').split('?')[0]];
        if (!handler) {
          res.writeHead(404).end('404 page not found\n');
          return;
        }
        const [type, body] = handler();
        res.writeHead(200, { 'content-type': type }).end(body);
      });
      s.once('error', reject);
      s.listen(port, host, () => {
        servers.push(s);
        const a = s.address();
        resolve(typeof a === 'object' && a ? a.port : port);
      });
    });
  const healthz = (): [string, string] => ['text/plain; charset=utf-8', 'ok'];
  const ports = {
    healthzPort:
      cfg.healthzPort > 0
        ? await listen(cfg.healthzPort, cfg.healthzBindAddress, { '/healthz': healthz })
        : 0,
    readOnlyPort:
      cfg.readOnlyPort > 0
        ? await listen(cfg.readOnlyPort, cfg.address, {
            '/healthz': healthz,
            '/metrics': () => [METRICS_CONTENT_TYPE, metrics.expose()],
          })
        : 0,
  };

  const factory = new SharedInformerFactory(client, {
    transform: (obj: KubeObject) => {
      if (obj.metadata?.managedFields) obj.metadata = { ...obj.metadata, managedFields: undefined };
      return obj;
    },
  });
  const pods = new SimulatedPods(client, factory, byName);
  // The Nodes as the apiserver has them, kept to their names and conditions only (N small
  // objects): a node another writer marked not Ready reports again at its next turn.
  const nodeInformers = new SharedInformerFactory(client, {
    transform: (n: KubeObject) => ({
      metadata: { name: n.metadata?.name, resourceVersion: n.metadata?.resourceVersion },
      status: { conditions: n.status?.conditions },
    }),
  });
  const observed = (n: KubeObject) => byName.get(n.metadata?.name ?? '')?.observed(n.status?.conditions);
  nodeInformers.forResource('nodes').addEventHandler({ onAdd: observed, onUpdate: (_old, n) => observed(n) });

  // The nodes' kubelet API: their ports are in the Nodes they register.
  const tls = await servingCertificate(cfg, cfg.nodeIPs.length ? cfg.nodeIPs : ['127.0.0.1']);
  const api = new SimulatedKubeletAPI({ config: cfg, tls, client, metrics, pods });
  await api.listen(nodes);

  // Register every node (a bounded number at a time), then put its lease renewals and status
  // reports on the one wheel. Their requests carry no signal: the stop closes the client.
  const wheel = new TimerWheel();
  const loops: Promise<void>[] = [];
  const register = async (n: SimulatedNode) => {
    if (signal.aborted) return;
    for (let delay = 1000; !signal.aborted; delay = Math.min(delay * 2, 30_000)) {
      try {
        await n.register(signal);
        break;
      } catch (err) {
        log.error('Unable to register node', { node: n.name, err: String(err) });
        await sleep(delay, signal);
      }
    }
    // Renewals and reports start at a random point of their period so N nodes do not beat together.
    wheel.schedule(() => n.lease.renewTurn(), Math.random() * n.lease.renewIntervalMs);
    wheel.schedule(() => statusTurn(n), Math.random() * cfg.nodeStatusUpdateFrequencyMs);
  };
  const statusTurn = async (n: SimulatedNode): Promise<number> => {
    await n.report().catch((err) => {
      if (!signal.aborted) log.error('Error updating node status', { node: n.name, err: String(err) });
    });
    return cfg.nodeStatusUpdateFrequencyMs;
  };
  await forEachConcurrently(nodes, REGISTER_CONCURRENCY, register);
  log.info('simulated nodes registered', { nodes: count });

  factory.start(signal);
  nodeInformers.start(signal);
  // A kubelet syncs each of its pods in a worker of its own: as many workers as the client has
  // connections, or 10,000 pods bound at once wait in the queue for seconds (16 workers: 8 s p50).
  loops.push(pods.run(signal, Math.min(CLIENT_CONNECTIONS, Math.max(16, count))));

  let stopped = false;
  return {
    nodes,
    pods,
    ports,
    async stop() {
      if (stopped) return;
      stopped = true;
      ac.abort();
      const wheelStopped = wheel.stop();
      await factory.shutdown();
      await nodeInformers.shutdown();
      await Promise.allSettled(loops);
      await api.close();
      for (const s of servers) await new Promise((r) => s.close(r));
      // Renewals and reports in flight end with the connections.
      await client.close();
      await wheelStopped;
      unlimitHeapGrowth();
      log.info('simulated nodes stopped', { nodes: count });
    },
  };
}
