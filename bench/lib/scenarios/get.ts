// Gets of one configmap at 64 concurrent clients, over HTTP/1.1 and h2.
import { configMap } from '../objects';
import type { LoadRow } from '../results';
import { splitLoad } from '../workers';
import { type Ctx, loadRow, measured, noteErrors, procsFor } from './context';
import type { Instance } from './instance';

export async function getScenario(ctx: Ctx, a: Instance): Promise<void> {
  await a.phase('get');
  await a.api.must(
    'POST',
    '/api/v1/namespaces/bench/configmaps',
    configMap('bench', 'get-target'),
    [201, 409],
  );
  const run = async (h2: boolean): Promise<LoadRow> => {
    const [f, usage] = await measured(ctx, a, () =>
      splitLoad(ctx.workers, procsFor(ctx, 64), {
        kind: 'load',
        target: a.server.target,
        h2,
        op: { type: 'get', path: '/api/v1/namespaces/bench/configmaps/get-target' },
        concurrency: 64,
        warmupMs: 1000,
        durationMs: 6000,
      }),
    );
    return { ...loadRow(f), ...usage };
  };
  const h1 = await run(false);
  const h2 = await run(true);
  noteErrors(ctx, 'get h1', h1.errors, h1.errorSamples);
  noteErrors(ctx, 'get h2', h2.errors, h2.errorSamples);
  ctx.result.get = { h1, h2 };
  ctx.log(`get c=64: ${h1.rate.toFixed(0)}/s (h2 ${h2.rate.toFixed(0)}/s)`);
}
