// Named clusters: what a name derives (data dir, node names, ports, address
// blocks, proxy tables), that the default name keeps today's values, that a
// taken port or another cluster's block moves a cluster elsewhere, and that the
// host-wide claim refuses a second cluster of a running name.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  cidrsOverlap,
  defaultClusterPorts,
  deriveClusterNames,
  invalidClusterName,
  portsOf,
  type HeldResources,
} from './cluster-names';
import { writeClusterState } from './cluster-state';
import { clusterPaths } from './data-dir';
import {
  claimClusterName,
  ClusterNameTaken,
  clusterDataDir,
  heldByOtherClusters,
  releaseClusterName,
  runningClusters,
  withClusterAllocation,
} from './running-clusters';

const allFree = async () => true;

describe('shared/cluster: cluster names', () => {
  it('keeps the default cluster as it was: .tkube, tkube-node-N, 6443, 10.244.<i>.0/24, 10.0.0.0/24', async () => {
    const n = await deriveClusterNames({ name: 'tkube', nodes: 2, others: [], isFree: allFree });
    assert.equal(n.dataDir, '.tkube');
    assert.equal(n.nodePrefix, 'tkube-node');
    assert.equal(n.slot, 0);
    assert.deepEqual(n.ports, defaultClusterPorts(2));
    assert.deepEqual([n.podCIDR(0), n.podCIDR(1)], ['10.244.0.0/24', '10.244.1.0/24']);
    assert.equal(n.serviceCIDR, '10.0.0.0/24');
    assert.deepEqual([n.nodeIP(0), n.nodeIP(1)], ['127.0.0.2', '127.0.0.3']);
    assert.equal(n.nftTable, 'tkube-proxy');
    assert.equal(n.iptablesPrefix, 'TKUBE');
  });

  it('gives another name its own data dir, node names, blocks and proxy tables', async () => {
    const n = await deriveClusterNames({ name: 'dev', nodes: 1, others: [], isFree: allFree });
    assert.equal(n.dataDir, join('.tkube-clusters', 'dev'));
    assert.equal(n.nodePrefix, 'dev-node');
    assert.equal(n.slot, 1);
    assert.equal(n.clusterCIDR, '10.245.0.0/16');
    assert.equal(n.podCIDR(0), '10.245.0.0/24');
    assert.equal(n.serviceCIDR, '10.0.1.0/24');
    assert.equal(n.nodeIP(0), '127.0.1.2');
    assert.equal(n.nftTable, 'tkube-proxy-dev');
    assert.match(n.iptablesPrefix, /^[A-Z][A-Z0-9]{0,7}$/);
    assert.notEqual(n.iptablesPrefix, 'TKUBE');
  });

  it('takes a free port instead of a default that the host or another cluster holds', async () => {
    const hostTaken = new Set([6443, 20000]);
    const other: HeldResources = {
      name: 'a',
      slot: 1,
      ports: [10257, 20001],
      podCIDRs: ['10.245.0.0/16'],
      serviceCIDRs: ['10.0.1.0/24'],
    };
    const n = await deriveClusterNames({
      name: 'b',
      nodes: 2,
      others: [other],
      isFree: async (p) => !hostTaken.has(p),
    });
    assert.equal(n.ports.apiserver, 20002, 'past the host-taken 20000 and the other cluster’s 20001');
    assert.equal(n.ports.controllerManager, 20003);
    assert.equal(n.ports.registry, 5000, 'a free default stays');
    const all = portsOf(n.ports);
    assert.equal(new Set(all).size, all.length, 'no port twice');
    for (const p of all) assert.ok(!hostTaken.has(p) && !other.ports.includes(p), `port ${p}`);
  });

  it('chooses a slot whose pod and Service CIDRs overlap no other cluster’s', async () => {
    const others: HeldResources[] = [
      { name: 'a', slot: 1, ports: [], podCIDRs: ['10.245.0.0/16'], serviceCIDRs: ['10.0.1.0/24'] },
      // A cluster started with --cluster-cidr inside slot 2's block, and no slot.
      { name: 'custom', ports: [], podCIDRs: ['10.246.7.0/24'], serviceCIDRs: ['10.96.0.0/12'] },
    ];
    const n = await deriveClusterNames({ name: 'c', nodes: 1, others, isFree: allFree });
    assert.equal(n.slot, 3);
    for (const o of others) {
      for (const c of o.podCIDRs) assert.ok(!cidrsOverlap(c, n.clusterCIDR), `${c} vs ${n.clusterCIDR}`);
      for (const c of o.serviceCIDRs) assert.ok(!cidrsOverlap(c, n.serviceCIDR), `${c} vs ${n.serviceCIDR}`);
    }
  });

  it('says so when every slot is held, and refuses names that cannot name nodes', async () => {
    const others = Array.from({ length: 11 }, (_, i) => ({
      name: `c${i}`,
      slot: i + 1,
      ports: [],
      podCIDRs: [],
      serviceCIDRs: [],
    }));
    await assert.rejects(
      deriveClusterNames({ name: 'late', nodes: 1, others, isFree: allFree }),
      /no free address block for cluster "late"/,
    );
    for (const bad of ['', 'Dev', '-x', 'x-', 'a_b', 'a'.repeat(21)]) assert.ok(invalidClusterName(bad), bad);
    assert.equal(invalidClusterName('ci-42'), undefined);
  });

  it('overlap of CIDRs', () => {
    assert.ok(cidrsOverlap('10.244.0.0/16', '10.244.3.0/24'));
    assert.ok(cidrsOverlap('10.0.0.0/8', '10.245.0.0/16'));
    assert.ok(!cidrsOverlap('10.244.0.0/16', '10.245.0.0/16'));
  });
});

