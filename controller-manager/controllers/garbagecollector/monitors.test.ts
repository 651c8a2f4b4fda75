// The garbage collector's monitors and the stop signal: a resync whose discovery is still
// under way when the controller manager stops starts no monitor (one started then would list
// and watch forever, holding the manager's client open on stop).
import assert from 'node:assert/strict';
import { setMaxListeners } from 'node:events';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { Client } from '../../../shared/client';
import { logger } from '../../../shared/log';
import { RateLimitingQueue } from '../../../shared/informers';
import type { ControllerContext } from '../../controller';
import { DependencyGraph } from './graph';
import { GraphMonitors } from './monitors';

describe('controller-manager: garbage collector monitors', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let client: Client;

  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config);
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  const monitorsFor = (signal: AbortSignal) => {
    setMaxListeners(0, signal); // a listener per monitor
    const ctx = { client, signal, log: logger('garbagecollector') } as unknown as ControllerContext;
    const graph = new DependencyGraph(new RateLimitingQueue(), new RateLimitingQueue(), {
      invalidNamespaceOwnerRef: () => {},
    });
    return new GraphMonitors(ctx, graph);
  };

  it('monitors every deletable resource while running', async () => {
    const ac = new AbortController();
    const monitors = monitorsFor(ac.signal);
    assert.equal(await monitors.resync(), true);
    assert.ok(monitors.size > 10, `monitors: ${monitors.size}`);
    ac.abort();
    await monitors.stop();
  });

  it('starts no monitor when stopped during the resync', async () => {
    const ac = new AbortController();
    const monitors = monitorsFor(ac.signal);
    const resync = monitors.resync();
    ac.abort(); // discovery has not answered yet
    assert.equal(await resync, false);
    assert.equal(monitors.size, 0);
  });
});
