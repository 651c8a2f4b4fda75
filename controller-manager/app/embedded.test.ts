// The controller manager inside the apiserver process (--run-controller-manager, the envtest
// asset): it runs the controllers once the apiserver is ready, and a stop that comes first
// (envtest may stop right after /healthz) does not wait for them to come up.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../apiserver/server/testing';
import { startEmbeddedControllerManager } from './embedded';

describe('controller-manager: embedded in the apiserver', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;

  before(async () => {
    srv = await startTestAPIServer();
  });
  after(async () => srv?.stop());

  it('runs the controllers once the apiserver is ready', async () => {
    const cm = startEmbeddedControllerManager(Promise.resolve(), () => srv.running.loopbackConfig());
    const manager = await cm.started;
    assert.ok(manager, 'started');
    assert.equal(manager.isLeader(), true);
    await cm.stop();
  });

  it('does not start when stopped before the apiserver is ready', async () => {
    let ready!: () => void;
    let asked = false;
    const cm = startEmbeddedControllerManager(new Promise<void>((r) => (ready = r)), async () => {
      asked = true;
      return srv.running.loopbackConfig();
    });
    const stopping = cm.stop();
    ready();
    await stopping;
    assert.equal(await cm.started, undefined);
    assert.equal(asked, false, 'the loopback credentials were asked for');
  });
});
