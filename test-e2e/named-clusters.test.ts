// Two named clusters side by side, as the `tkube up --name` processes a user
// runs (one containerd node each where containerd can run, else simulated
// nodes): each derives its own ports, node names, pod and Service CIDRs, and
// runs pods; `tkube ls` lists both; a second `up` of a running name is refused
// at once without touching the running one; `tkube down --name` stops one and
// leaves the other untouched; once both are down nothing of them is left on the
// host (processes, unreachable routes, bridges, nft tables).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runtimeTestsUnavailable, testImagesDir } from '../nodeagent/cri/testing';
import { bridgeName } from '../shared/cluster/containerd';
import { removeClusterLeftovers } from '../shared/cluster/cluster-leftovers';
import type { ClusterState } from '../shared/cluster/cluster-state';
import { clusterPaths } from '../shared/cluster/data-dir';
import { mountsUnder, processesUnder } from '../shared/cluster/leftovers';
import { waitUntil } from '../shared/cluster/process';
import { registryMissing } from '../shared/cluster/registry';
import { removeUnreachableRoutes } from '../shared/cluster/service-route';
import { runTkube, startTkubeUp, type TkubeUpProc } from './support/cluster';
import { kubectl, kubectlAvailable } from './support/kubectl';
import { tempDir } from './support/processes';

/** Whether the host routes a Service CIDR: unreachable, or through the cluster's bridge once its proxies run. */
const serviceRouted = (cidr: string) => sh('ip', ['route', 'show', 'exact', cidr]).trim() !== '';
const sh = (cmd: string, args: string[]) => {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
};

