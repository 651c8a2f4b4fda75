// What the machine can do without tkube's request path, measured in the same
// run: a store's raw write rate (64 concurrent 1 KB creates straight on the
// Storage interface, in this process) and a bare TLS server's GET rate.
import { join } from 'node:path';
import type { Storage } from '../../apiserver/storage/interface';
import { openEmbeddedStorage } from '../../apiserver/storage/embedded/index';
import { openEtcdStorage } from '../../apiserver/storage/etcd3/index';
import { forkScript, removeDir, tempDir, terminate } from './procs';
import type { Target } from './procs';
import { median } from './stats';

const VALUE = Buffer.alloc(1024, 'x');

/** Writes/s of `concurrency` writers creating fresh 1 KB keys for durationMs. */
async function writeRate(
  s: Storage,
  prefix: string,
  concurrency: number,
  durationMs: number,
): Promise<number> {
  let n = 0;
  const t0 = performance.now();
  const until = t0 + durationMs;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < until) await s.create(`${prefix}/${n++}`, VALUE);
    }),
  );
  return n / ((performance.now() - t0) / 1000);
}

/** Median of 3 runs, each on a fresh embedded store (what `npm run bench:storage` does). */
export async function embeddedWriteCeiling(concurrency = 64, durationMs = 3000): Promise<number> {
  const rates: number[] = [];
  for (let i = 0; i < 3; i++) {
    const dir = tempDir('bench-store');
    const s = await openEmbeddedStorage({ dataDir: join(dir, 'db'), compactionIntervalMs: 0 });
    try {
      rates.push(await writeRate(s, '/bench/ceiling', concurrency, durationMs));
    } finally {
      await s.close();
      removeDir(dir);
    }
  }
  return median(rates);
}

/** Median of 3 runs against a running etcd, each under a fresh prefix. */
export async function etcdWriteCeiling(
  endpoint: string,
  concurrency = 64,
  durationMs = 3000,
): Promise<number> {
  const s = await openEtcdStorage({ servers: [endpoint], compactionIntervalMs: 0 });
  const rates: number[] = [];
  try {
    for (let i = 0; i < 3; i++)
      rates.push(await writeRate(s, `/bench-ceiling-${Date.now()}-${i}`, concurrency, durationMs));
  } finally {
    await s.close();
  }
  return median(rates);
}

export interface BareServer {
  target: Target;
  pid: number;
  stop(): Promise<void>;
}

/** Forks bench/bare-server.js with the apiserver's serving certificate. */
export async function startBareServer(certDir: string, creds: Omit<Target, 'origin'>): Promise<BareServer> {
  const c = forkScript('bare-server.js', [
    join(certDir, 'apiserver.crt'),
    join(certDir, 'apiserver.key'),
    join(certDir, 'ca.crt'),
  ]);
  const port = await new Promise<number>((resolve, reject) => {
    c.once('message', (m: { port: number }) => resolve(m.port));
    c.once('exit', (code) => reject(new Error(`bare server exited with ${code}`)));
  });
  return {
    target: { origin: `https://127.0.0.1:${port}`, ...creds },
    pid: c.pid!,
    stop: () => terminate(c, 3000),
  };
}
