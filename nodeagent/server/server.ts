// The node agent's HTTP endpoints on the kubelet's three ports (the routes are handler.ts):
//   --port (10250)          HTTPS, authenticated and authorized
//   --read-only-port (10255) plain HTTP, no auth
//   --healthz-port (10248)  plain HTTP on --healthz-bind-address: /healthz
// Port 0 disables the read-only and healthz ports (tests pick free ports).
import { createServer as createHttpServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import type { Duplex } from 'node:stream';
import type { Clock } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import type { MetricsRegistry } from '../../shared/metrics/registry';
import type { NodeAgentConfig } from '../app/config';
import type { PodManager } from '../pods/manager';
import type { ContainerRuntime } from '../pods/runtime';
import type { NodeAuth } from './auth';
import { KubeletHandler, type KubeletNode } from './handler';
import { StreamingEndpoints } from './streaming';
import type { StatsSources } from './stats';
import { secureServerOptions, type ServingCert } from './tls';

const log = logger('nodeagent/server');

export interface ServerDeps {
  config: NodeAgentConfig;
  tls: ServingCert;
  auth: NodeAuth;
  pods: PodManager;
  /** Serves exec, attach, port-forward and run (absent: the runtime of config.runtime has none of them). */
  runtime?: ContainerRuntime;
  stats: StatsSources;
  metrics: MetricsRegistry;
  /** The effective configuration (GET /configz). */
  configz(): Record<string, unknown>;
  /** <root-dir>/logs, served at /logs/. */
  logsDir: string;
  /** Named health checks; all must pass for /healthz. */
  checks(): Record<string, boolean>;
  clock?: Clock;
}

export interface Ports {
  port: number;
  readOnlyPort: number;
  healthzPort: number;
}

/** Listens on a port; resolves with the port bound (port 0: the one the system picked). */
export function listenOn(server: NetServer, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** Closes a server and the connections it still has. */
export function closeServer(s: Server | HttpsServer): Promise<void> {
  return new Promise<void>((r) => {
    s.close(() => r());
    s.closeAllConnections?.();
  });
}

export class NodeAgentServer {
  private readonly servers: Server[] = [];
  private readonly handler: KubeletHandler;
  private readonly node: KubeletNode;
  readonly ports: Ports = { port: 0, readOnlyPort: 0, healthzPort: 0 };

  constructor(private readonly d: ServerDeps) {
    this.handler = new KubeletHandler(d.metrics, d.clock);
    this.node = {
      auth: d.auth,
      pods: d.pods,
      stats: d.stats,
      streaming: new StreamingEndpoints({ pods: d.pods, runtime: d.runtime, runtimeName: d.config.runtime }),
      configz: d.configz,
      checks: d.checks,
      logsDir: d.logsDir,
    };
  }

  private async listenOn(server: Server, port: number, host: string): Promise<number> {
    const bound = await listenOn(server, port, host);
    this.servers.push(server);
    return bound;
  }

  /** Opens the ports (0 for read-only or healthz: not served). */
  async listen(): Promise<Ports> {
    const c = this.d.config;
    const secure = createHttpsServer(
      secureServerOptions(this.d.tls, c.tlsMinVersion),
      (req, res) => void this.handler.serve(this.node, req, res, 'secure'),
    );
    secure.on(
      'upgrade',
      (req: IncomingMessage, socket: Duplex, head: Buffer) =>
        void this.handler.upgrade(this.node, req, socket, head),
    );
    this.ports.port = await this.listenOn(secure, c.port, c.address);
    if (c.readOnlyPort > 0) {
      const ro = createHttpServer((req, res) => void this.handler.serve(this.node, req, res, 'readonly'));
      this.ports.readOnlyPort = await this.listenOn(ro, c.readOnlyPort, c.address);
    }
    if (c.healthzPort > 0) {
      const hz = createHttpServer((req, res) => void this.handler.serve(this.node, req, res, 'healthz'));
      this.ports.healthzPort = await this.listenOn(hz, c.healthzPort, c.healthzBindAddress);
    }
    log.info('serving', { address: c.address, ...this.ports });
    return this.ports;
  }

  /** Stops accepting, ends open streams (log follows), and closes the ports. */
  async close(): Promise<void> {
    this.handler.closeStreams();
    await Promise.all(this.servers.map(closeServer));
    this.servers.length = 0;
  }
}
