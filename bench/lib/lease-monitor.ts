// Whether Leases are renewed on time and Nodes stay Ready, as one watch on
// every Lease and one on every Node see them (a held cluster, issue 38): for
// each Lease the longest gap between two successive spec.renewTime values,
// and the renewals that came later than the lease's own duration; for the
// Nodes every Ready condition that left True. A watch that ends is resumed
// from the last resourceVersion it delivered.
import type { Client, KubeObject } from '../../shared/client';

interface LeaseTimes {
  renew: number;
  durationMs: number;
  maxGapMs: number;
  renewals: number;
}

export interface LeaseFigures {
  leases: number;
  renewals: number;
  /** Renewals later than the lease's leaseDurationSeconds after the one before. */
  late: number;
  maxGapMs: number;
  /** The longest gap of the named lease (e.g. kube-system/kube-controller-manager). */
  gapOf(key: string): number;
}

const isReady = (node: KubeObject) =>
  (node.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True');

export class LeaseMonitor {
  private readonly leases = new Map<string, LeaseTimes>();
  private readonly ready = new Map<string, boolean>();
  private late = 0;
  private notReadyTransitions = 0;
  private readonly ac = new AbortController();
  private readonly loops: Promise<void>[] = [];

  constructor(private readonly client: Client) {}

  start(): void {
    this.loops.push(
      this.follow('leases.coordination.k8s.io', (l) => this.lease(l)),
      this.follow('nodes', (n) => this.node(n)),
    );
  }

  private async follow(resource: string, seen: (o: KubeObject) => void): Promise<void> {
    const r = this.client.resource(resource);
    let rv: string | undefined;
    while (!this.ac.signal.aborted) {
      try {
        if (rv === undefined) {
          const list = await r.list({ signal: this.ac.signal });
          for (const o of list.items) seen(o);
          rv = list.metadata?.resourceVersion;
        }
        const w = await r.watch({ resourceVersion: rv, signal: this.ac.signal });
        for await (const ev of w) {
          const o = ev.object as KubeObject;
          if (o.metadata?.resourceVersion) rv = o.metadata.resourceVersion;
          if (ev.type === 'ADDED' || ev.type === 'MODIFIED') seen(o);
        }
      } catch {
        if (!this.ac.signal.aborted) await new Promise((res) => setTimeout(res, 200));
      }
    }
  }

  private lease(l: KubeObject): void {
    const renew = Date.parse(l.spec?.renewTime ?? '');
    if (Number.isNaN(renew)) return;
    const key = `${l.metadata.namespace}/${l.metadata.name}`;
    const durationMs = (l.spec?.leaseDurationSeconds ?? 0) * 1000;
    const t = this.leases.get(key);
    if (!t) {
      this.leases.set(key, { renew, durationMs, maxGapMs: 0, renewals: 0 });
      return;
    }
    if (renew <= t.renew) return;
    const gap = renew - t.renew;
    t.renew = renew;
    t.durationMs = durationMs;
    t.renewals++;
    if (gap > t.maxGapMs) t.maxGapMs = gap;
    if (durationMs > 0 && gap > durationMs) this.late++;
  }

  private node(n: KubeObject): void {
    const name = n.metadata.name ?? '';
    const now = isReady(n);
    if (this.ready.get(name) === true && !now) this.notReadyTransitions++;
    this.ready.set(name, now);
  }

  /** Forgets the gaps seen so far (the window starts now). */
  reset(): void {
    for (const t of this.leases.values()) {
      t.maxGapMs = 0;
      t.renewals = 0;
    }
    this.late = 0;
    this.notReadyTransitions = 0;
  }

  figures(): LeaseFigures & { nodesReady: number; notReadyTransitions: number } {
    let renewals = 0;
    let maxGapMs = 0;
    for (const t of this.leases.values()) {
      renewals += t.renewals;
      if (t.maxGapMs > maxGapMs) maxGapMs = t.maxGapMs;
    }
    let nodesReady = 0;
    for (const r of this.ready.values()) if (r) nodesReady++;
    return {
      leases: this.leases.size,
      renewals,
      late: this.late,
      maxGapMs,
      gapOf: (key) => this.leases.get(key)?.maxGapMs ?? NaN,
      nodesReady,
      notReadyTransitions: this.notReadyTransitions,
    };
  }

  async stop(): Promise<void> {
    this.ac.abort();
    await Promise.allSettled(this.loops);
  }
}
