// Certificates made as Kubernetes' e2e tests make them for webhook and
// sample-apiserver pods (client-go's cert.NewSelfSignedCACert and the e2e
// NewSignedCert): RSA 2048 keys; the CA with serial number 0, a subject of its
// common name only, KeyUsage keyEncipherment|
// digitalSignature|certSign and BasicConstraints CA (both critical, as Go writes
// them), a subject key id; the leaf with a random serial, its DNS names, server
// auth, signed by the CA (authority key id), and no BasicConstraints (the e2e
// template sets none). Real clients must accept them.
import { generateKeyPairSync, X509Certificate, type KeyObject } from 'node:crypto';
import type { KeyPair } from './certs';
import { issuerFrom, selfSigned, signed } from './x509';

const YEAR = 365 * 24 * 3600 * 1000;

function rsaKeys() {
  return generateKeyPairSync('rsa', { modulusLength: 2048 });
}

const pkcs8 = (k: KeyObject) => k.export({ type: 'pkcs8', format: 'pem' }) as string;

export interface GoCA extends KeyPair {
  key: KeyObject;
}

/** cert.NewSelfSignedCACert(cert.Config{CommonName: commonName}, key). */
export async function goSelfSignedCA(commonName: string): Promise<GoCA> {
  const { publicKey, privateKey } = rsaKeys();
  const now = Date.now();
  const certPem = selfSigned(
    {
      serial: Buffer.from([0]),
      subject: { commonName },
      notBefore: new Date(now),
      notAfter: new Date(now + 10 * YEAR),
      publicKey,
      keyUsage: ['keyEncipherment', 'digitalSignature', 'keyCertSign'],
      // Go adds a subject key id to a CA certificate made without one.
      isCA: true,
    },
    privateKey,
  );
  return { certPem, keyPem: pkcs8(privateKey), key: privateKey };
}

/** The e2e NewSignedCert for a serving certificate: CN and DNS names, server auth, signed by ca. */
export async function goSignedServingCert(
  ca: GoCA,
  commonName: string,
  dnsNames: string[],
): Promise<KeyPair> {
  const { publicKey, privateKey } = rsaKeys();
  const certPem = signed(
    {
      subject: { commonName },
      notBefore: new Date(new X509Certificate(ca.certPem).validFrom),
      notAfter: new Date(Date.now() + YEAR),
      publicKey,
      keyUsage: ['keyEncipherment', 'digitalSignature'],
      extKeyUsage: ['serverAuth'],
      dnsNames,
    },
    issuerFrom(ca.certPem, ca.key),
  );
  return { certPem, keyPem: pkcs8(privateKey) };
}
