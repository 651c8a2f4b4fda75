// A whole local cluster (apiserver, controller manager, node agents) on free
// ports in a temp dir, for end-to-end tests: in this process (LocalCluster),
// or as the `tkube up` launcher process a user runs.
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../../shared/client/types';
import type { LocalClusterOptions } from '../../shared/cluster/cluster-options';
import { LocalCluster } from '../../shared/cluster/local-cluster';
import {
  executableArgs,
  portIsFree,
  startExecutable,
  waitUntil,
  type Proc,
} from '../../shared/cluster/process';
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

export interface TkubeUpProc extends Proc {
  dataDir: string;
  kubeconfig: string;
  /** What the launcher printed so far. */
  output(): string;
}

/**
 * Free ports for `tkube up`: the apiserver, the controller manager and a node agent's port
 * whose read-only (+5) and healthz (-2) neighbours are free too.
 */
export async function tkubeUpPortFlags(): Promise<string[]> {
  for (;;) {
    const kubelet = await freePort();
    if (!(await portIsFree(kubelet + 5)) || !(await portIsFree(kubelet - 2))) continue;
    return [
      '--port',
      String(await freePort()),
      '--controller-manager-port',
      String(await freePort()),
      '--kubelet-port',
      String(kubelet),
    ];
  }
}

/**
 * `tkube up --data-dir dataDir ...args` as a process in a process group of its own (a SIGINT to
 * the group is a terminal's Ctrl-C); resolves once it says the cluster is running. Its cluster
 * names live in clustersDir (clusters side by side share one).
 */
export async function startTkubeUp(
  dataDir: string,
  args: string[],
  timeoutMs = 90_000,
  clustersDir = join(dataDir, 'clusters'),
): Promise<TkubeUpProc> {
  const p = startExecutable('tkube', ['up', '--data-dir', dataDir, ...args], dataDir, {
    logName: `tkube-up-${Date.now()}`,
    ownProcessGroup: true,
    // The names it claims are the test's own, not the host's (TKUBE_CLUSTERS_DIR).
    env: { TKUBE_CLUSTERS_DIR: clustersDir },
  });
  const output = () => (existsSync(p.logFile) ? readFileSync(p.logFile, 'utf8') : '');
  try {
    await waitUntil(async () => output().includes('tkube is running'), timeoutMs, 'tkube up', p.exited);
  } catch (err) {
    await p.stop('SIGKILL');
    throw new Error(`${(err as Error).message}; it printed:\n${output()}`, { cause: err });
  }
  return { ...p, dataDir, kubeconfig: join(dataDir, 'kubeconfig'), output };
}

/** One `tkube ARGS` command (image load, ls, down ...) to its exit; never throws on a non-zero exit. */
export function runTkube(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      executableArgs('tkube', args),
      { env: { ...process.env, ...env }, timeout: 120_000, maxBuffer: 16 << 20 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as any).code ?? 1) || 1 : 0, stdout, stderr }),
    );
  });
}

/**
 * A pod of the offline busybox that sleeps until it is stopped and exits at once on SIGTERM
 * (grace 1 s), with extra pod spec, container fields and labels merged in.
 */
export function sleeperPod(
  name: string,
  o: { spec?: object; container?: object; labels?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, ...(o.labels ? { labels: o.labels } : {}) },
    spec: {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'c',
          image: 'busybox',
          imagePullPolicy: 'IfNotPresent',
          command: ['sh', '-c', "trap 'exit 0' TERM; while true; do sleep 1; done"],
          ...o.container,
        },
      ],
      ...o.spec,
    },
  };
}
