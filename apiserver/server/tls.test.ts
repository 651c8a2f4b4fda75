// The generated serving certificate: made once into --cert-dir and kept, but made
// again when it no longer covers the kubernetes Service's ClusterIP or the
// advertise address (a reused cert dir under a new Service CIDR), which
// in-cluster clients verify.
import { strict as assert } from 'node:assert';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defaultServingNames, setupServingTLS } from './tls';

describe('apiserver serving certificate', () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'tkube-tls-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const covers = (pem: string, ip: string) => new X509Certificate(pem).checkIP(ip) !== undefined;

  it("covers the kubernetes Service's names, ClusterIP and the advertise address", async () => {
    const tls = await setupServingTLS({ certDir: dir, ...defaultServingNames('10.96.0.1', ['10.244.0.1']) });
    const cert = new X509Certificate(tls.certPem);
    for (const name of [
      'kubernetes',
      'kubernetes.default',
      'kubernetes.default.svc',
      'kubernetes.default.svc.cluster.local',
    ])
      assert.ok(cert.checkHost(name), name);
    assert.ok(covers(tls.certPem, '10.96.0.1') && covers(tls.certPem, '10.244.0.1'));
  });

  it('keeps the certificate while it covers them, makes a new one for a new ClusterIP or advertise address', async () => {
    const first = await setupServingTLS({
      certDir: dir,
      ...defaultServingNames('10.96.0.1', ['10.244.0.1']),
    });
    const again = await setupServingTLS({
      certDir: dir,
      ...defaultServingNames('10.96.0.1', ['10.244.0.1']),
    });
    assert.equal(again.certPem, first.certPem);
    const moved = await setupServingTLS({
      certDir: dir,
      ...defaultServingNames('10.97.0.1', ['10.245.0.1']),
    });
    assert.ok(covers(moved.certPem, '10.97.0.1'), 'the new ClusterIP');
    assert.ok(covers(moved.certPem, '10.245.0.1'), 'the new advertise address');
    assert.equal(moved.caPem, first.caPem, 'signed by the same cluster CA');
  });
});
