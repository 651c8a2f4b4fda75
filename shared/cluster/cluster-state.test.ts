// `tkube down` of a cluster whose launcher is gone (--detach) leaves nothing of
// its data dir: the recorded processes stopped, and the volumes the node agents
// mounted (they stay mounted when an agent stops, as kubelet's do) unmounted.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stopRecordedCluster, writeClusterState } from './cluster-state';
import { clusterPaths } from './data-dir';
import { mountsUnder, unmountUnder } from './leftovers';

describe('shared/cluster: tkube down of a recorded cluster', function () {
  this.timeout(30_000);
  let dir: string;
  before(function () {
    if (process.getuid?.() !== 0) this.skip();
    dir = mkdtempSync(join(tmpdir(), 'tkube-down-'));
  });
  after(() => {
    if (!dir) return;
    unmountUnder(dir);
    rmSync(dir, { recursive: true, force: true });
  });

  it('stops the recorded processes and unmounts the node agents’ volumes', async () => {
    // A pod's projected volume, as an agent mounts it (a tmpfs).
    const volume = join(dir, 'nodes', 'n1', 'pods', 'uid', 'volumes', 'kubernetes.io~projected', 'v');
    mkdirSync(volume, { recursive: true });
    execFileSync('mount', ['-t', 'tmpfs', 'tmpfs', volume]);
    const component = spawn(process.execPath, ['-e', 'setInterval(() => {}, 1000)'], { stdio: 'ignore' });
    const exited = new Promise((r) => component.once('exit', r));
    writeClusterState(clusterPaths(dir).stateFile, {
      pids: [{ name: 'n1', pid: component.pid! }],
      kubeconfig: join(dir, 'kubeconfig'),
      server: 'https://127.0.0.1:1',
    });
    assert.deepEqual(await stopRecordedCluster(dir), ['n1']);
    await exited;
    assert.deepEqual(mountsUnder(dir), [], 'no mount left');
    assert.ok(!existsSync(clusterPaths(dir).stateFile));
  });
});
