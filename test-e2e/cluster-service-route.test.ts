// The launcher's unreachable route for the Service CIDR (as root): in place
// while the cluster runs (a stale one from a crashed run replaced), recorded
// for `tkube down`, gone after the cluster stops; the cluster's ClusterIPs are
// in it. The CIDR is one of this process's (service-route.test-support.ts).
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { startCluster } from './support/cluster';
import { getWithKubeconfig } from '../shared/cluster/process';
import type { LocalCluster } from '../shared/cluster/local-cluster';
import { hasUnreachableRoute, removeUnreachableRoutes } from '../shared/cluster/service-route';
import { routedUnreachable, testServiceCIDR } from '../shared/cluster/service-route.test-support';

describe('a local cluster routes its Service CIDR unreachable', function () {
  this.timeout(120_000);
  const { cidr } = testServiceCIDR(28, 2);
  let cluster: (LocalCluster & { cleanup(): Promise<void> }) | undefined;

  before(async function () {
    if (process.getuid?.() !== 0) this.skip();
    // Left by a run that crashed.
    execFileSync('ip', ['route', 'add', 'unreachable', cidr]);
    cluster = await startCluster({
      nodes: 0,
      controllerManager: false,
      serviceCIDR: cidr,
      unreachableServiceRoute: true,
    });
  });
  after(async () => {
    await cluster?.cleanup();
    removeUnreachableRoutes(cidr);
  });

  it('while it runs, with its ClusterIPs in it and the route recorded', async () => {
    assert.deepEqual(cluster!.serviceRoute, { installed: [cidr], skipped: [] });
    assert.ok(hasUnreachableRoute(cidr));
    const routes = execFileSync('ip', ['route', 'show', 'exact', cidr], { encoding: 'utf8' });
    assert.equal(routes.trim().split('\n').length, 1, routes);
    const r = await getWithKubeconfig(cluster!.kubeconfig, '/api/v1/namespaces/default/services/kubernetes');
    assert.equal(r.status, 200, r.body);
    assert.ok(routedUnreachable(JSON.parse(r.body).spec.clusterIP));
    const state = JSON.parse(readFileSync(join(cluster!.dataDir, 'cluster.json'), 'utf8'));
    assert.deepEqual(state.unreachableRoutes, [cidr]);
  });

  it('and removes it when it stops', async () => {
    await cluster!.cleanup();
    cluster = undefined;
    assert.equal(hasUnreachableRoute(cidr), false);
  });
});
