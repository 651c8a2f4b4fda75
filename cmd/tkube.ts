// tkube: a whole local Kubernetes-compatible cluster in one command.
//   tkube up      start apiserver, controller-manager and node agents (Ctrl-C stops them)
//   tkube down    stop a cluster started with `tkube up --detach`
import { Command } from 'commander';
import { relative, resolve } from 'node:path';
import { LocalCluster, stopRecordedCluster, type Step } from '../shared/cluster/local-cluster';
import { writeComponentKubeconfig } from '../shared/cluster/credentials';

const LABELS: Record<Step, string> = {
  apiserver: 'Starting the apiserver',
  credentials: 'Writing component credentials',
  'controller-manager': 'Starting the controller manager',
  nodes: 'Starting node agents and waiting for Ready nodes',
  ready: 'Cluster ready',
};

/** A one-line progress display: a spinner on a terminal, plain lines otherwise. */
function progressDisplay() {
  const tty = process.stdout.isTTY;
  const frames = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];
  let timer: NodeJS.Timeout | undefined;
  let started = 0;
  return (step: Step, state: 'start' | 'done', detail?: string) => {
    if (step === 'ready') return;
    const label = LABELS[step];
    if (state === 'start') {
      started = Date.now();
      if (!tty) {
        console.log(`… ${label}`);
        return;
      }
      let i = 0;
      timer = setInterval(() => {
        process.stdout.write(
          `\r${frames[i++ % frames.length]} ${label} (${((Date.now() - started) / 1000).toFixed(1)}s)`,
        );
      }, 80);
      return;
    }
    if (timer) clearInterval(timer);
    const took = `${((Date.now() - started) / 1000).toFixed(1)}s`;
    const line = `✔ ${label}${detail ? `: ${detail}` : ''} (${took})`;
    if (tty) process.stdout.write(`\r\x1b[2K${line}\n`);
    else console.log(line);
  };
}

const program = new Command('tkube').description(
  'A Kubernetes-compatible control plane in one process tree: local clusters in one command.',
);

program
  .command('up')
  .description(
    'start a local cluster: apiserver (embedded store or etcd), controller manager and node agents',
  )
  .option(
    '--data-dir <dir>',
    'directory of the cluster (data, certificates, kubeconfig, logs); a restart reuses it',
    '.tkube',
  )
  .option('--nodes <n>', 'number of node agents', (v) => parseInt(v, 10), 1)
  .option(
    '--runtime <name>',
    'fake: one node agent hosts every node as a simulated node (--simulated-nodes), for scale tests; unset: one node agent per node',
  )
  .option('--port <port>', 'apiserver secure port', (v) => parseInt(v, 10), 6443)
  .option('--etcd-servers <urls>', 'use etcd (comma-separated URLs) instead of the embedded store')
  .option('--no-controller-manager', 'do not start the controller manager')
  .option('--detach', 'leave the cluster running in the background (stop it with tkube down)')
  .action(async (o) => {
    const cluster = new LocalCluster({
      dataDir: o.dataDir,
      nodes: o.nodes,
      runtime: o.runtime,
      apiserverPort: o.port,
      etcdServers: o.etcdServers ? String(o.etcdServers).split(',') : undefined,
      controllerManager: o.controllerManager,
      detached: !!o.detach,
      progress: progressDisplay(),
      onRestart: (r) =>
        console.log(
          `⟳ ${r.name} exited (${r.why}); restarting it in ${(r.delayMs / 1000).toFixed(0)}s (restart ${r.count})`,
        ),
    });
    let stopping = false;
    const stop = async (code: number) => {
      if (stopping) return;
      stopping = true;
      console.log('\nStopping the cluster...');
      await cluster.down();
      process.exit(code);
    };
    process.on('SIGINT', () => void stop(0));
    process.on('SIGTERM', () => void stop(0));
    try {
      await cluster.up();
    } catch (err) {
      console.error(
        `\n✘ ${(err as Error).message}\n  Logs: ${relative(process.cwd(), cluster.logDir) || cluster.logDir}/`,
      );
      await stop(1);
      return;
    }
    const kc = resolve(cluster.kubeconfig);
    console.log(`
tkube is running: apiserver ${cluster.server}, ${o.nodes}${o.runtime === 'fake' ? ' simulated' : ''} node(s)${o.etcdServers ? `, etcd ${o.etcdServers}` : ', embedded store'}

  export KUBECONFIG=${kc}
  kubectl get nodes

Logs: ${cluster.logDir}/
${o.detach ? 'Stop it with: tkube down' + (o.dataDir !== '.tkube' ? ` --data-dir ${o.dataDir}` : '') : 'Press Ctrl-C to stop it.'}`);
    if (o.detach) process.exit(0);
  });

program
  .command('down')
  .description('stop a cluster started with tkube up --detach')
  .option('--data-dir <dir>', 'directory of the cluster', '.tkube')
  .action(async (o) => {
    const stopped = await stopRecordedCluster(o.dataDir);
    console.log(
      stopped.length ? `Stopped ${stopped.join(', ')}.` : 'No running cluster recorded in ' + o.dataDir,
    );
  });

program
  .command('credentials')
  .description(
    'write a kubeconfig with a client certificate from the cluster CA (for scripts/local-up-cluster.sh)',
  )
  .requiredOption('--cert-dir <dir>', "the apiserver's --cert-dir (holds ca.crt and ca.key)")
  .requiredOption('--server <url>', 'apiserver URL')
  .requiredOption('--user <name>', 'common name (user), e.g. system:node:n1')
  .option('--group <group...>', 'organizations (groups), e.g. system:nodes')
  .requiredOption('--out <file>', 'kubeconfig to write')
  .action(async (o) => {
    await writeComponentKubeconfig({
      certDir: o.certDir,
      server: o.server,
      subject: { commonName: o.user, organizations: o.group ?? [] },
      kubeconfig: o.out,
    });
  });

program.parseAsync(process.argv).catch((err) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
