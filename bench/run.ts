// `npm run bench` (issue 11): the real apiserver as a separate process, on the
// embedded store and on a real etcd, driven over TLS by undici from forked load
// workers. Figures only, never pass/fail: the budget lines say met or missed.
//
//   node dist/bench/run.js [--backend embedded|etcd|both] [--only start,create,get,lone,list,watch,memory]
//                          [--full] [--profile <dir>] [--pods 10000] [--watchers 1000] [--no-record]
//
// Every process it starts (apiserver, etcd, bare server, workers) is killed on
// the way out, on errors and on SIGINT/SIGTERM too.
import { existsSync, mkdirSync } from 'node:fs';
import * as os from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { etcdAvailable, type EtcdServer, startEtcd } from '../apiserver/storage/etcd3/etcd-server';
import {
  embeddedWriteCeiling,
  etcdRawPutCeiling,
  etcdRawRangeCeiling,
  etcdWriteCeiling,
  startBareServer,
  bareFanoutCeiling,
} from './lib/ceilings';
import { readProfile } from './lib/cpu-profile';
import { phaseBreakdown } from './lib/phases';
import { CpuMeter, DIST, NoiseMeter, removeDir, startApiserver, tempDir } from './lib/procs';
import {
  appendHistory,
  backendTable,
  budgetTable,
  ceilingTable,
  evaluateBudget,
  gitInfo,
  loneProfileTable,
  saveResult,
} from './lib/report';
import type { BackendResult, LoadRow, RunResult } from './lib/results';
import {
  configMapsInstance,
  type Ctx,
  loadRow,
  type Options,
  podsInstance,
  type Scenario,
  SCENARIOS,
} from './lib/scenarios';
import { median } from './lib/stats';
import { Api } from './lib/api';
import { splitLoad, Workers } from './lib/workers';

const REPO = resolve(DIST, '..');

/** Size of one pod of bench/lib/objects.ts in a list (with managedFields), for the transfer ceiling. */
const LIST_JSON_BYTES_PER_POD = 4160;
const LIST_PB_BYTES_PER_POD = 2720;

const LEGEND =
  'other load: cores that processes outside the benchmark (other builds, tests) used during the measurement,\n' +
  'from /proc/stat minus our processes. Above ~0.2 on a 2-core machine the row is not comparable.\n' +
  'slowest 4 KB fdatasync (watch rows): the disk under the data directories, probed every 100 ms during\n' +
  'the row. Every acknowledged write waits for its sync, so a stall there shows in the PUT and watch tails.';

const USAGE = `usage: node dist/bench/run.js [options]
  --backend embedded|etcd|both   backends to run (default both)
  --only a,b,...                 subset of ${SCENARIOS.join(',')} (default all)
  --full                         also store 100,000 pods (memory and restart at 100k)
  --profile <dir>                run the apiserver under --cpu-prof, one profile per scenario; with
                                 lone, also where a lone create's time goes, per phase
  --pods <n>                     pods for list/memory (default 10000)
  --starts <n>                   cold starts (default 5)
  --watchers <n>                 watchers (default 1000)
  --watch-updates <n>            updates of the watched object (default 300, issue 21's shape)
  --watch-warmup <n>             updates before those, at the same rate, not counted (default 100)
  --update-rate <n>              updates per second (default 100)
  --client-procs <n>             load worker processes for 16+ clients (default 2)
  --watch-procs <n>              worker processes holding the watchers (default 4)
  --no-watch-http1               skip the extra fan-out run with one HTTP/1.1 connection per watcher
  --idle-wait <s>                quiet time before each memory reading: idle, loaded, restarted (default 10)
  --no-record                    do not write bench/results/ nor docs/performance.md`;

