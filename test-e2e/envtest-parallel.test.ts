// Parallel suites on tkube's envtest assets: six environments started side by side, as six
// ginkgo processes would, each on the ports envtest handed it and no other (nothing fixed:
// the in-process controller manager serves no port), each its own cluster, all stopped
// by SIGTERM to their process groups with nothing left behind. On tkube's etcd stand-in.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { KubeObject } from '../shared/client';
import { writeEnvtestAssets } from '../shared/cluster/envtest-assets';
import { findOnPath, waitUntil } from '../shared/cluster/process';
import { groupAlive, listeningPorts, startEnvtest, type Envtest } from './support/envtest';
import { tempDir } from './support/processes';

const ENVIRONMENTS = 6;
/** As a suite sets KUBEBUILDER_CONTROLPLANE_START_TIMEOUT: six at once on a shared 2-core machine. */
const START_TIMEOUT_MS = 180_000;

describe('envtest on tkube: parallel environments', function () {
  this.timeout(600_000);
  let dir: string;
  const envs: Envtest[] = [];

  before(async function () {
    if (!findOnPath('kubectl')) this.skip();
    dir = tempDir('envtest-parallel');
    // tkube's etcd stand-in as the etcd asset here; envtest.test.ts runs the default (the
    // installed etcd on this machine).
    const { dir: assets } = writeEnvtestAssets(join(dir, 'assets'), { etcd: 'tkube' });
    const started = await Promise.allSettled(
      Array.from({ length: ENVIRONMENTS }, (_, i) =>
        startEnvtest(assets, join(dir, `logs-${i}`), { startTimeoutMs: START_TIMEOUT_MS }),
      ),
    );
    for (const s of started) if (s.status === 'fulfilled') envs.push(s.value);
    const failed = started.find((s) => s.status === 'rejected');
    if (failed) throw (failed as PromiseRejectedResult).reason;
  });

  after(async () => {
    await Promise.all(envs.map((e) => e.stop()));
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('gives each suite its own cluster', async () => {
    await Promise.all(
      envs.map((env, i) =>
        env.client.resource('namespaces').create({
          apiVersion: 'v1',
          kind: 'Namespace',
          metadata: { name: `suite-${i}` },
        } as KubeObject),
      ),
    );
    for (const [i, env] of envs.entries()) {
      const names = (await env.client.resource('namespaces').list()).items.map((n) => n.metadata!.name);
      const suites = names.filter((n) => n!.startsWith('suite-'));
      assert.deepEqual(suites, [`suite-${i}`]);
    }
    // The in-process controller manager runs: its root CA publisher fills the new namespace.
    await Promise.all(
      envs.map((env, i) =>
        waitUntil(
          () =>
            env.client
              .resource('configmaps')
              .namespace(`suite-${i}`)
              .get('kube-root-ca.crt')
              .then(() => true)
              .catch(() => false),
          60_000,
          `kube-root-ca.crt in suite-${i}`,
        ),
      ),
    );
  });

  it('listens only on the ports envtest handed out, all different, controllers running', () => {
    const all: number[] = [];
    for (const env of envs)
      for (const p of env.processes) {
        const open = listeningPorts(p.child.pid!);
        assert.ok(open.length > 0, `${p.name} listens on nothing`);
        for (const port of open)
          assert.ok(p.ports.includes(port), `${p.name} listens on ${port}, not handed out (${p.ports})`);
        all.push(...open);
      }
    assert.equal(new Set(all).size, all.length, `a port is listened on twice: ${all}`);
  });

  it('stops every environment, leaving no process behind', async () => {
    const processes = envs.flatMap((e) => e.processes);
    await Promise.all(envs.splice(0).map((e) => e.stop()));
    for (const p of processes) {
      assert.equal(groupAlive(p.pgid), false, `process group of ${p.name} still has processes`);
      assert.notEqual((await p.exited).signal, 'SIGKILL', `${p.name} had to be killed`);
    }
  });
});
