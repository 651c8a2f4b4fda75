// tkube: a whole local Kubernetes-compatible cluster in one command.
//   tkube up      start apiserver, controller-manager and node agents (Ctrl-C stops them)
//   tkube down    stop a cluster (--name NAME, default tkube)
//   tkube ls      list the clusters running on this host
//   tkube kubeconfig  print a cluster's kubeconfig path
//   tkube image load|ls  images into a running cluster's nodes and registry; what they hold
//   tkube envtest-assets  write a KUBEBUILDER_ASSETS directory for envtest
import { Command } from 'commander';
import { relative, resolve } from 'node:path';
import { containerdMissing } from '../shared/cluster/containerd';
import type { NodeRuntime, Step } from '../shared/cluster/cluster-options';
import { defaultDataDir, DEFAULT_CLUSTER_NAME, invalidClusterName } from '../shared/cluster/cluster-names';
import { ClusterNameTaken } from '../shared/cluster/running-clusters';
import { LocalCluster } from '../shared/cluster/local-cluster';
import { simulatorRatesLine } from '../shared/cluster/component-flags';
import { writeComponentKubeconfig } from '../shared/cluster/credentials';
import { startIdleGc } from '../shared/heap/idle-gc';
import { envtestAssetsCommand } from './envtest-assets';
import { clusterCommands } from './tkube-clusters';
import { imageCommand } from './tkube-image';

