// envtest's start → ready on tkube's assets, split by phase as envtest waits (both
// --help probes, etcd /health, apiserver /healthz, the default namespace), then stop;
// with the apiserver's CPU time at ready and both assets' RSS (the machine is shared: CPU
// time says more than wall clock). With --parallel N, N environments start side by side
// (parallel suites) and the time until all are ready and all have stopped is printed.
// --etcd tkube|system picks the etcd asset (tkube envtest-assets --etcd).
// Both assets' RSS is read again SETTLE_MS later, with the apiserver's controllers running.
// Figures only, no assertion. Usage: node dist/bench/envtest.js [runs] [--parallel N] [--etcd tkube|system]
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { type EtcdChoice, writeEnvtestAssets } from '../shared/cluster/envtest-assets';
import { startEnvtest, type Envtest } from '../test-e2e/support/envtest';
import { tempDir } from '../test-e2e/support/processes';
import { cpuSeconds, rssBytes } from './lib/procs';

const f = (ms: number) => `${ms.toFixed(0).padStart(5)} ms`;

const cpuMs = (pid: number) => cpuSeconds(pid) * 1000;
const rssMB = (pid: number) => rssBytes(pid) / 2 ** 20;
/** When the controllers the apiserver asset runs have started and listed everything. */
const SETTLE_MS = 5000;

async function sequential(assets: string, dir: string, runs: number): Promise<void> {
  console.log(
    'run  etcd--help  etcd/health  apiserver--help  apiserver/healthz  default-ns  total     stop      apiserver-cpu  rss(etcd+apiserver)  +5 s',
  );
  for (let i = 1; i <= runs; i++) {
    const env = await startEnvtest(assets, join(dir, `logs-${i}`));
    const t = env.timings;
    const total =
      t.etcdHelpMs + t.etcdReadyMs + t.apiserverHelpMs + t.apiserverReadyMs + t.defaultNamespaceMs;
    const [etcd, apiserver] = env.processes.map((p) => p.child.pid!);
    const cpu = cpuMs(apiserver);
    const rss = `${rssMB(etcd).toFixed(0)}+${rssMB(apiserver).toFixed(0)} MB`;
    await new Promise((r) => setTimeout(r, SETTLE_MS));
    const settled = `${rssMB(etcd).toFixed(0)}+${rssMB(apiserver).toFixed(0)} MB`;
    const s0 = performance.now();
    await env.stop();
    const stop = performance.now() - s0;
    console.log(
      `${String(i).padStart(3)}  ${f(t.etcdHelpMs)}  ${f(t.etcdReadyMs)}   ${f(t.apiserverHelpMs)}        ${f(t.apiserverReadyMs)}         ${f(t.defaultNamespaceMs)}  ${f(total)}  ${f(stop)}  ${f(cpu)}       ${rss}           ${settled}`,
    );
  }
}

async function parallel(assets: string, dir: string, n: number): Promise<void> {
  const t0 = performance.now();
  const started = await Promise.allSettled(
    Array.from({ length: n }, (_, i) =>
      startEnvtest(assets, join(dir, `logs-p${i}`), { startTimeoutMs: 600_000 }),
    ),
  );
  const ready = performance.now() - t0;
  const envs = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
  const rss = envs
    .flatMap((e: Envtest) => e.processes.map((p) => rssMB(p.child.pid!)))
    .reduce((a, b) => a + b, 0);
  const s0 = performance.now();
  await Promise.all(envs.map((e) => e.stop()));
  const stop = performance.now() - s0;
  console.log(
    `${n} environments side by side: ${envs.length} ready, all within ${f(ready)}; stopped within ${f(stop)}; RSS of all assets ${rss.toFixed(0)} MB`,
  );
  started.forEach((s, i) => {
    if (s.status === 'fulfilled') return;
    console.log(`environment ${i} failed: ${String(s.reason)}`);
    for (const asset of ['etcd', 'kube-apiserver']) {
      const log = join(dir, `logs-p${i}`, `${asset}.log`);
      if (existsSync(log)) console.log(`  ${asset}.log ends:\n${readFileSync(log, 'utf8').slice(-1500)}`);
    }
  });
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const p = args.indexOf('--parallel');
  const n = p >= 0 ? Number(args.splice(p, 2)[1]) : 0;
  const e = args.indexOf('--etcd');
  const etcd = e >= 0 ? (args.splice(e, 2)[1] as EtcdChoice) : undefined;
  const runs = Number(args[0] ?? 5);
  const dir = tempDir('envtest-bench');
  const { dir: assets } = writeEnvtestAssets(join(dir, 'assets'), { etcd });
  try {
    if (n) await parallel(assets, dir, n);
    else await sequential(assets, dir, runs);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
