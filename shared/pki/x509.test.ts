// The certificates certs.ts and go-certs.test-support.ts make, read by openssl and by
// node's X509Certificate (OpenSSL's parser): chains verify, the extensions say what they should.
import assert from 'node:assert/strict';
import { createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { createCA, createClientCert, createServingCert, type KeyPair } from './certs';
import { goSelfSignedCA, goSignedServingCert } from './go-certs.test-support';
import { openssl, pemDir } from './openssl.test-support';
import { ipBytes, issuerFrom, selfSigned } from './x509';

const DAY = 24 * 3600 * 1000;

describe('pki/x509: certificates tkube makes', function () {
  this.timeout(30_000);
  let tmp: ReturnType<typeof pemDir>;
  let ca: KeyPair;
  let serving: KeyPair;
  let client: KeyPair;
  const dnsNames = ['localhost', 'kubernetes.default.svc'];
  const ips = ['127.0.0.1', '::1', '10.96.0.1', '::ffff:192.0.2.7'];

  before(async () => {
    tmp = pemDir('x509');
    ca = await createCA('tkube-ca');
    serving = await createServingCert(ca, 'kube-apiserver', { dnsNames, ips, days: 30 });
    client = await createClientCert(ca, {
      commonName: 'admin',
      organizations: ['system:masters', 'tkube:a@b'],
    });
    for (const [name, kp] of Object.entries({ ca, serving, client })) {
      tmp.write(`${name}.crt`, kp.certPem);
      tmp.write(`${name}.key`, kp.keyPem);
    }
  });
  after(() => tmp.remove());

  it('openssl verifies the serving and client certificates against the CA, strictly', () => {
    const out = openssl(tmp.dir, 'verify', '-x509_strict', '-CAfile', 'ca.crt', 'serving.crt', 'client.crt');
    assert.equal(out, 'serving.crt: OK\nclient.crt: OK\n');
    assert.equal(
      openssl(tmp.dir, 'verify', '-purpose', 'sslserver', '-CAfile', 'ca.crt', 'serving.crt'),
      'serving.crt: OK\n',
    );
    assert.equal(
      openssl(tmp.dir, 'verify', '-purpose', 'sslclient', '-CAfile', 'ca.crt', 'client.crt'),
      'client.crt: OK\n',
    );
    // The wrong purpose fails: the extended key usages are there and read.
    assert.throws(
      () => openssl(tmp.dir, 'verify', '-purpose', 'sslclient', '-CAfile', 'ca.crt', 'serving.crt'),
      /unsuitable certificate purpose/,
    );
  });

  it('openssl -text shows the extensions: CA, key usages, key ids, SANs', () => {
    const caText = openssl(tmp.dir, 'x509', '-noout', '-text', '-in', 'ca.crt');
    assert.match(caText, /Signature Algorithm: ecdsa-with-SHA256/);
    assert.match(caText, /Subject: CN = tkube-ca/);
    assert.match(caText, /Basic Constraints: critical\s+CA:TRUE\n/);
    assert.match(caText, /Key Usage: critical\s+Digital Signature, Certificate Sign, CRL Sign\n/);
    const ski = /Subject Key Identifier:\s+([0-9A-F:]{59})\n/.exec(caText)?.[1];
    assert.ok(ski, caText);

    const text = openssl(tmp.dir, 'x509', '-noout', '-text', '-in', 'serving.crt');
    assert.match(text, /Version: 3 \(0x2\)/);
    assert.match(text, /Issuer: CN = tkube-ca\n/);
    assert.match(text, /Basic Constraints: critical\s+CA:FALSE\n/);
    assert.match(text, /Key Usage: critical\s+Digital Signature, Key Encipherment\n/);
    assert.match(text, /Extended Key Usage: \s+TLS Web Server Authentication\n/);
    assert.equal(/Authority Key Identifier: \s+(?:keyid:)?([0-9A-F:]{59})\n/.exec(text)?.[1], ski);
    assert.match(
      text,
      /Subject Alternative Name: \s+DNS:localhost, DNS:kubernetes.default.svc, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1, IP Address:10.96.0.1, IP Address:192.0.2.7\n/,
    );
    assert.doesNotMatch(text, /Subject Key Identifier/);

    const clientText = openssl(tmp.dir, 'x509', '-noout', '-text', '-in', 'client.crt');
    assert.match(clientText, /Extended Key Usage: \s+TLS Web Client Authentication\n/);
    assert.doesNotMatch(clientText, /Subject Alternative Name/);
    // One RDN per O, then the CN (Go's order); '@' is not PrintableString, so that one is UTF8String.
    assert.match(
      openssl(tmp.dir, 'x509', '-noout', '-subject', '-nameopt', 'RFC2253,show_type', '-in', 'client.crt'),
      /subject=CN=PRINTABLESTRING:admin,O=UTF8STRING:tkube:a@b,O=PRINTABLESTRING:system:masters/,
    );
  });

  it("node's X509Certificate: host and IP checks, CA flag, key usage, names, validity", () => {
    const c = new X509Certificate(serving.certPem);
    const caCert = new X509Certificate(ca.certPem);
    assert.equal(c.checkHost('localhost'), 'localhost');
    assert.equal(c.checkHost('kubernetes.default.svc'), 'kubernetes.default.svc');
    assert.equal(c.checkHost('kube-apiserver'), undefined, 'the CN is not a name when there are SANs');
    assert.equal(c.checkHost('evil.example'), undefined);
    for (const ip of ['127.0.0.1', '::1', '0:0:0:0:0:0:0:1', '10.96.0.1', '192.0.2.7'])
      assert.equal(c.checkIP(ip), ip);
    assert.equal(c.checkIP('10.96.0.2'), undefined);
    assert.equal(caCert.ca, true);
    assert.equal(c.ca, false);
    assert.deepEqual(c.keyUsage, ['1.3.6.1.5.5.7.3.1']);
    assert.deepEqual(new X509Certificate(client.certPem).keyUsage, ['1.3.6.1.5.5.7.3.2']);
    assert.equal(c.issuer, 'CN=tkube-ca');
    assert.equal(c.subject, 'CN=kube-apiserver');
    assert.equal(new X509Certificate(client.certPem).subject, 'O=system:masters\nO=tkube:a@b\nCN=admin');
    assert.ok(c.checkIssued(caCert) && c.verify(caCert.publicKey));
    assert.ok(caCert.verify(caCert.publicKey), 'the CA is self-signed');
    const from = Date.parse(c.validFrom);
    const to = Date.parse(c.validTo);
    assert.ok(from < Date.now() - 3500_000 && from > Date.now() - 3700_000, c.validFrom);
    assert.ok(Math.abs(to - (Date.now() + 30 * DAY)) < 60_000, c.validTo);
    assert.ok(Math.abs(Date.parse(caCert.validTo) - (Date.now() + 3650 * DAY)) < 60_000, caCert.validTo);
    assert.notEqual(c.serialNumber, new X509Certificate(client.certPem).serialNumber);
  });

  it('keys are ECDSA P-256 in PKCS#8 PEM, each matching its certificate', () => {
    for (const kp of [ca, serving, client]) {
      assert.match(
        kp.keyPem,
        /^-----BEGIN PRIVATE KEY-----\n([A-Za-z0-9+/=]{64}\n)+[A-Za-z0-9+/=]{1,64}\n-----END PRIVATE KEY-----\n$/,
      );
      assert.match(
        kp.certPem,
        /^-----BEGIN CERTIFICATE-----\n[A-Za-z0-9+/=\n]+\n-----END CERTIFICATE-----\n$/,
      );
      const key = createPrivateKey(kp.keyPem);
      assert.equal(key.asymmetricKeyType, 'ec');
      assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
      assert.ok(new X509Certificate(kp.certPem).checkPrivateKey(key));
    }
  });

  it('a validity past 2049 is a GeneralizedTime that openssl and node read', async () => {
    const far = await createCA('far-ca', 40 * 365);
    const c = new X509Certificate(far.certPem);
    assert.ok(new Date(c.validTo).getUTCFullYear() >= 2050, c.validTo);
    tmp.write('far.crt', far.certPem);
    assert.match(openssl(tmp.dir, 'asn1parse', '-in', 'far.crt'), /GENERALIZEDTIME\s+:20\d{12}Z/);
    assert.equal(
      openssl(tmp.dir, 'verify', '-x509_strict', '-CAfile', 'far.crt', 'far.crt'),
      'far.crt: OK\n',
    );
  });

  it("Go-style RSA certificates (the e2e webhook's) verify with openssl", async () => {
    const goCA = await goSelfSignedCA('e2e-server-cert-ca');
    const leaf = await goSignedServingCert(goCA, 'svc.ns.svc', ['svc.ns.svc', 'svc.ns']);
    tmp.write('go-ca.crt', goCA.certPem);
    tmp.write('go-leaf.crt', leaf.certPem);
    assert.equal(
      openssl(tmp.dir, 'verify', '-purpose', 'sslserver', '-CAfile', 'go-ca.crt', 'go-leaf.crt'),
      'go-leaf.crt: OK\n',
    );
    const caText = openssl(tmp.dir, 'x509', '-noout', '-text', '-in', 'go-ca.crt');
    assert.match(caText, /Serial Number: 0 \(0x0\)/);
    assert.match(caText, /Signature Algorithm: sha256WithRSAEncryption/);
    assert.match(caText, /Public-Key: \(2048 bit\)/);
    assert.match(caText, /Key Usage: critical\s+Digital Signature, Key Encipherment, Certificate Sign\n/);
    const text = openssl(tmp.dir, 'x509', '-noout', '-text', '-in', 'go-leaf.crt');
    assert.doesNotMatch(text, /Basic Constraints/);
    assert.match(text, /DNS:svc.ns.svc, DNS:svc.ns\n/);
    assert.equal(createPrivateKey(leaf.keyPem).asymmetricKeyType, 'rsa');
  });

  it('an Ed25519 or P-384 issuer signs with its own algorithm', () => {
    for (const [type, opts, alg] of [
      ['ed25519', {}, 'ED25519'],
      ['ec', { namedCurve: 'secp384r1' }, 'ecdsa-with-SHA384'],
    ] as const) {
      const { publicKey, privateKey } = generateKeyPairSync(type as 'ec', opts as { namedCurve: string });
      const now = Date.now();
      const pem = selfSigned(
        {
          subject: { commonName: type },
          notBefore: new Date(now),
          notAfter: new Date(now + DAY),
          publicKey,
          isCA: true,
          keyUsage: ['keyCertSign'],
        },
        privateKey,
      );
      tmp.write(`${type}.crt`, pem);
      assert.match(
        openssl(tmp.dir, 'x509', '-noout', '-text', '-in', `${type}.crt`),
        new RegExp(`Signature Algorithm: ${alg}`),
      );
      assert.equal(openssl(tmp.dir, 'verify', '-CAfile', `${type}.crt`, `${type}.crt`), `${type}.crt: OK\n`);
    }
  });

  it('refuses bad names and addresses, and a CA key that is not the CA’s', async () => {
    await assert.rejects(
      createServingCert(ca, 'x', { ips: ['300.1.1.1'] }),
      /invalid IP address "300.1.1.1"/,
    );
    await assert.rejects(createServingCert(ca, 'x', { ips: ['localhost'] }), /invalid IP address/);
    await assert.rejects(createServingCert(ca, 'x', { dnsNames: ['bad name'] }), /invalid DNS name/);
    await assert.rejects(createServingCert(ca, 'x', { dnsNames: ['bücher.example'] }), /invalid DNS name/);
    await assert.rejects(
      createServingCert({ certPem: ca.certPem, keyPem: serving.keyPem }, 'x', {}),
      /CA key does not match/,
    );
    assert.throws(() => issuerFrom('not a certificate', createPrivateKey(ca.keyPem)));
  });

  it('writes IPv4 as 4 bytes, IPv6 as 16 (IPv4-mapped as 4, as Go does)', () => {
    assert.equal(ipBytes('10.0.0.1').toString('hex'), '0a000001');
    assert.equal(ipBytes('::1').toString('hex'), '00000000000000000000000000000001');
    assert.equal(
      ipBytes('fd00:10:96::a').toString('hex'),
      'fd00' + '0010' + '0096' + '0000'.repeat(4) + '000a',
    );
    assert.equal(ipBytes('2001:db8::').toString('hex'), '20010db8000000000000000000000000');
    assert.equal(ipBytes('1:2:3:4:5:6:7:8').toString('hex'), '00010002000300040005000600070008');
    assert.equal(ipBytes('::ffff:192.0.2.7').toString('hex'), 'c0000207');
    assert.equal(ipBytes('64:ff9b::192.0.2.7').toString('hex'), '0064ff9b0000000000000000c0000207');
    assert.equal(ipBytes('fe80::1%eth0').toString('hex'), 'fe800000000000000000000000000001');
  });
});