describe('named clusters side by side (tkube up --name)', function () {
  this.timeout(300_000);
  const base = tempDir('named');
  /** The test's own cluster names, apart from the host's. */
  const index = join(base, 'clusters');
  const env = { TKUBE_CLUSTERS_DIR: index };
  const runtime = (runtimeTestsUnavailable() ?? registryMissing()) ? 'fake' : 'containerd';
  const ups = new Map<string, TkubeUpProc>();
  const dir = (name: string) => join(base, name);
  const state = (name: string): ClusterState =>
    JSON.parse(readFileSync(clusterPaths(dir(name)).stateFile, 'utf8'));
  const states = new Map<string, ClusterState>();

  before(async function () {
    if (!kubectlAvailable()) {
      console.warn('skipping the named cluster tests: kubectl is not installed');
      this.skip();
    }
    if (runtime === 'containerd') testImagesDir();
    else console.warn(`named clusters on simulated nodes: ${runtimeTestsUnavailable() ?? registryMissing()}`);
  });

  after(async () => {
    for (const up of ups.values())
      if (up.child.exitCode === null && up.child.signalCode === null) up.child.kill('SIGKILL');
    for (const name of ['a', 'b']) {
      await removeClusterLeftovers(dir(name));
      const cidr = states.get(name)?.serviceCIDR;
      if (cidr) removeUnreachableRoutes(cidr);
    }
    rmSync(base, { recursive: true, force: true });
  });

  const ok = async (name: string, args: string[]) => {
    const r = await kubectl(clusterPaths(dir(name)).kubeconfig, args);
    assert.equal(r.code, 0, `${name}: kubectl ${args.join(' ')}: ${r.stderr}`);
    return r.stdout;
  };
  const phase = async (name: string, pod: string) =>
    JSON.parse(await ok(name, ['get', 'pod', pod, '-o', 'json'])).status?.phase;

  it('runs two named clusters at once, each with its own ports, nodes, CIDRs and pods', async () => {
    for (const name of ['a', 'b']) {
      ups.set(name, await startTkubeUp(dir(name), ['--name', name, '--runtime', runtime], 120_000, index));
      states.set(name, state(name));
    }
    const [a, b] = [states.get('a')!, states.get('b')!];
    assert.notEqual(a.server, b.server);
    assert.deepEqual([a.nodes, b.nodes], [['a-node-1'], ['b-node-1']]);
    assert.equal(
      a.ports!.filter((p) => b.ports!.includes(p)).length,
      0,
      `no port shared: ${a.ports} / ${b.ports}`,
    );
    assert.notDeepEqual(a.podCIDRs, b.podCIDRs);
    assert.notEqual(a.serviceCIDR, b.serviceCIDR);
    for (const s of [a, b]) assert.ok(serviceRouted(s.serviceCIDR!), `route for ${s.serviceCIDR}`);

    const ls = await runTkube(['ls'], env);
    assert.equal(ls.code, 0, ls.stderr);
    for (const [name, s] of [
      ['a', a],
      ['b', b],
    ] as const)
      assert.match(
        ls.stdout,
        new RegExp(
          `^${name}\\s+running\\s+${s.server.replace(/\./g, '\\.')}\\s+1\\s+${(s.registry ?? '-').replace(/\./g, '\\.')}\\s+${dir(name)}$`,
          'm',
        ),
      );

    for (const name of ['a', 'b']) {
      assert.match(await ok(name, ['get', 'nodes']), new RegExp(`^${name}-node-1\\s+Ready`, 'm'));
      // The default service account comes shortly after the controller manager.
      await waitUntil(
        async () =>
          (
            await kubectl(clusterPaths(dir(name)).kubeconfig, [
              'run',
              'p',
              '--image=busybox',
              '--restart=Never',
              '--',
              'sleep',
              '3600',
            ])
          ).code === 0,
        30_000,
        `${name}: kubectl run`,
      );
    }
    for (const name of ['a', 'b'])
      await waitUntil(async () => (await phase(name, 'p')) === 'Running', 90_000, `${name}: pod p Running`);
    const kc = await runTkube(['kubeconfig', '--name', 'b'], env);
    assert.equal(kc.stdout.trim(), clusterPaths(dir('b')).kubeconfig);
  });

  it('refuses a second up of a running name at once, touching nothing', async () => {
    const other = join(base, 'a-again');
    const r = await runTkube(['up', '--name', 'a', '--runtime', runtime, '--data-dir', other], env);
    assert.notEqual(r.code, 0);
    assert.match(
      r.stderr,
      /a cluster named "a" is already running \(data dir .*\/a\); stop it with `tkube down --name a`/,
    );
    assert.ok(!existsSync(join(other, 'apiserver')), 'nothing was started');
    assert.equal(await phase('a', 'p'), 'Running');
    assert.equal(ups.get('a')!.child.exitCode, null, "a's launcher runs on");
  });

  it('stops one with tkube down --name, leaving the other untouched; then nothing of either is left', async () => {
    const [a, b] = [states.get('a')!, states.get('b')!];
    const down = await runTkube(['down', '--name', 'b'], env);
    assert.equal(down.code, 0, down.stderr);
    await ups.get('b')!.exited;
    assert.deepEqual(processesUnder(dir('b')), []);
    assert.ok(!serviceRouted(b.serviceCIDR!), "b's route is gone");
    assert.ok(serviceRouted(a.serviceCIDR!), "a's route stays");
    assert.equal(await phase('a', 'p'), 'Running');
    assert.match(await ok('a', ['get', 'nodes']), /^a-node-1\s+Ready/m);
    const ls = await runTkube(['ls'], env);
    assert.match(ls.stdout, /^a\s+running/m);
    assert.doesNotMatch(ls.stdout, /^b\s/m);

    assert.equal((await runTkube(['down', '--name', 'a'], env)).code, 0);
    await ups.get('a')!.exited;
    assert.equal((await runTkube(['ls'], env)).stdout.trim(), 'No cluster is running.');
    for (const [name, s] of [
      ['a', a],
      ['b', b],
    ] as const) {
      assert.deepEqual(processesUnder(dir(name)), [], `${name}: no process`);
      assert.deepEqual(mountsUnder(dir(name)), [], `${name}: no mount`);
      assert.ok(
        !serviceRouted(s.serviceCIDR!),
        `${name}: no route, but ${sh('ip', ['route', 'show', 'exact', s.serviceCIDR!]).trim()}; links: ${sh('ip', ['-o', 'link']).match(/tk[0-9a-f]+/g)}; its launcher printed:\n${ups.get(name)!.output().slice(-3000)}`,
      );
      for (const c of s.containerds ?? []) {
        assert.doesNotMatch(
          sh('ip', ['-o', 'link']),
          new RegExp(bridgeName(c.dataDir)),
          `${name}: no bridge`,
        );
        for (const cidr of s.podCIDRs ?? [])
          assert.doesNotMatch(
            sh('ip', ['route']),
            new RegExp(`^${cidr.split('/')[0].replace(/\.0$/, '')}`, 'm'),
          );
      }
      assert.doesNotMatch(
        sh('nft', ['list', 'tables']),
        new RegExp(`tkube-proxy-${name}\\b`),
        `${name}: no nft table`,
      );
    }
  });
});
