// CoreDNS's Prometheus metrics (plugin/metrics, plugin/cache, plugin/forward),
// with its names, labels and buckets, on the shared metrics registry.
import { Metric, MetricsRegistry, type Counter, type Histogram } from '../shared/metrics/registry';
import { processMetrics } from '../shared/metrics/process';

/** prometheus.ExponentialBuckets(0.00025, 2, 16): CoreDNS's request duration buckets. */
const DURATION_BUCKETS = Array.from({ length: 16 }, (_, i) => 0.00025 * 2 ** i);
const SIZE_BUCKETS = [0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3];
/** The query types CoreDNS labels by name; any other is "other". */
const MONITORED_TYPES = new Set([
  'A',
  'AAAA',
  'NS',
  'PTR',
  'SOA',
  'SRV',
  'TXT',
  'CNAME',
  'MX',
  'DS',
  'DNSKEY',
  'HTTPS',
  'SVCB',
  'NAPTR',
  'IXFR',
  'AXFR',
  'ANY',
]);
const RCODES = ['NOERROR', 'FORMERR', 'SERVFAIL', 'NXDOMAIN', 'NOTIMP', 'REFUSED'];

export class DnsMetrics {
  readonly registry: MetricsRegistry;
  private readonly requests: Counter;
  private readonly responses: Counter;
  private readonly duration: Histogram;
  private readonly requestSize: Histogram;
  private readonly responseSize: Histogram;
  readonly cacheHits: Counter;
  readonly cacheMisses: Counter;
  readonly panics: Counter;

  /** server: CoreDNS's label of the server block, "dns://:53". */
  constructor(
    private readonly server: string,
    cacheEntries: () => { success: number; denial: number },
  ) {
    this.registry = new MetricsRegistry({ currentVersion: '1.36' });
    const r = this.registry;
    const req = ['server', 'zone', 'view'];
    this.requests = r.counter({
      name: 'coredns_dns_requests_total',
      help: 'Counter of DNS requests made per zone, protocol and family.',
      labels: [...req, 'proto', 'family', 'type'],
    });
    this.responses = r.counter({
      name: 'coredns_dns_responses_total',
      help: 'Counter of response status codes.',
      labels: [...req, 'rcode', 'plugin'],
    });
    this.duration = r.histogram(
      {
        name: 'coredns_dns_request_duration_seconds',
        help: 'Histogram of the time (in seconds) each request took per zone.',
        labels: [...req, 'type'],
      },
      DURATION_BUCKETS,
    );
    this.requestSize = r.histogram(
      {
        name: 'coredns_dns_request_size_bytes',
        help: 'Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.',
        labels: [...req, 'proto'],
      },
      SIZE_BUCKETS,
    );
    this.responseSize = r.histogram(
      {
        name: 'coredns_dns_response_size_bytes',
        help: 'Size of the returned response in bytes.',
        labels: [...req, 'proto'],
      },
      SIZE_BUCKETS,
    );
    this.cacheHits = r.counter({
      name: 'coredns_cache_hits_total',
      help: 'The count of cache hits.',
      labels: ['server', 'type', 'zones', 'view'],
    });
    this.cacheMisses = r.counter({
      name: 'coredns_cache_misses_total',
      help: 'The count of cache misses. Deprecated, derive misses from cache hits/requests counters.',
      labels: ['server', 'zones', 'view'],
    });
    this.panics = r.counter({
      name: 'coredns_panics_total',
      help: 'A metrics that counts the number of panics.',
    });
    const entries = r.gauge({
      name: 'coredns_cache_entries',
      help: 'The number of elements in the cache.',
      labels: ['server', 'type', 'zones', 'view'],
    });
    // Series that exist from the start, as in CoreDNS, so a scrape sees zeros rather than nothing.
    for (const type of ['success', 'denial']) this.cacheHits.inc(this.cacheLabels(type), 0);
    this.cacheMisses.inc({ server, zones: '.', view: '' }, 0);
    this.panics.inc(undefined, 0);
    r.addCollector(() => {
      const n = cacheEntries();
      entries.set(this.cacheLabels('success'), n.success);
      entries.set(this.cacheLabels('denial'), n.denial);
    });
    processMetrics(r);
  }

  private cacheLabels(type: string) {
    return { server: this.server, type, zones: '.', view: '' };
  }

  cacheHit(kind: 'success' | 'denial'): void {
    this.cacheHits.inc(this.cacheLabels(kind));
  }

  cacheMiss(): void {
    this.cacheMisses.inc({ server: this.server, zones: '.', view: '' });
  }

  /** One answered request: what CoreDNS's metrics plugin records. */
  observe(o: {
    proto: 'udp' | 'tcp';
    family: 4 | 6;
    qtype: string;
    rcode: number;
    seconds: number;
    requestSize: number;
    responseSize: number;
    plugin: string;
  }): void {
    const type = MONITORED_TYPES.has(o.qtype) ? o.qtype : 'other';
    const s = this.server;
    this.requests.incKey(Metric.keyOf([s, '.', '', o.proto, String(o.family), type]));
    this.responses.incKey(Metric.keyOf([s, '.', '', RCODES[o.rcode] ?? String(o.rcode), o.plugin]));
    this.duration.observeKey(Metric.keyOf([s, '.', '', type]), o.seconds);
    this.requestSize.observeKey(Metric.keyOf([s, '.', '', o.proto]), o.requestSize);
    this.responseSize.observeKey(Metric.keyOf([s, '.', '', o.proto]), o.responseSize);
  }
}
