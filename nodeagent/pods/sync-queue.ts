// When each pod is synced (the kubelet's pod workers): one serialized worker
// per pod — a sync asked for while one runs makes it run once more — timed
// wake-ups (a backoff ends, a probe delay passes), a retry after a failed
// sync, and the periodic resync of every pod.
import type { Clock, Timer } from '../../shared/client/clock';
import { logger } from '../../shared/log';
import type { PodRecord, PodRecords } from './records';
import { podFullName } from './status';

const log = logger('nodeagent/pods');

/** Every pod is looked at again this often even when nothing happened (the kubelet's sync frequency). */
const RESYNC_MS = 60_000;
const RETRY_MS = 2_000;

export class PodSyncQueue {
  private stopped = false;
  private resyncTimer?: Timer;

  constructor(
    private readonly d: {
      records: PodRecords;
      clock: Clock;
      /** One sync of the pod (never two at once for the same pod). */
      sync(rec: PodRecord): Promise<void>;
      /** Runs with every periodic resync. */
      onResync(): void;
    },
  ) {
    this.scheduleResync();
  }

  get isStopped(): boolean {
    return this.stopped;
  }

  /** Runs the pod's sync (again) — serialized per pod. */
  request(uid: string, delayMs = 0): void {
    const rec = this.d.records.get(uid);
    if (!rec || this.stopped) return;
    if (delayMs > 0) {
      const t = this.d.clock.setTimer(() => {
        rec.timers = rec.timers.filter((x) => x !== t);
        this.request(uid);
      }, delayMs);
      rec.timers.push(t);
      return;
    }
    if (!rec.admitted) return;
    rec.dirty = true;
    if (rec.busy) return;
    rec.busy = true;
    void (async () => {
      try {
        while (rec.dirty && !this.stopped) {
          rec.dirty = false;
          await this.d.sync(rec);
        }
      } catch (err) {
        log.error('error syncing pod, will retry', { pod: podFullName(rec.pod), err: String(err) });
        this.request(uid, RETRY_MS);
      } finally {
        rec.busy = false;
      }
    })();
  }

  /** Makes sure the pod is synced again at `at` (one timer for the earliest time asked). */
  wakeAt(rec: PodRecord, at: number): void {
    const now = this.d.clock.now();
    if (rec.wakeAt !== undefined && rec.wakeAt > now && rec.wakeAt <= at) return;
    rec.wakeAt = at;
    const t = this.d.clock.setTimer(
      () => {
        rec.timers = rec.timers.filter((x) => x !== t);
        if (rec.wakeAt === at) rec.wakeAt = undefined;
        this.request(rec.uid);
      },
      Math.max(0, at - now),
    );
    rec.timers.push(t);
  }

  private scheduleResync(): void {
    this.resyncTimer = this.d.clock.setTimer(() => {
      if (this.stopped) return;
      for (const uid of this.d.records.uids()) this.request(uid);
      this.d.onResync();
      this.scheduleResync();
    }, RESYNC_MS);
  }

  /** No more syncs: the resync and every pod's timers are cancelled. */
  stop(): void {
    this.stopped = true;
    this.resyncTimer?.cancel();
    for (const r of this.d.records.values()) for (const t of r.timers) t.cancel();
  }
}
