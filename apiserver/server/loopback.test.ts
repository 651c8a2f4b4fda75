// The apiserver's loopback client: a bearer token in memory, authenticated as
// system:apiserver in system:masters (kube-apiserver's), so a cert dir holding only a
// serving certificate of someone else's (envtest's) needs no cluster CA: none is made.
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '../../shared/client';
import { createCA, createServingCert } from '../../shared/pki/certs';
import { startTestAPIServer, type TestAPIServer } from './testing';

describe('apiserver: the loopback client', function () {
  this.timeout(60_000);
  let dir: string;
  let srv: TestAPIServer | undefined;
  let client: Client | undefined;

  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-loopback-'))));
  afterEach(async () => {
    await client?.close();
    await srv?.stop();
    client = srv = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  const whoAmI = async (c: Client) =>
    (
      await c
        .resource('selfsubjectreviews.authentication.k8s.io')
        .create({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' } as any)
    ).status.userInfo;

  it('given only a serving certificate in --cert-dir, makes no CA and reaches itself by token', async () => {
    const certDir = join(dir, 'certs');
    mkdirSync(certDir);
    const servingCA = await createCA('envtest-environment');
    const serving = await createServingCert(servingCA, 'localhost', {
      dnsNames: ['localhost'],
      ips: ['127.0.0.1'],
    });
    writeFileSync(join(certDir, 'apiserver.crt'), serving.certPem);
    writeFileSync(join(certDir, 'apiserver.key'), serving.keyPem);
    const clientCA = await createCA('envtest-environment');
    writeFileSync(join(certDir, 'client-cert-auth-ca.crt'), clientCA.certPem);

    srv = await startTestAPIServer({ certDir, clientCaFile: join(certDir, 'client-cert-auth-ca.crt') });
    for (const f of ['ca.crt', 'ca.key', 'admin.crt', 'apiserver-kubelet-client.crt'])
      assert.equal(existsSync(join(certDir, f)), false, `${f} was made`);

    const config = await srv.running.loopbackConfig();
    assert.equal(config.certPem, undefined, 'no client certificate');
    client = Client.create(config);
    const user = await whoAmI(client);
    assert.equal(user.username, 'system:apiserver');
    assert.deepEqual([...user.groups].sort(), ['system:authenticated', 'system:masters']);
    assert.ok((await client.resource('namespaces').get('default')).metadata?.uid);

    // Any other token is refused.
    const other = Client.create({ ...config, token: `${config.token}x` });
    await assert.rejects(other.resource('namespaces').get('default'), (err: { code?: number }) => {
      assert.equal(err.code, 401);
      return true;
    });
    await other.close();
  });

  it('with a cert dir of its own, the loopback client is the token too', async () => {
    srv = await startTestAPIServer();
    const config = await srv.running.loopbackConfig();
    client = Client.create(config);
    assert.equal((await whoAmI(client)).username, 'system:apiserver');
  });
});
