// When a watch saw each pod of a namespace appear, get its node and turn
// Running and Ready: ClusterLoader2's pod startup latency is the gap between
// the first and the last. A watch that ends is resumed from the last
// resourceVersion it delivered.
import type { Client, KubeObject } from '../../shared/client';

interface Times {
  created: number;
  bound?: number;
  running?: number;
}

function runningAndReady(pod: any): boolean {
  return (
    pod.status?.phase === 'Running' &&
    (pod.status?.conditions ?? []).some((c: any) => c.type === 'Ready' && c.status === 'True')
  );
}

export class PodTimeline {
  private readonly pods = new Map<string, Times>();
  private readonly ac = new AbortController();
  private runningCount = 0;
  private loop?: Promise<void>;

  constructor(
    private readonly client: Client,
    private readonly namespace: string,
  ) {}

  /** Starts watching (from now: the namespace is expected empty). */
  async start(): Promise<void> {
    const pods = this.client.resource('pods').namespace(this.namespace);
    let rv = (await pods.list({ limit: 1 })).metadata?.resourceVersion;
    this.loop = (async () => {
      while (!this.ac.signal.aborted) {
        try {
          const w = await pods.watch({ resourceVersion: rv, signal: this.ac.signal });
          for await (const ev of w) {
            const pod = ev.object as KubeObject;
            if (pod.metadata?.resourceVersion) rv = pod.metadata.resourceVersion;
            if (ev.type === 'ADDED' || ev.type === 'MODIFIED') this.seen(pod);
          }
        } catch {
          if (!this.ac.signal.aborted) await new Promise((r) => setTimeout(r, 200));
        }
      }
    })();
  }

  private seen(pod: KubeObject): void {
    const now = performance.timeOrigin + performance.now();
    const uid = pod.metadata.uid!;
    let t = this.pods.get(uid);
    if (!t) this.pods.set(uid, (t = { created: now }));
    if (t.bound === undefined && pod.spec?.nodeName) t.bound = now;
    if (t.running === undefined && runningAndReady(pod)) {
      t.running = now;
      this.runningCount++;
    }
  }

  running(): number {
    return this.runningCount;
  }

  stop(): void {
    this.ac.abort();
  }

  /** Creation → Running and Ready (ms), sorted. */
  startupLatencies(): Float64Array {
    const out: number[] = [];
    for (const t of this.pods.values()) if (t.running !== undefined) out.push(t.running - t.created);
    return Float64Array.from(out).sort();
  }

  /** Creation → bound to a node, and bound → Running and Ready (ms), each sorted: where the startup went. */
  startupSplit(): { toBound: Float64Array; boundToRunning: Float64Array } {
    const toBound: number[] = [];
    const boundToRunning: number[] = [];
    for (const t of this.pods.values()) {
      if (t.bound === undefined) continue;
      toBound.push(t.bound - t.created);
      if (t.running !== undefined) boundToRunning.push(t.running - t.bound);
    }
    return {
      toBound: Float64Array.from(toBound).sort(),
      boundToRunning: Float64Array.from(boundToRunning).sort(),
    };
  }

  /** When each pod was seen bound to a node, sorted. */
  boundTimes(): number[] {
    return [...this.pods.values()]
      .flatMap((t) => (t.bound === undefined ? [] : [t.bound]))
      .sort((a, b) => a - b);
  }
}
