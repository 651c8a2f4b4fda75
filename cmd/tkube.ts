// tkube: a whole local Kubernetes-compatible cluster in one command.
//   tkube up      start apiserver, controller-manager and node agents (Ctrl-C stops them)
//   tkube down    stop a cluster started with `tkube up --detach`
import { Command } from 'commander';
import { relative, resolve } from 'node:path';
import { containerdMissing } from '../shared/cluster/containerd';
import {
  LocalCluster,
  stopRecordedCluster,
  type NodeRuntime,
  type Step,
} from '../shared/cluster/local-cluster';
import { writeComponentKubeconfig } from '../shared/cluster/credentials';
import type { RouteResult } from '../shared/cluster/service-route';
import { startIdleGc } from '../shared/heap/idle-gc';

const LABELS: Record<Step, string> = {
  apiserver: 'Starting the apiserver',
  credentials: 'Writing component credentials',
  'controller-manager': 'Starting the controller manager',
  images: 'Building the offline images and starting containerd per node',
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

/**
 * --runtime, or containerd when it can run here; else one node agent per node on the fake
 * runtime, with one line saying why.
 */
function chooseRuntime(asked: string | undefined): NodeRuntime | undefined {
  if (asked !== undefined && asked !== 'fake' && asked !== 'containerd')
    throw new Error(`--runtime must be containerd or fake, not "${asked}"`);
  const missing = containerdMissing();
  if (asked === 'containerd' && missing) throw new Error(`--runtime containerd: ${missing}`);
  if (asked) return asked;
  if (!missing) return 'containerd';
  console.log(
    `Nodes use the fake runtime (no processes run): ${missing} (scripts/setup.sh installs it as root).`,
  );
  return undefined;
}

const runtimeLabel = (r: NodeRuntime | undefined) =>
  r === 'containerd' ? 'on containerd' : r === 'fake' ? 'simulated' : 'on the fake runtime';

/** What was done so that ClusterIPs (no service proxy runs) fail on this host instead of leaving it. */
function serviceRouteLine(r: RouteResult | undefined): string {
  if (!r) return '';
  const lines = r.installed.map(
    (cidr) =>
      `Service CIDR ${cidr}: unreachable from this host (ip route add unreachable ${cidr}) until stop`,
  );
  return [...lines, ...r.skipped.map((why) => `Service CIDR ${why}`)].join('\n');
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
  .option('--port <port>', 'apiserver secure port', (v) => parseInt(v, 10), 6443)
  .option('--etcd-servers <urls>', 'use etcd (comma-separated URLs) instead of the embedded store')
  .option('--no-controller-manager', 'do not start the controller manager')
  .option(
    '--runtime <runtime>',
    'how nodes run pods: containerd (an agent and a containerd per node, real containers) or fake (one agent hosts every node as a simulated node, no processes; for scale tests); default: containerd when it is installed, else an agent per node on the fake runtime',
  )
  .option(
    '--registries <file>',
    "registry mirrors for containerd, as k3s' registries.yaml (mirrors: {docker.io: {endpoint: [...]}})",
  )
  .option(
    '--registry-port <port>',
    "the cluster's image registry on 127.0.0.1 (containerd)",
    (v) => parseInt(v, 10),
    5000,
  )
  .option(
    '--upstream-registries',
    "let pulls the cluster's registry cannot serve go on to docker.io, registry.k8s.io, ... (default: they fail at once, as with k3s' --disable-default-registry-endpoint)",
  )
  .option('--detach', 'leave the cluster running in the background (stop it with tkube down)')
  .action(async (o) => {
    const runtime = chooseRuntime(o.runtime);
    const cluster = new LocalCluster({
      runtime,
      registriesFile: o.registries ? resolve(o.registries) : undefined,
      registryPort: o.registryPort,
      upstreamRegistries: !!o.upstreamRegistries,
      dataDir: o.dataDir,
      nodes: o.nodes,
      apiserverPort: o.port,
      etcdServers: o.etcdServers ? String(o.etcdServers).split(',') : undefined,
      controllerManager: o.controllerManager,
      unreachableServiceRoute: true,
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
tkube is running: apiserver ${cluster.server}, ${o.nodes} node(s) ${runtimeLabel(runtime)}${o.etcdServers ? `, etcd ${o.etcdServers}` : ', embedded store'}
${serviceRouteLine(cluster.serviceRoute)}

  export KUBECONFIG=${kc}
  kubectl get nodes

Logs: ${cluster.logDir}/
${o.detach ? 'Stop it with: tkube down' + (o.dataDir !== '.tkube' ? ` --data-dir ${o.dataDir}` : '') : 'Press Ctrl-C to stop it.'}`);
    if (o.detach) process.exit(0);
    // It stays to supervise the components: give back what starting them grew.
    startIdleGc();
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