function options(): Options {
  const { values } = parseArgs({
    options: {
      backend: { type: 'string', default: 'both' },
      only: { type: 'string' },
      full: { type: 'boolean', default: false },
      profile: { type: 'string' },
      pods: { type: 'string', default: '10000' },
      starts: { type: 'string', default: '5' },
      watchers: { type: 'string', default: '1000' },
      'watch-updates': { type: 'string', default: '300' },
      'watch-warmup': { type: 'string', default: '100' },
      'update-rate': { type: 'string', default: '100' },
      'client-procs': { type: 'string', default: '2' },
      'watch-procs': { type: 'string', default: '4' },
      'no-watch-http1': { type: 'boolean', default: false },
      'idle-wait': { type: 'string', default: '10' },
      'no-record': { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
    allowPositionals: false,
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const b = values.backend;
  if (b !== 'embedded' && b !== 'etcd' && b !== 'both') throw new Error(`--backend: ${b}\n${USAGE}`);
  const only = new Set<Scenario>();
  for (const s of (values.only ?? SCENARIOS.join(',')).split(',').map((x) => x.trim())) {
    if (!SCENARIOS.includes(s as Scenario)) throw new Error(`--only: unknown scenario ${s}\n${USAGE}`);
    only.add(s as Scenario);
  }
  const int = (name: string, v: string, min = 1) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < min) throw new Error(`--${name}: ${v}`);
    return n;
  };
  return {
    backends: b === 'both' ? ['embedded', 'etcd'] : [b],
    only,
    full: values.full,
    pods: int('pods', values.pods),
    starts: int('starts', values.starts),
    watchers: int('watchers', values.watchers),
    watchUpdates: int('watch-updates', values['watch-updates']),
    watchWarmup: int('watch-warmup', values['watch-warmup']),
    updateRate: Number(values['update-rate']),
    clientProcs: int('client-procs', values['client-procs']),
    watchProcs: int('watch-procs', values['watch-procs']),
    watchHttp1: !values['no-watch-http1'],
    idleWaitMs: Number(values['idle-wait']) * 1000,
    profileDir: values.profile ? resolve(values.profile) : undefined,
    record: !values['no-record'],
  };
}

const t0 = Date.now();
const log = (s: string) => console.error(`[${((Date.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}`);

/**
 * etcd's own ceilings, on an etcd of their own: their loops write some 150k keys, and etcd's
 * CPU per write about doubles with that much data, which would weigh on the apiserver's rows.
 */
async function etcdCeilings(result: BackendResult, only: Set<Scenario>): Promise<void> {
  if (!only.has('create') && !only.has('get')) return;
  const etcd = await startEtcd();
  try {
    if (only.has('create')) {
      const noise = new NoiseMeter([etcd.pid]);
      result.storeCeiling = await etcdWriteCeiling(etcd.endpoint);
      result.storeCeilingOther = noise.read();
      result.rawEtcdPut = await etcdRawPutCeiling(etcd.endpoint, etcd.pid);
      log(`etcd: bare grpc-js Put: ${result.rawEtcdPut.rate.toFixed(0)}/s`);
    }
    if (only.has('get')) {
      result.rawEtcdRange = await etcdRawRangeCeiling(etcd.endpoint, etcd.pid);
      log(`etcd: bare grpc-js Range: ${result.rawEtcdRange.rate.toFixed(0)}/s`);
    }
  } finally {
    await etcd.stop();
  }
}

/** --profile: the lone creates' time by phase, from the profile their server wrote on exit. */
function breakDownLoneCreates(b: BackendResult): void {
  const p = b.lone?.profile;
  if (!p) return;
  if (!existsSync(p.file)) {
    b.notes.push(`lone create profile ${p.file} was not written`);
    return;
  }
  p.breakdown = phaseBreakdown(readProfile(p.file), p.fromUs, p.toUs, p.creates);
}

async function main(): Promise<void> {
  const opts = options();
  const { commit, dirty } = gitInfo(REPO);
  const run: RunResult = {
    date: new Date().toISOString().slice(0, 10),
    commit,
    dirty,
    machine: {
      cpus: os.cpus().length,
      model: os.cpus()[0]?.model ?? '?',
      memoryBytes: os.totalmem(),
      node: process.version,
      platform: `${os.platform()} ${os.release()}`,
      loadavgAtStart: os.loadavg(),
    },
    options: { ...opts, only: [...opts.only] },
    ceilings: {},
    backends: [],
    budget: [],
    durationS: 0,
  };
  console.log(
    `tkube bench: ${commit}${dirty ? ' (uncommitted changes)' : ''}, ${run.machine.cpus} cpus (${run.machine.model}), ` +
      `${(run.machine.memoryBytes / 2 ** 30).toFixed(0)} GiB, node ${process.version}, load ${run.machine.loadavgAtStart.map((x) => x.toFixed(2)).join(' ')}`,
  );
  const root = tempDir('bench');
  const certDir = join(root, 'certs');
  const workers = new Workers(Math.max(2, opts.clientProcs));
  try {
    // The first start generates the CA, serving and admin certificates every later process shares.
    const first = await startApiserver({ dir: root, dataDir: join(root, 'first'), certDir, label: 'first' });
    run.ceilings.firstStartWithCertsMs = first.readyMs;
    const creds = { ca: first.target.ca, cert: first.target.cert, key: first.target.key };
    await first.stop();
    removeDir(join(root, 'first'));
    log(`first start (generates certificates): ${first.readyMs.toFixed(0)} ms`);

    if (opts.only.has('create')) {
      const noise = new NoiseMeter();
      run.ceilings.embeddedWrites = await embeddedWriteCeiling();
      run.ceilings.embeddedWritesOther = noise.read();
      log(`raw embedded store: ${run.ceilings.embeddedWrites.toFixed(0)} creates/s`);
    }
    if (opts.only.has('get') || opts.only.has('list') || opts.only.has('watch')) {
      const bare = await startBareServer(certDir, creds);
      try {
        const go = async (h2: boolean): Promise<LoadRow> => {
          const noise = new NoiseMeter();
          const cpu = new CpuMeter([bare.pid, ...workers.pids]);
          const f = await splitLoad(workers, opts.clientProcs, {
            kind: 'load',
            target: bare.target,
            h2,
            op: { type: 'get', path: '/bench' },
            concurrency: 64,
            warmupMs: 1000,
            durationMs: 6000,
          });
          const c = cpu.read();
          return {
            ...loadRow(f),
            other: noise.read(),
            apiserverCpu: c.cores[0],
            clientCpu: c.cores.slice(1).reduce((x, y) => x + y, 0),
          };
        };
        if (opts.only.has('get')) {
          run.ceilings.bareGetH1 = await go(false);
          run.ceilings.bareGetH2 = await go(true);
          log(
            `bare server GET: ${run.ceilings.bareGetH1.rate.toFixed(0)}/s (h2 ${run.ceilings.bareGetH2.rate.toFixed(0)}/s)`,
          );
        }
        if (opts.only.has('list')) {
          // One body the size of the pod list (JSON, Protobuf), timed like the lists are.
          const api = new Api(bare.target, 1);
          const transfer: NonNullable<RunResult['ceilings']['bareTransfer']> = [];
          for (const [format, perPod] of [
            ['json', LIST_JSON_BYTES_PER_POD],
            ['protobuf', LIST_PB_BYTES_PER_POD],
          ] as const) {
            const bytes = opts.pods * perPod;
            await api.call('GET', `/size/${bytes}`);
            const times: number[] = [];
            for (let i = 0; i < 5; i++) times.push((await api.call('GET', `/size/${bytes}`)).ms);
            transfer.push({ format, bytes, medianMs: median(times) });
          }
          await api.close();
          run.ceilings.bareTransfer = transfer;
          log(
            `bare TLS transfer: ${transfer.map((t) => `${(t.bytes / 1e6).toFixed(1)} MB in ${t.medianMs.toFixed(0)} ms`).join(', ')}`,
          );
        }
        if (opts.only.has('watch')) {
          for (const h2 of opts.watchHttp1 ? [true, false] : [true]) {
            const f = await bareFanoutCeiling(bare, {
              watchers: opts.watchers,
              updates: opts.watchUpdates,
              warmup: opts.watchWarmup,
              rate: opts.updateRate,
              procs: opts.watchProcs,
              h2,
            });
            run.ceilings[h2 ? 'bareFanoutH2' : 'bareFanout'] = f;
            log(
              `bare TLS fan-out${h2 ? ' (h2)' : ''}: p50 ${f.p50.toFixed(1)} / p99 ${f.p99.toFixed(1)} ms, ${f.serverCpuUsPerWrite.toFixed(1)} µs per write`,
            );
          }
        }
      } finally {
        await bare.stop();
      }
    }

    for (const backend of opts.backends) {
      const result: BackendResult = { backend, notes: [] };
      run.backends.push(result);
      if (backend === 'etcd' && !etcdAvailable()) {
        result.notes.push('etcd is not installed (apt-get install etcd-server, or set ETCD_BIN): skipped');
        log(result.notes[0]);
        continue;
      }
      const broot = join(root, backend);
      mkdirSync(broot);
      let etcd: EtcdServer | undefined;
      try {
        if (backend === 'etcd') {
          await etcdCeilings(result, opts.only);
          etcd = await startEtcd();
          log(`etcd ${etcd.endpoint} (pid ${etcd.pid})`);
        } else if (opts.only.has('create')) result.storeCeiling = run.ceilings.embeddedWrites;
        const ctx: Ctx = {
          opts,
          backend,
          root: broot,
          certDir,
          etcd,
          workers,
          result,
          log: (s) => log(`${backend}: ${s}`),
        };
        if (['start', 'create', 'get', 'lone', 'watch'].some((s) => opts.only.has(s as Scenario)))
          await configMapsInstance(ctx);
        if (['start', 'list', 'memory'].some((s) => opts.only.has(s as Scenario))) await podsInstance(ctx);
      } catch (err) {
        result.notes.push(`failed: ${String((err as Error)?.stack ?? err)}`);
        log(`${backend} failed: ${String((err as Error)?.stack ?? err)}`);
      } finally {
        await etcd?.stop();
        removeDir(broot);
      }
      log(`${backend} done`);
    }

    for (const b of run.backends) breakDownLoneCreates(b);
    run.budget = evaluateBudget(run);
    run.durationS = (Date.now() - t0) / 1000;
    console.log(`\nceilings measured in this run\n${ceilingTable(run)}\n`);
    for (const b of run.backends) {
      console.log(`\n${b.backend} backend\n${backendTable(b, run)}`);
      for (const n of b.notes) console.log(`note: ${n.length > 600 ? `${n.slice(0, 600)}...` : n}`);
    }
    console.log(`\n${LEGEND}`);
    console.log(`\nbudget (reporting only)\n${budgetTable(run.budget)}\n`);
    for (const b of run.backends) if (b.lone?.profile) console.log(`\n${loneProfileTable(b)}`);
    for (const b of run.backends)
      for (const p of b.profiles ?? [])
        console.log(`profile: ${p}  (node dist/bench/profile-summary.js ${p})`);
    if (opts.record) {
      const file = saveResult(REPO, run);
      appendHistory(REPO, run, file);
      console.log(`saved ${file}; history line appended to docs/performance.md`);
    }
    console.log(`took ${run.durationS.toFixed(0)} s`);
  } finally {
    await workers.close();
    removeDir(root);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
