// Watch fan-out: many watchers of one configmap, the latency from each update
// being due to its event arriving at every watcher.
import { configMap } from '../objects';
import { FsyncProbe } from '../fsync-probe';
import { CpuMeter, NoiseMeter } from '../procs';
import { merged, quantile, Samples, sleep, summarize, wallNow } from '../stats';
import { Workers } from '../workers';
import { type Ctx, noteErrors } from './context';
import type { Instance } from './instance';

interface WatchPart {
  opened: number;
  received: number;
  minPerWatcher: number;
  lat: Float64Array;
  errors: number;
  errorSamples: string[];
}

export async function watchScenario(ctx: Ctx, a: Instance, h2: boolean): Promise<void> {
  await a.phase(h2 ? 'watch-h2' : 'watch');
  const o = ctx.opts;
  const path = '/api/v1/namespaces/bench-watch/configmaps/target';
  await a.api.must(
    'POST',
    '/api/v1/namespaces/bench-watch/configmaps',
    configMap('bench-watch', 'target'),
    [201, 409],
  );
  // Like an informer: list (from the watch cache), then watch from the list's resourceVersion.
  const rv = (await a.api.must('GET', '/api/v1/namespaces/bench-watch/configmaps?resourceVersion=0')).metadata
    .resourceVersion;
  const ww = new Workers(Math.min(o.watchProcs, o.watchers));
  try {
    const per = Array.from(
      { length: ww.size },
      (_, i) => Math.floor(o.watchers / ww.size) + (i < o.watchers % ww.size ? 1 : 0),
    );
    const watchPath = `/api/v1/namespaces/bench-watch/configmaps?watch=1&resourceVersion=${rv}&timeoutSeconds=1800`;
    const t0 = performance.now();
    const opened = (
      await Promise.all(
        per.map((n, i) =>
          ww.run<number>(i, {
            kind: 'watch-open',
            target: a.server.target,
            path: watchPath,
            watchers: n,
            h2,
          }),
        ),
      )
    ).reduce((s, n) => s + n, 0);
    ctx.log(`${opened} watchers open in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
    await sleep(1000);

    const updates = o.watchUpdates;
    const interval = 1000 / o.updateRate;
    /** `count` updates at the scenario's rate, each stamped when due; the PUTs' latencies and failures. */
    const update = async (count: number) => {
      const putLat = new Samples(count);
      let putErrors = 0;
      const putErrorSamples: string[] = [];
      const start = performance.now();
      const puts: Promise<void>[] = [];
      for (let i = 0; i < count; i++) {
        const due = start + i * interval;
        const wait = due - performance.now();
        if (wait > 1) await sleep(wait);
        // The stamp is taken when the update is due, so a queue in front of the server counts.
        const body = JSON.stringify(configMap('bench-watch', 'target', 1024, { ts: String(wallNow()) }));
        puts.push(
          a.api.call('PUT', path, body).then(
            (r) => {
              if (r.status === 200) putLat.push(r.ms);
              else {
                putErrors++;
                if (putErrorSamples.length < 3)
                  putErrorSamples.push(`${r.status} ${r.body.toString().slice(0, 200)}`);
              }
            },
            (e) => {
              putErrors++;
              if (putErrorSamples.length < 3) putErrorSamples.push(String(e));
            },
          ),
        );
      }
      const issuedS = (performance.now() - start) / 1000;
      await Promise.all(puts);
      return { putLat, putErrors, putErrorSamples, issuedS };
    };
    // A warm-up at the same rate, not counted: what is measured is a running server's fan-out
    // (and the receivers' code is compiled), not the first second of JIT compilation.
    if (o.watchWarmup > 0) {
      const warm = await update(o.watchWarmup);
      await Promise.all(
        per.map((_, i) =>
          ww.run<number>(i, {
            kind: 'watch-settle',
            expect: o.watchWarmup - warm.putErrors,
            timeoutMs: 30_000,
          }),
        ),
      );
    }
    const meter = new CpuMeter([...a.pids(), ...ww.pids]);
    const noise = new NoiseMeter(ctx.etcd ? [ctx.etcd.pid] : []);
    const disk = new FsyncProbe(ctx.root);
    const { putLat, putErrors, putErrorSamples, issuedS } = await update(updates);
    const parts = await Promise.all(
      per.map((_, i) =>
        ww.run<WatchPart>(i, { kind: 'watch-collect', expect: updates - putErrors, timeoutMs: 30_000 }),
      ),
    );
    const cpu = meter.read();
    const other = noise.read();
    const fsyncWorstMs = disk.stop();
    const lat = merged(parts.map((p) => p.lat));
    const s = summarize(lat);
    const putSorted = merged([putLat.toArray()]);
    const nServer = a.pids().length;
    ctx.result[h2 ? 'watchH2' : 'watch'] = {
      h2,
      watchers: o.watchers,
      opened,
      updates,
      warmup: o.watchWarmup,
      updateRate: (updates - 1) / Math.max(issuedS, 1e-3),
      p50: s.p50,
      p90: s.p90,
      p99: s.p99,
      max: s.max,
      delivered: parts.reduce((n, p) => n + p.received, 0),
      expected: opened * (updates - putErrors),
      apiserverCpu: cpu.cores[0],
      apiserverCpuUsPerEvent:
        (cpu.cores[0] * cpu.wallS * 1e6) /
        Math.max(
          1,
          parts.reduce((n, p) => n + p.received, 0),
        ),
      ...(ctx.etcd ? { etcdCpu: cpu.cores[1] } : {}),
      clientCpu: cpu.cores.slice(nServer).reduce((x, y) => x + y, 0),
      putP50: quantile(putSorted, 0.5),
      putP99: quantile(putSorted, 0.99),
      fsyncWorstMs,
      other,
      errors: putErrors + parts.reduce((n, p) => n + p.errors, 0),
      ...(putErrorSamples.length || parts.some((p) => p.errorSamples.length)
        ? { errorSamples: [...putErrorSamples, ...parts.flatMap((p) => p.errorSamples)].slice(0, 5) }
        : {}),
    };
    const w = ctx.result[h2 ? 'watchH2' : 'watch']!;
    noteErrors(ctx, h2 ? 'watch h2' : 'watch', w.errors, w.errorSamples);
    ctx.log(
      `watch${h2 ? ' (h2)' : ''} ${opened}x${updates}: p50 ${s.p50.toFixed(1)} p99 ${s.p99.toFixed(1)} ms, ` +
        `apiserver ${(cpu.cores[0] * 100).toFixed(0)}% CPU`,
    );
  } finally {
    await ww.close();
  }
}
