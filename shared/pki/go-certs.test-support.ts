// Certificates made as Kubernetes' e2e tests make them for webhook and
// sample-apiserver pods (client-go's cert.NewSelfSignedCACert and the e2e
// NewSignedCert): RSA 2048 keys; the CA with serial number 0, a subject of its
// common name only, KeyUsage keyEncipherment|
// digitalSignature|certSign and BasicConstraints CA (both critical, as Go writes
// them), a subject key id; the leaf with a random serial, its DNS names, server
// auth, signed by the CA (authority key id). Real clients must accept them.
import { webcrypto } from 'node:crypto';
import type { KeyPair } from './certs';

const ALG = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256', publicExponent: new Uint8Array([1, 0, 1]) };
const YEAR = 365 * 24 * 3600 * 1000;

async function x509() {
  await import('reflect-metadata');
  const lib = await import('@peculiar/x509');
  lib.cryptoProvider.set(webcrypto as any);
  return lib;
}

async function rsaKeys(): Promise<webcrypto.CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey({ ...ALG, modulusLength: 2048 }, true, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
}

async function pem(key: webcrypto.CryptoKey): Promise<string> {
  const b64 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key)).toString('base64');
  return `-----BEGIN PRIVATE KEY-----\n${b64.replace(/(.{64})/g, '$1\n').replace(/\n?$/, '\n')}-----END PRIVATE KEY-----\n`;
}

export interface GoCA extends KeyPair {
  keys: webcrypto.CryptoKeyPair;
}

/** cert.NewSelfSignedCACert(cert.Config{CommonName: commonName}, key). */
export async function goSelfSignedCA(commonName: string): Promise<GoCA> {
  const lib = await x509();
  const keys = await rsaKeys();
  const now = new Date();
  const cert = await lib.X509CertificateGenerator.createSelfSigned({
    serialNumber: '00',
    name: `CN=${commonName}`,
    notBefore: now,
    notAfter: new Date(now.getTime() + 10 * YEAR),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new lib.KeyUsagesExtension(
        lib.KeyUsageFlags.keyEncipherment |
          lib.KeyUsageFlags.digitalSignature |
          lib.KeyUsageFlags.keyCertSign,
        true,
      ),
      new lib.BasicConstraintsExtension(true, undefined, true),
      // Go adds a subject key id to a CA certificate made without one.
      await lib.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await pem(keys.privateKey), keys };
}

/** The e2e NewSignedCert for a serving certificate: CN and DNS names, server auth, signed by ca. */
export async function goSignedServingCert(
  ca: GoCA,
  commonName: string,
  dnsNames: string[],
): Promise<KeyPair> {
  const lib = await x509();
  const keys = await rsaKeys();
  const caCert = new lib.X509Certificate(ca.certPem);
  const serial = Buffer.from(webcrypto.getRandomValues(new Uint8Array(16)))
    .toString('hex')
    .replace(/^[89a-f]/, '1');
  const cert = await lib.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: `CN=${commonName}`,
    issuer: caCert.subject,
    notBefore: caCert.notBefore,
    notAfter: new Date(Date.now() + YEAR),
    signingAlgorithm: ALG,
    publicKey: keys.publicKey,
    signingKey: ca.keys.privateKey,
    extensions: [
      new lib.KeyUsagesExtension(
        lib.KeyUsageFlags.keyEncipherment | lib.KeyUsageFlags.digitalSignature,
        true,
      ),
      new lib.ExtendedKeyUsageExtension([lib.ExtendedKeyUsage.serverAuth]),
      await lib.AuthorityKeyIdentifierExtension.create(caCert),
      new lib.SubjectAlternativeNameExtension(dnsNames.map((value) => ({ type: 'dns' as const, value }))),
    ],
  });
  return { certPem: cert.toString('pem') + '\n', keyPem: await pem(keys.privateKey) };
}
