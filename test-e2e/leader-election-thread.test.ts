// With --leader-elect-thread the controller manager's lease is renewed from a thread of its own:
// a main thread that does not take a turn for longer than the lease lasts (a full collection of a
// large heap, a long pass over a cache) does not cost it the lease. The manager runs in this process, the apiserver in its own,
// so blocking this thread blocks only the manager.
import assert from 'node:assert/strict';
import { Client } from '../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../controller-manager/app/testing';
import { startAPIServerProcess, type APIServerProc } from './support/processes';

const LEASE = { leaderElectLeaseDuration: 3000, leaderElectRenewDeadline: 2000, leaderElectRetryPeriod: 300 };

describe('e2e: leader election on its own thread', function () {
  this.timeout(60_000);
  let api: APIServerProc;
  let direct: Client;
  let cm: TestControllerManager | undefined;

  before(async () => {
    api = await startAPIServerProcess();
    direct = Client.fromKubeconfigOrCluster(api.kubeconfig, { qps: -1, http2: false });
  });
  after(async () => {
    await cm?.stop();
    await direct?.close();
    await api?.cleanup();
  });

  const lease = () =>
    direct.resource('leases.coordination.k8s.io').namespace('kube-system').get('kube-controller-manager');

  it('renews the lease while the main thread is blocked for longer than the lease duration', async () => {
    cm = await startTestControllerManager(
      api.kubeconfig,
      ['*'],
      { leaderElect: true, leaderElectThread: true, ...LEASE },
      [],
    );
    assert.equal(cm.manager.isLeader(), true);
    const identity = cm.manager.identity;
    const before = await lease();
    assert.equal(before.spec.holderIdentity, identity);

    const blockedFrom = Date.now();
    while (Date.now() - blockedFrom < 2 * LEASE.leaderElectLeaseDuration) {
      // no turn of the event loop: timers, sockets and promises of this thread all wait
    }
    const blockedUntil = Date.now();

    const after = await lease();
    assert.equal(after.spec.holderIdentity, identity, 'still the holder');
    assert.equal(after.spec.leaseTransitions, before.spec.leaseTransitions, 'no one else took it meanwhile');
    const renewed = Date.parse(after.spec.renewTime);
    assert.ok(
      renewed > blockedFrom + LEASE.leaderElectLeaseDuration,
      `renewed at +${renewed - blockedFrom} ms of a ${blockedUntil - blockedFrom} ms block`,
    );
    // The manager still leads afterwards: its healthz check passes and it did not step down.
    await new Promise((r) => setTimeout(r, 2 * LEASE.leaderElectRetryPeriod));
    assert.equal(cm.manager.isLeader(), true);

    // A graceful stop ends the term and gives the lease up from the thread.
    await cm.stop();
    cm = undefined;
    assert.equal((await lease()).spec.holderIdentity ?? '', '');
  });
});