describe('shared/cluster: running clusters on the host', () => {
  let dir: string;
  let saved: string | undefined;
  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'tkube-clusters-'));
    saved = process.env.TKUBE_CLUSTERS_DIR;
    process.env.TKUBE_CLUSTERS_DIR = join(dir, 'index');
  });
  afterEach(() => {
    if (saved === undefined) delete process.env.TKUBE_CLUSTERS_DIR;
    else process.env.TKUBE_CLUSTERS_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('refuses a second claim of a running name, finds the cluster by name, and frees the name on release', () => {
    const a = join(dir, 'a');
    claimClusterName('a', a);
    assert.throws(
      () => claimClusterName('a', join(dir, 'elsewhere')),
      (err: Error) => {
        assert.ok(err instanceof ClusterNameTaken);
        assert.match(
          err.message,
          /a cluster named "a" is already running \(data dir .*\/a\); stop it with `tkube down --name a`/,
        );
        return true;
      },
    );
    assert.equal(clusterDataDir({ name: 'a' }), a);
    assert.deepEqual(
      runningClusters().map((c) => [c.name, c.status]),
      [['a', 'starting']],
    );
    releaseClusterName('a', a);
    assert.deepEqual(runningClusters(), []);
    claimClusterName('a', join(dir, 'elsewhere'));
  });

  /** `claimClusterName(name, dataDir, detached)` in a child process that then exits. */
  async function claimInChild(name: string, dataDir: string, detached: boolean): Promise<void> {
    const mod = JSON.stringify(join(__dirname, 'running-clusters.js'));
    const code = await new Promise((r) =>
      spawn(
        process.execPath,
        [
          '-e',
          `require(${mod}).claimClusterName(${JSON.stringify(name)}, ${JSON.stringify(dataDir)}, ${detached})`,
        ],
        { stdio: 'inherit', env: process.env },
      ).once('exit', r),
    );
    assert.equal(code, 0);
  }

  it('keeps the name of a --detach cluster whose launcher exited while its processes run', async () => {
    const d = join(dir, 'd');
    mkdirSync(d);
    await claimInChild('d', d, true);
    writeClusterState(clusterPaths(d).stateFile, {
      name: 'd',
      pids: [{ name: 'apiserver', pid: process.pid }],
      kubeconfig: join(d, 'kubeconfig'),
      server: 'https://127.0.0.1:20000',
    });
    assert.deepEqual(
      runningClusters().map((c) => [c.name, c.status, c.launcherPid]),
      [['d', 'running', undefined]],
    );
    assert.throws(() => claimClusterName('d', d), ClusterNameTaken);
    // The same with a launcher in the foreground that died (crashed): the name is free again.
    await claimInChild('f', d, false);
    assert.deepEqual(
      runningClusters().map((c) => c.name),
      ['d'],
    );
    claimClusterName('f', d);
  });

  it("allocates for one `up` at a time: two at once never take the same slot; a dead holder's lock is taken over", async () => {
    const allocate = (name: string) =>
      withClusterAllocation(async () => {
        const d = join(dir, name);
        mkdirSync(d);
        claimClusterName(name, d);
        const n = await deriveClusterNames({
          name,
          nodes: 1,
          others: heldByOtherClusters(name),
          // Each port check yields, as the real one does: the other allocation would run meanwhile.
          isFree: () => new Promise((r) => setTimeout(() => r(true), 1)),
          dataDir: d,
        });
        writeClusterState(clusterPaths(d).stateFile, {
          name,
          slot: n.slot,
          pids: [{ name: 'apiserver', pid: process.pid }],
          kubeconfig: join(d, 'kubeconfig'),
          server: 'https://127.0.0.1:20000',
          ports: portsOf(n.ports),
          podCIDRs: [n.clusterCIDR],
          serviceCIDR: n.serviceCIDR,
        });
        return n.slot;
      });
    const slots = await Promise.all([allocate('p'), allocate('q')]);
    assert.deepEqual([...slots].sort(), [1, 2]);
    const lock = join(dir, 'index', '.allocating');
    assert.ok(!existsSync(lock), 'released');
    // Left by an `up` that died while it held it (no such PID).
    writeFileSync(lock, '2147483646 0.5');
    assert.equal(await allocate('r'), 3);
  });

  it('takes over the name of a cluster whose processes are gone, and reads what running ones hold', async () => {
    const stale = join(dir, 'stale');
    // Claimed in a child process that exits, leaving its entry behind.
    await claimInChild('x', stale, false);
    claimClusterName('x', join(dir, 'new'));
    assert.equal(clusterDataDir({ name: 'x' }), join(dir, 'new'));

    // A running one's state: its slot, ports and blocks are held.
    const b = join(dir, 'b');
    mkdirSync(b);
    claimClusterName('b', b);
    writeClusterState(clusterPaths(b).stateFile, {
      name: 'b',
      slot: 2,
      pids: [{ name: 'apiserver', pid: process.pid }],
      kubeconfig: join(b, 'kubeconfig'),
      server: 'https://127.0.0.1:20000',
      ports: [20000],
      podCIDRs: ['10.246.0.0/16'],
      serviceCIDR: '10.0.2.0/24',
    });
    assert.deepEqual(heldByOtherClusters('x'), [
      { name: 'b', slot: 2, ports: [20000], podCIDRs: ['10.246.0.0/16'], serviceCIDRs: ['10.0.2.0/24'] },
    ]);
    assert.deepEqual(
      heldByOtherClusters('b'),
      [{ name: 'x', slot: undefined, ports: [], podCIDRs: [], serviceCIDRs: [] }],
      'its own entry is not another cluster; x (starting) has recorded nothing yet',
    );
  });
});