const LABELS: Record<Step, string> = {
  apiserver: 'Starting the apiserver',
  credentials: 'Writing component credentials',
  'controller-manager': 'Starting the controller manager',
  images: 'Building the offline images and starting containerd per node',
  dns: 'Starting the cluster DNS',
  nodes: 'Starting node agents and waiting for Ready nodes',
  'service-proxy': 'Starting the service proxy per node',
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

/** Node i's /24 in an IPv4 cluster CIDR (as kube-controller-manager's --cluster-cidr with a /24 node mask). */
function nodeCIDRs(clusterCIDR: string, nodes: number): (i: number) => string {
  const m = /^(\d+)\.(\d+)\.(\d+)\.(\d+)\/(\d+)$/.exec(clusterCIDR);
  const octets = m ? m.slice(1, 5).map(Number) : [];
  const bits = m ? Number(m[5]) : NaN;
  if (!m || octets.some((b) => b > 255) || !(bits >= 8 && bits <= 24))
    throw new Error(`--cluster-cidr must be an IPv4 CIDR of /8 to /24, not "${clusterCIDR}"`);
  if (nodes > 2 ** (24 - bits))
    throw new Error(`--cluster-cidr ${clusterCIDR} has room for ${2 ** (24 - bits)} node(s), not ${nodes}`);
  const base = (octets.reduce((a, b) => a * 256 + b, 0) >>> 8) & ~(2 ** (24 - bits) - 1);
  return (i) => {
    const n = base + i;
    return `${n >>> 16}.${(n >>> 8) & 255}.${n & 255}.0/24`;
  };
}

const runtimeLabel = (r: NodeRuntime | undefined) =>
  r === 'containerd' ? 'on containerd' : r === 'fake' ? 'simulated' : 'on the fake runtime';

/** The Service CIDR, the proxy's mode or why none runs, and what keeps ClusterIPs on this host. */
function servicesLines(cluster: LocalCluster, runtime: NodeRuntime | undefined): string {
  const p = cluster.serviceProxy;
  const proxy = !p
    ? runtime === 'containerd'
      ? 'no service proxy (no nodes)'
      : 'no service proxy (no pod runs for real on these nodes)'
    : 'mode' in p
      ? `service proxy on every node, ${p.mode} mode: ClusterIPs and NodePorts reach pods from pods and from this host`
      : `no service proxy: ${p.why}; ClusterIPs do not answer`;
  const r = cluster.serviceRoute;
  const routed = p && 'routedThrough' in p && p.routedThrough;
  const route = routed
    ? [`  routed through ${routed} (unallocated ClusterIPs are rejected there) until stop`]
    : (r?.installed ?? []).map(
        (cidr) => `  unreachable from this host (ip route add unreachable ${cidr}) until stop`,
      );
  return [
    `Service CIDR ${cluster.serviceCIDR}: ${proxy}`,
    ...route,
    ...(r?.skipped ?? []).map((why) => `  ${why}`),
  ].join('\n');
}

const program = new Command('tkube').description(
  'A Kubernetes-compatible control plane in one process tree: local clusters in one command.',
);

program
  .command('up')
  .description(
    'start a local cluster: apiserver (embedded store or etcd), controller manager and node agents (on containerd: with a containerd and a service proxy per node)',
  )
  .option(
    '--name <name>',
    "the cluster's name on this host: clusters of different names run side by side, each with its own data dir, node names, ports, pod and Service CIDRs",
    DEFAULT_CLUSTER_NAME,
  )
  .option(
    '--data-dir <dir>',
    'directory of the cluster (data, certificates, kubeconfig, logs); a restart reuses it (default: .tkube for the name tkube, .tkube-clusters/NAME for others)',
  )
  .option('--nodes <n>', 'number of node agents', (v) => parseInt(v, 10), 1)
  .option('--port <port>', 'apiserver secure port (default 6443, or a free one when it is taken)', (v) =>
    parseInt(v, 10),
  )
  .option('--controller-manager-port <port>', "the controller manager's secure port", (v) => parseInt(v, 10))
  .option(
    '--kubelet-port <port>',
    "node i's agent port is port+100·i, its read-only port +5 and healthz port -2 (10250, 10255, 10248 by default)",
    (v) => parseInt(v, 10),
  )
  .option(
    '--cluster-cidr <cidr>',
    "the pods' IPv4 range; node i takes the i-th /24 of it (default 10.244.0.0/16)",
  )
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
    "the cluster's image registry on 127.0.0.1 (containerd; default 5000, or a free one when it is taken)",
    (v) => parseInt(v, 10),
  )
  .option(
    '--upstream-registries',
    "let pulls the cluster's registry cannot serve go on to docker.io, registry.k8s.io, ... (default: they fail at once, as with k3s' --disable-default-registry-endpoint)",
  )
  .option('--detach', 'leave the cluster running in the background (stop it with tkube down)')
  .action(async (o) => {
    const invalid = invalidClusterName(o.name);
    if (invalid) throw new Error(invalid);
    o.dataDir ??= defaultDataDir(o.name);
    const runtime = chooseRuntime(o.runtime);
    const cluster = new LocalCluster({
      clusterName: o.name,
      runtime,
      registriesFile: o.registries ? resolve(o.registries) : undefined,
      registryPort: o.registryPort,
      upstreamRegistries: !!o.upstreamRegistries,
      dataDir: o.dataDir,
      nodes: o.nodes,
      apiserverPort: o.port,
      controllerManagerPort: o.controllerManagerPort,
      nodePorts:
        o.kubeletPort === undefined
          ? undefined
          : (i) => ({
              port: o.kubeletPort + 100 * i,
              readOnlyPort: o.kubeletPort + 5 + 100 * i,
              healthzPort: o.kubeletPort - 2 + 100 * i,
            }),
      podCIDR: o.clusterCidr ? nodeCIDRs(o.clusterCidr, o.nodes) : undefined,
      etcdServers: o.etcdServers ? String(o.etcdServers).split(',') : undefined,
      controllerManager: o.controllerManager,
      unreachableServiceRoute: true,
      serviceProxy: true,
      detached: !!o.detach,
      progress: progressDisplay(),
      onRestart: (r) =>
        console.log(
          `⟳ ${r.name} exited (${r.why}); restarting it in ${(r.delayMs / 1000).toFixed(0)}s (restart ${r.count})`,
        ),
      onLeftovers: (removed) => console.log(`Removed what an earlier run left in ${o.dataDir}: ${removed}.`),
    });
    // The first Ctrl-C (or SIGTERM, or the terminal closing) stops the cluster in order; a
    // second one kills what is left of it at once. Either way nothing of it stays running.
    let stopping = false;
    let killing = false;
    const stop = async (code: number) => {
      if (stopping) {
        if (killing) return;
        killing = true;
        console.log('Killing the cluster...');
        await cluster.kill();
        process.exit(130);
      }
      stopping = true;
      console.log('\nStopping the cluster (Ctrl-C again to kill it)...');
      try {
        await cluster.down();
      } catch (err) {
        console.error(`✘ Stopping failed (${(err as Error).message}): killing what is left`);
        await cluster.kill().catch((e) => console.error(`✘ Killing failed too: ${(e as Error).message}`));
      }
      // A second signal's kill() exits when it is done.
      if (!killing) process.exit(code);
    };
    for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
    try {
      await cluster.up();
    } catch (err) {
      // A signal during the start: that stop is under way.
      if (stopping) return;
      // The name runs already: nothing was started here.
      if (err instanceof ClusterNameTaken) {
        console.error(`✘ ${err.message}`);
        process.exit(1);
      }
      console.error(
        `\n✘ ${(err as Error).message}\n  Logs: ${relative(process.cwd(), cluster.logDir) || cluster.logDir}/`,
      );
      await stop(1);
      return;
    }
    const kc = resolve(cluster.kubeconfig);
    console.log(`
tkube is running: ${o.name !== DEFAULT_CLUSTER_NAME ? `cluster ${o.name}, ` : ''}apiserver ${cluster.server}, ${o.nodes} node(s) ${runtimeLabel(runtime)}${o.etcdServers ? `, etcd ${o.etcdServers}` : ', embedded store'}
${servicesLines(cluster, runtime)}${
      runtime === 'fake'
        ? `
${simulatorRatesLine(o.nodes)}`
        : ''
    }

  export KUBECONFIG=${kc}
  kubectl get nodes

Logs: ${cluster.logDir}/
${o.detach ? `Stop it with: tkube down${o.name !== DEFAULT_CLUSTER_NAME ? ` --name ${o.name}` : ''}` : 'Press Ctrl-C to stop it.'}`);
    if (o.detach) process.exit(0);
    // It stays to supervise the components: give back what starting them grew.
    startIdleGc();
  });

for (const c of clusterCommands()) program.addCommand(c);
program.addCommand(imageCommand());

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

program.addCommand(envtestAssetsCommand());

program.parseAsync(process.argv).catch((err) => {
  console.error(`Error: ${err instanceof Error ? err.message : String(err)}`);
  process.exit(1);
});
