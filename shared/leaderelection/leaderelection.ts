// client-go's leaderelection.LeaderElector on a Lease:
// - acquire: try every retryPeriod (jittered ×1.2) until the lease is free,
//   expired or ours. "Expired" is judged by the local time we last saw the
//   record change plus leaseDurationSeconds, never by the remote timestamps,
//   so clock skew between candidates does not matter.
// - renew: every retryPeriod; if no renewal succeeds within renewDeadline,
//   leadership is lost and the leader's AbortSignal fires.
// - every write is a compare-and-swap on the lease's resourceVersion.
// - release on stop (releaseOnCancel): holder "", leaseDurationSeconds 1.
import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { logger } from '../log';
import { realClock, type Clock } from '../client/clock';
import { isConflict, isNotFound } from '../client/errors';
import { jitter } from '../informers/backoff';
import type { LeaderElectionRecord, ResourceLock } from './resourcelock';

const log = logger('leaderelection');

/** client-go's JitterFactor for the acquire loop and the renewDeadline check. */
export const JITTER_FACTOR = 1.2;

export interface LeaderCallbacks {
  /** Runs when this candidate becomes leader; signal aborts when leadership is lost or the elector stops. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Runs when run() ends (lost leadership, or stopped), as client-go does. */
  onStoppedLeading?(): void;
  /** A new leader was observed (this candidate included). */
  onNewLeader?(identity: string): void;
}

/** Something that can note "became leader" / "stopped leading" events on the lock object. */
export interface LeaderEventRecorder {
  eventf(
    regarding: any,
    related: any,
    type: 'Normal' | 'Warning',
    reason: string,
    action: string,
    note: string,
  ): void;
}

export interface LeaderElectionConfig {
  lock: ResourceLock;
  /** --leader-elect-lease-duration (default 15 s). */
  leaseDurationMs?: number;
  /** --leader-elect-renew-deadline (default 10 s). */
  renewDeadlineMs?: number;
  /** --leader-elect-retry-period (default 2 s). */
  retryPeriodMs?: number;
  callbacks: LeaderCallbacks;
  /** Give the lease up when stopped (client-go's ReleaseOnCancel). */
  releaseOnCancel?: boolean;
  /** For logs. */
  name?: string;
  clock?: Clock;
  eventRecorder?: LeaderEventRecorder;
  /** Every record observed (read or written), with the local time it was observed at. */
  onObserved?(record: LeaderElectionRecord, observedAt: number): void;
}

/** kube-controller-manager's identity: "<hostname>_<uuid>". */
export function defaultIdentity(): string {
  return `${hostname()}_${randomUUID()}`;
}

/** The healthz check of a leader: throws when its last renewal is older than the lease allows. */
export function checkRenewed(sinceRenewalMs: number, toleratedMs: number, lease: string): void {
  if (sinceRenewalMs > toleratedMs) throw new Error(`failed election to renew leadership on lease ${lease}`);
}

export class LeaderElector {
  private readonly leaseDuration: number;
  private readonly renewDeadline: number;
  private readonly retryPeriod: number;
  private readonly clock: Clock;
  private observed?: LeaderElectionRecord;
  private observedRaw = '';
  private observedTime = 0;
  private reportedLeader = '';

  constructor(private readonly cfg: LeaderElectionConfig) {
    this.leaseDuration = cfg.leaseDurationMs ?? 15_000;
    this.renewDeadline = cfg.renewDeadlineMs ?? 10_000;
    this.retryPeriod = cfg.retryPeriodMs ?? 2_000;
    this.clock = cfg.clock ?? realClock;
    if (this.leaseDuration <= this.renewDeadline)
      throw new Error('leaseDuration must be greater than renewDeadline');
    if (this.renewDeadline <= JITTER_FACTOR * this.retryPeriod)
      throw new Error('renewDeadline must be greater than retryPeriod*JitterFactor');
    if (this.leaseDuration < 1000 || this.retryPeriod < 1)
      throw new Error('leaseDuration must be at least 1s and retryPeriod positive');
    if (!cfg.lock.identity()) throw new Error('lock identity is empty');
  }

  /** Whether the last observed record names this candidate. */
  isLeader(): boolean {
    return this.observed?.holderIdentity === this.cfg.lock.identity();
  }

