// Instance A: cold starts and idle memory, then create, get, one client and watch on configmaps.
import { rssBytes } from '../procs';
import { median, sleep } from '../stats';
import type { Ctx } from './context';
import { createScenario } from './create';
import { getScenario } from './get';
import { loneScenario } from './lone';
import { Instance } from './instance';
import { coldStarts } from './start';
import { watchScenario } from './watch';

export async function configMapsInstance(ctx: Ctx): Promise<void> {
  const o = ctx.opts;
  const runsMs = o.only.has('start') ? await coldStarts(ctx) : [];
  const a = new Instance(ctx, 'a');
  await a.start('idle');
  try {
    if (o.only.has('start')) {
      await sleep(o.idleWaitMs);
      const m = a.mem();
      ctx.result.start = {
        runsMs,
        medianMs: median(runsMs),
        idleRss: m.rss,
        idleAnon: m.anon,
        ...(ctx.etcd ? { etcdRss: rssBytes(ctx.etcd.pid) } : {}),
      };
      ctx.log(`idle RSS after ${o.idleWaitMs / 1000} s: ${(ctx.result.start.idleRss / 1e6).toFixed(1)} MB`);
    }
    await a.api.namespace('bench');
    await a.api.namespace('bench-watch');
    if (o.only.has('create')) await createScenario(ctx, a);
    if (o.only.has('get')) await getScenario(ctx, a);
    if (o.only.has('lone')) await loneScenario(ctx, a);
    if (o.only.has('watch')) {
      // h2 first: the row the budget reads (client-go multiplexes its watches); HTTP/1.1 extra.
      await watchScenario(ctx, a, true);
      if (o.watchHttp1) await watchScenario(ctx, a, false);
    }
  } finally {
    await a.stop();
  }
}
