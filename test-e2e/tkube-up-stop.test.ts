// `tkube up` on containerd, as the process a user runs: after a crash (the
// launcher and containerd SIGKILLed, everything else orphaned) the next `up`
// on the same data dir removes what was left, says so, and runs pods; a
// Ctrl-C (SIGINT to the launcher's process group, as a terminal sends it)
// then stops every pod through the CRI, then containerd, and leaves nothing
// of the data dir on the host (no process, shim, container, mount, network
// namespace or bridge), with no restart on the way; a second signal while it
// stops kills what is left at once.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '../shared/client/client';
import { loadKubeconfig } from '../shared/client/kubeconfig';
import { bridgeExists } from '../shared/cluster/containerd';
import { removeClusterLeftovers } from '../shared/cluster/cluster-leftovers';
import {
  mountsUnder,
  netnsOf,
  processesUnder,
  stillRunning,
  type HostProcess,
} from '../shared/cluster/leftovers';
import { nodeName } from '../shared/cluster/local-cluster';
import { waitUntil } from '../shared/cluster/process';
import { runtimeTestsUnavailable, testImagesDir, testPodCIDR } from '../nodeagent/cri/testing';
import { sleeperPod, startTkubeUp, tkubeUpPortFlags, type TkubeUpProc } from './support/cluster';
import { tempDir } from './support/processes';

/** What of a data dir runs or exists on the host. */
interface HostState {
  procs: HostProcess[];
  /** The pods' network namespaces ("net:[…]"). */
  netns: Set<string>;
  /** What holds them: their mounts and processes. */
  netnsHolders: Set<string>;
}

const containerdDir = (dataDir: string) => join(dataDir, 'nodes', nodeName(0), 'containerd');

function hostState(dataDir: string): HostState {
  const procs = processesUnder(dataDir);
  const host = netnsOf(process.pid);
  const netns = new Set(
    procs
      .filter((p) => p.kind === 'container')
      .map((p) => netnsOf(p.pid))
      .filter((n): n is string => !!n && n !== host),
  );
  return { procs, netns, netnsHolders: netnsHolders(netns) };
}

/**
 * What holds each of the network namespaces: mounts of it (nsfs, anywhere) and processes in it.
 * The kernel reuses a freed namespace's inode number (other tests make pods meanwhile), so a
 * namespace is still ours only while a holder seen before the stop holds it.
 */
function netnsHolders(nss: Set<string>): Set<string> {
  const out = new Set<string>();
  for (const line of readFileSync('/proc/self/mountinfo', 'utf8').split('\n')) {
    const ns = [...nss].find((n) => line.includes(n));
    if (ns) out.add(`${ns} mount ${line.split(' ')[4]}`);
  }
  for (const e of readdirSync('/proc'))
    if (/^\d+$/.test(e))
      try {
        const ns = readlinkSync(`/proc/${e}/ns/net`);
        if (!nss.has(ns)) continue;
        const stat = readFileSync(`/proc/${e}/stat`, 'utf8');
        const startTime = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19];
        out.add(
          `${ns} process ${e} ${startTime} ${readFileSync(`/proc/${e}/cmdline`, 'utf8').replace(/\0/g, ' ')}`,
        );
      } catch {
        // gone
      }
  return out;
}

