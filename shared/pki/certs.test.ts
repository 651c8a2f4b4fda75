// certs.ts in use: TLS on 127.0.0.1 with its serving and client certificates, CAs that
// come from disk (openssl's, RSA or EC), and the load / cover / issuer checks.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import * as tls from 'node:tls';
import {
  certCovers,
  createCA,
  createClientCert,
  createServingCert,
  loadOrCreate,
  signedBy,
  subjectOf,
  type KeyPair,
  type SubjectInfo,
} from './certs';
import { openssl, pemDir } from './openssl.test-support';

interface Seen {
  x509?: SubjectInfo;
  legacy?: SubjectInfo;
  authorized: boolean;
}

/** A TLS server on 127.0.0.1 with pair, asking for client certificates signed by clientCA. */
async function server(pair: KeyPair, clientCA?: string) {
  const seen: Seen[] = [];
  const srv = tls.createServer(
    {
      cert: pair.certPem,
      key: pair.keyPem,
      ...(clientCA ? { ca: clientCA, requestCert: true, rejectUnauthorized: false } : {}),
    },
    (s) => {
      const c = s.getPeerX509Certificate();
      seen.push({
        ...(c ? { x509: subjectOf(c), legacy: subjectOf(s.getPeerCertificate() as any) } : {}),
        authorized: s.authorized,
      });
      s.end('hi');
    },
  );
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  return { port: (srv.address() as AddressInfo).port, seen, close: () => new Promise((r) => srv.close(r)) };
}

/** Connects, verifying the server against ca; what it read, or the verification error. */
function connect(port: number, opts: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: '127.0.0.1', port, ...opts });
    let data = '';
    s.on('data', (d) => (data += d));
    s.on('end', () => resolve(data));
    s.on('error', reject);
  });
}

