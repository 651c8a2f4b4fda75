// What every controller of the controller manager is given, and how it is
// described. Controllers reach the apiserver only through the client and the
// shared informers — the same path a third-party controller takes.
import type { Client } from '../shared/client';
import type { ItemRateLimiter, RateLimitingQueue, SharedInformerFactory } from '../shared/informers';
import type { FlagValues } from '../shared/options/flags';
import type { Logger } from '../shared/log';
import type { MetricsRegistry } from '../shared/metrics/registry';

export interface ControllerContext {
  /** The controller's own client: its own rate limiter, user agent and (with --use-service-account-credentials) identity. */
  client: Client;
  /** Shared by all controllers: one list+watch per resource. Started by the manager after every controller registered its informers. */
  informers: SharedInformerFactory;
  /** The controller manager's flag values (camelCase names: concurrentDeploymentSyncs, nodeMonitorGracePeriod ...). */
  options: FlagValues;
  /** Aborted when leadership is lost or the process stops: workers must stop. */
  signal: AbortSignal;
  log: Logger;
  /**
   * An event recorder for the controller's reportingController (e.g. "deployment-controller"),
   * reportingInstance = the manager's identity.
   */
  recorder(reportingController: string): EventRecorderLike;
  /** Time source; controllers that wait (grace periods, TTLs) take it so tests need not sleep. */
  now(): number;
  /**
   * A rate-limited work queue that reports kube's workqueue_* metrics (depth, adds, latency,
   * work duration, retries) on /metrics under `name` (e.g. "deployment"). Optional so hand-built
   * contexts in tests need not provide it: fall back to `new RateLimitingQueue({ name })`.
   */
  newQueue?<T>(name: string, rateLimiter?: ItemRateLimiter<T>): RateLimitingQueue<T>;
  /** The manager's /metrics registry (absent in hand-built test contexts). */
  metrics?: MetricsRegistry;
}

/** The part of the event recorder controllers use (see shared/events). */
export interface EventRecorderLike {
  event(
    regarding: any,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
    related?: any,
  ): void;
}

export interface ControllerDescriptor {
  /** The name --controllers uses (kube-controller-manager's names: deployment, namespace, garbagecollector ...). */
  name: string;
  /**
   * Other names --controllers accepts for it (kube 1.28+ canonical names such as
   * "namespace-controller" for "namespace").
   */
  aliases?: string[];
  /** Off unless named in --controllers (bootstrapsigner, tokencleaner). */
  disabledByDefault?: boolean;
  /** Registers informers and starts workers; resolves once started. Workers stop when ctx.signal aborts. */
  start(ctx: ControllerContext): Promise<void> | void;
}
