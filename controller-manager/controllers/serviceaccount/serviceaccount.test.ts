// The serviceaccount and root-ca-cert-publisher controllers: a new namespace
// gets its "default" ServiceAccount and its kube-root-ca.crt ConfigMap, both
// put back when deleted or changed.
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { isNotFound, type Client } from '../../../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';
import { DESCRIPTION, ROOT_CA_CONFIGMAP } from '../rootcacertpublisher/publisher';

describe('controller-manager: serviceaccount and root-ca-cert-publisher', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, ['serviceaccount', 'root-ca-cert-publisher']);
    client = kcm.client;
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('gives a new namespace its default ServiceAccount and kube-root-ca.crt, and restores them', async () => {
    await client.resource('namespaces').create({ metadata: { name: 'fresh' } });
    const sas = client.resource('serviceaccounts').namespace('fresh');
    const cms = client.resource('configmaps').namespace('fresh');
    const sa = await waitUntil(() => sas.get('default'), 10_000, 'the default ServiceAccount');
    const cm = await waitUntil(() => cms.get(ROOT_CA_CONFIGMAP), 10_000, 'kube-root-ca.crt');
    assert.deepEqual(Object.keys(cm.data), ['ca.crt']);
    assert.equal(cm.data['ca.crt'], srv.config.caPem);
    assert.equal(cm.metadata.annotations?.['kubernetes.io/description'], DESCRIPTION);

    await sas.delete('default');
    await waitUntil(
      async () => {
        const again = await sas.get('default');
        return again.metadata.uid !== sa.metadata.uid;
      },
      10_000,
      'the default ServiceAccount to come back',
    );

    await cms.update({ ...cm, data: { 'ca.crt': 'tampered' } });
    await waitUntil(
      async () => (await cms.get(ROOT_CA_CONFIGMAP)).data['ca.crt'] === srv.config.caPem,
      10_000,
      'ca.crt restored',
    );
    await cms.delete(ROOT_CA_CONFIGMAP);
    await waitUntil(() => cms.get(ROOT_CA_CONFIGMAP), 10_000, 'kube-root-ca.crt recreated');
  });

  it('covers the namespaces that existed before it started, and leaves terminating ones alone', async () => {
    for (const ns of ['default', 'kube-system', 'kube-public']) {
      await waitUntil(
        () => client.resource('serviceaccounts').namespace(ns).get('default'),
        10_000,
        `default SA in ${ns}`,
      );
      await waitUntil(
        () => client.resource('configmaps').namespace(ns).get(ROOT_CA_CONFIGMAP),
        10_000,
        `root CA in ${ns}`,
      );
    }
    await client.resource('namespaces').create({ metadata: { name: 'ending' } });
    await waitUntil(() => client.resource('serviceaccounts').namespace('ending').get('default'));
    await client.resource('namespaces').delete('ending');
    await client.resource('serviceaccounts').namespace('ending').delete('default');
    await new Promise((r) => setTimeout(r, 500));
    await assert.rejects(client.resource('serviceaccounts').namespace('ending').get('default'), (err) =>
      isNotFound(err),
    );
  });
});
