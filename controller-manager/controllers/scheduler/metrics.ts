// kube-scheduler's metrics on the controller manager's /metrics: attempts and
// their latency by result and profile, and the pending pods by queue.
import type { Counter, Gauge, Histogram, MetricsRegistry } from '../../../shared/metrics/registry';

export type AttemptResult = 'scheduled' | 'unschedulable' | 'error';

/** metrics.ExponentialBuckets(0.001, 2, 15). */
const ATTEMPT_BUCKETS = Array.from({ length: 15 }, (_, i) => 0.001 * 2 ** i);

export interface PendingPods {
  active: number;
  backoff: number;
  unschedulable: number;
  gated: number;
}

export class SchedulerMetrics {
  private readonly attempts?: Counter;
  private readonly duration?: Histogram;
  private readonly pending?: Gauge;

  constructor(
    private readonly profile: string,
    registry: MetricsRegistry | undefined,
    pending: () => PendingPods,
  ) {
    if (!registry) return;
    this.attempts = registry.counter({
      name: 'scheduler_schedule_attempts_total',
      help: "Number of attempts to schedule pods, by the result. 'unschedulable' means a pod could not be scheduled, while 'error' means an internal scheduler problem.",
      labels: ['result', 'profile'],
      stability: 'STABLE',
    });
    this.duration = registry.histogram(
      {
        name: 'scheduler_scheduling_attempt_duration_seconds',
        help: 'Scheduling attempt latency in seconds (scheduling algorithm + binding)',
        labels: ['result', 'profile'],
        stability: 'STABLE',
      },
      ATTEMPT_BUCKETS,
    );
    const gauge = (this.pending = registry.gauge({
      name: 'scheduler_pending_pods',
      help: "Number of pending pods, by the queue type. 'active' means number of pods in activeQ; 'backoff' means number of pods in backoffQ; 'unschedulable' means number of pods in unschedulablePods that the scheduler attempted to schedule and failed; 'gated' is the number of unschedulable pods that the scheduler never attempted to schedule because they are gated.",
      labels: ['queue'],
      stability: 'STABLE',
    }));
    registry.addCollector(() => {
      for (const [queue, n] of Object.entries(pending())) gauge.set({ queue }, n);
    });
  }

  /** One attempt's end: its result and how long it took since the pod was taken from the queue. */
  attempt(result: AttemptResult, seconds: number): void {
    const labels = { result, profile: this.profile };
    this.attempts?.inc(labels);
    this.duration?.observe(labels, seconds);
  }
}