  /** Throws when we lead by our last record but have not renewed for leaseDuration + tolerance. */
  check(maxTolerableExpiredLeaseMs: number): void {
    if (!this.isLeader()) return;
    checkRenewed(
      this.clock.now() - this.observedTime,
      this.leaseDuration + maxTolerableExpiredLeaseMs,
      this.cfg.name ?? this.cfg.lock.describe(),
    );
  }

  /** The last observed leader ("" when none). */
  getLeader(): string {
    return this.observed?.holderIdentity ?? '';
  }

  /**
   * Campaigns until leader, leads until the lease is lost or signal aborts,
   * then returns (after releasing the lease when releaseOnCancel is set).
   */
  async run(signal: AbortSignal): Promise<void> {
    try {
      if (!(await this.acquire(signal))) return;
      const lead = new AbortController();
      const onAbort = () => lead.abort();
      signal.addEventListener('abort', onAbort, { once: true });
      let leading: Promise<void> = Promise.resolve();
      try {
        leading = Promise.resolve()
          .then(() => this.cfg.callbacks.onStartedLeading(lead.signal))
          .catch((err) => log.error('onStartedLeading failed', { err: String(err) }));
        await this.renew(lead.signal);
      } finally {
        lead.abort();
        signal.removeEventListener('abort', onAbort);
      }
      if (this.cfg.releaseOnCancel) await this.release();
      await leading;
    } finally {
      try {
        this.cfg.callbacks.onStoppedLeading?.();
      } catch (err) {
        log.error('onStoppedLeading failed', { err: String(err) });
      }
    }
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    const desc = this.cfg.lock.describe();
    log.info('attempting to acquire leader lease', { lock: desc });
    while (!signal.aborted) {
      if (await this.tryAcquireOrRenew(signal)) {
        log.info('successfully acquired lease', { lock: desc });
        this.event('became leader');
        return true;
      }
      await this.clock.sleep(jitter(this.retryPeriod, JITTER_FACTOR), signal);
    }
    return false;
  }

  /** Renews every retryPeriod; returns when a renewal round misses renewDeadline or signal aborts. */
  private async renew(signal: AbortSignal): Promise<void> {
    const desc = this.cfg.lock.describe();
    while (!signal.aborted) {
      const round = new AbortController();
      const timer = this.clock.setTimer(
        () => round.abort(new Error('renew deadline exceeded')),
        this.renewDeadline,
      );
      const onAbort = () => round.abort(signal.reason);
      signal.addEventListener('abort', onAbort, { once: true });
      let renewed = false;
      try {
        for (;;) {
          if (await this.tryAcquireOrRenew(round.signal)) {
            renewed = true;
            break;
          }
          if (round.signal.aborted) break;
          await this.clock.sleep(this.retryPeriod, round.signal);
          if (round.signal.aborted) break;
        }
      } finally {
        timer.cancel();
        signal.removeEventListener('abort', onAbort);
      }
      if (signal.aborted) return;
      if (!renewed) {
        log.info('failed to renew lease', { lock: desc });
        this.event('stopped leading');
        return;
      }
      log.v(5)?.info('successfully renewed lease', { lock: desc });
      await this.clock.sleep(this.retryPeriod, signal);
    }
  }

  /**
   * Gives the lease up if we hold it (client-go's release). A renewal cut short
   * by the stop may still land on the server after our read, so a conflict is
   * retried while the lease still names us.
   */
  private async release(): Promise<boolean> {
    const ac = new AbortController();
    const timer = this.clock.setTimer(() => ac.abort(new Error('release timed out')), this.renewDeadline);
    try {
      for (let attempt = 1; ; attempt++) {
        let current: { record: LeaderElectionRecord };
        try {
          current = await this.cfg.lock.get(ac.signal);
        } catch (err) {
          if (!isNotFound(err))
            log.error('error retrieving resource lock', { lock: this.cfg.lock.describe(), err: String(err) });
          return false;
        }
        if (!this.isLeader() || current.record.holderIdentity !== this.cfg.lock.identity()) return true;
        const now = this.clock.now();
        const record: LeaderElectionRecord = {
          holderIdentity: '',
          leaseDurationSeconds: 1,
          acquireTime: now,
          renewTime: now,
          leaderTransitions: current.record.leaderTransitions,
        };
        try {
          await this.cfg.lock.update(record, ac.signal);
        } catch (err) {
          if (isConflict(err) && attempt < 3 && !ac.signal.aborted) continue;
          throw err;
        }
        this.setObserved(record);
        log.info('released lease', { lock: this.cfg.lock.describe() });
        return true;
      }
    } catch (err) {
      log.error('failed to release lock', { lock: this.cfg.lock.describe(), err: String(err) });
      return false;
    } finally {
      timer.cancel();
    }
  }

