// What every scenario gets: the run's options, the backend's context, and the
// helpers that turn a load into a result row.
import type { EtcdServer } from '../../../apiserver/storage/etcd3/etcd-server';
import { CpuMeter, NoiseMeter } from '../procs';
import type { BackendResult, LoadRow } from '../results';
import { quantile } from '../stats';
import type { LoadFigures, Workers } from '../workers';
import type { Instance } from './instance';

export type Scenario = 'start' | 'create' | 'get' | 'lone' | 'list' | 'watch' | 'memory';
export const SCENARIOS: Scenario[] = ['start', 'create', 'get', 'lone', 'list', 'watch', 'memory'];

export interface Options {
  backends: ('embedded' | 'etcd')[];
  only: Set<Scenario>;
  full: boolean;
  pods: number;
  starts: number;
  watchers: number;
  /** Updates of the watched object, at updateRate. */
  watchUpdates: number;
  /** Updates before the measured ones, at the same rate, whose events are not counted. */
  watchWarmup: number;
  updateRate: number;
  clientProcs: number;
  watchProcs: number;
  /** Also run the fan-out with the watches multiplexed over h2. */
  /** Also the fan-out with one HTTP/1.1 connection per watcher. */
  watchHttp1: boolean;
  profileDir?: string;
  record: boolean;
  idleWaitMs: number;
}

export interface Ctx {
  opts: Options;
  backend: 'embedded' | 'etcd';
  /** Temp folder of this backend's runs. */
  root: string;
  /** Pre-generated CA, serving and admin certificates, shared by every start. */
  certDir: string;
  etcd?: EtcdServer;
  workers: Workers;
  result: BackendResult;
  log: (s: string) => void;
}

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

export function loadRow(f: LoadFigures): LoadRow {
  return {
    concurrency: f.concurrency,
    rate: f.rate,
    p50: quantile(f.lat, 0.5),
    p99: quantile(f.lat, 0.99),
    errors: f.errors,
    ...(f.errorSamples.length ? { errorSamples: f.errorSamples } : {}),
  };
}

/** Logs and keeps the first errors of a load (a benchmark with errors measures something else). */
export function noteErrors(ctx: Ctx, what: string, errors: number, samples: string[] | undefined): void {
  if (!errors) return;
  const n = `${what}: ${errors} errors, e.g. ${(samples ?? []).slice(0, 2).join(' | ')}`;
  ctx.result.notes.push(n);
  ctx.log(n);
}

export function procsFor(ctx: Ctx, concurrency: number): number {
  return concurrency >= 16 ? ctx.opts.clientProcs : 1;
}

interface Usage {
  /** Cores the rest of the machine used meanwhile. */
  other: number;
  /** Cores the apiserver, the etcd server and the load workers used. */
  apiserverCpu: number;
  etcdCpu?: number;
  clientCpu: number;
}

/** Runs fn against instance i and tells who used how much CPU meanwhile. */
export async function measured<T>(ctx: Ctx, i: Instance, fn: () => Promise<T>): Promise<[T, Usage]> {
  const m = new NoiseMeter(ctx.etcd ? [ctx.etcd.pid] : []);
  const pids = i.pids();
  const cpu = new CpuMeter([...pids, ...ctx.workers.pids]);
  const r = await fn();
  const c = cpu.read();
  return [
    r,
    {
      other: m.read(),
      apiserverCpu: c.cores[0],
      ...(ctx.etcd ? { etcdCpu: c.cores[1] } : {}),
      clientCpu: c.cores.slice(pids.length).reduce((x, y) => x + y, 0),
    },
  ];
}
