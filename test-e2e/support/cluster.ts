// A whole local cluster (apiserver, controller manager, node agents) on free
// ports in a temp dir, for end-to-end tests.
import { rmSync } from 'node:fs';
import { LocalCluster, type LocalClusterOptions } from '../../shared/cluster/local-cluster';
import { freePort, tempDir } from './processes';

export async function startCluster(
  o: Partial<LocalClusterOptions> = {},
): Promise<LocalCluster & { cleanup(): Promise<void> }> {
  try {
    return await startClusterOnce(o);
  } catch (err) {
    // A port chosen free can be taken (by another test's connection) before the process binds
    // it, and the process then exits at start: one more try on fresh ports. A real failure
    // fails twice.
    if (!/the process exited/.test(String(err)) || o.apiserverPort || o.dataDir) throw err;
    return startClusterOnce(o);
  }
}

async function startClusterOnce(
  o: Partial<LocalClusterOptions>,
): Promise<LocalCluster & { cleanup(): Promise<void> }> {
  const nodes = o.nodes ?? 1;
  const ports: { port: number; readOnlyPort: number; healthzPort: number }[] = [];
  // Simulated nodes share one process and its ports.
  const agents = o.runtime === 'fake' ? Math.min(nodes, 1) : nodes;
  for (let i = 0; i < agents; i++)
    ports.push({ port: await freePort(), readOnlyPort: await freePort(), healthzPort: await freePort() });
  const dataDir = o.dataDir ?? tempDir('cluster');
  const cluster = new LocalCluster({
    dataDir,
    nodes,
    apiserverPort: o.apiserverPort ?? (await freePort()),
    controllerManagerPort: o.controllerManagerPort ?? (await freePort()),
    registryPort: o.registryPort ?? (await freePort()),
    nodePorts: (i) => ports[i],
    ...o,
  });
  try {
    await cluster.up();
  } catch (err) {
    await cluster.down().catch(() => {});
    if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    throw err;
  }
  return Object.assign(cluster, {
    async cleanup() {
      await cluster.down();
      if (!o.dataDir) rmSync(dataDir, { recursive: true, force: true });
    },
  });
}
