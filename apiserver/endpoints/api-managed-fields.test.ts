// Which fields a write's manager owns: what it sent (and the defaults it brought),
// not what the server's strategy then set (a Job's generated selector, a
// Namespace's finalizer), as in Kubernetes. kubectl relies on this when it moves
// an object from client-side to server-side apply.
import assert from 'node:assert/strict';
import { startTestAPIServer, testRequester, type TestAPIServer } from '../server/testing';

describe('resource API: managedFields of creates and updates', function () {
  this.timeout(30_000);
  let srv: TestAPIServer;
  let api: ReturnType<typeof testRequester>;
  const jobs = '/apis/batch/v1/namespaces/default/jobs';
  const job = {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: 'once' },
    spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'j', image: 'busybox' }] } } },
  };

  before(async () => {
    srv = await startTestAPIServer();
    api = testRequester(srv.config);
  });
  after(async () => {
    await api.close();
    await srv.stop();
  });

  const fieldsOf = (obj: any, manager: string) =>
    obj.metadata.managedFields.find((m: any) => m.manager === manager)?.fieldsV1;

  it('the creator owns what it sent and its defaults, not what the strategy generated', async () => {
    const c = await api('POST', `${jobs}?fieldManager=creator`, { body: job });
    assert.equal(c.status, 201, c.json?.message);
    assert.ok(c.json.spec.selector?.matchLabels?.['batch.kubernetes.io/controller-uid']);
    const f = fieldsOf(c.json, 'creator');
    assert.ok(f['f:spec']['f:template']['f:spec']['f:containers'], 'what it sent');
    assert.ok(f['f:spec']['f:backoffLimit'], 'a default it brought');
    assert.equal(f['f:spec']['f:selector'], undefined, 'the generated selector');
    assert.equal(f['f:spec']['f:template']['f:metadata'], undefined, 'the generated template labels');

    const ns = await api('POST', '/api/v1/namespaces?fieldManager=creator', {
      body: { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'owned' } },
    });
    assert.deepEqual(ns.json.spec.finalizers, ['kubernetes']);
    assert.equal(fieldsOf(ns.json, 'creator')?.['f:spec'], undefined);
  });

  it('a server-side apply of the same configuration leaves the generated fields alone', async () => {
    const r = await api('PATCH', `${jobs}/once?fieldManager=creator&force=true`, {
      body: job,
      contentType: 'application/apply-patch+yaml',
    });
    assert.equal(r.status, 200, r.json?.message);
    assert.ok(r.json.spec.selector?.matchLabels?.['batch.kubernetes.io/controller-uid']);
  });
});
