// tkube's etcd against Debian's etcd (when installed): spawn → /health answering 200 (polled
// every 10 ms), the CPU time spent until then (the machine is shared: it says more than the
// wall clock), and RSS once ready and after 2,000 puts and a watch. Each started as envtest
// starts its etcd asset, on free ports and a temp data dir, with --unsafe-no-fsync when it
// takes it; stopped by PID. Figures only. Usage: node dist/bench/etcd.js [runs]
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GrpcClient } from '../apiserver/storage/etcd3/grpc-client';
import { freePort } from '../apiserver/storage/etcd3/etcd-server';
import { METHOD, putFields } from '../apiserver/storage/etcd3/proto';
import { decodePut } from '../apiserver/storage/etcd3/responses';
import { DIST, V8_FLAGS, findOnPath } from '../shared/cluster/process';
import { encode } from '../shared/etcd/wire';
import { cpuSeconds, rssBytes } from './lib/procs';

const cpuMs = (pid: number) => cpuSeconds(pid) * 1000;
const rssMB = (pid: number) => rssBytes(pid) / 2 ** 20;

async function healthy(url: string): Promise<boolean> {
  try {
    return (await fetch(`${url}/health`)).status === 200;
  } catch {
    return false;
  }
}

/** As the etcd asset runs it: without the extra CA certificates node would parse at start. */
function assetEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.NODE_EXTRA_CA_CERTS;
  return env;
}

async function once(
  command: string[],
  noFsync: boolean,
): Promise<{ readyMs: number; cpu: number; rss: number; loadedRss: number }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-etcd-'));
  const [client, peer] = [await freePort(), await freePort()];
  const url = `http://127.0.0.1:${client}`;
  const args = [
    `--advertise-client-urls=${url}`,
    `--data-dir=${join(dir, 'data')}`,
    `--listen-client-urls=${url}`,
    `--listen-peer-urls=http://127.0.0.1:${peer}`,
    ...(noFsync ? ['--unsafe-no-fsync=true'] : []),
  ];
  const t0 = performance.now();
  const child: ChildProcess = spawn(command[0], [...command.slice(1), ...args], {
    stdio: 'ignore',
    env: assetEnv(),
  });
  try {
    while (!(await healthy(url))) await new Promise((r) => setTimeout(r, 10));
    const readyMs = performance.now() - t0;
    const rss = rssMB(child.pid!);
    const cpu = cpuMs(child.pid!);
    const c = new GrpcClient(url, null);
    const s = c.stream(METHOD.watch);
    s.on('error', () => {});
    for (let i = 0; i < 2000; i += 50)
      await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          c.call(
            METHOD.put,
            encode(putFields({ key: `/b/${i + j}`, value: 'x'.repeat(500) })),
            decodePut,
            10_000,
          ),
        ),
      );
    const loadedRss = rssMB(child.pid!);
    c.close();
    return { readyMs, cpu, rss, loadedRss };
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const runs = Number(process.argv[2] ?? 5);
  const targets: [string, string[], boolean][] = [
    ['tkube etcd', [process.execPath, ...V8_FLAGS.etcd, join(DIST, 'cmd', 'etcd.js')], true],
  ];
  const debian = findOnPath('etcd');
  if (debian) targets.push(['debian etcd', [debian], false]);
  console.log('etcd          run  spawn→/health  cpu(ready)  rss(ready)  rss(2,000 puts)');
  // Interleaved, so both meet the same load on a shared machine.
  for (let i = 1; i <= runs; i++)
    for (const [name, command, noFsync] of targets) {
      const r = await once(command, noFsync);
      console.log(
        `${name.padEnd(12)} ${String(i).padStart(4)}  ${r.readyMs.toFixed(0).padStart(10)} ms  ${r.cpu.toFixed(0).padStart(7)} ms  ${r.rss.toFixed(0).padStart(7)} MB  ${r.loadedRss.toFixed(0).padStart(10)} MB`,
      );
    }
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
