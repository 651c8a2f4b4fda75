// The driver's side of the load workers: fork N bench/worker.js processes,
// send each a task, await the answers; split a closed-loop load over workers
// and merge what they measured.
import type { ChildProcess } from 'node:child_process';
import type { Task } from '../worker';
import { CRUD_VERBS, type CrudVerb, type LoadResult, type LoadTask } from './load';
import { forkScript, terminate } from './procs';
import { merged } from './stats';

export class Workers {
  private readonly procs: ChildProcess[];
  private seq = 0;
  private readonly pending = new Map<number, { resolve: (v: any) => void; reject: (e: Error) => void }>();

  constructor(n: number) {
    this.procs = Array.from({ length: n }, () => {
      const c = forkScript('worker.js');
      c.on('message', (m: { id: number; result?: unknown; error?: string }) => {
        const p = this.pending.get(m.id);
        if (!p) return;
        this.pending.delete(m.id);
        if (m.error !== undefined) p.reject(new Error(`worker: ${m.error}`));
        else p.resolve(m.result);
      });
      c.on('exit', (code, signal) => {
        for (const [id, p] of this.pending) {
          p.reject(new Error(`worker exited (${code ?? signal})`));
          this.pending.delete(id);
        }
      });
      return c;
    });
  }

  get size(): number {
    return this.procs.length;
  }

  get pids(): number[] {
    return this.procs.map((p) => p.pid!);
  }

  run<T>(i: number, task: Task): Promise<T> {
    const id = ++this.seq;
    return new Promise<T>((resolve, reject) => {
      this.pending.set(id, { resolve, reject });
      this.procs[i].send({ id, task });
    });
  }

  async close(): Promise<void> {
    await Promise.all(
      this.procs.map((p) => {
        if (p.connected) p.disconnect();
        return terminate(p, 3000);
      }),
    );
  }
}

export interface LoadFigures {
  concurrency: number;
  /** Completed operations per second over the measured window. */
  rate: number;
  ops: number;
  errors: number;
  errorSamples: string[];
  lat: Float64Array;
  lat2: Float64Array;
  bytesIn: number;
  windowMs: number;
  /** Operations per second during the warm-up (creates only; 0 without one). */
  warmupRate: number;
  /** 'crud-cm' only: each verb's latencies. */
  verbs?: Record<CrudVerb, Float64Array>;
}

/**
 * Runs one closed-loop load split over the first `procs` workers (concurrency
 * divided as evenly as possible; count mode splits the count the same way).
 */
export async function splitLoad(
  w: Workers,
  procs: number,
  task: LoadTask,
  tweak?: (t: LoadTask, i: number) => LoadTask,
): Promise<LoadFigures> {
  const n = Math.max(1, Math.min(procs, w.size, task.concurrency));
  const parts = Array.from({ length: n }, (_, i) => {
    const conc = Math.floor(task.concurrency / n) + (i < task.concurrency % n ? 1 : 0);
    const count =
      task.count === undefined ? undefined : Math.floor(task.count / n) + (i < task.count % n ? 1 : 0);
    const t: LoadTask = { ...task, concurrency: conc, count };
    return tweak ? tweak(t, i) : t;
  });
  const results = await Promise.all(parts.map((t, i) => w.run<LoadResult>(i, t)));
  const ops = results.reduce((s, r) => s + r.ops, 0);
  const windowMs = Math.max(...results.map((r) => r.windowMs));
  return {
    concurrency: task.concurrency,
    rate: ops / (windowMs / 1000),
    ops,
    errors: results.reduce((s, r) => s + r.errors, 0),
    errorSamples: results.flatMap((r) => r.errorSamples).slice(0, 5),
    lat: merged(results.map((r) => r.lat)),
    lat2: merged(results.map((r) => r.lat2)),
    bytesIn: results.reduce((s, r) => s + r.bytesIn, 0),
    windowMs,
    warmupRate: task.warmupMs ? results.reduce((s, r) => s + r.warmupOps, 0) / (task.warmupMs / 1000) : 0,
    ...(results[0]?.verbs
      ? {
          verbs: Object.fromEntries(
            CRUD_VERBS.map((v) => [v, merged(results.map((r) => r.verbs?.[v] ?? new Float64Array(0)))]),
          ) as Record<CrudVerb, Float64Array>,
        }
      : {}),
  };
}
