// envtest's start → ready on tkube's assets, split by phase as envtest waits (both
// --help probes, etcd /health, apiserver /healthz, the default namespace), then stop.
// Figures only, no assertion. Usage: node dist/bench/envtest.js [runs]
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeEnvtestAssets } from '../shared/cluster/envtest-assets';
import { startEnvtest } from '../test-e2e/support/envtest';
import { tempDir } from '../test-e2e/support/processes';

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5);
  const dir = tempDir('envtest-bench');
  const { dir: assets } = writeEnvtestAssets(join(dir, 'assets'));
  const f = (ms: number) => `${ms.toFixed(0).padStart(5)} ms`;
  console.log('run  etcd--help  etcd/health  apiserver--help  apiserver/healthz  default-ns  total     stop');
  try {
    for (let i = 1; i <= runs; i++) {
      const env = await startEnvtest(assets, join(dir, `logs-${i}`));
      const t = env.timings;
      const total =
        t.etcdHelpMs + t.etcdReadyMs + t.apiserverHelpMs + t.apiserverReadyMs + t.defaultNamespaceMs;
      const s0 = performance.now();
      await env.stop();
      const stop = performance.now() - s0;
      console.log(
        `${String(i).padStart(3)}  ${f(t.etcdHelpMs)}  ${f(t.etcdReadyMs)}   ${f(t.apiserverHelpMs)}        ${f(t.apiserverReadyMs)}         ${f(t.defaultNamespaceMs)}  ${f(total)}  ${f(stop)}`,
      );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
