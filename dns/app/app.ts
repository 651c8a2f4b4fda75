// The DNS server as a running process: informers -> record index -> the DNS
// wire, with CoreDNS's health (/health on 8080), ready (/ready on 8181, 200
// once the informers synced) and prometheus (/metrics on 9153) ports.
import { createServer, type Server } from 'node:http';
import { Client, type KubeObject } from '../../shared/client';
import { SharedInformerFactory } from '../../shared/informers';
import { METRICS_CONTENT_TYPE } from '../../shared/metrics/registry';
import type { FlagValues } from '../../shared/options/flags';
import { logger } from '../../shared/log';
import { Resolver, type PodsMode } from '../answer';
import { Forwarder, parseUpstreams } from '../forward';
import { DnsMetrics } from '../metrics';
import { RecordIndex } from '../records';
import { DnsServer } from '../server';
import { watchCluster } from '../watch';

const log = logger('dns');

export interface RunningDns {
  dnsPort: number;
  healthPort: number;
  readyPort: number;
  /** 0 when metrics are disabled. */
  metricsPort: number;
  index: RecordIndex;
  /** Resolves when the informers have synced. */
  synced: Promise<void>;
  stop(): Promise<void>;
}

/** The host and port of a --metrics-bind-address, ":9153" meaning every address. */
function hostPort(value: string, defaultHost: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]*)\]|([^:]*)):(\d+)$/.exec(value);
  if (!m) throw new Error(`invalid address ${JSON.stringify(value)}: want host:port`);
  return { host: m[1] ?? (m[2] || defaultHost), port: Number(m[3]) };
}

function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      const a = server.address();
      resolve(typeof a === 'object' && a ? a.port : port);
    });
  });
}

function dropManagedFields(obj: KubeObject): KubeObject {
  if (!obj?.metadata?.managedFields) return obj;
  const { managedFields: _drop, ...meta } = obj.metadata;
  return { ...obj, metadata: meta };
}

export async function startDns(values: FlagValues, client?: Client): Promise<RunningDns> {
  const zone = String(values.clusterDomain).toLowerCase().replace(/\.$/, '');
  const pods = values.pods as PodsMode;
  const bind = values.dnsBindAddress as string;
  const ownClient = !client;
  const api =
    client ??
    Client.fromKubeconfigOrCluster(values.kubeconfig as string | undefined, {
      contentType: 'application/json',
    });
  const factory = new SharedInformerFactory(api, {
    transform: dropManagedFields,
    reflector: { useWatchList: true },
  });
  const index = new RecordIndex();
  watchCluster(factory, index, { pods: pods === 'verified' });

  let isSynced = false;
  const resolver = new Resolver(index, { zone, ttl: values.ttl as number, pods, synced: () => isSynced });
  const metrics = new DnsMetrics(
    `dns://:${values.dnsPort}`,
    // Read at scrape time, once the forwarder exists.
    () => forwarder.cacheSize,
  );
  const upstreams = parseUpstreams(values.upstream as string[]);
  const forwarder = new Forwarder(upstreams, {
    hit: (k) => metrics.cacheHit(k),
    miss: () => metrics.cacheMiss(),
  });
  const dns = new DnsServer({
    resolver,
    forwarder,
    metrics,
    bindAddress: bind,
    port: values.dnsPort as number,
    log,
  });

  const health = createServer((req, res) => {
    if (req.url !== '/health') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('OK');
  });
  const ready = createServer((req, res) => {
    if (req.url !== '/ready') return void res.writeHead(404).end();
    if (isSynced) res.writeHead(200, { 'content-type': 'text/plain; charset=utf-8' }).end('OK');
    else res.writeHead(503, { 'content-type': 'text/plain; charset=utf-8' }).end('kubernetes');
  });
  const metricsServer = createServer((req, res) => {
    if (req.url !== '/metrics') return void res.writeHead(404).end();
    res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(metrics.registry.expose());
  });

  const servers: Server[] = [];
  const ac = new AbortController();
  try {
    await dns.start();
    servers.push(health, ready);
    const healthPort = await listen(health, values.healthPort as number, bind);
    const readyPort = await listen(ready, values.readyPort as number, bind);
    let metricsPort = 0;
    if (values.metricsBindAddress !== '0') {
      const { host, port } = hostPort(values.metricsBindAddress as string, bind);
      servers.push(metricsServer);
      metricsPort = await listen(metricsServer, port, host);
    }
    factory.start(ac.signal);
    const synced = factory.waitForCacheSync(ac.signal).then(() => {
      isSynced = !ac.signal.aborted;
      if (isSynced)
        log.info('informers synced, serving the cluster zone', { zone, services: index.serviceCount });
    });
    log.info('serving DNS', {
      address: bind,
      port: dns.port,
      zone,
      upstreams: upstreams.map((u) => `${u.host}:${u.port}`),
    });
    return {
      dnsPort: dns.port,
      healthPort,
      readyPort,
      metricsPort,
      index,
      synced,
      async stop() {
        ac.abort();
        await factory.shutdown();
        await dns.stop();
        await Promise.all(servers.map((s) => new Promise<void>((r) => s.close(() => r()))));
        if (ownClient) await api.close();
      },
    };
  } catch (err) {
    ac.abort();
    await factory.shutdown();
    await dns.stop();
    for (const s of servers) s.close();
    if (ownClient) await api.close();
    throw err;
  }
}
