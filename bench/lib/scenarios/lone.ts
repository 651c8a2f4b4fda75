// One client (issue 39): a controller's reconcile loop is a chain of single requests, so
// the latency of each verb with nothing else in flight, over HTTP/1.1 and over h2 (what
// client-go speaks). The disk's fsync floor is measured beside them (every acknowledged
// write waits for it). With --profile, a profiled apiserver also takes a lone client's
// creates in a window of known bounds, for run.ts to break down by phase.
import { Api } from '../api';
import { fsyncFloor } from '../fsync-probe';
import { CRUD_VERBS, type OpSpec } from '../load';
import { configMap } from '../objects';
import type { LoneRow } from '../results';
import { quantile } from '../stats';
import { splitLoad } from '../workers';
import { type Ctx, measured, noteErrors } from './context';
import type { Instance } from './instance';

const NAMESPACE = 'bench-lone';
/** A running server's row: the 64-client rows before it have warmed the write path. */
const WARMUP_MS = 2000;
const DURATION_MS = 6000;
/**
 * The profiled server starts cold: V8 optimises a function only after enough calls, and
 * at one client's ~200 requests a second that takes minutes. Warm it at 16 clients first.
 */
const PROFILE_WARMUP_MS = 4000;
const PROFILE_CREATES = 600;

export async function loneScenario(ctx: Ctx, a: Instance): Promise<void> {
  await a.phase('lone');
  await a.api.namespace(NAMESPACE);
  // --profile restarted the server for this scenario's own profile: warm it as the rows before would have.
  if (ctx.opts.profileDir) await warm(ctx, a);
  const rows: LoneRow[] = [];
  for (const h2 of [false, true]) {
    const op: OpSpec = { type: 'crud-cm', namespace: NAMESPACE, bytes: 1024, prefix: '' };
    const [f, usage] = await measured(ctx, a, () =>
      splitLoad(
        ctx.workers,
        1,
        {
          kind: 'load',
          target: a.server.target,
          h2,
          op,
          concurrency: 1,
          warmupMs: WARMUP_MS,
          durationMs: DURATION_MS,
        },
        (t) => ({ ...t, op: { ...op, prefix: `lone-${h2 ? 'h2' : 'h1'}-${Date.now()}` } }),
      ),
    );
    const verbs = Object.fromEntries(
      CRUD_VERBS.map((v) => {
        const l = f.verbs?.[v] ?? new Float64Array(0);
        return [v, { p50: quantile(l, 0.5), p99: quantile(l, 0.99) }];
      }),
    ) as LoneRow['verbs'];
    rows.push({
      h2,
      chains: f.ops,
      verbs,
      errors: f.errors,
      ...(f.errorSamples.length ? { errorSamples: f.errorSamples } : {}),
      ...usage,
      // The apiserver's cores are steady over warm-up and window alike.
      apiserverCpuUsPerChain: f.ops ? (usage.apiserverCpu * DURATION_MS * 1000) / f.ops : undefined,
    });
    noteErrors(ctx, `lone ${h2 ? 'h2' : 'h1'}`, f.errors, f.errorSamples);
    ctx.log(
      `one client${h2 ? ', h2' : ''}: ${CRUD_VERBS.map((v) => `${v} ${verbs[v].p50.toFixed(2)}/${verbs[v].p99.toFixed(2)}`).join(', ')} ms (p50/p99)`,
    );
  }
  const disk = fsyncFloor(ctx.root);
  const q = (l: Float64Array) => ({ p50: quantile(l, 0.5), p99: quantile(l, 0.99) });
  ctx.result.lone = { rows, fsync: q(disk.sync), commitFloor: q(disk.commit) };
  ctx.log(
    `the disk: 4 KB fdatasync p50 ${quantile(disk.sync, 0.5).toFixed(2)} ms, LMDB-shaped commit p50 ${quantile(disk.commit, 0.5).toFixed(2)} ms`,
  );
  if (ctx.opts.profileDir) await profiledCreates(ctx, a);
}

/** Creates at 16 clients for PROFILE_WARMUP_MS: V8 optimises the write path. */
async function warm(ctx: Ctx, a: Instance): Promise<void> {
  const op: OpSpec = { type: 'create-cm', namespace: NAMESPACE, bytes: 1024, prefix: `warm-${Date.now()}` };
  await splitLoad(ctx.workers, 1, {
    kind: 'load',
    target: a.server.target,
    op,
    concurrency: 16,
    warmupMs: 0,
    durationMs: PROFILE_WARMUP_MS,
  });
}

/** Lone creates on a profiled server, warmed first; the window is kept for the breakdown. */
async function profiledCreates(ctx: Ctx, a: Instance): Promise<void> {
  await a.phase('lone-create');
  await a.api.namespace(NAMESPACE);
  await warm(ctx, a);
  const api = new Api(a.server.target, 1);
  try {
    const path = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
    const body = (i: number) => JSON.stringify(configMap(NAMESPACE, `lone-${i}`, 1024));
    for (let i = 0; i < 20; i++) await api.must('POST', path, body(i), [201]);
    const lat = new Float64Array(PROFILE_CREATES);
    const fromUs = Number(process.hrtime.bigint() / 1000n);
    for (let i = 0; i < PROFILE_CREATES; i++) {
      const r = await api.call('POST', path, body(1000 + i));
      if (r.status !== 201)
        throw new Error(`lone create: ${r.status} ${r.body.toString('utf8').slice(0, 300)}`);
      lat[i] = r.ms;
    }
    const toUs = Number(process.hrtime.bigint() / 1000n);
    const sorted = lat.slice().sort();
    ctx.log(`lone creates on the profiled server: monotonic µs ${fromUs}–${toUs}`);
    ctx.result.lone!.profile = {
      file: a.profileFile!,
      fromUs,
      toUs,
      creates: PROFILE_CREATES,
      p50: quantile(sorted, 0.5),
      meanMs: (toUs - fromUs) / 1000 / PROFILE_CREATES,
    };
  } finally {
    await api.close();
  }
}
