// The controller manager keeps its lease when its other traffic cannot move:
// the renewals go through a client of their own (own limiter, connections and
// a timeout below the renew deadline, as kube-controller-manager's
// "leader-election" client), so neither requests queued on the shared client
// nor a connection the apiserver stopped answering hold a renewal back.
// A real apiserver; the lease's renewTime is read past the manager.
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { Client } from '../../shared/client';
import { startTestControllerManager, type TestControllerManager } from './testing';

/** Short periods so the test takes seconds; timeouts stay far above a request's cost. */
const LEASE = { leaderElectLeaseDuration: 8000, leaderElectRenewDeadline: 6000, leaderElectRetryPeriod: 500 };

/** A TCP relay to the apiserver whose open connections can be made to stop answering. */
class StallingRelay {
  private readonly pairs = new Set<[Socket, Socket]>();
  private server?: Server;

  async start(targetPort: number): Promise<number> {
    this.server = createServer((down) => {
      const up = connect(targetPort, '127.0.0.1');
      const pair: [Socket, Socket] = [down, up];
      this.pairs.add(pair);
      const drop = () => {
        down.destroy();
        up.destroy();
        this.pairs.delete(pair);
      };
      down.on('error', drop).on('close', drop);
      up.on('error', drop).on('close', drop);
      down.pipe(up);
      up.pipe(down);
    });
    await new Promise<void>((r) => this.server!.listen(0, '127.0.0.1', r));
    return (this.server.address() as { port: number }).port;
  }

  /** Every connection open now stays open but carries nothing more; new ones relay as before. */
  stallOpenConnections(): number {
    for (const [down, up] of this.pairs) {
      down.unpipe(up);
      up.unpipe(down);
      down.pause();
      up.pause();
    }
    return this.pairs.size;
  }

  async close(): Promise<void> {
    for (const [down, up] of this.pairs) {
      down.destroy();
      up.destroy();
    }
    this.pairs.clear();
    await new Promise((r) => this.server?.close(r) ?? r(undefined));
  }
}

describe('controller-manager: leader election under pressure', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let direct: Client;
  let cm: TestControllerManager | undefined;
  let relay: StallingRelay | undefined;

  before(async () => {
    srv = await startTestAPIServer();
    direct = Client.create(srv.config, { qps: -1, http2: false });
  });
  afterEach(async () => {
    await cm?.stop();
    cm = undefined;
    await relay?.close();
    relay = undefined;
  });
  after(async () => {
    await direct?.close();
    await srv?.stop();
  });

  const renewTime = async (): Promise<number> => {
    const lease = await direct
      .resource('leases.coordination.k8s.io')
      .namespace('kube-system')
      .get('kube-controller-manager');
    return Date.parse(lease.spec.renewTime);
  };

  /** Resolves once the lease has been renewed `times` more times, while still() holds; fails as soon as it does not. */
  const renewals = async (times: number, still: () => string | undefined): Promise<void> => {
    let last = await renewTime();
    for (let seen = 0; seen < times;) {
      const why = still();
      if (why) assert.fail(`after ${seen} of ${times} renewals: ${why}`);
      await new Promise((r) => setTimeout(r, 100));
      const t = await renewTime();
      if (t > last) {
        seen++;
        last = t;
      }
    }
  };

  /** A controller manager running no controllers, only the election. */
  const start = (overrides: Record<string, unknown>) =>
    startTestControllerManager(srv.kubeconfig, ['*'], { leaderElect: true, ...LEASE, ...overrides }, []);

  it('renews while its shared client has a hundred requests queued behind its rate limit', async () => {
    cm = await start({ kubeApiQps: 1, kubeApiBurst: 1 });
    const flood = new AbortController();
    // A hundred requests wait on it.
    setMaxListeners(0, flood.signal);
    let pending = 0;
    const namespaces = cm.manager.client.resource('namespaces');
    for (let i = 0; i < 100; i++) {
      pending++;
      void namespaces
        .get('default', { signal: flood.signal })
        .catch(() => {})
        .finally(() => pending--);
    }
    try {
      await renewals(3, () => {
        if (!cm!.manager.isLeader()) return 'leadership lost';
        // At QPS 1 a handful of the hundred can have gone; most must still wait.
        if (pending < 50) return `only ${pending} requests still queued: the flood is not saturating`;
        return undefined;
      });
      assert.ok(pending >= 50, `${pending} requests still queued`);
    } finally {
      flood.abort();
    }
  });

  it('renews on a fresh connection when the apiserver stops answering the one it holds', async () => {
    relay = new StallingRelay();
    const port = await relay.start(srv.port);
    cm = await start({ master: `https://127.0.0.1:${port}` });
    await renewals(1, () => (cm!.manager.isLeader() ? undefined : 'leadership lost'));
    assert.ok(relay.stallOpenConnections() > 0, 'the manager holds connections through the relay');
    await renewals(3, () => (cm!.manager.isLeader() ? undefined : 'leadership lost'));
    assert.equal(cm.manager.isLeader(), true);
  });
});
