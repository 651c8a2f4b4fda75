// Event-loop lag: every component runs in one Node.js process, so a callback
// that holds the loop delays everything else there — lease renewals, /healthz,
// watches. One monitor per process (perf_hooks.monitorEventLoopDelay) feeds
// the nodejs_eventloop_lag_* gauges (since the process started, as
// prom-client names them), and a second one, reset every few seconds, warns
// in the log when the loop was held past a threshold.
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';
import { logger } from '../log';
import type { MetricsRegistry } from './registry';

const log = logger('event-loop');

/** The sampling resolution of the monitors (ms). */
const RESOLUTION_MS = 10;
/** How often the warning window is read and reset. */
const WINDOW_MS = 5000;
/** A stall this long (ms) is logged: a tenth of the controller manager's 10 s renew deadline. */
export const EVENT_LOOP_WARN_MS = 1000;

let total: IntervalHistogram | undefined;

/** Node's samples are the whole interval between timer ticks: the lag is what exceeds the resolution (ns → ms). */
const lagMs = (ns: number) => (Number.isFinite(ns) ? Math.max(0, ns / 1e6 - RESOLUTION_MS) : 0);

function ensureMonitors(): IntervalHistogram {
  if (total) return total;
  total = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  total.enable();
  const window = monitorEventLoopDelay({ resolution: RESOLUTION_MS });
  window.enable();
  const timer = setInterval(() => {
    const maxMs = window.count > 0 ? lagMs(window.max) : 0;
    if (maxMs >= EVENT_LOOP_WARN_MS)
      log.warn('The event loop was blocked', {
        maxMs: Math.round(maxMs),
        p99Ms: Math.round(lagMs(window.percentile(99))),
        windowSeconds: WINDOW_MS / 1000,
      });
    window.reset();
  }, WINDOW_MS);
  timer.unref();
  return total;
}

/** Registers the nodejs_eventloop_lag_* gauges (seconds) on a component's registry. */
export function eventLoopMetrics(registry: MetricsRegistry): void {
  const h = ensureMonitors();
  const gauges = {
    min: registry.gauge({
      name: 'nodejs_eventloop_lag_min_seconds',
      help: 'The minimum recorded event loop delay.',
    }),
    max: registry.gauge({
      name: 'nodejs_eventloop_lag_max_seconds',
      help: 'The maximum recorded event loop delay.',
    }),
    mean: registry.gauge({
      name: 'nodejs_eventloop_lag_mean_seconds',
      help: 'The mean of the recorded event loop delays.',
    }),
    p50: registry.gauge({
      name: 'nodejs_eventloop_lag_p50_seconds',
      help: 'The 50th percentile of the recorded event loop delays.',
    }),
    p90: registry.gauge({
      name: 'nodejs_eventloop_lag_p90_seconds',
      help: 'The 90th percentile of the recorded event loop delays.',
    }),
    p99: registry.gauge({
      name: 'nodejs_eventloop_lag_p99_seconds',
      help: 'The 99th percentile of the recorded event loop delays.',
    }),
  };
  registry.addCollector(() => {
    // With no sample yet min is a huge sentinel and the rest NaN.
    const s = (ns: number) => (h.count > 0 ? lagMs(ns) / 1000 : 0);
    gauges.min.set(undefined, s(h.min));
    gauges.max.set(undefined, s(h.max));
    gauges.mean.set(undefined, s(h.mean));
    gauges.p50.set(undefined, s(h.percentile(50)));
    gauges.p90.set(undefined, s(h.percentile(90)));
    gauges.p99.set(undefined, s(h.percentile(99)));
  });
}
