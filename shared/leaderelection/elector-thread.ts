// Leader election on a thread of its own. client-go renews the lease from a goroutine, which
// keeps its turns while other goroutines are busy; a Node process renews on its one event loop,
// so a long synchronous stretch there (a collection of a 2 GB heap, a pass over 150,000 objects)
// missed the renew deadline and lost the lease of a manager that was still working. Here the
// elector runs in a worker thread with its own event loop, heap and client; the main thread only
// hears when it leads and when it must stop.
import { Worker } from 'node:worker_threads';
import { join } from 'node:path';
import { getVerbosity, isSilent, logger } from '../log';
import type { ClientConfig } from '../client/kubeconfig';
import type { ClientOptions } from '../client/rest';
import { Client } from '../client/client';
import {
  checkRenewed,
  LeaderElector,
  type LeaderCallbacks,
  type LeaderEventRecorder,
} from './leaderelection';
import { LeaseLock, type LeaderElectionRecord } from './resourcelock';

const log = logger('leaderelection');

/** What the worker needs to build its client, lock and elector: plain data only. */
export interface ElectorWorkerData {
  config: ClientConfig;
  clientOptions: ClientOptions;
  lock: { namespace: string; name: string; identity: string };
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
  releaseOnCancel: boolean;
  /** The main thread's log settings: a worker has its own copy of the module. */
  verbosity: number;
  silent: boolean;
}

/** Messages from the worker. */
export type ElectorMessage =
  | { type: 'observed'; record: LeaderElectionRecord; observedAt: number }
  | { type: 'started' }
  /** The term ended (lost or stopping); the lease is released after this when asked to. */
  | { type: 'stopped' }
  | { type: 'event'; regarding: unknown; reason: string; note: string }
  | { type: 'done' };

export interface ThreadedElectorConfig extends Omit<ElectorWorkerData, 'verbosity' | 'silent'> {
  callbacks: LeaderCallbacks;
  eventRecorder?: LeaderEventRecorder;
}

/** LeaderElector's run/check/isLeader/getLeader, with the campaign and renewals on a worker thread. */
export class ThreadedLeaderElector {
  private observed?: LeaderElectionRecord;
  private observedAt = 0;
  private reportedLeader = '';

  constructor(private readonly cfg: ThreadedElectorConfig) {}

  isLeader(): boolean {
    return this.observed?.holderIdentity === this.cfg.lock.identity;
  }

  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /** As LeaderElector.check: throws when we lead by the last record but have not renewed in time. */
  check(maxTolerableExpiredLeaseMs: number): void {
    if (!this.isLeader()) return;
    checkRenewed(
      Date.now() - this.observedAt,
      this.cfg.leaseDurationMs + maxTolerableExpiredLeaseMs,
      this.cfg.lock.name,
    );
  }

  /** Campaigns until leader, leads until the lease is lost or signal aborts, as LeaderElector.run. */
  async run(signal: AbortSignal): Promise<void> {
    const { callbacks, eventRecorder, ...data } = this.cfg;
    const workerData: ElectorWorkerData = { ...data, verbosity: getVerbosity(), silent: isSilent() };
    const worker = new Worker(join(__dirname, 'elector-worker.js'), { workerData });
    const lead = new AbortController();
    let leading: Promise<void> = Promise.resolve();
    // The controllers stop with the term, as LeaderElector.run stops them, not after the release.
    const stop = () => {
      lead.abort();
      worker.postMessage('stop');
    };
    signal.addEventListener('abort', stop, { once: true });
    try {
      await new Promise<void>((resolve) => {
        worker.on('message', (m: ElectorMessage) => {
          if (m.type === 'observed') this.setObserved(m.record, m.observedAt);
          else if (m.type === 'started')
            leading = Promise.resolve()
              .then(() => callbacks.onStartedLeading(lead.signal))
              .catch((err) => log.error('onStartedLeading failed', { err: String(err) }));
          else if (m.type === 'stopped') lead.abort();
          else if (m.type === 'event')
            eventRecorder?.eventf(m.regarding, null, 'Normal', m.reason, m.reason, m.note);
          else if (m.type === 'done') resolve();
        });
        worker.on('error', (err) => {
          log.error('leader election thread failed', { err: String(err) });
          resolve();
        });
        worker.on('exit', () => resolve());
        if (signal.aborted) stop();
      });
    } finally {
      lead.abort();
      signal.removeEventListener('abort', stop);
      await leading;
      await worker.terminate();
      try {
        callbacks.onStoppedLeading?.();
      } catch (err) {
        log.error('onStoppedLeading failed', { err: String(err) });
      }
    }
  }

  private setObserved(r: LeaderElectionRecord, at: number): void {
    this.observed = r;
    this.observedAt = at;
    if (r.holderIdentity === this.reportedLeader) return;
    this.reportedLeader = r.holderIdentity;
    try {
      this.cfg.callbacks.onNewLeader?.(r.holderIdentity);
    } catch (err) {
      log.error('onNewLeader failed', { err: String(err) });
    }
  }
}

/** What a component needs of its elector, wherever it runs. */
export type ComponentElector = Pick<LeaderElector, 'run' | 'check' | 'isLeader' | 'getLeader'>;

/**
 * A component's elector with a client of its own: on the main thread, as client-go runs it, or
 * with `thread` on a worker thread, which costs ~20 MB and ~0.3 s of CPU at start but
 * keeps renewing through long turns of the main thread.
 */
export function newComponentElector(cfg: ThreadedElectorConfig & { thread: boolean }): ComponentElector {
  if (cfg.thread) return new ThreadedLeaderElector(cfg);
  const client = Client.create(cfg.config, cfg.clientOptions);
  const elector = new LeaderElector({
    lock: new LeaseLock(client, cfg.lock),
    name: cfg.lock.name,
    leaseDurationMs: cfg.leaseDurationMs,
    renewDeadlineMs: cfg.renewDeadlineMs,
    retryPeriodMs: cfg.retryPeriodMs,
    releaseOnCancel: cfg.releaseOnCancel,
    eventRecorder: cfg.eventRecorder,
    callbacks: cfg.callbacks,
  });
  return {
    run: (signal) => elector.run(signal).finally(() => client.close()),
    check: (ms) => elector.check(ms),
    isLeader: () => elector.isLeader(),
    getLeader: () => elector.getLeader(),
  };
}