describe('tkube up on containerd: stopping leaves nothing, the next up cleans a crash', function () {
  this.timeout(240_000);
  const ups: TkubeUpProc[] = [];
  const dirs: string[] = [];

  /** A data dir of the test's own with the flags of its cluster: free ports, a pod CIDR of its own. */
  async function cluster(): Promise<{ dataDir: string; flags: string[] }> {
    const dataDir = tempDir('up-stop');
    dirs.push(dataDir);
    const flags = ['--runtime', 'containerd', '--cluster-cidr', testPodCIDR(), ...(await tkubeUpPortFlags())];
    return { dataDir, flags };
  }

  before(async function () {
    const why = runtimeTestsUnavailable();
    if (why) {
      console.warn(`skipping the tkube up stop tests: ${why}`);
      this.skip();
    }
    testImagesDir();
  });

  after(async () => {
    for (const up of ups)
      if (up.child.exitCode === null && up.child.signalCode === null) up.child.kill('SIGKILL');
    // Whatever a failed test left: every process of the data dir, the bridge, mounts.
    for (const dir of dirs) {
      await removeClusterLeftovers(dir);
      rmSync(dir, { recursive: true, force: true });
    }
  });

  async function up(dataDir: string, flags: string[]): Promise<TkubeUpProc> {
    const p = await startTkubeUp(dataDir, flags);
    ups.push(p);
    return p;
  }

  /** busybox pods that sleep, Running. */
  async function runPods(kubeconfig: string, names: string[]): Promise<void> {
    const client = Client.create(loadKubeconfig(kubeconfig), { http2: false });
    const pods = client.resource('pods').namespace('default');
    try {
      for (const name of names)
        // The default service account appears shortly after the controller manager starts.
        await waitUntil(
          () => pods.create(sleeperPod(name, { container: { command: ['sleep', '3600'] } })),
          30_000,
          `pod ${name} created`,
        );
      for (const name of names)
        await waitUntil(
          async () => (await pods.get(name)).status?.phase === 'Running',
          60_000,
          `pod ${name} Running`,
        );
    } finally {
      await client.close();
    }
  }

  /** The running cluster has its containerd, a shim and container processes per pod, netns, bridge and mounts. */
  function assertRunning(dataDir: string, pods: number): HostState {
    const s = hostState(dataDir);
    const kinds = (k: HostProcess['kind']) => s.procs.filter((p) => p.kind === k).length;
    assert.equal(kinds('containerd'), 1, 'one containerd');
    assert.equal(
      s.procs.filter((p) => p.kind === 'component' && p.argv.some((a) => a.endsWith('/cmd/dns.js'))).length,
      1,
      'the cluster DNS',
    );
    assert.ok(kinds('shim') >= pods, `a shim per pod: ${kinds('shim')}`);
    assert.ok(kinds('container') >= 2 * pods, `pause and sleep per pod: ${kinds('container')}`);
    assert.ok(s.netns.size >= pods, `a network namespace per pod: ${s.netns.size}`);
    assert.ok(bridgeExists(containerdDir(dataDir)), 'the bridge');
    assert.ok(mountsUnder(dataDir).length > 0, 'mounts under the data dir');
    return s;
  }

  /** Nothing of the data dir left: processes, pods' task bundles, mounts, bridge, netns. */
  function assertNothingLeft(dataDir: string, before: HostState): void {
    const survivors = before.procs.filter(stillRunning);
    assert.deepEqual(
      survivors.map((p) => `${p.kind} ${p.pid} ${p.argv.join(' ')}`),
      [],
      'no process of the cluster still runs',
    );
    assert.deepEqual(
      processesUnder(dataDir).map((p) => `${p.kind} ${p.pid} ${p.argv.join(' ')}`),
      [],
      'no process of the data dir',
    );
    assert.deepEqual(mountsUnder(dataDir), [], 'no mount under the data dir');
    assert.equal(bridgeExists(containerdDir(dataDir)), false, 'the bridge is deleted');
    assertNetnsGone(before);
  }

  /** No mount or process that held the pods' network namespaces holds them still. */
  function assertNetnsGone(before: HostState): void {
    const still = [...netnsHolders(before.netns)].filter((h) => before.netnsHolders.has(h));
    assert.deepEqual(still, [], 'the network namespaces are gone');
  }

  /** The cluster the crash test left running, for the Ctrl-C test. */
  let running: TkubeUpProc | undefined;

  it('after a crash, the next up on the data dir removes what was left, says so, and runs pods', async () => {
    const { dataDir, flags } = await cluster();
    const first = await up(dataDir, flags);
    await runPods(first.kubeconfig, ['a']);
    const before = assertRunning(dataDir, 1);
    // The launcher and containerd die at once; the components, shims and containers are orphaned.
    const state = JSON.parse(readFileSync(join(dataDir, 'cluster.json'), 'utf8'));
    assert.ok(
      state.pids.some((p: any) => p.name === 'dns'),
      `the DNS server is in the record: ${JSON.stringify(state.pids)}`,
    );
    process.kill(first.pid, 'SIGKILL');
    process.kill(state.containerds[0].pid, 'SIGKILL');
    await first.exited;
    assert.ok(
      before.procs.some((p) => p.kind === 'shim' && stillRunning(p)),
      'the shims outlive the crash',
    );

    const second = await up(dataDir, flags);
    assert.match(second.output(), /Removed what an earlier run left in .*shim/);
    assert.deepEqual(
      before.procs.filter(stillRunning).map((p) => `${p.kind} ${p.pid} ${p.argv.join(' ')}`),
      [],
      "none of the crashed run's processes runs",
    );
    assertNetnsGone(before);
    // The new node agent runs a new pod, and the pod of before again (a shim each).
    await runPods(second.kubeconfig, ['b']);
    await waitUntil(
      async () => hostState(dataDir).procs.filter((p) => p.kind === 'shim').length >= 2,
      60_000,
      'pod a running again',
    );
    running = second;
  });

  it('Ctrl-C removes the pods through the CRI, stops containerd and leaves nothing running, with no restart', async () => {
    let p = running;
    if (!p) {
      const { dataDir, flags } = await cluster();
      p = await up(dataDir, flags);
      await runPods(p.kubeconfig, ['a', 'b']);
    }
    const dataDir = p.dataDir;
    const before = assertRunning(dataDir, 2);
    process.kill(-p.pid, 'SIGINT');
    assert.equal(await p.exited, 0, p.output());
    assert.doesNotMatch(p.output(), /⟳/, 'the supervisor restarted nothing while stopping');
    assertNothingLeft(dataDir, before);
    // Removed through the CRI (RemovePodSandbox), not only killed: containerd deleted their task bundles.
    const tasks = join(containerdDir(dataDir), 'state', 'io.containerd.runtime.v2.task', 'k8s.io');
    assert.deepEqual(existsSync(tasks) ? readdirSync(tasks) : [], [], 'no task bundle left');
  });

  it('a second signal while it stops kills what is left at once', async () => {
    const { dataDir } = await cluster();
    // The apiserver and the controller manager are enough to stop: no nodes to wait for.
    const p = await up(dataDir, ['--nodes', '0', ...(await tkubeUpPortFlags())]);
    const before = processesUnder(dataDir);
    // The launcher (its --data-dir), the apiserver and the controller manager.
    assert.equal(before.length, 3, `the components run: ${before.map((q) => q.argv.join(' '))}`);
    // Two different signals (the same one twice could merge into one pending signal).
    process.kill(-p.pid, 'SIGTERM');
    process.kill(-p.pid, 'SIGINT');
    assert.equal(await p.exited, 130, p.output());
    assert.match(p.output(), /Stopping the cluster[^]*Killing the cluster/);
    assert.deepEqual(
      before.filter(stillRunning).map((q) => `${q.kind} ${q.pid} ${q.argv.join(' ')}`),
      [],
      'no process of the cluster still runs',
    );
  });
});
