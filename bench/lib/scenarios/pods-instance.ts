// Instance B: pods stored at 64 clients, then memory and restart-with-data
// (at --pods, and at 100k with --full), with the list scenario in between.
import { type MemDetail, rssBytes } from '../procs';
import type { BackendResult } from '../results';
import { quantile, sleep } from '../stats';
import { splitLoad } from '../workers';
import { type Ctx, measured, noteErrors, procsFor, PROTOBUF } from './context';
import { Instance } from './instance';
import { listScenario } from './list';

/** Creates `count` pods (create + kubelet status update each) at 64 concurrent clients. */
async function createPods(ctx: Ctx, b: Instance, namespace: string, count: number, first: number) {
  await b.api.namespace(namespace);
  const conc = 64;
  const procs = procsFor(ctx, conc);
  const share = Array.from(
    { length: procs },
    (_, i) => Math.floor(count / procs) + (i < count % procs ? 1 : 0),
  );
  return splitLoad(
    ctx.workers,
    procs,
    {
      kind: 'load',
      target: b.server.target,
      op: { type: 'pod', namespace, prefix: '', first },
      concurrency: conc,
      count,
    },
    (t, i) => ({
      ...t,
      op: {
        type: 'pod',
        namespace,
        prefix: `pod-w${i}`,
        first: first + share.slice(0, i).reduce((x, y) => x + y, 0),
      },
    }),
  );
}

/** Starts the pods' watch cache without serving a list from it; resolves with the time to the watch's headers. */
async function startPodCache(b: Instance): Promise<number> {
  const rv = (await b.api.must('GET', '/api/v1/pods?limit=1')).metadata.resourceVersion;
  return b.api.headersTime(`/api/v1/pods?watch=1&resourceVersion=${rv}&timeoutSeconds=1`);
}

