// Event-loop lag: a callback that holds the loop shows in the component's
// nodejs_eventloop_lag_* gauges.
import assert from 'node:assert/strict';
import { MetricsRegistry } from './registry';
import { eventLoopMetrics } from './event-loop';

const value = (text: string, name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1]);

describe('shared/metrics: event-loop lag', () => {
  it('reports a stall of the loop in max and stays ordered p50 ≤ p90 ≤ p99 ≤ max', async () => {
    const registry = new MetricsRegistry({ currentVersion: '1.36' });
    eventLoopMetrics(registry);
    await new Promise((r) => setTimeout(r, 50));
    const until = Date.now() + 300;
    while (Date.now() < until) {
      // hold the loop
    }
    await new Promise((r) => setTimeout(r, 50));
    const text = registry.expose();
    const max = value(text, 'nodejs_eventloop_lag_max_seconds');
    assert.ok(max >= 0.25, `max ${max}`);
    const [p50, p90, p99] = [50, 90, 99].map((p) => value(text, `nodejs_eventloop_lag_p${p}_seconds`));
    assert.ok(p50 <= p90 && p90 <= p99 && p99 <= max, `${p50} ${p90} ${p99} ${max}`);
    assert.ok(value(text, 'nodejs_eventloop_lag_min_seconds') >= 0);
  });
});
