// tkube ls | down | kubeconfig: the commands that act on a running cluster, found by
// --data-dir or --name (default "tkube") as every such command finds it.
import { Command } from 'commander';
import { existsSync } from 'node:fs';
import { clusterPaths } from '../shared/cluster/data-dir';
import { alive, stopRecordedCluster } from '../shared/cluster/cluster-state';
import {
  clusterDataDir,
  hostSettingsHeirs,
  releaseClusterName,
  runningClusters,
} from '../shared/cluster/running-clusters';

/** --name and --data-dir, as every command that acts on one cluster takes them. */
export function clusterOptions(c: Command): Command {
  return c
    .option('--name <name>', 'the cluster (tkube up --name)', 'tkube')
    .option('--data-dir <dir>', "the cluster's data directory (default: the named cluster's)");
}

/** A table with columns padded as kubectl and crictl print them. */
export function printTable(header: string[], rows: string[][]): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  for (const r of [header, ...rows])
    console.log(
      r
        .map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i])))
        .join('   ')
        .trimEnd(),
    );
}

export function clusterCommands(): Command[] {
  const ls = new Command('ls').description('list the clusters running on this host').action(() => {
    const clusters = runningClusters();
    if (!clusters.length) {
      console.log('No cluster is running.');
      return;
    }
    printTable(
      ['NAME', 'STATUS', 'SERVER', 'NODES', 'REGISTRY', 'DATA DIR'],
      clusters.map((c) => [
        c.name,
        c.status,
        c.state?.server ?? '-',
        String(c.state?.nodes?.length ?? '-'),
        c.state?.registry ?? '-',
        c.dataDir,
      ]),
    );
  });

  const down = clusterOptions(
    new Command('down').description('stop a cluster (one started with --detach, or by another terminal)'),
  ).action(async (o) => {
    const dataDir = clusterDataDir(o);
    const running = runningClusters().find((c) => c.dataDir === dataDir);
    // A launcher in the foreground (another terminal) supervises: it is asked to stop the
    // cluster itself, in order, as its Ctrl-C would; what it leaves is stopped by PID.
    const launcher = running?.launcherPid;
    if (launcher && launcher !== process.pid) {
      process.kill(launcher, 'SIGTERM');
      for (let i = 0; i < 600 && alive(launcher); i++) await new Promise((r) => setTimeout(r, 100));
    }
    const stopped = await stopRecordedCluster(dataDir, hostSettingsHeirs(dataDir));
    if (running) releaseClusterName(running.name, dataDir);
    if (launcher) stopped.unshift('tkube up');
    console.log(
      stopped.length ? `Stopped ${stopped.join(', ')}.` : `No running cluster recorded in ${dataDir}`,
    );
  });

  const kubeconfig = clusterOptions(
    new Command('kubeconfig').description(
      "print the path of a cluster's kubeconfig (export KUBECONFIG=$(tkube kubeconfig --name NAME))",
    ),
  ).action((o) => {
    const file = clusterPaths(clusterDataDir(o)).kubeconfig;
    if (!existsSync(file)) throw new Error(`no kubeconfig at ${file}: is the cluster up?`);
    console.log(file);
  });
  return [ls, down, kubeconfig];
}
