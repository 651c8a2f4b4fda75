// kube-proxy's two plain-HTTP servers: health (:10256 /healthz and /livez, JSON
// with lastUpdated/currentTime) and metrics (:10249 /metrics, /proxyMode).
// Healthy means no Service or EndpointSlice change has waited longer than
// healthTimeout (2 x --sync-period) to be applied.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { METRICS_CONTENT_TYPE, type MetricsRegistry } from '../../shared/metrics/registry';
import type { ProxyMetrics } from '../metrics';
import type { Proxier } from '../proxier';

export interface HealthState {
  healthy: boolean;
  body: Record<string, unknown>;
}

export function healthState(
  proxier: Proxier,
  healthTimeoutMs: number,
  now: number,
  withNode: boolean,
): HealthState {
  const healthy = proxier.queuedAt === undefined || now - proxier.queuedAt < healthTimeoutMs;
  const lastUpdated = new Date(proxier.lastUpdated ?? 0).toISOString();
  return {
    healthy,
    body: {
      lastUpdated,
      currentTime: new Date(now).toISOString(),
      // The Node object is not watched yet: the node is taken to be eligible.
      ...(withNode ? { nodeEligible: true } : {}),
      healthy,
      status: { IPv4: { lastUpdated, healthy } },
    },
  };
}

export interface ProxyServer {
  port: number;
  close(): Promise<void>;
}

async function listen(server: Server, address: string): Promise<ProxyServer> {
  const i = address.lastIndexOf(':');
  const host = address.slice(0, i).replace(/^\[|\]$/g, '') || '0.0.0.0';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(Number(address.slice(i + 1)), host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise((r) => server.close(() => r())),
  };
}

export function serveHealth(
  address: string,
  proxier: Proxier,
  metrics: ProxyMetrics,
  healthTimeoutMs: number,
): Promise<ProxyServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/healthz' && path !== '/livez') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    const s = healthState(proxier, healthTimeoutMs, Date.now(), path === '/healthz');
    const code = s.healthy ? 200 : 503;
    (path === '/healthz' ? metrics.healthz : metrics.livez).inc({ code: String(code) });
    res
      .writeHead(code, { 'Content-Type': 'application/json', 'X-Content-Type-Options': 'nosniff' })
      .end(JSON.stringify(s.body));
  });
  return listen(server, address);
}

export function serveMetrics(address: string, registry: MetricsRegistry, mode: string): Promise<ProxyServer> {
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path === '/metrics')
      res.writeHead(200, { 'Content-Type': METRICS_CONTENT_TYPE }).end(registry.expose());
    else if (path === '/proxyMode')
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end(mode);
    else if (path === '/healthz')
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' }).end('ok');
    else res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
  });
  return listen(server, address);
}
