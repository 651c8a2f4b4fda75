// Creates of configmaps at 1, 16 and 64 concurrent clients.
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
}
