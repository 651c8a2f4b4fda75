// Creates of configmaps at 1, 16 and 64 concurrent clients, then creates of
// 3.8 KB pods at 64 (create only, as issue 21 measured kube-apiserver).
import type { OpSpec } from '../load';
import type { LoadRow } from '../results';
import { quantile } from '../stats';
import { splitLoad } from '../workers';
import { type Ctx, loadRow, measured, noteErrors, procsFor } from './context';
import type { Instance } from './instance';

export async function createScenario(ctx: Ctx, a: Instance): Promise<void> {
  await a.phase('create');
  const rows: LoadRow[] = [];
  for (const c of [1, 16, 64]) {
    const op: OpSpec = { type: 'create-cm', namespace: 'bench', bytes: 1024, prefix: '' };
    const [f, usage] = await measured(ctx, a, () =>
      splitLoad(
        ctx.workers,
        procsFor(ctx, c),
        { kind: 'load', target: a.server.target, op, concurrency: c, warmupMs: 1000, durationMs: 6000 },
        (t, i) => ({ ...t, op: { ...op, prefix: `c${c}-${Date.now()}-w${i}` } }),
      ),
    );
    rows.push({ ...loadRow(f), ...usage });
    noteErrors(ctx, `create c=${c}`, f.errors, f.errorSamples);
    ctx.log(`create c=${c}: ${f.rate.toFixed(0)}/s p99 ${quantile(f.lat, 0.99).toFixed(1)} ms`);
  }
  ctx.result.create = rows;

  await a.api.namespace('bench-pod-create');
  const op: OpSpec = { type: 'pod-create', namespace: 'bench-pod-create', prefix: '', bytes: POD_BYTES };
  const [f, usage] = await measured(ctx, a, () =>
    splitLoad(
      ctx.workers,
      procsFor(ctx, 64),
      {
        kind: 'load',
        target: a.server.target,
        op,
        concurrency: 64,
        warmupMs: POD_WARMUP_MS,
        durationMs: 6000,
      },
      (t, i) => ({ ...t, op: { ...op, prefix: `p-${Date.now()}-w${i}` } }),
    ),
  );
  ctx.result.podCreate = {
    ...loadRow(f),
    ...usage,
    bytes: POD_BYTES,
    warmupMs: POD_WARMUP_MS,
    warmupRate: f.warmupRate,
  };
  noteErrors(ctx, 'pod create c=64', f.errors, f.errorSamples);
  ctx.log(
    `pod create c=64: ${f.rate.toFixed(0)}/s p99 ${quantile(f.lat, 0.99).toFixed(1)} ms (warm-up ${f.warmupRate.toFixed(0)}/s)`,
  );
}

/** JSON size of the pods created (issue 21's figure for kube-apiserver is for 3.8 KB pods). */
const POD_BYTES = 3800;
/**
 * The configmap rows have warmed the shared write path, not the pod's (its defaulting,
 * validation, ownership and encoders): V8 takes the first few thousand pods to optimise
 * it, at ~60% of the steady rate. The row measures the running server; the rate during
 * the warm-up is kept beside it.
 */
const POD_WARMUP_MS = 5000;
