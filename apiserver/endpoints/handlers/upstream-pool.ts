// Connection pools to proxy upstreams (node agents for nodes/proxy and pods/log, aggregated
// APIServices), one per set of TLS credentials and timeout, as kube-apiserver keeps one kubelet
// client transport. A dispatcher per request cost a TCP connection, a TLS handshake on both ends
// and a secure context (certificate, key and CA parsed again) per request: metrics-server's
// scrape of 5,000 simulated nodes through nodes/proxy is 333 such requests a second.
import { createSecureContext } from 'node:tls';
import type { Agent } from 'undici';
import type { UpstreamLocation } from '../../registry/registry';

/** Distinct credential sets kept (the least recently used pool is closed beyond). */
const MAX_POOLS = 64;
/**
 * Connections per upstream origin: every simulated node of one agent is one origin, and a
 * scrape round of thousands of them would otherwise open a connection each at once.
 */
export const UPSTREAM_CONNECTIONS = 128;

const pools = new Map<string, Agent>();

/** The pooled dispatcher for an upstream's credentials. */
export async function upstreamDispatcher(loc: UpstreamLocation): Promise<Agent> {
  // Loaded on first use: most apiservers never proxy, and undici is a large module.
  const { Agent } = await import('undici');
  const key = JSON.stringify([
    loc.caPem ?? '',
    loc.certPem ?? '',
    loc.keyPem ?? '',
    !!loc.insecure,
    loc.serverName ?? '',
    loc.timeoutMs ?? 0,
  ]);
  let pool = pools.get(key);
  if (pool) {
    // Most recently used last.
    pools.delete(key);
    pools.set(key, pool);
    return pool;
  }
  pool = new Agent({
    connect: {
      // One context for every connection of the pool (undici would build one per connection).
      secureContext: createSecureContext({ ca: loc.caPem, cert: loc.certPem, key: loc.keyPem }),
      rejectUnauthorized: !loc.insecure,
      ...(loc.serverName ? { servername: loc.serverName } : {}),
    },
    headersTimeout: loc.timeoutMs,
    connectTimeout: loc.timeoutMs,
    bodyTimeout: 0,
    connections: UPSTREAM_CONNECTIONS,
  });
  pools.set(key, pool);
  if (pools.size > MAX_POOLS) {
    const [oldest, old] = pools.entries().next().value!;
    pools.delete(oldest);
    // Requests under way finish first.
    void old.close();
  }
  return pool;
}

/** How many pools are open (for tests). */
export function upstreamPoolCount(): number {
  return pools.size;
}