  private isLeaseValid(now: number): boolean {
    return this.observedTime + (this.observed?.leaseDurationSeconds ?? 0) * 1000 > now;
  }

  private setObserved(r: LeaderElectionRecord, raw = JSON.stringify(r)): void {
    this.observed = r;
    this.observedRaw = raw;
    this.observedTime = this.clock.now();
    this.cfg.onObserved?.(r, this.observedTime);
    if (r.holderIdentity !== this.reportedLeader) {
      this.reportedLeader = r.holderIdentity;
      const cb = this.cfg.callbacks.onNewLeader;
      if (cb) {
        const who = r.holderIdentity;
        queueMicrotask(() => {
          try {
            cb(who);
          } catch (err) {
            log.error('onNewLeader failed', { err: String(err) });
          }
        });
      }
    }
  }

  /** One attempt; true when we hold the lease afterwards. */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const lock = this.cfg.lock;
    const now = this.clock.now();
    const record: LeaderElectionRecord = {
      holderIdentity: lock.identity(),
      leaseDurationSeconds: Math.floor(this.leaseDuration / 1000),
      renewTime: now,
      acquireTime: now,
      leaderTransitions: 0,
    };

    // 1. The leader's fast path: update assuming the record we saw last is current.
    if (this.isLeader() && this.isLeaseValid(now)) {
      record.acquireTime = this.observed!.acquireTime;
      record.leaderTransitions = this.observed!.leaderTransitions;
      try {
        await lock.update(record, signal);
        this.setObserved(record);
        return true;
      } catch (err) {
        if (signal?.aborted) return false;
        log
          .v(2)
          ?.info('failed to update lock optimistically, falling back to slow path', { err: String(err) });
      }
    }

    // 2. Read (or create) the record.
    let current: { record: LeaderElectionRecord; raw: string };
    try {
      current = await lock.get(signal);
    } catch (err) {
      if (!isNotFound(err)) {
        if (!signal?.aborted)
          log.error('error retrieving resource lock', { lock: lock.describe(), err: String(err) });
        return false;
      }
      try {
        await lock.create(record, signal);
      } catch (e) {
        if (!signal?.aborted)
          log.error('error initially creating leader election record', { err: String(e) });
        return false;
      }
      this.setObserved(record);
      return true;
    }

    // 3. Someone else holds a lease that has not expired by our own clock.
    if (current.raw !== this.observedRaw) this.setObserved(current.record, current.raw);
    if (current.record.holderIdentity && this.isLeaseValid(now) && !this.isLeader()) {
      log.v(4)?.info('lock is held and has not yet expired', { holder: current.record.holderIdentity });
      return false;
    }

    // 4. Take it over (or renew it): keep acquireTime while we hold it, count a transition when we take it.
    if (this.isLeader()) {
      record.acquireTime = current.record.acquireTime;
      record.leaderTransitions = current.record.leaderTransitions;
    } else {
      record.leaderTransitions = current.record.leaderTransitions + 1;
    }
    try {
      await lock.update(record, signal);
    } catch (err) {
      if (!signal?.aborted) log.error('failed to update lock', { lock: lock.describe(), err: String(err) });
      return false;
    }
    this.setObserved(record);
    return true;
  }

  private event(what: string): void {
    const rec = this.cfg.eventRecorder;
    const obj = this.cfg.lock.object();
    if (!rec || !obj) return;
    rec.eventf(
      obj,
      null,
      'Normal',
      'LeaderElection',
      'LeaderElection',
      `${this.cfg.lock.identity()} ${what}`,
    );
  }
}

/**
 * The leader's health check for /healthz (leaderelection.HealthzAdaptor): it
 * fails when we believe we lead but have not renewed for leaseDuration +
 * timeout, i.e. we should already have stepped down. Attach the elector once built.
 */
export class LeaderHealthzAdaptor {
  private elector?: Pick<LeaderElector, 'check'>;

  constructor(private readonly timeoutMs: number) {}

  setLeaderElection(e: Pick<LeaderElector, 'check'>): void {
    this.elector = e;
  }

  /** Throws when unhealthy. */
  check(): void {
    this.elector?.check(this.timeoutMs);
  }
}