export async function podsInstance(ctx: Ctx): Promise<void> {
  const o = ctx.opts;
  const memory = o.only.has('memory');
  const b = new Instance(ctx, 'b');
  await b.start('idle');
  try {
    let idle: MemDetail = { rss: NaN, anon: NaN, file: NaN };
    let idleHeap: number | undefined;
    if (memory) {
      await sleep(o.idleWaitMs);
      idle = b.mem();
      idleHeap = await b.heap();
    }
    await b.phase('pods');
    const [f, usage] = await measured(ctx, b, () => createPods(ctx, b, 'bench-pods', o.pods, 0));
    ctx.log(`${o.pods} pods: ${f.rate.toFixed(0)} pods/s (create + status), ${f.errors} errors`);
    noteErrors(ctx, 'pods', f.errors, f.errorSamples);
    // Sizes of one pod as served, with and without managedFields.
    const j = await b.api.call('GET', '/api/v1/pods?limit=100');
    const p = await b.api.call('GET', '/api/v1/pods?limit=100', undefined, PROTOBUF);
    const sample = JSON.parse(j.body.toString('utf8'));
    const jn = sample.items?.length || 1;
    for (const it of sample.items ?? []) delete it.metadata.managedFields;
    ctx.result.pods = {
      count: o.pods,
      rate: f.rate,
      createP50: quantile(f.lat, 0.5),
      createP99: quantile(f.lat, 0.99),
      statusP50: quantile(f.lat2, 0.5),
      statusP99: quantile(f.lat2, 0.99),
      jsonBytes: j.body.length / jn,
      jsonBytesNoManagedFields: JSON.stringify(sample).length / jn,
      protobufBytes: p.body.length / jn,
      errors: f.errors,
      ...usage,
      ...(f.errorSamples.length ? { errorSamples: f.errorSamples } : {}),
    };
    const points: NonNullable<BackendResult['memory']>['points'] = [];
    let stored = o.pods - f.errors;

    /**
     * RSS of the loaded process, then restart: ready time, cache fill, RSS with the cache only and after a list.
     * Each reading waits as long as the idle one: a process gives back what a burst grew once it is quiet.
     */
    const restartAndMeasure = async (pods: number) => {
      await sleep(o.idleWaitMs);
      const loadedRss = b.rss();
      const loadedHeap = await b.heap();
      await b.stop();
      const s = await b.start('restart');
      const cacheFillMs = await startPodCache(b);
      await sleep(o.idleWaitMs);
      const cached = b.mem();
      const heap = await b.heap();
      const l = await b.api.call('GET', '/api/v1/pods?resourceVersion=0');
      if (l.status !== 200) throw new Error(`list: ${l.status}`);
      await sleep(o.idleWaitMs);
      const listed = b.mem();
      (ctx.result.restart ??= []).push({
        objects: pods,
        readyMs: s.readyMs,
        ...(s.alsoMs !== undefined ? { readyExclBootstrapMs: s.alsoMs } : {}),
        ...(s.notReady ? { notReady: s.notReady.slice(0, 500) } : {}),
        cacheFillMs,
        firstListMs: l.ms,
      });
      ctx.log(
        `restart with ${pods} pods: ready ${s.readyMs.toFixed(0)} ms` +
          `${s.alsoMs !== undefined ? ` (without bootstrap-controller ${s.alsoMs.toFixed(0)} ms)` : ''}, ` +
          `cache filled in ${cacheFillMs.toFixed(0)} ms, first list ${l.ms.toFixed(0)} ms`,
      );
      if (memory) {
        points.push({
          pods,
          loadedRss,
          loadedHeap,
          rss: cached.rss,
          heap,
          perPod: (cached.rss - idle.rss) / pods,
          anon: cached.anon,
          perPodAnon: (cached.anon - idle.anon) / pods,
          rssAfterList: listed.rss,
          anonAfterList: listed.anon,
          heapAfterList: await b.heap(),
          perPodAfterList: (listed.rss - idle.rss) / pods,
          perPodAnonAfterList: (listed.anon - idle.anon) / pods,
          ...(ctx.etcd ? { etcdRss: rssBytes(ctx.etcd.pid) } : {}),
        });
        ctx.log(
          `RSS with ${pods} pods: ${(loadedRss / 1e6).toFixed(0)} MB after storing them, ` +
            `${(cached.rss / 1e6).toFixed(0)} MB (anon ${(cached.anon / 1e6).toFixed(0)}) restarted with the cache, ` +
            `${(listed.rss / 1e6).toFixed(0)} MB (anon ${(listed.anon / 1e6).toFixed(0)}) after a list`,
        );
        const heapAfterList = points[points.length - 1].heapAfterList;
        if (heap !== undefined && heapAfterList !== undefined && idleHeap !== undefined)
          ctx.log(
            `V8 heap per pod over idle: ${((heap - idleHeap) / pods / 1024).toFixed(2)} KiB with the cache, ` +
              `${((heapAfterList - idleHeap) / pods / 1024).toFixed(2)} KiB after a list; ` +
              `file-backed RSS (binary and LMDB's map) ${((cached.rss - cached.anon) / 1e6).toFixed(0)} MB`,
          );
      }
    };

    if (memory || o.only.has('start')) await restartAndMeasure(stored);
    if (o.only.has('list')) await listScenario(ctx, b);
    if (memory && o.full) {
      await b.phase('pods-100k');
      const more = 100_000 - o.pods;
      const g = await createPods(ctx, b, 'bench-pods-more', more, o.pods);
      ctx.log(`+${more} pods: ${g.rate.toFixed(0)} pods/s, ${g.errors} errors`);
      noteErrors(ctx, 'pods to 100k', g.errors, g.errorSamples);
      stored += more - g.errors;
      await restartAndMeasure(stored);
    }
    if (memory) ctx.result.memory = { idleRss: idle.rss, idleAnon: idle.anon, idleHeap, points };
  } finally {
    await b.stop();
  }
}
