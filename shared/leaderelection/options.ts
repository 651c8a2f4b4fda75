// Leader election from the --leader-elect-* flags of kube-controller-manager
// (and any other component that campaigns the same way).
import type { Client } from '../client/client';
import {
  LeaderElector,
  defaultIdentity,
  type LeaderCallbacks,
  type LeaderEventRecorder,
} from './leaderelection';
import { newResourceLock } from './resourcelock';

export interface LeaderElectionFlags {
  /** --leader-elect-resource-lock: leases (endpointsleases / configmapsleases are Leases too). */
  resourceLock?: string;
  /** --leader-elect-resource-name, e.g. "kube-controller-manager". */
  resourceName: string;
  /** --leader-elect-resource-namespace (default kube-system). */
  resourceNamespace?: string;
  /** --leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period (ms). */
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Defaults to "<hostname>_<uuid>". */
  identity?: string;
}

export interface NewLeaderElectorOptions extends LeaderElectionFlags {
  callbacks: LeaderCallbacks;
  releaseOnCancel?: boolean;
  eventRecorder?: LeaderEventRecorder;
}

/**
 * The request timeout of the leader-election client (client-go's NewFromKubeconfig):
 * max(1 s, renewDeadline / 2), so that one hung request (a connection the apiserver
 * stopped answering) is abandoned and retried on a fresh one within the deadline,
 * instead of holding the renewal until the lease is lost.
 */
export function leaderElectionClientTimeoutMs(renewDeadlineMs: number): number {
  return Math.max(1000, Math.floor(renewDeadlineMs / 2));
}

/** A LeaderElector on a Lease named by the flags. */
export function newLeaderElector(client: Client, o: NewLeaderElectorOptions): LeaderElector {
  const lock = newResourceLock(o.resourceLock ?? 'leases', client, {
    namespace: o.resourceNamespace || 'kube-system',
    name: o.resourceName,
    identity: o.identity ?? defaultIdentity(),
  });
  return new LeaderElector({
    lock,
    name: o.resourceName,
    leaseDurationMs: o.leaseDurationMs,
    renewDeadlineMs: o.renewDeadlineMs,
    retryPeriodMs: o.retryPeriodMs,
    callbacks: o.callbacks,
    releaseOnCancel: o.releaseOnCancel,
    eventRecorder: o.eventRecorder,
  });
}
