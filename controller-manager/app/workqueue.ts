// Work queues that report client-go's workqueue metrics (workqueue_depth,
// workqueue_adds_total, workqueue_queue_duration_seconds,
// workqueue_work_duration_seconds, workqueue_unfinished_work_seconds,
// workqueue_longest_running_processor_seconds, workqueue_retries_total, all
// labelled by queue name), like workqueue.SetProvider does for
// kube-controller-manager. Until a provider is set, queues record nothing.
import { RateLimitingQueue, type ItemRateLimiter } from '../../shared/informers';
import type { Clock } from '../../shared/client';
import type { Counter, Gauge, Histogram, MetricsRegistry } from '../../shared/metrics/registry';

/** client-go's prometheus.ExponentialBuckets(10e-9, 10, 10). */
const BUCKETS = Array.from({ length: 10 }, (_, i) => Number((1e-8 * Math.pow(10, i)).toPrecision(1)));

interface QueueMetrics {
  depth: Gauge;
  adds: Counter;
  latency: Histogram;
  workDuration: Histogram;
  unfinished: Gauge;
  longest: Gauge;
  retries: Counter;
  live: Set<MeteredQueue<any>>;
}

let provider: QueueMetrics | undefined;

/** Registers the workqueue metrics in registry; queues created afterwards report to it. */
export function setQueueMetricsProvider(registry: MetricsRegistry): void {
  const labels = ['name'];
  const m: QueueMetrics = {
    depth: registry.gauge({ name: 'workqueue_depth', help: 'Current depth of workqueue', labels }),
    adds: registry.counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labels,
    }),
    latency: registry.histogram(
      {
        name: 'workqueue_queue_duration_seconds',
        help: 'How long in seconds an item stays in workqueue before being requested.',
        labels,
      },
      BUCKETS,
    ),
    workDuration: registry.histogram(
      {
        name: 'workqueue_work_duration_seconds',
        help: 'How long in seconds processing an item from workqueue takes.',
        labels,
      },
      BUCKETS,
    ),
    unfinished: registry.gauge({
      name: 'workqueue_unfinished_work_seconds',
      help: "How many seconds of work has done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
      labels,
    }),
    longest: registry.gauge({
      name: 'workqueue_longest_running_processor_seconds',
      help: 'How many seconds has the longest running processor for workqueue been running.',
      labels,
    }),
    retries: registry.counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labels,
    }),
    live: new Set(),
  };
  registry.addCollector(() => {
    const depth = new Map<string, number>();
    const unfinished = new Map<string, number>();
    const longest = new Map<string, number>();
    for (const q of m.live) {
      const now = q.now();
      depth.set(q.name, (depth.get(q.name) ?? 0) + q.len());
      let total = unfinished.get(q.name) ?? 0;
      let max = longest.get(q.name) ?? 0;
      for (const t of q.startTimes()) {
        const s = (now - t) / 1000;
        total += s;
        if (s > max) max = s;
      }
      unfinished.set(q.name, total);
      longest.set(q.name, max);
    }
    for (const [name, v] of depth) m.depth.set({ name }, v);
    for (const [name, v] of unfinished) m.unfinished.set({ name }, v);
    for (const [name, v] of longest) m.longest.set({ name }, v);
  });
  provider = m;
}

/** A RateLimitingQueue that reports to the metrics provider under its name. */
export class MeteredQueue<T> extends RateLimitingQueue<T> {
  private readonly addTimes = new Map<T, number>();
  private readonly started = new Map<T, number>();
  private readonly m: QueueMetrics | undefined;

  constructor(opts: { name: string; clock?: Clock; rateLimiter?: ItemRateLimiter<T> }) {
    super(opts);
    this.m = provider;
    this.m?.live.add(this);
  }

  now(): number {
    return this.clock.now();
  }

  startTimes(): IterableIterator<number> {
    return this.started.values();
  }

  override add(item: T): void {
    if (this.m && !this.shuttingDown() && !this.addTimes.has(item)) {
      this.m.adds.inc({ name: this.name });
      this.addTimes.set(item, this.clock.now());
    }
    super.add(item);
  }

  override async get() {
    const r = await super.get();
    if (this.m && !r.shutdown) {
      const now = this.clock.now();
      const at = this.addTimes.get(r.item);
      if (at !== undefined) this.m.latency.observe({ name: this.name }, (now - at) / 1000);
      this.addTimes.delete(r.item);
      this.started.set(r.item, now);
    }
    return r;
  }

  override done(item: T): void {
    const at = this.started.get(item);
    if (this.m && at !== undefined)
      this.m.workDuration.observe({ name: this.name }, (this.clock.now() - at) / 1000);
    this.started.delete(item);
    super.done(item);
  }

  override addRateLimited(item: T): void {
    this.m?.retries.inc({ name: this.name });
    super.addRateLimited(item);
  }

  protected override onShutDown(): void {
    super.onShutDown();
    this.m?.live.delete(this);
  }
}

/** A named, metered rate-limited queue (the default controller rate limiter unless one is given). */
export function newQueue<T>(
  name: string,
  rateLimiter?: ItemRateLimiter<T>,
  clock?: Clock,
): RateLimitingQueue<T> {
  return new MeteredQueue<T>({ name, rateLimiter, clock });
}