describe('pki/certs', function () {
  this.timeout(30_000);
  let ca: KeyPair;
  before(async () => (ca = await createCA('tkube-ca')));

  describe('over TLS', () => {
    let srv: Awaited<ReturnType<typeof server>>;
    before(async () => {
      const pair = await createServingCert(ca, 'kube-apiserver', {
        dnsNames: ['localhost'],
        ips: ['127.0.0.1'],
      });
      srv = await server(pair, ca.certPem);
    });
    after(() => srv.close());

    it('a client trusting the CA accepts the serving certificate for its names and IP', async () => {
      assert.equal(await connect(srv.port, { ca: ca.certPem, servername: 'localhost' }), 'hi');
      // No SNI name: the address is checked against the IP SANs.
      assert.equal(await connect(srv.port, { ca: ca.certPem }), 'hi');
    });

    it('and rejects it for another name, or without the CA', async () => {
      await assert.rejects(connect(srv.port, { ca: ca.certPem, servername: 'wrong.example' }), {
        code: 'ERR_TLS_CERT_ALTNAME_INVALID',
      });
      // The server sends its CA too (it is in its ca option): a self-signed one the client does not trust.
      await assert.rejects(
        connect(srv.port, { ca: (await createCA('other')).certPem, servername: 'localhost' }),
        {
          code: 'SELF_SIGNED_CERT_IN_CHAIN',
        },
      );
    });

    it('subjectOf reads the CN and every O of a client certificate', async () => {
      const id = { commonName: 'admin', organizations: ['system:masters', 'tkube:admins'] };
      const cert = await createClientCert(ca, id);
      srv.seen.length = 0;
      await connect(srv.port, { ca: ca.certPem, cert: cert.certPem, key: cert.keyPem });
      const stranger = await createClientCert(await createCA('other'), { commonName: 'eve' });
      await connect(srv.port, { ca: ca.certPem, cert: stranger.certPem, key: stranger.keyPem });
      assert.deepEqual(srv.seen, [
        { x509: id, legacy: id, authorized: true },
        {
          x509: { commonName: 'eve', organizations: [] },
          legacy: { commonName: 'eve', organizations: [] },
          authorized: false,
        },
      ]);
    });
  });

  describe('a CA from disk (openssl)', () => {
    let tmp: ReturnType<typeof pemDir>;
    before(() => (tmp = pemDir('certs-disk-ca')));
    after(() => tmp.remove());

    const diskCA = (name: string, ...keyArgs: string[]) => {
      openssl(
        tmp.dir,
        ...[
          'req',
          '-x509',
          ...keyArgs,
          '-nodes',
          '-days',
          '30',
          '-keyout',
          `${name}.key`,
          '-out',
          `${name}.crt`,
        ],
        ...['-subj', `/C=US/O=Example Org/CN=${name}`],
      );
      return {
        certPem: readFileSync(join(tmp.dir, `${name}.crt`), 'utf8'),
        keyPem: readFileSync(join(tmp.dir, `${name}.key`), 'utf8'),
      };
    };

    /** A serving certificate issued by ca, checked by openssl and node; its openssl -text. */
    const issueAndVerify = async (caName: string, disk: KeyPair) => {
      const leaf = await createServingCert(disk, 'svc', { dnsNames: ['svc.local'], ips: ['127.0.0.1'] });
      tmp.write(`${caName}-leaf.crt`, leaf.certPem);
      assert.equal(
        openssl(tmp.dir, 'verify', '-purpose', 'sslserver', '-CAfile', `${caName}.crt`, `${caName}-leaf.crt`),
        `${caName}-leaf.crt: OK\n`,
      );
      assert.ok(signedBy(leaf.certPem, disk.certPem));
      assert.equal(new X509Certificate(leaf.certPem).issuer, 'C=US\nO=Example Org\nCN=' + caName);
      return openssl(tmp.dir, 'x509', '-noout', '-text', '-in', `${caName}-leaf.crt`);
    };

    it('an RSA CA signs a leaf with sha256WithRSAEncryption, its subject copied as the issuer', async () => {
      const disk = diskCA('rsa-ca', '-newkey', 'rsa:2048');
      const text = await issueAndVerify('rsa-ca', disk);
      assert.match(text, /Signature Algorithm: sha256WithRSAEncryption/);
      assert.match(text, /Public Key Algorithm: id-ecPublicKey/);
      assert.match(text, /Authority Key Identifier/);
    });

    it('an EC CA whose key is SEC1 ("EC PRIVATE KEY") PEM', async () => {
      openssl(tmp.dir, 'ecparam', '-name', 'prime256v1', '-genkey', '-noout', '-out', 'sec1.key');
      // With -key, req writes the key out as PKCS#8: the CA's key is the SEC1 file itself.
      const disk = {
        ...diskCA('ec-ca', '-key', 'sec1.key'),
        keyPem: readFileSync(join(tmp.dir, 'sec1.key'), 'utf8'),
      };
      assert.match(disk.keyPem, /BEGIN EC PRIVATE KEY/);
      assert.match(await issueAndVerify('ec-ca', disk), /Signature Algorithm: ecdsa-with-SHA256/);
    });

    it('a CA without a subject key id: the leaf has no authority key id', async () => {
      const disk = diskCA(
        'noski-ca',
        '-newkey',
        'rsa:2048',
        '-addext',
        'subjectKeyIdentifier=none',
        '-addext',
        'authorityKeyIdentifier=none',
      );
      assert.doesNotMatch(
        openssl(tmp.dir, 'x509', '-noout', '-text', '-in', 'noski-ca.crt'),
        /Key Identifier/,
      );
      assert.doesNotMatch(await issueAndVerify('noski-ca', disk), /Authority Key Identifier/);
    });
  });

  describe('loadOrCreate, certCovers, signedBy', () => {
    let tmp: ReturnType<typeof pemDir>;
    before(() => (tmp = pemDir('certs-load')));
    after(() => tmp.remove());

    it('loadOrCreate writes name.crt and name.key (0600) once, then reads them', async () => {
      let made = 0;
      const make = () => (made++, createCA('loaded'));
      const first = await loadOrCreate(join(tmp.dir, 'sub'), 'ca', make);
      const again = await loadOrCreate(join(tmp.dir, 'sub'), 'ca', make);
      assert.equal(made, 1);
      assert.deepEqual(again, first);
      assert.equal(statSync(first.keyFile).mode & 0o777, 0o600);
      assert.equal(readFileSync(first.certFile, 'utf8'), first.certPem);
    });

    it('certCovers: every name and IP, and not about to expire', async () => {
      const c = (await createServingCert(ca, 's', { dnsNames: ['a.test'], ips: ['10.0.0.1', 'fd00::1'] }))
        .certPem;
      assert.equal(certCovers(c, ['a.test'], ['10.0.0.1', 'fd00::1']), true);
      assert.equal(certCovers(c, ['b.test'], []), false);
      assert.equal(certCovers(c, [], ['10.0.0.2']), false);
      const soon = (await createServingCert(ca, 's', { dnsNames: ['a.test'], days: 0.5 })).certPem;
      assert.equal(certCovers(soon, ['a.test'], []), false);
      assert.equal(certCovers('garbage', [], []), false);
    });

    it('signedBy: the issuing CA only', async () => {
      const leaf = (await createClientCert(ca, { commonName: 'u' })).certPem;
      assert.equal(signedBy(leaf, ca.certPem), true);
      // Same subject name, other key: the signature decides.
      assert.equal(signedBy(leaf, (await createCA('tkube-ca')).certPem), false);
      assert.equal(signedBy(leaf, 'garbage'), false);
    });
  });
});
