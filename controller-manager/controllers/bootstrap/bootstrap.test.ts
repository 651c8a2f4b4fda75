// Bootstrap tokens: the token cleaner deletes expired token Secrets; the
// bootstrap signer signs cluster-info's kubeconfig with every signing token
// (kube's detached JWS, checked against cluster-bootstrap's test vectors).
import assert from 'node:assert/strict';
import { startTestAPIServer, type TestAPIServer } from '../../../apiserver/server/testing';
import { isNotFound, type Client } from '../../../shared/client';
import { startTestControllerManager, type TestControllerManager } from '../../app/testing';
import { waitUntil } from '../../../shared/cluster/process';
import { BOOTSTRAP_TOKEN_TYPE, detachedSignature } from './bootstrap';

const token = (id: string, secret: string, extra: Record<string, string> = {}) => ({
  metadata: { name: `bootstrap-token-${id}`, namespace: 'kube-system' },
  type: BOOTSTRAP_TOKEN_TYPE,
  stringData: { 'token-id': id, 'token-secret': secret, ...extra },
});

describe('controller-manager: bootstrap signer and token cleaner', function () {
  this.timeout(60_000);
  let srv: TestAPIServer;
  let kcm: TestControllerManager;
  let client: Client;

  before(async () => {
    srv = await startTestAPIServer();
    kcm = await startTestControllerManager(srv.kubeconfig, ['bootstrapsigner', 'tokencleaner']);
    client = kcm.client;
  });

  after(async () => {
    await kcm?.stop();
    await srv?.stop();
  });

  it('computes detached JWS signatures like cluster-bootstrap', () => {
    const content = 'Hello from the other side. I must have called a thousand times.';
    assert.equal(
      detachedSignature(content, 'joshua', 'my voice is my passcode'),
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..VShe2taLd-YTrmWuRkcL_8QTNDHYxQIEBsAYYiIj1_8',
    );
    assert.equal(
      detachedSignature('', 'joshua', 'my voice is my passcode'),
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..7Ui1ALizW4jXphVUB7xUqC9vLYLL9RZeOFfVLoB7Tgk',
    );
    assert.equal(
      detachedSignature(content, 'joshua', ''),
      'eyJhbGciOiJIUzI1NiIsImtpZCI6Impvc2h1YSJ9..UfkqvDGiIFxrMnFseDj9LYJOLNrvjW8aHhF71mvvAs8',
    );
  });

  it('deletes expired bootstrap token Secrets and keeps the others', async () => {
    const secrets = client.resource('secrets').namespace('kube-system');
    await secrets.create(
      token('aaaaaa', 'aaaaaaaaaaaaaaaa', { expiration: new Date(Date.now() - 1000).toISOString() }),
    );
    await secrets.create(
      token('bbbbbb', 'bbbbbbbbbbbbbbbb', { expiration: new Date(Date.now() + 3600_000).toISOString() }),
    );
    await waitUntil(
      async () => {
        try {
          await secrets.get('bootstrap-token-aaaaaa');
          return false;
        } catch (err) {
          return isNotFound(err);
        }
      },
      10_000,
      'the expired token to be deleted',
    );
    await secrets.get('bootstrap-token-bbbbbb');
  });

  it('signs cluster-info with signing tokens and drops signatures of tokens that go', async () => {
    const kubeconfig = 'apiVersion: v1\nkind: Config\nclusters: []\n';
    const cms = client.resource('configmaps').namespace('kube-public');
    await cms.create({ metadata: { name: 'cluster-info' }, data: { kubeconfig } });
    const secrets = client.resource('secrets').namespace('kube-system');
    await secrets.create(token('cccccc', '0123456789abcdef', { 'usage-bootstrap-signing': 'true' }));
    await secrets.create(token('dddddd', 'fedcba9876543210'));
    const cm = await waitUntil(async () => {
      const c = await cms.get('cluster-info');
      return c.data['jws-kubeconfig-cccccc'] ? c : undefined;
    });
    assert.equal(
      cm.data['jws-kubeconfig-cccccc'],
      detachedSignature(kubeconfig, 'cccccc', '0123456789abcdef'),
    );
    assert.equal(cm.data['jws-kubeconfig-dddddd'], undefined, 'not a signing token');
    await secrets.delete('bootstrap-token-cccccc');
    await waitUntil(async () => (await cms.get('cluster-info')).data['jws-kubeconfig-cccccc'] === undefined);
  });
});
