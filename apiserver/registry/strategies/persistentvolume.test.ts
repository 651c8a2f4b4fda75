// PersistentVolume status.lastPhaseTransitionTime through a real apiserver.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../server/testing';
import { Client } from '../../../shared/client';

describe('registry: persistentvolumes lastPhaseTransitionTime', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let client: Client;
  before(async () => {
    srv = await startTestAPIServer();
    client = Client.create(srv.config, { qps: -1 });
  });
  after(async () => {
    await client?.close();
    await srv?.stop();
  });

  it('is set on create, kept when the writer sets it, renewed when the phase changes, kept when it does not', async () => {
    const pvs = client.resource('persistentvolumes');
    const before = Date.now() - 1000;
    const pv = await pvs.create({
      metadata: { name: 'lptt' },
      spec: { capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], hostPath: { path: '/tmp/lptt' } },
      status: { phase: 'Bound' },
    });
    assert.equal(pv.status.phase, 'Pending');
    assert.ok(Date.parse(pv.status.lastPhaseTransitionTime) >= before, pv.status.lastPhaseTransitionTime);
    const old = '2020-01-01T00:00:00Z';
    const set = await pvs.updateStatus({
      ...pv,
      status: { phase: 'Available', lastPhaseTransitionTime: old },
    });
    assert.equal(set.status.lastPhaseTransitionTime, old, "the writer's own time");
    const same = await pvs.updateStatus({ ...set, status: { ...set.status, message: 'x' } });
    assert.equal(same.status.lastPhaseTransitionTime, old, 'phase unchanged');
    const moved = await pvs.updateStatus({ ...same, status: { ...same.status, phase: 'Released' } });
    assert.ok(
      Date.parse(moved.status.lastPhaseTransitionTime) >= before,
      moved.status.lastPhaseTransitionTime,
    );
  });
});
