// The process metrics every component exposes (resident memory, CPU, start time, open handles,
// event-loop lag).
import type { MetricsRegistry } from './registry';
import { eventLoopMetrics } from './event-loop';

export function processMetrics(registry: MetricsRegistry): void {
  const start = Date.now() / 1000 - process.uptime();
  const rss = registry.gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
  });
  const heap = registry.gauge({ name: 'nodejs_heap_used_bytes', help: 'V8 heap in use, in bytes.' });
  const heapTotal = registry.gauge({
    name: 'nodejs_heap_size_total_bytes',
    help: 'V8 heap reserved (committed), in bytes.',
  });
  const external = registry.gauge({
    name: 'nodejs_external_memory_bytes',
    help: 'Memory outside the V8 heap owned by JavaScript objects (Buffers and ArrayBuffers included), in bytes.',
  });
  const cpu = registry.gauge({
    name: 'process_cpu_seconds_total',
    help: 'User and system CPU time spent, in seconds.',
  });
  const started = registry.gauge({
    name: 'process_start_time_seconds',
    help: 'Start time of the process since the Unix epoch, in seconds.',
  });
  started.set(undefined, start);
  eventLoopMetrics(registry);
  registry.addCollector(() => {
    const m = process.memoryUsage();
    rss.set(undefined, m.rss);
    heap.set(undefined, m.heapUsed);
    heapTotal.set(undefined, m.heapTotal);
    external.set(undefined, m.external);
    const c = process.cpuUsage();
    cpu.set(undefined, (c.user + c.system) / 1e6);
  });
}
