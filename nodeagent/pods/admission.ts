// Pod admission (the kubelet's HandlePodAdditions): pods from the apiserver
// wait until every source has listed once, then are admitted oldest first;
// static pods never wait (they may be what brings the apiserver up). A pod
// admitted beyond --max-pods is rejected (OutOfpods) rather than run.
import { logger } from '../../shared/log';
import type { PodEvents } from './pod-events';
import { isTerminalPhase, type PodRecord, type PodRecords } from './records';
import type { ContainerRuntime } from './runtime';
import { podFullName } from './status';

const log = logger('nodeagent/pods');

export class PodAdmission {
  private synced = false;
  private readonly pending: PodRecord[] = [];

  constructor(
    private readonly d: {
      records: PodRecords;
      maxPods: number;
      runtime: ContainerRuntime;
      events: PodEvents;
      /** The first sync of an admitted pod. */
      requestSync(uid: string): void;
    },
  ) {}

  /** Every source has listed once. */
  get isSynced(): boolean {
    return this.synced;
  }

  /** A pod new to this node: admitted now, or held until the sources are synced. */
  add(rec: PodRecord): void {
    if (this.synced || rec.source !== 'api') this.admit(rec);
    else this.pending.push(rec);
  }

  /** The sources are synced: the pods held until now, oldest first (undefined if already synced). */
  markSynced(): PodRecord[] | undefined {
    if (this.synced) return undefined;
    this.synced = true;
    const waiting = this.pending.splice(0);
    waiting.sort((a, b) =>
      String(a.pod.metadata.creationTimestamp ?? '').localeCompare(
        String(b.pod.metadata.creationTimestamp ?? ''),
      ),
    );
    return waiting;
  }

  /** The max-pods predicate, then the first sync. */
  admit(rec: PodRecord): void {
    if (rec.removed) {
      this.d.records.delete(rec.uid);
      return;
    }
    const deleting = !!rec.pod.metadata.deletionTimestamp;
    if (!isTerminalPhase(rec.pod.status?.phase) && !deleting) {
      const used = this.activeCount(rec);
      if (used >= this.d.maxPods) {
        const message = `Node didn't have enough resource: pods, requested: 1, used: ${used}, capacity: ${this.d.maxPods}`;
        rec.rejected = { reason: 'OutOfpods', message };
        this.d.events.emit(rec, undefined, 'Warning', 'OutOfpods', 'Admit', message);
        log.info('pod rejected', { pod: podFullName(rec.pod), reason: 'OutOfpods' });
      }
    }
    rec.admitted = true;
    this.d.requestSync(rec.uid);
  }

  /** Pods that count against max-pods: admitted, not rejected, and not finished. */
  private activeCount(except: PodRecord): number {
    let n = 0;
    for (const r of this.d.records.values()) {
      if (r === except || !r.admitted || r.rejected || r.terminal || r.removed) continue;
      if (isTerminalPhase(r.pod.status?.phase) && !this.d.runtime.containers(r.uid).length) continue;
      n++;
    }
    return n;
  }
}
