// kube-proxy's service health servers (pkg/proxy/healthcheck/service_health.go):
// an externalTrafficPolicy: Local LoadBalancer's healthCheckNodePort answers on
// the NodePort addresses with this node's endpoint count — 200 while there is
// one and the proxy is healthy, else 503 — so that a load balancer sends
// traffic only to nodes that have endpoints. One HTTP server per port and
// address, opened and closed as Services come and go (after each sync).
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { Logger } from '../shared/log';
import type { RuleSet } from './model';

interface Target {
  namespace: string;
  name: string;
  localEndpoints: number;
}

/** The health check ports of a rule set and what each reports. */
export function healthCheckTargets(rs: RuleSet): Map<number, Target> {
  const out = new Map<number, Target>();
  for (const sp of rs.servicePorts) {
    if (sp.healthCheckNodePort === undefined || out.has(sp.healthCheckNodePort)) continue;
    out.set(sp.healthCheckNodePort, {
      namespace: sp.namespace,
      name: sp.service,
      localEndpoints: sp.localEndpoints.filter((e) => e.ready).length,
    });
  }
  return out;
}

export class ServiceHealthServers {
  private readonly targets = new Map<number, Target>();
  private readonly servers = new Map<number, Server[]>();

  constructor(
    /** The proxy's own health (kube-proxy's healthz state). */
    private readonly proxyHealthy: () => boolean,
    private readonly log: Logger,
  ) {}

  /** The ports served now. */
  get ports(): number[] {
    return [...this.servers.keys()];
  }

  /** Serves the rule set's health check ports (on its NodePort addresses), closes the others. */
  async sync(rs: RuleSet): Promise<void> {
    const next = healthCheckTargets(rs);
    for (const port of [...this.servers.keys()]) if (!next.has(port)) await this.close(port);
    this.targets.clear();
    for (const [port, t] of next) this.targets.set(port, t);
    const hosts = rs.nodePortIPs === 'local' ? ['0.0.0.0'] : rs.nodePortIPs;
    for (const port of next.keys()) {
      if (this.servers.has(port)) continue;
      const servers: Server[] = [];
      this.servers.set(port, servers);
      for (const host of hosts) {
        const server = createServer((_req, res) => this.answer(port, res));
        try {
          await new Promise<void>((resolve, reject) => {
            server.once('error', reject);
            server.listen(port, host, () => resolve());
          });
          servers.push(server);
        } catch (err) {
          this.log.error('cannot serve a healthCheckNodePort', { port, host, err: String(err) });
        }
      }
    }
  }

  private answer(port: number, res: ServerResponse): void {
    const t = this.targets.get(port);
    const count = t?.localEndpoints ?? 0;
    const healthy = this.proxyHealthy();
    res.writeHead(count > 0 && healthy ? 200 : 503, {
      'Content-Type': 'application/json',
      'X-Content-Type-Options': 'nosniff',
      'X-Load-Balancing-Endpoint-Weight': String(count),
    });
    res.end(
      JSON.stringify(
        {
          service: { namespace: t?.namespace ?? '', name: t?.name ?? '' },
          localEndpoints: count,
          serviceProxyHealthy: healthy,
        },
        null,
        2,
      ),
    );
  }

  private async close(port: number): Promise<void> {
    for (const s of this.servers.get(port) ?? []) await new Promise((r) => s.close(() => r(undefined)));
    this.servers.delete(port);
  }

  async stop(): Promise<void> {
    for (const port of [...this.servers.keys()]) await this.close(port);
  }
}
